package gql_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// The oracle's run: -oracle.n documents (make bench runs many more than CI), from
// -oracle.seed. A failure names the seed, the schema and the document, so that
// `go test -run TestOracle ./gql -oracle.seed=S -oracle.n=N` replays it.
var (
	oracleN    = flag.Int("oracle.n", 240, "documents the oracle test generates")
	oracleSeed = flag.Uint64("oracle.seed", 34, "seed of the oracle test's generator")
)

// oracleDocsPerSchema is how many documents each generated schema answers.
const oracleDocsPerSchema = 40

// TestOracle is the property test of the API's execution: it generates acyclic project
// schemas (tables of every field type, relations one and many), records (fields missing,
// null, lists) and documents (aliases, fragments inline and named, variables with defaults,
// @skip and @include, relations nested up to three deep, connections, counts, aggregates,
// filters and limits, arguments that answer errors), and sends each, as one of several
// callers, to the API and to graph-gophers' own executor over the same records
// (gql.NewReference): both must answer the same status and bytes. The API answers each
// document twice, since a document sent again runs as prepared.
func TestOracle(t *testing.T) {
	schemas := max(1, (*oracleN+oracleDocsPerSchema-1)/oracleDocsPerSchema)
	failures := 0
	for i := range schemas {
		r := rand.New(rand.NewPCG(*oracleSeed, uint64(i)))
		o := newOracle(t, r)
		for j := range min(oracleDocsPerSchema, *oracleN-i*oracleDocsPerSchema) {
			caller, query, vars := o.document()
			body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
			if err != nil {
				t.Fatal(err)
			}
			wantStatus, want := o.send(o.ref, caller, body)
			for sent := 1; sent <= 2; sent++ {
				status, got := o.send(o.api, caller, body)
				if status == wantStatus && sameAnswer(got, want) {
					continue
				}
				failures++
				t.Errorf("seed %d, schema %d, document %d (replay: go test -run TestOracle ./gql -oracle.seed=%d -oracle.n=%d), sent %d times, as %s (checked %v)\ntables: %s\nconfig: %s\nbody: %s\n got %d %s\nwant %d %s",
					*oracleSeed, i, j, *oracleSeed, (i+1)*oracleDocsPerSchema, sent, caller.sub, caller.checked, o.tablesJSON(), o.limits, body, status, got, wantStatus, want)
				break
			}
			if failures >= 5 {
				t.Fatal("stopped after 5 failures")
			}
		}
	}
}

// sameAnswer reports whether got and want are the same bytes, but for the order of their
// errors when there are several: graph-gophers resolves a query's root fields concurrently
// and lists their errors in the order they failed.
func sameAnswer(got, want string) bool {
	if got == want {
		return true
	}
	var g, w struct {
		Data   json.RawMessage   `json:"data"`
		Errors []json.RawMessage `json:"errors"`
	}
	if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	if spent(g.Errors) && spent(w.Errors) && string(g.Data) == string(w.Data) {
		// Root fields resolved at once race for the budget: which one spends it, and how
		// much was counted then, is the scheduler's choice.
		return true
	}
	if len(w.Errors) < 2 {
		return false
	}
	// The data and the errors as they were written, the errors' list aside.
	gs, ws := strings.Replace(got, errorsText(g.Errors), "", 1), strings.Replace(want, errorsText(w.Errors), "", 1)
	sortRaw := func(l []json.RawMessage) []json.RawMessage {
		return slices.SortedFunc(slices.Values(l), func(a, b json.RawMessage) int { return strings.Compare(string(a), string(b)) })
	}
	return gs == ws && slices.EqualFunc(sortRaw(g.Errors), sortRaw(w.Errors), func(a, b json.RawMessage) bool { return string(a) == string(b) })
}

// spent reports whether errs is the one error of a spent response budget.
func spent(errs []json.RawMessage) bool {
	return len(errs) == 1 && strings.Contains(string(errs[0]), `"code":"RESULT_TOO_LARGE"`)
}

// errorsText is the errors member's list as the answer writes it.
func errorsText(errs []json.RawMessage) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = string(e)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// oracle is one generated schema with its records, served by the API and the reference.
type oracle struct {
	t        testing.TB
	r        *rand.Rand
	tables   []gql.Table
	limits   string
	api, ref *gql.API
	uids     map[string][]string // by table
	// the document being generated: its variables, fragments and a counter for names.
	varDefs   []string
	vars      map[string]any
	fragments []string
	n         int
	// written: the record being selected is one the mutation writes, whose uid and times
	// differ between the API and the reference.
	written bool
}

var oracleCallers = []testGuard{{sub: "alice"}, {sub: "alice"}, {sub: "bob"}, {sub: "admin"}, {sub: "admin", checked: true}, {sub: "nobody"}, {sub: "broken"}}

var oracleScalars = []store.Scalar{store.String, store.Int, store.Float, store.Boolean, store.ID, store.DateTime, store.JSON}

func newOracle(t testing.TB, r *rand.Rand) *oracle {
	o := &oracle{t: t, r: r, uids: map[string][]string{}}
	nt := 2 + r.IntN(2)
	for i := range nt {
		tb := table(fmt.Sprintf("t%d", i), fmt.Sprintf("rec%d", i), store.Field{Name: "name", Type: store.FieldType{Scalar: store.String}})
		for f := range 2 + r.IntN(5) {
			tb.Fields = append(tb.Fields, store.Field{
				Name:     fmt.Sprintf("f%d", f),
				Type:     store.FieldType{Scalar: oracleScalars[r.IntN(len(oracleScalars))], List: r.IntN(4) == 0},
				Required: r.IntN(5) == 0,
			})
		}
		o.tables = append(o.tables, tb)
	}
	// Relations lead only to tables later in the list: the schema has no cycle.
	for i := range nt {
		for j := i + 1; j < nt; j++ {
			if r.IntN(3) > 0 {
				key := fmt.Sprintf("k%d", j)
				o.tables[i].Fields = append(o.tables[i].Fields, store.Field{Name: key, Type: store.FieldType{Scalar: store.ID}})
				o.tables[i].Relations = append(o.tables[i].Relations, gql.Relation{Name: fmt.Sprintf("one%d", j), Table: o.tables[j].Name, Field: key})
			}
			if r.IntN(3) > 0 {
				key := fmt.Sprintf("p%d", i)
				o.tables[j].Fields = append(o.tables[j].Fields, store.Field{Name: key, Type: store.FieldType{Scalar: store.String}})
				o.tables[i].Relations = append(o.tables[i].Relations, gql.Relation{Name: fmt.Sprintf("many%d", j), Table: o.tables[j].Name, ForeignField: key})
			}
		}
	}
	cfg := gql.Config{Tables: o.tables, Records: records(t, o.tables...), Introspection: true, Logger: slog.New(slog.DiscardHandler)}
	// Some schemas run under small limits, so that documents reach them.
	switch r.IntN(6) {
	case 0:
		cfg.MaxResultBytes = 1500
	case 1:
		cfg.MaxRecords = 12
	case 2:
		cfg.MaxSelections, cfg.MaxDepth = 30, 4
	case 3:
		cfg.MaxCost, cfg.MaxLimit, cfg.DefaultLimit = 40, 5, 3
	}
	o.limits = fmt.Sprintf("MaxResultBytes %d, MaxRecords %d, MaxSelections %d, MaxDepth %d, MaxCost %d, MaxLimit %d, DefaultLimit %d",
		cfg.MaxResultBytes, cfg.MaxRecords, cfg.MaxSelections, cfg.MaxDepth, cfg.MaxCost, cfg.MaxLimit, cfg.DefaultLimit)
	var err error
	if o.api, err = gql.New(cfg); err != nil {
		t.Fatalf("gql.New: %v\ntables: %s", err, o.tablesJSON())
	}
	if o.ref, err = gql.NewReference(cfg); err != nil {
		t.Fatal(err)
	}
	o.fill()
	return o
}

func (o *oracle) tablesJSON() string {
	js, _ := json.Marshal(o.tables)
	return string(js)
}

// send posts body to api as caller; the status and the answer.
func (o *oracle) send(api *gql.API, caller testGuard, body []byte) (int, string) {
	req := httptest.NewRequest(http.MethodPost, "/api/v1/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	api.ServeHTTP(w, req.WithContext(gql.WithGuard(req.Context(), caller)))
	return w.Code, w.Body.String()
}

// fill creates each table's records, then points their relation keys at one another's.
func (o *oracle) fill() {
	for _, tb := range o.tables {
		for range o.r.IntN(7) {
			data := map[string]any{}
			for _, f := range tb.Fields {
				if f.Required || o.r.IntN(3) > 0 {
					data[f.Name] = o.value(f.Type, f.Required)
				}
			}
			caller := testGuard{sub: []string{"alice", "alice", "bob"}[o.r.IntN(3)]}
			uid := o.write(caller, fmt.Sprintf(`mutation($d: %sInput!) { create%s(data: $d) { uid } }`, tb.TypeName, tb.TypeName), map[string]any{"d": data})
			o.uids[tb.Name] = append(o.uids[tb.Name], uid)
		}
	}
	for _, tb := range o.tables {
		var keys []string
		for _, f := range tb.Fields {
			if f.Name[0] == 'k' || f.Name[0] == 'p' {
				keys = append(keys, f.Name)
			}
		}
		if len(keys) == 0 {
			continue
		}
		for _, uid := range o.uids[tb.Name] {
			data := map[string]any{}
			for _, k := range keys {
				target := o.tables[k[1]-'0'].Name
				if all := o.uids[target]; len(all) > 0 && o.r.IntN(5) > 0 {
					data[k] = all[o.r.IntN(len(all))]
				} else if o.r.IntN(2) == 0 {
					data[k] = "nope"
				}
			}
			o.write(testGuard{sub: "admin"}, fmt.Sprintf(`mutation($u: ID, $d: %sInput!) { update%s(uid: $u, data: $d) { uid } }`, tb.TypeName, tb.TypeName), map[string]any{"u": uid, "d": data})
		}
	}
}

// write runs a mutation on the reference; the uid it answers ("" when refused).
func (o *oracle) write(caller testGuard, query string, vars map[string]any) string {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	status, out := o.send(o.ref, caller, body)
	var res struct {
		Data   map[string]*struct{ UID string }
		Errors []json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &res); status != http.StatusOK || err != nil {
		o.t.Fatalf("%s: %d %s", query, status, out)
	}
	for _, v := range res.Data {
		if v != nil {
			return v.UID
		}
	}
	return ""
}

var (
	oracleStrings = []string{"", "a", "b", "secret plan", "<b>&amp;</b>", "é ü 日本", "tab\there", "Zed"}
	oracleTimes   = []string{"2026-11-22T11:04:05.123456+01:00", "2026-01-02T03:04:05Z", "1999-12-31T23:59:59.5-08:00"}
	oracleFloats  = []float64{0, 0.1, -2.5, 1e21, 19.99, 1e-7, 3}
	oracleInts    = []int{0, 1, -7, 42, 2147483647, -2147483648}
)

// value is a random value of a field of type ft: null sometimes when not required.
func (o *oracle) value(ft store.FieldType, required bool) any {
	if !required && o.r.IntN(8) == 0 {
		return nil
	}
	if ft.List {
		l := []any{}
		for range o.r.IntN(4) {
			l = append(l, o.scalar(ft.Scalar))
		}
		return l
	}
	return o.scalar(ft.Scalar)
}

func (o *oracle) scalar(s store.Scalar) any {
	switch s {
	case store.String:
		return oracleStrings[o.r.IntN(len(oracleStrings))]
	case store.Int:
		return oracleInts[o.r.IntN(len(oracleInts))]
	case store.Float:
		return oracleFloats[o.r.IntN(len(oracleFloats))]
	case store.Boolean:
		return o.r.IntN(2) == 0
	case store.ID:
		return []string{"x1", "x2", "<id>"}[o.r.IntN(3)]
	case store.DateTime:
		return oracleTimes[o.r.IntN(len(oracleTimes))]
	}
	return []any{1, "two", map[string]any{"k": []any{1, "<&>", nil}}, []any{}, true}[o.r.IntN(5)]
}

// enum is a value written bare in a document; in a variable, a string.
type enum string

// literal writes v as a GraphQL value.
func literal(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case enum:
		return string(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = literal(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + literal(v[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	js, _ := json.Marshal(v)
	return string(js)
}

// document generates a document, its variables and who sends it.
func (o *oracle) document() (testGuard, string, map[string]any) {
	o.varDefs, o.vars, o.fragments, o.n = nil, map[string]any{}, nil, 0
	var sels []string
	op, root := "query", "Query"
	if o.r.IntN(5) == 0 {
		op, root = "mutation", "Mutation"
	}
	// A mutation's updates run alone: a second write, or a read of a record written, would
	// see what the reference's run of the document wrote.
	update := o.r.IntN(3) == 0
	for range 1 + o.r.IntN(3) {
		if op == "mutation" {
			sels = append(sels, o.mutationField(update))
			if update {
				break
			}
			continue
		}
		sels = append(sels, o.rootField())
	}
	if o.r.IntN(12) == 0 {
		sels = append(sels, "nope")
	}
	set := "{ " + strings.Join(sels, " ") + " }"
	if o.r.IntN(8) == 0 {
		// The root's fields in a fragment of their own.
		name := o.name("Q")
		o.fragments = append(o.fragments, fmt.Sprintf("fragment %s on %s %s", name, root, set))
		set = "{ ..." + name + " }"
	}
	if o.r.IntN(2) == 0 {
		op += " Op"
	}
	if len(o.varDefs) > 0 {
		op += "(" + strings.Join(o.varDefs, ", ") + ")"
	}
	doc := op + " " + set
	if len(o.fragments) > 0 {
		doc += " " + strings.Join(o.fragments, " ")
	}
	return oracleCallers[o.r.IntN(len(oracleCallers))], doc, o.vars
}

func (o *oracle) name(prefix string) string {
	o.n++
	return prefix + strconv.Itoa(o.n)
}

// alias is an alias for a field, sometimes none.
func (o *oracle) alias() string {
	if o.r.IntN(3) == 0 {
		return o.name("a") + ": "
	}
	return ""
}

// directives are @include or @skip for a selection, sometimes none.
func (o *oracle) directives() string {
	if o.r.IntN(5) > 0 {
		return ""
	}
	dir := []string{"include", "skip"}[o.r.IntN(2)]
	var val any = o.r.IntN(2) == 0
	if o.r.IntN(10) == 0 {
		val = "yes"
	}
	return fmt.Sprintf(" @%s(if: %s)", dir, o.arg("Boolean!", val, false))
}

// arg writes an argument's value: a literal, or a variable of type typ (given in the
// request, or left to its default, or absent).
func (o *oracle) arg(typ string, v any, inLiteral bool) string {
	if inLiteral || o.r.IntN(2) == 0 {
		return literal(v)
	}
	name := o.name("v")
	def := ""
	switch o.r.IntN(6) {
	case 0:
		if !strings.HasSuffix(typ, "!") && v != nil {
			def = " = " + literal(v)
			break
		}
		fallthrough
	default:
		o.vars[name] = v // enums marshal as strings
	case 1:
		// Absent: null, or an error when the type is non-null.
	}
	o.varDefs = append(o.varDefs, "$"+name+": "+typ+def)
	return "$" + name
}

// mutationField is one root field of a mutation of a random table: an update, or a create
// or a delete. The API and the reference each run it, so its answer must not depend on
// which ran first: what it creates is selected without uid and times, updates set the same
// values again, deletes find nothing.
func (o *oracle) mutationField(update bool) string {
	tb := o.tables[o.r.IntN(len(o.tables))]
	alias := o.alias()
	written := func() string {
		o.written = true
		defer func() { o.written = false }()
		return o.record(tb, 0)
	}
	n := o.r.IntN(4)
	if update {
		n = 4 + o.r.IntN(2)
	}
	switch n {
	case 0:
		return fmt.Sprintf("%screate%s(data: %s) %s", alias, tb.TypeName, o.arg(tb.TypeName+"Input!", o.data(tb, true), false), written())
	case 1:
		items := []any{o.data(tb, true), o.data(tb, true)}
		return fmt.Sprintf("%screate%s(data: %s) %s", alias, tb.Name, o.arg("["+tb.TypeName+"Input!]!", items, false), written())
	case 4:
		uid := "nope"
		if all := o.uids[tb.Name]; len(all) > 0 && o.r.IntN(4) > 0 {
			uid = all[o.r.IntN(len(all))]
		}
		return fmt.Sprintf("%supdate%s(uid: %s, data: %s) %s", alias, tb.TypeName, o.arg("ID", uid, false), o.arg(tb.TypeName+"Input!", o.data(tb, false), false), written())
	case 5:
		where := map[string]any{"name": map[string]any{"eq": o.scalar(store.String)}}
		return fmt.Sprintf("%supdate%s(where: %s, data: %s)", alias, tb.Name, o.arg(tb.TypeName+"Where!", where, false), o.arg(tb.TypeName+"Input!", o.data(tb, false), false))
	case 2:
		return fmt.Sprintf(`%sdelete%s(where: {uid: {eq: "nope"}})`, alias, tb.Name)
	}
	return fmt.Sprintf(`%sdelete%s(uid: "nope")`, alias, tb.TypeName)
}

// data is the data of a create (with the required fields, most of the time) or of an
// update (never of name, which updates select by).
func (o *oracle) data(tb gql.Table, create bool) map[string]any {
	data := map[string]any{}
	for _, f := range tb.Fields {
		switch {
		case f.Name == "name":
			if create {
				// Never a name an update selects by (a missing name is ""): those match
				// the same records on both.
				data[f.Name] = []string{"new", "secret new"}[o.r.IntN(2)]
			}
		case f.Name[0] == 'k' || f.Name[0] == 'p':
			if all := o.uids[o.tables[f.Name[1]-'0'].Name]; len(all) > 0 && o.r.IntN(2) == 0 {
				data[f.Name] = all[o.r.IntN(len(all))]
			}
		case create && f.Required && o.r.IntN(12) > 0, o.r.IntN(2) == 0:
			data[f.Name] = o.value(f.Type, f.Required)
			if o.r.IntN(30) == 0 {
				// A value of another type: refused by validation, or by the API.
				data[f.Name] = o.scalar(oracleScalars[o.r.IntN(len(oracleScalars))])
			}
		}
	}
	return data
}

// rootField is one root field of a query on a random table.
func (o *oracle) rootField() string {
	tb := o.tables[o.r.IntN(len(o.tables))]
	alias, dirs := o.alias(), o.directives()
	var args []string
	addArg := func(name, typ string, v any) {
		args = append(args, name+": "+o.arg(typ, v, false))
	}
	where := func() {
		if o.r.IntN(2) == 0 {
			addArg("where", tb.TypeName+"Where", o.where(tb, 0))
		}
	}
	switch o.r.IntN(8) {
	case 0:
		where()
		return fmt.Sprintf("%s%sCount%s%s", alias, tb.Name, argList(args), dirs)
	case 1:
		where()
		o.orderBy(tb, addArg)
		if o.r.IntN(2) == 0 {
			addArg("first", "Int", o.limit())
		}
		if o.r.IntN(6) == 0 {
			addArg("after", "String", "x")
		}
		return fmt.Sprintf("%s%sConnection%s%s %s", alias, tb.Name, argList(args), dirs, o.connection(tb))
	case 2:
		where()
		return fmt.Sprintf("%s%sAggregate%s%s %s", alias, tb.Name, argList(args), dirs, o.aggregate(tb))
	case 3:
		return alias + "__typename" + dirs
	}
	if n := o.r.IntN(8); n < 3 {
		uid := "nope"
		if all := o.uids[tb.Name]; len(all) > 0 && o.r.IntN(4) > 0 {
			uid = all[o.r.IntN(len(all))]
		}
		if n == 0 {
			// The record whose id it is, or null.
			addArg("id", "ID!", uid)
			return fmt.Sprintf("%s%s%s%s %s", alias, tb.TypeName, argList(args), dirs, o.record(tb, 0))
		}
		addArg("uid", "ID", uid)
	}
	where()
	o.orderBy(tb, addArg)
	if o.r.IntN(2) == 0 {
		addArg("limit", "Int", o.limit())
	}
	if o.r.IntN(4) == 0 {
		addArg("offset", "Int", []any{0, 1, 2, -1}[o.r.IntN(4)])
	}
	return fmt.Sprintf("%s%s%s%s %s", alias, tb.Name, argList(args), dirs, o.record(tb, 0))
}

func argList(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return "(" + strings.Join(args, ", ") + ")"
}

// limit is a value of limit or first: mostly small, sometimes one the API refuses.
func (o *oracle) limit() any {
	return []any{0, 1, 2, 3, 100, -1, 5000, 1.5}[o.r.IntN(8)]
}

func (o *oracle) orderBy(tb gql.Table, addArg func(name, typ string, v any)) {
	if o.r.IntN(3) > 0 {
		return
	}
	keys := []string{"uid", "createdAt"}
	for _, f := range tb.Fields {
		if !f.Type.List && f.Type.Scalar != store.JSON {
			keys = append(keys, f.Name)
		}
	}
	var order []any
	for range 1 + o.r.IntN(2) {
		e := map[string]any{"field": enum(keys[o.r.IntN(len(keys))])}
		if o.r.IntN(2) == 0 {
			e["direction"] = enum([]string{"ASC", "DESC"}[o.r.IntN(2)])
		}
		order = append(order, e)
	}
	// A uid last makes the order total: records with equal keys come in any order.
	order = append(order, map[string]any{"field": enum("uid")})
	addArg("orderBy", "["+tb.TypeName+"OrderBy!]", order)
}

// where is a random filter of tb.
func (o *oracle) where(tb gql.Table, depth int) map[string]any {
	w := map[string]any{}
	for range 1 + o.r.IntN(2) {
		if depth < 1 && o.r.IntN(6) == 0 {
			w[[]string{"and", "or"}[o.r.IntN(2)]] = []any{o.where(tb, depth+1), o.where(tb, depth+1)}
			continue
		}
		if depth < 1 && o.r.IntN(10) == 0 {
			w["not"] = o.where(tb, depth+1)
			continue
		}
		var fields []store.Field
		for _, f := range tb.Fields {
			if f.Type.Scalar != store.JSON {
				fields = append(fields, f)
			}
		}
		if len(fields) == 0 {
			w["uid"] = map[string]any{"ne": "nope"}
			continue
		}
		f := fields[o.r.IntN(len(fields))]
		var op string
		var v any
		switch o.r.IntN(7) {
		case 0:
			op, v = "isNull", o.r.IntN(2) == 0
		case 1:
			op, v = "in", []any{o.scalar(f.Type.Scalar), o.scalar(f.Type.Scalar)}
		case 2:
			if f.Type.List {
				op, v = "has", o.scalar(f.Type.Scalar)
				break
			}
			fallthrough
		case 3:
			if f.Type.Scalar != store.Boolean {
				op = []string{"gt", "gte", "lt", "lte"}[o.r.IntN(4)]
				v = o.scalar(f.Type.Scalar)
				break
			}
			fallthrough
		default:
			op, v = []string{"eq", "ne"}[o.r.IntN(2)], o.scalar(f.Type.Scalar)
		}
		if f.Type.Scalar == store.String && o.r.IntN(4) == 0 {
			op = []string{"contains", "icontains", "startsWith"}[o.r.IntN(3)]
		}
		if o.r.IntN(25) == 0 {
			// A value of another type: refused by validation, or by the API.
			v = o.scalar(oracleScalars[o.r.IntN(len(oracleScalars)-1)])
		}
		w[f.Name] = map[string]any{op: v}
	}
	return w
}

// record is the selection set of a record of tb at depth (root: 0).
func (o *oracle) record(tb gql.Table, depth int) string {
	var sels []string
	for range 1 + o.r.IntN(5) {
		sels = append(sels, o.recordSelection(tb, depth))
	}
	return "{ " + strings.Join(sels, " ") + " }"
}

func (o *oracle) recordSelection(tb gql.Table, depth int) string {
	switch n := o.r.IntN(20); {
	case n == 0 && depth < 3:
		return "... on " + tb.TypeName + o.directives() + " " + o.record(tb, depth)
	case n == 1 && depth < 3:
		name := o.name("F")
		o.fragments = append(o.fragments, fmt.Sprintf("fragment %s on %s %s", name, tb.TypeName, o.record(tb, depth)))
		return "..." + name + o.directives()
	case n < 6 && depth < 3 && len(tb.Relations) > 0:
		rel := tb.Relations[o.r.IntN(len(tb.Relations))]
		target := o.table(rel.Table)
		var args []string
		if rel.ForeignField != "" {
			addArg := func(name, typ string, v any) { args = append(args, name+": "+o.arg(typ, v, false)) }
			if o.r.IntN(3) == 0 {
				addArg("where", target.TypeName+"Where", o.where(target, 0))
			}
			o.orderBy(target, addArg)
			if o.r.IntN(3) == 0 {
				addArg("limit", "Int", o.limit())
			}
		}
		// Relations get an alias always: the same relation with other arguments under one
		// key is a conflict validation reports, and documents should mostly run. Some are
		// selected twice under their key, each time with its own directives.
		alias := o.name("r")
		sel := fmt.Sprintf("%s: %s%s%s %s", alias, rel.Name, argList(args), o.directives(), o.record(target, depth+1))
		if o.r.IntN(6) == 0 {
			sel += fmt.Sprintf(" %s: %s%s%s %s", alias, rel.Name, argList(args), o.directives(), o.record(target, depth+1))
		}
		return sel
	case n == 6:
		return o.alias() + "__typename" + o.directives()
	case n == 7 && !(o.written && depth == 0):
		return o.alias() + []string{"uid", "id", "createdAt", "updatedAt"}[o.r.IntN(4)] + o.directives()
	case n == 8 && o.r.IntN(10) == 0:
		return "nope"
	}
	f := tb.Fields[o.r.IntN(len(tb.Fields))]
	return o.alias() + f.Name + o.directives()
}

func (o *oracle) table(name string) gql.Table {
	i := slices.IndexFunc(o.tables, func(t gql.Table) bool { return t.Name == name })
	return o.tables[i]
}

// connection is the selection set of a connection of tb.
func (o *oracle) connection(tb gql.Table) string {
	var sels []string
	for range 1 + o.r.IntN(3) {
		switch o.r.IntN(5) {
		case 0:
			sels = append(sels, o.alias()+"totalCount")
		case 1:
			sels = append(sels, "pageInfo { hasNextPage endCursor __typename }")
		case 2:
			sels = append(sels, "__typename")
		default:
			sels = append(sels, fmt.Sprintf("edges { %scursor node %s }", o.alias(), o.record(tb, 1)))
		}
	}
	return "{ " + strings.Join(sels, " ") + " }"
}

// aggregate is the selection set of an aggregate of tb.
func (o *oracle) aggregate(tb gql.Table) string {
	var nums, bounds []string
	for _, f := range tb.Fields {
		if f.Type.List {
			continue
		}
		switch f.Type.Scalar {
		case store.Int, store.Float:
			nums = append(nums, f.Name)
			bounds = append(bounds, f.Name)
		case store.String, store.ID, store.DateTime:
			bounds = append(bounds, f.Name)
		}
	}
	bounds = append(bounds, "createdAt", "updatedAt")
	pick := func(keys []string) string {
		var out []string
		for range 1 + o.r.IntN(3) {
			out = append(out, o.alias()+keys[o.r.IntN(len(keys))])
		}
		return "{ " + strings.Join(out, " ") + " }"
	}
	var sels []string
	for range 1 + o.r.IntN(3) {
		switch o.r.IntN(4) {
		case 0:
			sels = append(sels, o.alias()+"count")
		case 1:
			if len(nums) > 0 {
				sels = append(sels, o.alias()+[]string{"sum", "avg"}[o.r.IntN(2)]+" "+pick(nums))
				continue
			}
			fallthrough
		default:
			sels = append(sels, o.alias()+[]string{"min", "max"}[o.r.IntN(2)]+" "+pick(bounds))
		}
	}
	return "{ " + strings.Join(sels, " ") + " }"
}
