package gql_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// TestPlansAnswerAsGraphGophers sends each document to the API, twice (the second time it
// runs as prepared), and to graph-gophers' own executor over the same records
// (gql.NewReference): the answers must be the same bytes with the same status, and the
// trace must say that the API's executor answered (graphql.planned), but for introspection
// alone.
func TestPlansAnswerAsGraphGophers(t *testing.T) {
	ft := func(s store.Scalar, list bool) store.FieldType { return store.FieldType{Scalar: s, List: list} }
	things := table("things", "thing", []store.Field{
		{Name: "b", Type: ft(store.Boolean, false)},
		{Name: "d", Type: ft(store.DateTime, false)},
		{Name: "f", Type: ft(store.Float, false)},
		{Name: "i", Type: ft(store.Int, false), Required: true},
		{Name: "ref", Type: ft(store.ID, false)},
		{Name: "j", Type: ft(store.JSON, false)},
		{Name: "rj", Type: ft(store.JSON, false), Required: true},
		{Name: "s", Type: ft(store.String, false)},
		{Name: "tags", Type: ft(store.String, true)},
		{Name: "nums", Type: ft(store.Float, true), Required: true},
		{Name: "when", Type: ft(store.DateTime, true)},
	}...)
	// scalars has no list or JSON field, so its records are written straight from the store.
	scalars := table("scalars", "scalar", []store.Field{
		{Name: "b", Type: ft(store.Boolean, false)},
		{Name: "d", Type: ft(store.DateTime, false)},
		{Name: "f", Type: ft(store.Float, false)},
		{Name: "i", Type: ft(store.Int, false)},
		{Name: "ref", Type: ft(store.ID, false)},
		{Name: "s", Type: ft(store.String, false)},
		{Name: "ri", Type: ft(store.Int, false), Required: true},
	}...)
	tables := []gql.Table{products(), things, scalars}
	recorder := tracetest.NewSpanRecorder()
	cfg := gql.Config{
		Tables: tables, Records: records(t, tables...), Introspection: true,
		Tracer: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder)).Tracer("test"),
	}
	api, err := gql.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = nil
	ref, err := gql.NewReference(cfg)
	if err != nil {
		t.Fatal(err)
	}
	callers, refs := map[string]*httptest.Server{}, map[string]*httptest.Server{}
	for _, g := range []testGuard{{sub: "alice"}, {sub: "bob"}, {sub: "admin"}, {sub: "admin", checked: true}, {sub: "nobody"}, {sub: "broken"}} {
		name := g.sub
		if g.checked {
			name += "-checked"
		}
		for servers, api := range map[*map[string]*httptest.Server]*gql.API{&callers: api, &refs: ref} {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				api.ServeHTTP(w, r.WithContext(gql.WithGuard(r.Context(), g)))
			}))
			defer srv.Close()
			(*servers)[name] = srv
		}
	}
	alice := callers["alice"]
	var uids []string
	for i, name := range []string{"Widget", "<b>&amp;</b> \"quoted\"", "secret plan", "é ü \u2028 日本", "tab\there", "1 < 2"} {
		p := create(t, alice, map[string]any{"name": name, "price": []float64{19.99, 1e21, 0.1, 1e-7, -3, 0}[i], "author": []string{"", "ann", "", "bo\\b", "", ""}[i]})
		uids = append(uids, p.UID)
	}
	create(t, callers["bob"], map[string]any{"name": "bob's", "price": 2})
	exec(t, alice, `mutation($d: thingInput!) { creatething(data: $d) { i } }`, map[string]any{"d": map[string]any{
		"b": true, "d": "2026-11-22T11:04:05.123456+01:00", "f": 1.5e300, "i": -7, "ref": "<id>",
		"j": map[string]any{"k": []any{1, "two", nil, "<&>"}}, "rj": "x", "s": "\x01 ctl",
		"tags": []any{"red", "a&b"}, "nums": []any{0.5, 1e23, 1e-6, 5e-324, 123456789.125, -1e-7, 1e20}, "when": []any{"2026-01-02T03:04:05Z"},
	}}).ok(t)
	exec(t, alice, `mutation { creatething(data: {i: 1, rj: 0, nums: []}) { i } }`, nil).ok(t)
	exec(t, alice, `mutation { createscalar(data: {b: false, d: "2026-02-03T04:05:06.7+02:00", f: -0.25, i: -2147483648, ref: "x-1", s: "plain", ri: 2147483647}) { ri } }`, nil).ok(t)
	exec(t, alice, `mutation { createscalar(data: {ri: 0}) { ri } }`, nil).ok(t)
	create(t, alice, map[string]any{"name": "no author", "price": 1})

	// bomb's fragments spread the next one twice: 2^24 fields once expanded.
	bomb := `{ products(limit: 1) { ...F0 } }`
	for i := range 24 {
		bomb += fmt.Sprintf(" fragment F%d on product { ...F%d ...F%d }", i, i+1, i+1)
	}
	bomb += " fragment F24 on product { name }"
	const fetch = `query products($uid: ID) { products(uid: $uid) { uid name price author createdAt updatedAt } }`
	const allThings = `{ things { uid id b d f i ref j rj s tags nums when createdAt updatedAt } }`
	cases := []struct {
		name, caller, query, opName string
		vars                        map[string]any
		planned                     bool
	}{
		{"seed fetch", "alice", fetch, "", map[string]any{"uid": uids[0]}, true},
		{"seed fetch, escaped name", "alice", fetch, "", map[string]any{"uid": uids[1]}, true},
		{"seed fetch, unicode", "alice", fetch, "", map[string]any{"uid": uids[3]}, true},
		{"seed fetch, uid absent", "alice", fetch, "", nil, true},
		{"seed fetch, uid null", "alice", fetch, "", map[string]any{"uid": nil}, true},
		{"seed fetch, missing record", "alice", fetch, "", map[string]any{"uid": "nope"}, true},
		{"seed fetch, another's record", "bob", fetch, "", map[string]any{"uid": uids[0]}, true},
		{"seed fetch, forbidden by the rule", "nobody", fetch, "", map[string]any{"uid": uids[0]}, true},
		{"seed fetch, rule checks each record", "admin-checked", fetch, "", map[string]any{"uid": uids[2]}, true},
		{"seed fetch, rule fails", "broken", fetch, "", map[string]any{"uid": uids[0]}, true},
		{"seed fetch, uid a number", "alice", fetch, "", map[string]any{"uid": 42}, true},
		{"seed fetch, uid an object", "alice", fetch, "", map[string]any{"uid": map[string]any{"a": 1}}, true},
		{"seed fetch, uid empty", "alice", fetch, "", map[string]any{"uid": ""}, true},
		{"seed list", "alice", `query products { products { uid name price author createdAt updatedAt } }`, "", nil, true},
		{"list, checked rule", "admin-checked", `{ products { name } }`, "", nil, true},
		{"where, orderBy, limit literal", "admin", `{ products(where: {price: {gt: 1}}, orderBy: [{field: price, direction: DESC}], limit: 2) { name price } }`, "", nil, true},
		{"where, orderBy, limit, offset variables", "admin", `query($w: productWhere, $o: [productOrderBy!], $l: Int, $off: Int) { products(where: $w, orderBy: $o, limit: $l, offset: $off) { name price } }`, "",
			map[string]any{"w": map[string]any{"name": map[string]any{"ne": "Widget"}}, "o": map[string]any{"field": "name"}, "l": 3, "off": 1}, true},
		{"variables in a literal", "admin", `query($p: Float) { products(where: {price: {gte: $p}}) { name } }`, "", map[string]any{"p": 2}, true},
		{"variable absent in a literal", "admin", `query($p: Float) { products(where: {price: {gte: $p}}) { name } }`, "", nil, true},
		{"variable default", "admin", `query($l: Int = 1) { products(limit: $l) { name } }`, "", nil, true},
		{"variable default, given", "admin", `query($l: Int = 1) { products(limit: $l) { name } }`, "", map[string]any{"l": 2}, true},
		{"required variable absent", "alice", `query($uid: ID!) { products(uid: $uid) { name } }`, "", nil, true},
		{"required variable given", "alice", `query($uid: ID!) { products(uid: $uid) { name } }`, "", map[string]any{"uid": uids[0]}, true},
		{"limit a string", "alice", `query($l: Int) { products(limit: $l) { name } }`, "", map[string]any{"l": "x"}, true},
		{"limit 1.5", "alice", `query($l: Int) { products(limit: $l) { name } }`, "", map[string]any{"l": 1.5}, true},
		{"limit over the maximum", "alice", `query($l: Int) { products(limit: $l) { name } }`, "", map[string]any{"l": 5000}, true},
		{"limit 0", "alice", `query($l: Int) { products(limit: $l) { name } }`, "", map[string]any{"l": 0}, true},
		{"where of a wrong shape", "alice", `query($w: productWhere) { products(where: $w) { name } }`, "", map[string]any{"w": map[string]any{"bogus": 1}}, true},
		{"where not an object", "alice", `query($w: productWhere) { products(where: $w) { name } }`, "", map[string]any{"w": 3}, true},
		{"orderBy unknown enum", "alice", `query($o: [productOrderBy!]) { products(orderBy: $o) { name } }`, "", map[string]any{"o": []any{map[string]any{"field": "nope"}}}, true},
		{"orderBy null element", "alice", `query($o: [productOrderBy!]) { products(orderBy: $o) { name } }`, "", map[string]any{"o": []any{nil}}, true},
		{"uid literal", "alice", `{ products(uid: "` + uids[0] + `") { name } }`, "", nil, true},
		{"uid Int literal", "alice", `{ products(uid: 5) { name } }`, "", nil, true},
		{"aliases", "admin", `{ a: products(limit: 1) { id: uid n: name } b: products(offset: 1, limit: 1) { name } }`, "", nil, true},
		{"same field twice", "admin", `{ products(limit: 1) { name name n: name price } }`, "", nil, true},
		{"root field twice", "admin", `{ products(limit: 1) { name } products(limit: 1) { price } }`, "", nil, true},
		{"__typename", "admin", `{ __typename products(limit: 2) { __typename t: __typename name } }`, "", nil, true},
		{"@include and @skip", "admin", `query($yes: Boolean!, $no: Boolean!) { products(limit: 2) { name price @include(if: $yes) author @skip(if: $yes) uid @include(if: $no) } x: products(limit: 1) @skip(if: $no) { name } }`, "",
			map[string]any{"yes": true, "no": false}, true},
		{"@include and @skip, reversed", "admin", `query($yes: Boolean!, $no: Boolean!) { products(limit: 2) { name price @include(if: $yes) author @skip(if: $yes) uid @include(if: $no) } x: products(limit: 1) @skip(if: $no) { name } }`, "",
			map[string]any{"yes": false, "no": true}, true},
		{"@skip literal", "admin", `{ products(limit: 1) { name @skip(if: true) price } }`, "", nil, true},
		{"@include a string", "admin", `query($c: Boolean!) { products(limit: 1) { name @include(if: $c) } }`, "", map[string]any{"c": "yes"}, true},
		{"fragments", "admin", `query { products(limit: 2) { ...F ... on product { price } ... @include(if: false) { author } } } fragment F on product { name uid }`, "", nil, true},
		{"root fragment", "admin", `{ ...Q } fragment Q on Query { products(limit: 1) { name } }`, "", nil, true},
		{"duplicate through a fragment", "admin", `{ products(limit: 1) { name ...F } } fragment F on product { name price }`, "", nil, true},
		{"operation name", "admin", `query A { products(limit: 1) { name } } query B { productsCount }`, "A", nil, true},
		{"operation name, other operation", "admin", `query A { products(limit: 1) { name } } query B { productsCount }`, "B", nil, true},
		{"operation name missing", "admin", `query A { products(limit: 1) { name } } query B { productsCount }`, "", nil, true},
		{"operation name unknown", "admin", `query A { products(limit: 1) { name } }`, "C", nil, true},
		{"every field type", "alice", allThings, "", nil, true},
		{"every scalar, set and not", "alice", `{ scalars { uid id b d f i ref s ri createdAt updatedAt __typename } }`, "", nil, true},
		{"count", "alice", `{ productsCount }`, "", nil, true},
		{"connection", "alice", `{ productsConnection(first: 1) { edges { node { name } } } }`, "", nil, true},
		{"list and count", "alice", `{ products { name } productsCount }`, "", nil, true},
		{"introspection", "alice", `{ __schema { queryType { name } } }`, "", nil, false},
		{"only __typename", "alice", `{ __typename }`, "", nil, true},
		{"mutation", "alice", `mutation { createproduct(data: {name: "m", price: 1}) { name } }`, "", nil, true},
		{"unknown field", "alice", `{ products { nope } }`, "", nil, true},
		{"syntax error", "alice", `{ products { name } } }`, "", nil, true},
		{"fragments that multiply", "alice", bomb, "", nil, true},
		{"escaped string literal", "alice", `{ products(where: {name: {eq: "Wid\u0067et"}}) { name } }`, "", nil, true},
		{"escapes Go reads differently", "alice", `{ products(where: {name: {in: ["\"quoted\" \t", "\u00e9 \u00fc \u2028 \u65e5\u672c"]}}) { name } }`, "", nil, true},
		{"an escape Go does not read", "alice", `{ products(where: {name: {eq: "Wid\/get"}}) { name } }`, "", nil, true},
		{"block string", "alice", `{ products(where: {name: {eq: """Widget"""}}) { name } }`, "", nil, true},
	}
	planned := func() (bool, bool) {
		spans := recorder.Ended()
		if len(spans) == 0 {
			return false, false
		}
		for _, kv := range spans[len(spans)-1].Attributes() {
			if kv.Key == attribute.Key("graphql.planned") {
				return kv.Value.AsBool(), true
			}
		}
		return false, false
	}
	for _, c := range cases {
		send := func(servers map[string]*httptest.Server) (int, string) {
			b, err := json.Marshal(map[string]any{"query": c.query, "operationName": c.opName, "variables": c.vars})
			if err != nil {
				t.Fatal(err)
			}
			return post(t, servers[c.caller], string(b))
		}
		wantStatus, want := send(refs)
		for sent := 1; sent <= 2; sent++ {
			status, got := send(callers)
			if status != wantStatus || got != want {
				t.Errorf("%s: sent %d times\n got %d %s\nwant %d %s", c.name, sent, status, got, wantStatus, want)
			}
			if p, ok := planned(); !ok || p != c.planned {
				t.Errorf("%s: planned %v (traced %v), want %v: %s", c.name, p, ok, c.planned, got)
			}
		}
	}
}
