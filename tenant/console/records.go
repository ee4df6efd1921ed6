package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// pageSize is how many records a page of the records table shows.
const pageSize = 25

// filterOps are the comparisons the records table offers, in the store's words.
var filterOps = []store.Op{store.Eq, store.Ne, store.Gt, store.Gte, store.Lt, store.Lte,
	store.Contains, store.IContains, store.StartsWith, store.Has, store.IsNull}

func (con *Console) mountRecords(g *echo.Group) {
	g.GET("/projects/:id/tables/:table", con.listRecords)
	g.GET("/projects/:id/tables/:table/new", con.recordForm)
	g.GET("/projects/:id/tables/:table/records/:uid", con.recordForm)
	g.POST("/projects/:id/tables/:table/records", con.saveRecord)
	g.PUT("/projects/:id/tables/:table/records/:uid", con.saveRecord)
	g.DELETE("/projects/:id/tables/:table/records/:uid", con.deleteRecord)
}

// tableRef is the table a request is about, with the project's records. The console reads
// and writes them through store.Records, the path the GraphQL API takes, with no access rule
// applied: the admin may do anything.
type tableRef struct {
	Project string
	Table   *store.Table
	records *store.Records
	// GraphQL is the project's API endpoint, on the host the console was reached by.
	GraphQL string
}

var errNoTable = errors.New("no such table")

func (con *Console) openTable(c echo.Context) (*tableRef, error) {
	ctx := c.Request().Context()
	p, err := con.cfg.Registry.Get(ctx, c.Param("id"))
	if err != nil {
		return nil, err
	}
	tables := p.StoreTables()
	i := slices.IndexFunc(tables, func(t store.Table) bool { return t.Name == c.Param("table") })
	if i < 0 {
		return nil, fmt.Errorf("%w: %q in project %q", errNoTable, c.Param("table"), p.ID)
	}
	recs, err := con.cfg.Stores.ProjectRecords(ctx, p.ID, p.MongoURI, tables)
	if err != nil {
		return nil, fmt.Errorf("open records of %q: %w", p.ID, err)
	}
	host := c.Request().Host
	port := ""
	if h, pt, err := net.SplitHostPort(host); err == nil {
		host, port = h, ":"+pt
	}
	api := (&url.URL{Scheme: c.Scheme(), Host: p.ID + "." + host + port, Path: "/api/v1/graphql"}).String()
	return &tableRef{Project: p.ID, Table: &tables[i], records: recs, GraphQL: api}, nil
}

// tableFailed answers a request whose table could not be opened.
func (con *Console) tableFailed(c echo.Context, err error) error {
	if errors.Is(err, tenant.ErrProjectNotFound) || errors.Is(err, errNoTable) {
		return con.render(c, http.StatusNotFound, "error", fragmentFor(c), view{Title: "Not found", Error: "project " + c.Param("id") + " has no table " + c.Param("table")})
	}
	return con.fail(c, "open table", err)
}

// listing is one page of the records table.
type listing struct {
	*tableRef
	Columns []string // declared fields
	Headers []header
	Keys    []string // what the filter can compare
	Rows    []row
	Total   int64
	// The query, as the page's links and filter form repeat it.
	Sort, Field, Op, Value string
	Desc                   bool
	Ops                    []store.Op
	Sortable               []string
	Next                   string // link to the next page; empty on the last
	Problem                string // the filter or cursor could not be read
}

// header is a column of the records table; a sortable one links to the table sorted by it
// (the other way round when it is sorted by it already).
type header struct {
	Name, Link, Arrow string
}

type row struct {
	UID       string
	Values    []string
	UpdatedAt string
}

func (con *Console) listRecords(c echo.Context) error {
	ref, err := con.openTable(c)
	if err != nil {
		return con.tableFailed(c, err)
	}
	t := ref.Table
	l := &listing{tableRef: ref, Ops: filterOps, Sort: c.QueryParam("sort"), Desc: c.QueryParam("desc") == "1",
		Field: c.QueryParam("field"), Op: c.QueryParam("op"), Value: c.QueryParam("value")}
	for _, f := range t.Fields {
		l.Columns = append(l.Columns, f.Name)
		if !f.Type.List && f.Type.Scalar != store.JSON {
			l.Sortable = append(l.Sortable, f.Name)
		}
	}
	l.Sortable = append(l.Sortable, store.KeyUID, store.KeyCreatedAt, store.KeyUpdatedAt)
	l.Keys = append(slices.Clone(l.Columns), store.KeyUID, store.KeyOwner, store.KeyCreatedAt, store.KeyUpdatedAt)
	for _, col := range append(slices.Clone(l.Columns), store.KeyUpdatedAt) {
		h := header{Name: col}
		if slices.Contains(l.Sortable, col) {
			q := c.Request().URL.Query() // a copy: c.QueryParams is shared
			q.Del("after")
			q.Set("sort", col)
			q.Del("desc")
			switch {
			case l.Sort == col && !l.Desc:
				q.Set("desc", "1")
				h.Arrow = "▲"
			case l.Sort == col:
				h.Arrow = "▼"
			}
			h.Link = "?" + q.Encode()
		}
		l.Headers = append(l.Headers, h)
	}
	order := []store.Order{{Key: store.KeyCreatedAt, Desc: true}}
	if l.Sort != "" {
		if !slices.Contains(l.Sortable, l.Sort) {
			return con.listProblem(c, l, fmt.Sprintf("records cannot be sorted by %q", l.Sort))
		}
		order = []store.Order{{Key: l.Sort, Desc: l.Desc}}
	}
	filter, err := parseFilter(t, l.Field, store.Op(l.Op), l.Value)
	if err != nil {
		return con.listProblem(c, l, err.Error())
	}
	q := store.Query{Filter: filter, Order: order, Limit: pageSize + 1}
	if after := c.QueryParam("after"); after != "" {
		if q.After, err = t.ParseCursor(after, q); err != nil {
			return con.listProblem(c, l, "the page link is out of date: "+err.Error())
		}
	}
	ctx := c.Request().Context()
	var last store.Record
	err = ref.records.Each(ctx, t.Name, q, func(rec store.Record) (bool, error) {
		if len(l.Rows) == pageSize {
			cur, err := t.CursorOf(last, order)
			if err != nil {
				return false, err
			}
			next := c.Request().URL.Query()
			next.Set("after", t.Encode(cur, q))
			l.Next = "?" + next.Encode()
			return false, nil
		}
		vals, err := t.Values(rec)
		if err != nil {
			return false, err
		}
		r := row{UID: vals[store.KeyUID].(string), UpdatedAt: formatScalar(store.DateTime, vals[store.KeyUpdatedAt])}
		for _, f := range t.Fields {
			r.Values = append(r.Values, formatValue(f.Type, vals[f.Name]))
		}
		l.Rows = append(l.Rows, r)
		last = rec
		return true, nil
	})
	if err != nil {
		return con.fail(c, "read records", err)
	}
	if l.Total, err = ref.records.Count(ctx, t.Name, filter); err != nil {
		return con.fail(c, "count records", err)
	}
	return con.render(c, http.StatusOK, "records", "", view{Title: ref.Project + " · " + t.Name, Data: l})
}

func (con *Console) listProblem(c echo.Context, l *listing, msg string) error {
	l.Problem = msg
	return con.render(c, http.StatusBadRequest, "records", "", view{Title: l.Project + " · " + l.Table.Name, Data: l})
}

// parseFilter reads the records table's filter: one comparison of a key with a value typed
// as the key is (an item of a list field).
func parseFilter(t *store.Table, key string, op store.Op, raw string) (store.Filter, error) {
	if key == "" {
		return store.All, nil
	}
	ft, ok := t.KeyType(key)
	if !ok {
		return store.Filter{}, fmt.Errorf("table %s has no field %q", t.Name, key)
	}
	if !slices.Contains(filterOps, op) {
		return store.Filter{}, fmt.Errorf("unknown comparison %q", op)
	}
	switch op {
	case store.IsNull:
		return store.Compare(key, op, raw != "false"), nil
	case store.Contains, store.IContains, store.StartsWith:
		if ft.Scalar != store.String && ft.Scalar != store.ID {
			return store.Filter{}, fmt.Errorf("%s compares text, and %s is of type %s", op, key, ft)
		}
	case store.Has:
		if !ft.List {
			return store.Filter{}, fmt.Errorf("has looks into lists, and %s is of type %s", key, ft)
		}
	}
	v, err := parseScalar(ft.Scalar, raw)
	if err != nil {
		return store.Filter{}, fmt.Errorf("%s: %w", key, err)
	}
	return store.Compare(key, op, v), nil
}

// recordForm is the form that creates or edits a record.
type recordForm struct {
	*tableRef
	UID    string // empty for a new record
	Fields []formField
	Meta   map[string]string // uid, _owner, createdAt, updatedAt of an existing record
	Error  string
}

type formField struct {
	Name, Type, Description, Value, Problem string
	Required, Bool, Multiline               bool
}

func (con *Console) recordForm(c echo.Context) error {
	ref, err := con.openTable(c)
	if err != nil {
		return con.tableFailed(c, err)
	}
	form := &recordForm{tableRef: ref, UID: c.Param("uid")}
	var vals map[string]any
	if form.UID != "" {
		var rec store.Record
		err := ref.records.Each(c.Request().Context(), ref.Table.Name, store.Query{Filter: store.Compare(store.KeyUID, store.Eq, form.UID), Limit: 1},
			func(r store.Record) (bool, error) { rec = r; return false, nil })
		if err != nil {
			return con.fail(c, "read record", err)
		}
		if rec == nil {
			return con.render(c, http.StatusNotFound, "error", "", view{Title: "Not found", Error: ref.Table.Name + " has no record " + form.UID})
		}
		if vals, err = ref.Table.Values(rec); err != nil {
			return con.fail(c, "read record", err)
		}
		form.Meta = map[string]string{}
		for _, k := range []string{store.KeyOwner, store.KeyCreatedAt, store.KeyUpdatedAt} {
			if ft, ok := ref.Table.KeyType(k); ok {
				form.Meta[k] = formatValue(ft, vals[k])
			}
		}
	}
	for _, f := range ref.Table.Fields {
		v := f.Default
		if vals != nil {
			v = vals[f.Name]
		}
		form.Fields = append(form.Fields, field(f, formatValue(f.Type, v)))
	}
	title := "New " + ref.Table.Name + " record"
	if form.UID != "" {
		title = ref.Table.Name + " " + form.UID
	}
	return con.render(c, http.StatusOK, "record", "", view{Title: title, Data: form})
}

func field(f store.Field, value string) formField {
	return formField{Name: f.Name, Type: f.Type.String(), Description: f.Description, Value: value, Required: f.Required,
		Bool: f.Type.Scalar == store.Boolean && !f.Type.List, Multiline: f.Type.List || f.Type.Scalar == store.JSON}
}

// saveRecord creates (POST) or updates (PUT) a record from the form: every field's input is
// read by the field's type; an empty input leaves an optional field unset.
func (con *Console) saveRecord(c echo.Context) error {
	ref, err := con.openTable(c)
	if err != nil {
		return con.tableFailed(c, err)
	}
	form := &recordForm{tableRef: ref, UID: c.Param("uid")}
	set := map[string]any{}
	var unset []string
	bad := false
	for _, f := range ref.Table.Fields {
		raw := c.FormValue("field." + f.Name)
		ff := field(f, raw)
		// Spaces are a String's value, and nothing in any other type.
		empty := raw == "" || f.Type.Scalar != store.String && strings.TrimSpace(raw) == ""
		switch {
		case empty && f.Required:
			ff.Problem = "required"
		case empty:
			unset = append(unset, f.Name)
		default:
			v, err := parseValue(f.Type, raw)
			if err != nil {
				ff.Problem = err.Error()
			} else {
				set[f.Name] = v
			}
		}
		bad = bad || ff.Problem != ""
		form.Fields = append(form.Fields, ff)
	}
	if bad {
		return con.render(c, http.StatusUnprocessableEntity, "record", "form", view{Data: form})
	}
	ctx := c.Request().Context()
	if form.UID == "" {
		err = ref.records.Insert(ctx, ref.Table.Name, "", []map[string]any{set}, nil)
	} else {
		err = ref.records.Update(ctx, ref.Table.Name, form.UID, store.All, set, unset, nil)
	}
	var conflict *store.ConflictError
	switch {
	case errors.As(err, &conflict):
		form.Error = conflict.Error()
		return con.render(c, http.StatusUnprocessableEntity, "record", "form", view{Data: form})
	case errors.Is(err, store.ErrNotFound):
		form.Error = "this record was deleted meanwhile"
		return con.render(c, http.StatusNotFound, "record", "form", view{Data: form})
	case err != nil:
		return con.fail(c, "save record", err)
	}
	noteDiff(c, recordDiff(set, unset))
	return con.redirect(c, "/console/projects/"+ref.Project+"/tables/"+ref.Table.Name)
}

// recordDiff is what a record edit set and unset, one field a line, as the audit log keeps
// it: values as JSON, cut at 200 bytes.
func recordDiff(set map[string]any, unset []string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(set)) {
		v, err := json.Marshal(set[name])
		if err != nil {
			v = []byte(fmt.Sprint(set[name]))
		}
		if len(v) > 200 {
			v = append(v[:200:200], "…"...)
		}
		out = append(out, "~ "+name+" = "+string(v))
	}
	for _, name := range unset {
		out = append(out, "- "+name)
	}
	return out
}

func (con *Console) deleteRecord(c echo.Context) error {
	ref, err := con.openTable(c)
	if err != nil {
		return con.tableFailed(c, err)
	}
	err = ref.records.Delete(c.Request().Context(), ref.Table.Name, c.Param("uid"), store.All)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return con.fail(c, "delete record", err)
	}
	// The row goes from the table whether this request or an earlier one removed it.
	return c.HTML(http.StatusOK, "")
}
