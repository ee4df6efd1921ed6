package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
)

// ProjectAdvice answers GET /admin/v1/projects/{id}/advice: the shapes of the project's slow
// queries, each with the index that would serve it.
type ProjectAdvice struct {
	Project string `json:"project"`
	// SlowQueryMillis is how long a query takes before the log keeps it.
	SlowQueryMillis int64           `json:"slowQueryMillis"`
	Advice          []AdviceOfShape `json:"advice"`
}

// AdviceOfShape is one shape of the slow-query log with the advisor's index.
type AdviceOfShape struct {
	store.Advice
	AvgMillis float64 `json:"avgMillis"`
	MaxMillis float64 `json:"maxMillis"`
}

// DeclareIndex is the body of POST /admin/v1/projects/{id}/advice/declare: the index to add
// to a table of the project's document.
type DeclareIndex struct {
	Table  string   `json:"table"`
	Fields []string `json:"fields"`
}

// Advice answers the advisor's view of project id.
func (r *Registry) Advice(ctx context.Context, id string) (*ProjectAdvice, error) {
	p, err := r.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	out := &ProjectAdvice{Project: id, SlowQueryMillis: r.stores.SlowQueryThreshold().Milliseconds(), Advice: []AdviceOfShape{}}
	for _, a := range store.Advise(p.StoreTables(), r.stores.SlowQueries(id)) {
		out.Advice = append(out.Advice, AdviceOfShape{Advice: a, AvgMillis: a.AvgMillis(), MaxMillis: a.MaxMillis()})
	}
	return out, nil
}

// WithIndex is project id's current document with the index ix declared on its table: the
// document that declaring the advisor's index applies.
func (r *Registry) WithIndex(ctx context.Context, id string, ix DeclareIndex) (*Project, error) {
	sp, err := r.projects.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("project %q: %w", id, ErrProjectNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load project %q: %w", id, err)
	}
	// A fresh parse: the registry's Project may be shared with requests being served.
	p, err := ParseDocument([]byte(sp.Document))
	if err != nil {
		return nil, fmt.Errorf("project %q: stored document: %w", id, err)
	}
	t, ok := p.Tables[ix.Table]
	if !ok {
		return nil, &DocumentError{Problems: []Problem{{Path: "table", Message: "the project has no table " + quote(ix.Table)}}}
	}
	if len(ix.Fields) == 0 {
		return nil, &DocumentError{Problems: []Problem{{Path: "fields", Message: "name the fields of the index"}}}
	}
	for _, have := range t.Indexes {
		if slices.Equal(have.Fields, ix.Fields) {
			return p, nil // applying it again changes nothing
		}
	}
	t.Indexes = append(slices.Clone(t.Indexes), IndexDoc{Fields: ix.Fields})
	p.Tables[ix.Table] = t
	// The document is checked as any applied one is (fields that exist and an index can hold).
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("project %q: %w", id, err)
	}
	return ParseDocument(raw)
}

func (r *Registry) projectAdvice(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	a, err := r.Advice(c.Request().Context(), id)
	if errors.Is(err, ErrProjectNotFound) || errors.Is(err, ErrProjectDeleted) {
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	}
	if err != nil {
		return r.internal(c, "advice", err)
	}
	return c.JSON(http.StatusOK, a)
}

// declareIndex applies the project's document with one more index, through the same Apply
// as a PUT of the document (dryRun=true answers the diff and the data checks first).
func (r *Registry) declareIndex(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	var ix DeclareIndex
	dec := json.NewDecoder(io.LimitReader(c.Request().Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ix); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, "read body: want {\"table\": ..., \"fields\": [...]}: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	ctx := c.Request().Context()
	p, err := r.WithIndex(ctx, id, ix)
	var de *DocumentError
	switch {
	case errors.Is(err, ErrProjectNotFound):
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	case errors.As(err, &de):
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, "cannot declare that index: "+de.Error(), "problems", de.Problems)
	case err != nil:
		return r.internal(c, "declare an index", err)
	}
	opts := applyOptions(c)
	prev, cur, rep, err := r.Apply(ctx, p, opts)
	return r.answerApply(c, id, opts, prev, cur, rep, err, "applied")
}
