package console

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/tenant"
)

func (con *Console) mountAdvice(g *echo.Group) {
	g.GET("/projects/:id/advice", con.advice)
}

// adviceView is a project's index advice page: each slow shape, the index that would serve
// it, and the document that declares it (which the page checks, then applies, through the
// editor's own routes).
type adviceView struct {
	Project    string
	SlowMillis int64
	Advice     []adviceRow
}

type adviceRow struct {
	tenant.AdviceOfShape
	Shape    string
	Document string
}

func (con *Console) advice(c echo.Context) error {
	id := c.Param("id")
	ctx := c.Request().Context()
	a, err := con.cfg.Registry.Advice(ctx, id)
	if errors.Is(err, tenant.ErrProjectNotFound) || errors.Is(err, tenant.ErrProjectDeleted) {
		return con.render(c, http.StatusNotFound, "error", "", view{Title: "Not found", Error: "project " + id + " does not exist"})
	}
	if err != nil {
		return con.fail(c, "index advice", err)
	}
	v := &adviceView{Project: id, SlowMillis: a.SlowQueryMillis}
	for _, s := range a.Advice {
		row := adviceRow{AdviceOfShape: s, Shape: describeShape(s)}
		if s.Index != nil && !s.Declared {
			p, err := con.cfg.Registry.WithIndex(ctx, id, tenant.DeclareIndex{Table: s.Table, Fields: s.Index})
			if err != nil {
				return con.fail(c, "index advice: declare", err)
			}
			if row.Document, err = documentYAML(p); err != nil {
				return con.fail(c, "index advice: document", err)
			}
		}
		v.Advice = append(v.Advice, row)
	}
	return con.render(c, http.StatusOK, "advice", "", view{Title: "Index advice · " + id, Data: v})
}

// describeShape writes a shape as a reader would say it: "count where author = …, price in a
// range", "where sku = …, order by price desc".
func describeShape(s tenant.AdviceOfShape) string {
	var parts []string
	for _, k := range s.Equal {
		parts = append(parts, k+" = …")
	}
	for _, k := range s.Range {
		parts = append(parts, k+" in a range")
	}
	for _, k := range s.Other {
		parts = append(parts, k+" compared otherwise")
	}
	out := "list"
	if s.Count {
		out = "count"
	}
	if len(parts) > 0 {
		out += " where " + strings.Join(parts, ", ")
	}
	if len(s.Order) > 0 {
		out += " ordered by " + strings.Join(s.Order, ", ")
	}
	return out + " (" + strconv.FormatInt(s.Times, 10) + "×)"
}
