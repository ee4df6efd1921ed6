package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

func (con *Console) mountProjects(g *echo.Group) {
	g.GET("/projects/new", con.editProject)
	g.GET("/projects/:id", con.editProject)
	g.POST("/projects/check", con.checkProject)
	g.POST("/projects/apply", con.applyProject)
	g.DELETE("/projects/:id", con.deleteProject)
	g.POST("/projects/:id/rollback", con.rollbackProject)
	g.POST("/projects/:id/undelete", con.undeleteProject)
}

// projectRow is a project as the list shows it.
type projectRow struct {
	ID        string
	Version   int64
	UpdatedAt string
	Tables    []tableCount
	Error     string // the project's records could not be counted
}

type tableCount struct {
	Name  string
	Count int64
}

func (con *Console) projectList(c echo.Context) error {
	ctx := c.Request().Context()
	ps, err := con.cfg.Registry.List(ctx)
	if err != nil {
		return con.fail(c, "list projects", err)
	}
	// A project's key sees its project alone.
	scope := tenant.OperatorOf(ctx).Scope
	ps = slices.DeleteFunc(ps, func(p *tenant.Project) bool { return !scope.Reaches(p.ID) })
	rows := make([]projectRow, 0, len(ps))
	for _, p := range ps {
		row := projectRow{ID: p.ID, Version: p.Version, UpdatedAt: p.UpdatedAt.UTC().Format(time.DateTime + " UTC")}
		recs, err := con.cfg.Stores.ProjectRecords(ctx, p.ID, p.MongoURI, p.StoreTables())
		for _, t := range p.StoreTables() {
			var n int64
			if err == nil {
				n, err = recs.Count(ctx, t.Name, store.All)
			}
			row.Tables = append(row.Tables, tableCount{Name: t.Name, Count: n})
		}
		if err != nil {
			con.cfg.Logger.WarnContext(ctx, "console: count records", "project", p.ID, "err", err)
			row.Error = "records cannot be counted right now"
		}
		rows = append(rows, row)
	}
	deleted, err := con.cfg.Registry.Deleted(ctx)
	if err != nil {
		return con.fail(c, "list deleted projects", err)
	}
	if scope.Project != "" || !scope.Change {
		deleted = nil // only the operator scope restores or purges them
	}
	return con.render(c, http.StatusOK, "projects", "", view{Title: "Projects", Data: projectsData{Rows: rows, Deleted: deleted}})
}

// projectsData fills the project list.
type projectsData struct {
	Rows    []projectRow
	Deleted []tenant.DeletedProject
}

// editorData fills the project editor.
type editorData struct {
	ID       string // empty for a new project
	Document string
	Tables   []string
	Schema   string // the SDL of the project's GraphQL API
	History  *tenant.ProjectHistory
}

const newProjectYAML = `id: my-project
tables:
  products:
    fields:
      name: {type: String, required: true}
      price: {type: Float, required: true}
    access: {read: authenticated, create: authenticated, update: owner, delete: owner}
`

func (con *Console) editProject(c echo.Context) error {
	id := c.Param("id")
	if id == "" {
		return con.render(c, http.StatusOK, "editor", "", view{Title: "New project", Data: editorData{Document: newProjectYAML}})
	}
	p, err := con.cfg.Registry.Get(c.Request().Context(), id)
	if errors.Is(err, tenant.ErrProjectNotFound) {
		return con.render(c, http.StatusNotFound, "error", "", view{Title: "Not found", Error: "project " + id + " does not exist"})
	}
	if err != nil {
		return con.fail(c, "read project", err)
	}
	doc, err := documentYAML(p)
	if err != nil {
		return con.fail(c, "show project", err)
	}
	data := editorData{ID: id, Document: doc}
	for _, t := range p.StoreTables() {
		data.Tables = append(data.Tables, t.Name)
	}
	if data.History, err = con.cfg.Registry.History(c.Request().Context(), id); err != nil {
		return con.fail(c, "read project history", err)
	}
	if rt, err := con.cfg.Registry.Runtime(c.Request().Context(), id); err == nil {
		data.Schema = rt.API.SDL()
	} else {
		con.cfg.Logger.WarnContext(c.Request().Context(), "console: project runtime", "project", id, "err", err)
	}
	return con.render(c, http.StatusOK, "editor", "", view{Title: "Project " + id, Data: data})
}

// documentYAML writes a stored project as the YAML document an operator would apply.
func documentYAML(p *tenant.Project) (string, error) {
	doc := *p
	doc.Version, doc.UpdatedAt = 0, time.Time{}
	js, err := json.Marshal(&doc)
	if err != nil {
		return "", fmt.Errorf("encode project %q: %w", p.ID, err)
	}
	y, err := yaml.JSONToYAML(js)
	if err != nil {
		return "", fmt.Errorf("project %q as YAML: %w", p.ID, err)
	}
	return string(y), nil
}

// outcome is what a check or an apply of a document found.
type outcome struct {
	Problems []problem
	// Summary and Changes are worded as `platform apply` prints them; Data, what the apply
	// does to the records and leaves behind (tenant.DataReport).
	Summary string
	Changes []string
	Data    []string
	Applied bool
	ID      string
}

type problem struct {
	Path, Message string
	Line          int // in the document; 0 when unknown
}

// parse validates the posted document as `platform apply` has it validated.
func parse(c echo.Context) ([]byte, *tenant.Project, *outcome) {
	doc := []byte(c.FormValue("document"))
	p, err := tenant.ParseDocument(doc)
	if err != nil {
		return doc, nil, &outcome{Problems: problemsOf(doc, err)}
	}
	return doc, p, nil
}

func problemsOf(doc []byte, err error) []problem {
	var de *tenant.DocumentError
	if errors.Is(err, tenant.ErrProjectDeleted) {
		return []problem{{Message: err.Error() + ": restore it from the project list, or delete it for good, first"}}
	}
	if !errors.As(err, &de) {
		return []problem{{Message: err.Error()}}
	}
	out := make([]problem, len(de.Problems))
	for i, p := range de.Problems {
		out[i] = problem{Path: p.Path, Message: p.Message, Line: lineOf(doc, p.Path)}
	}
	return out
}

// lineOf finds the line of the document a problem's dotted path names, so the editor can
// point at it; 0 when the path is not in the document (a missing field) or cannot be read.
func lineOf(doc []byte, path string) int {
	if path == "" {
		return 0
	}
	var b strings.Builder
	b.WriteString("$")
	for _, part := range strings.Split(path, ".") {
		if part != "" && strings.Trim(part, "0123456789") == "" {
			b.WriteString("[" + part + "]")
		} else {
			b.WriteString(".'" + strings.ReplaceAll(part, "'", "\\'") + "'")
		}
	}
	yp, err := yaml.PathString(b.String())
	if err != nil {
		return 0
	}
	f, err := parser.ParseBytes(doc, 0)
	if err != nil {
		return 0
	}
	node, err := yp.FilterFile(f)
	if err != nil || node == nil {
		return 0
	}
	return node.GetToken().Position.Line
}

// checkProject is the apply preview: a dry run, checked against the records as an apply is.
func (con *Console) checkProject(c echo.Context) error {
	doc, p, bad := parse(c)
	if bad != nil {
		return con.render(c, http.StatusUnprocessableEntity, "editor", "outcome", view{Data: bad})
	}
	prev, _, rep, err := con.cfg.Registry.Apply(c.Request().Context(), p, tenant.ApplyOptions{DryRun: true})
	if err != nil {
		return con.fail(c, "check project", err)
	}
	if len(rep.Problems) > 0 {
		return con.render(c, http.StatusUnprocessableEntity, "editor", "outcome", view{Data: &outcome{Problems: problemsOf(doc, &tenant.DocumentError{Problems: rep.Problems})}})
	}
	changes := tenant.Diff(prev, p)
	return con.render(c, http.StatusOK, "editor", "outcome", view{Data: &outcome{ID: p.ID, Summary: summary(p.ID, prev == nil, changes, "would be ", 0), Changes: changes,
		Data: append(rep.Data, rep.Warnings...)}})
}

func (con *Console) applyProject(c echo.Context) error {
	doc, p, bad := parse(c)
	if bad != nil {
		return con.render(c, http.StatusUnprocessableEntity, "editor", "outcome", view{Data: bad})
	}
	prev, cur, rep, err := con.cfg.Registry.Apply(c.Request().Context(), p, tenant.ApplyOptions{})
	var de *tenant.DocumentError
	if errors.As(err, &de) || errors.Is(err, tenant.ErrProjectDeleted) {
		return con.render(c, http.StatusUnprocessableEntity, "editor", "outcome", view{Data: &outcome{Problems: problemsOf(doc, err)}})
	}
	if err != nil {
		return con.fail(c, "apply project", err)
	}
	changes := tenant.Diff(prev, cur)
	noteDiff(c, changes)
	con.cfg.Logger.InfoContext(c.Request().Context(), "console: project applied", "project", cur.ID, "version", cur.Version, "changes", len(changes))
	return con.render(c, http.StatusOK, "editor", "outcome", view{Data: &outcome{ID: cur.ID, Applied: true, Summary: summary(cur.ID, prev == nil, changes, "", cur.Version), Changes: changes,
		Data: append(rep.Data, rep.Warnings...)}})
}

// summary is the first line `platform apply` prints ("project demo configured (version 3)"),
// or, before applying (tense "would be "), what it would print.
func summary(id string, created bool, changes []string, tense string, version int64) string {
	s := "project " + id + " " + tense + tenant.ApplyOutcome(created, changes)
	if version > 0 {
		s += fmt.Sprintf(" (version %d)", version)
	}
	return s
}

func (con *Console) deleteProject(c echo.Context) error {
	id := c.Param("id")
	purge := c.QueryParam("purge") == "true"
	err := con.cfg.Registry.Delete(c.Request().Context(), id, purge)
	if errors.Is(err, tenant.ErrProjectNotFound) {
		return con.render(c, http.StatusNotFound, "error", "message", view{Error: "project " + id + " does not exist"})
	}
	if err != nil {
		return con.fail(c, "delete project", err)
	}
	con.cfg.Logger.InfoContext(c.Request().Context(), "console: project deleted", "project", id, "purged", purge)
	return con.redirect(c, "/console/")
}

// rollbackProject applies version ?to= of the project again, as `platform rollback` does.
func (con *Console) rollbackProject(c echo.Context) error {
	id := c.Param("id")
	n, err := strconv.ParseInt(c.QueryParam("to"), 10, 64)
	if err != nil {
		return con.render(c, http.StatusBadRequest, "error", "message", view{Error: "no version to roll back to"})
	}
	prev, cur, _, err := con.cfg.Registry.Rollback(c.Request().Context(), id, n, tenant.ApplyOptions{})
	var de *tenant.DocumentError
	switch {
	case errors.As(err, &de) || errors.Is(err, tenant.ErrProjectDeleted):
		return con.render(c, http.StatusUnprocessableEntity, "editor", "outcome", view{Data: &outcome{Problems: problemsOf(nil, err)}})
	case errors.Is(err, tenant.ErrVersionNotFound):
		return con.render(c, http.StatusNotFound, "error", "message", view{Error: err.Error()})
	case err != nil:
		return con.fail(c, "roll back project", err)
	}
	changes := tenant.Diff(prev, cur)
	con.cfg.Logger.InfoContext(c.Request().Context(), "console: project rolled back", "project", id, "to", n, "version", cur.Version, "changes", len(changes))
	s := fmt.Sprintf("project %s rolled back to version %d (version %d)", id, n, cur.Version)
	if len(changes) == 0 {
		s = fmt.Sprintf("project %s unchanged: version %d is the current document", id, n)
	}
	return con.render(c, http.StatusOK, "editor", "outcome", view{Data: &outcome{ID: id, Applied: true, Summary: s, Changes: changes}})
}

// undeleteProject brings back a project deleted without purge.
func (con *Console) undeleteProject(c echo.Context) error {
	id := c.Param("id")
	_, err := con.cfg.Registry.Undelete(c.Request().Context(), id)
	switch {
	case errors.Is(err, tenant.ErrProjectNotFound):
		return con.render(c, http.StatusNotFound, "error", "message", view{Error: "project " + id + " does not exist"})
	case errors.Is(err, tenant.ErrProjectNotDeleted):
		return con.render(c, http.StatusConflict, "error", "message", view{Error: "project " + id + " is not deleted"})
	case err != nil:
		return con.fail(c, "restore project", err)
	}
	con.cfg.Logger.InfoContext(c.Request().Context(), "console: project restored", "project", id)
	return con.redirect(c, "/console/projects/"+id)
}
