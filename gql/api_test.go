package gql_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

const createDoc = `mutation($data: productInput!) { createProduct(data: $data) { uid name price author createdAt updatedAt } }`

type product struct {
	UID       string   `json:"uid"`
	Name      string   `json:"name"`
	Price     float64  `json:"price"`
	Author    string   `json:"author"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
	Extra     *float64 `json:"extra"`
}

func create(t testing.TB, srv *httptest.Server, data map[string]any) product {
	t.Helper()
	var p product
	exec(t, srv, createDoc, map[string]any{"data": data}).ok(t).decode(t, "createProduct", &p)
	return p
}

func TestHTTPErrors(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}, MaxBodyBytes: 2048})
	cases := []struct {
		name, method, contentType, body string
		status                          int
	}{
		{"GET without a query", http.MethodGet, "", "", http.StatusBadRequest},
		{"PUT", http.MethodPut, "application/json", `{"query":"{ products { uid } }"}`, http.StatusMethodNotAllowed},
		{"not JSON", http.MethodPost, "application/json", `query { products { uid } }`, http.StatusBadRequest},
		{"JSON array", http.MethodPost, "application/json", `[{"query":"{ products { uid } }"}]`, http.StatusBadRequest},
		{"no query", http.MethodPost, "application/json", `{"variables":{}}`, http.StatusBadRequest},
		{"empty query", http.MethodPost, "application/json", `{"query":""}`, http.StatusBadRequest},
		{"extensions not an object", http.MethodPost, "application/json", `{"query":"{ products { uid } }","extensions":"x"}`, http.StatusBadRequest},
		{"query not a string", http.MethodPost, "application/json", `{"query":5}`, http.StatusBadRequest},
		{"variables not an object", http.MethodPost, "application/json", `{"query":"{ products { uid } }","variables":[1]}`, http.StatusBadRequest},
		{"wrong content type", http.MethodPost, "text/plain", `{"query":"{ products { uid } }"}`, http.StatusUnsupportedMediaType},
		{"no content type", http.MethodPost, "", `{"query":"{ products { uid } }"}`, http.StatusUnsupportedMediaType},
		{"another charset", http.MethodPost, "application/json; charset=latin1", `{"query":"{ products { uid } }"}`, http.StatusUnsupportedMediaType},
		{"body too large", http.MethodPost, "application/json", `{"query":"{ products { uid } }","variables":{"x":"` + strings.Repeat("a", 4096) + `"}}`, http.StatusRequestEntityTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, srv.URL, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var r result
			if err := decodeBody(res, &r); err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != c.status || r.code(t) != "BAD_REQUEST" {
				t.Fatalf("status %d, code %q; want %d BAD_REQUEST", res.StatusCode, r.code(t), c.status)
			}
		})
	}
}

func TestVariablesAndOperationName(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}})
	create(t, srv, map[string]any{"name": "a", "price": 1})
	for _, vars := range []string{``, `,"variables":null`, `,"variables":{}`} {
		status, got := post(t, srv, `{"query":"{ productsCount }"`+vars+`}`)
		if status != http.StatusOK || got != `{"data":{"productsCount":1}}` {
			t.Errorf("variables %q: %d %s", vars, status, got)
		}
	}
	two := `query one { productsCount } query two { products { name } }`
	for op, want := range map[string]string{"one": `{"data":{"productsCount":1}}`, "two": `{"data":{"products":[{"name":"a"}]}}`} {
		status, got := post(t, srv, fmt.Sprintf(`{"query":%q,"operationName":%q}`, two, op))
		if status != http.StatusOK || got != want {
			t.Errorf("operationName %s: %d %s", op, status, got)
		}
	}
	if c := exec(t, srv, two, nil).code(t); c != "GRAPHQL_VALIDATION_FAILED" {
		t.Errorf("two operations without operationName: %s", c)
	}
	if status, got := post(t, srv, fmt.Sprintf(`{"query":%q,"operationName":"three"}`, two)); status != http.StatusOK || !strings.Contains(got, "GRAPHQL_VALIDATION_FAILED") {
		t.Errorf("unknown operationName: %d %s", status, got)
	}
}

// TestErrorCodes checks the code of each error a request can meet during validation and
// execution; all are answered with status 200.
func TestErrorCodes(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}, MaxLimit: 50, MaxDepth: 2, MaxQueryBytes: 400, MaxSelections: 20})
	p := create(t, srv, map[string]any{"name": "a", "price": 1})
	missing := "0190a7e0-0000-7000-8000-000000000000"
	cases := []struct {
		name, query string
		vars        map[string]any
		code        string
		message     string // a part of the message
	}{
		{"syntax", `{ products { uid }`, nil, "GRAPHQL_VALIDATION_FAILED", ""},
		{"unknown field", `{ products { sku } }`, nil, "GRAPHQL_VALIDATION_FAILED", "sku"},
		{"unknown argument", `{ productsCount(sku: 1) }`, nil, "GRAPHQL_VALIDATION_FAILED", "sku"},
		{"too long", `{ products { uid ` + strings.Repeat(" ", 400) + `} }`, nil, "GRAPHQL_VALIDATION_FAILED", "limit of 400"},
		{"at the length limit", `mutation { createproduct(data: {name: "x", price: 1}) { uid } deleteproduct(uid: "nope") }` + strings.Repeat(" ", 400-90), nil, "NOT_FOUND", "nope"},
		{"too many selections", `{ ` + strings.Repeat("products { uid name price author } ", 5) + `}`, nil, "GRAPHQL_VALIDATION_FAILED", "selections"},
		{"introspection off", `{ __schema { queryType { name } } }`, nil, "GRAPHQL_VALIDATION_FAILED", "introspection"},
		{"introspection off, __type", `query a { productsCount } query b { ...f } fragment f on Query { __type(name: "product") { name } }`, nil, "GRAPHQL_VALIDATION_FAILED", "introspection"},
		{"variable of wrong type", `mutation($data: productInput!) { createproduct(data: $data) { uid } }`, map[string]any{"data": map[string]any{"name": 5, "price": 1}}, "BAD_USER_INPUT", "data.name"},
		{"missing required field", `mutation { createproduct(data: {price: 2}) { uid } }`, nil, "BAD_USER_INPUT", "data.name is required"},
		{"required field null", `mutation { createproduct(data: {name: null, price: 2}) { uid } }`, nil, "BAD_USER_INPUT", "data.name"},
		{"update required to null", `mutation($uid: ID) { updateproduct(uid: $uid, data: {name: null}) { uid } }`, map[string]any{"uid": p.UID}, "BAD_USER_INPUT", "data.name"},
		{"update without uid", `mutation { updateproduct(data: {price: 3}) { uid } }`, nil, "BAD_USER_INPUT", "uid is required"},
		{"delete without uid", `mutation { deleteproduct }`, nil, "BAD_USER_INPUT", "uid is required"},
		{"limit over max", `{ products(limit: 51) { uid } }`, nil, "BAD_USER_INPUT", "limit"},
		{"negative offset", `{ products(offset: -1) { uid } }`, nil, "BAD_USER_INPUT", "offset"},
		{"where too deep", `{ productsCount(where: ` + strings.Repeat(`{and: `, 40) + `{}` + strings.Repeat(`}`, 40) + `) }`, nil, "BAD_USER_INPUT", "nest more than 16"},
		{"bad time", `{ products(where: {createdAt: {gt: "yesterday"}}) { uid } }`, nil, "BAD_USER_INPUT", "RFC 3339"},
		{"update missing", `mutation($uid: ID) { updateproduct(uid: $uid, data: {price: 3}) { uid } }`, map[string]any{"uid": missing}, "NOT_FOUND", missing},
		{"delete missing", `mutation($uid: ID) { deleteproduct(uid: $uid) }`, map[string]any{"uid": missing}, "NOT_FOUND", missing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := exec(t, srv, c.query, c.vars)
			if got := r.code(t); got != c.code || !strings.Contains(r.Errors[0].Message, c.message) {
				t.Fatalf("got %s; want code %s and a message with %q", r.raw, c.code, c.message)
			}
		})
	}
}

func TestIntrospectionOn(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}, Introspection: true, MaxDepth: 4})
	// Introspection nests as it walks the schema: only data counts against MaxDepth.
	exec(t, srv, `{ __schema { types { fields { type { name } } } } }`, nil).ok(t)
	if r := exec(t, srv, `{ productsCount __schema { types { fields { type { name } } } } }`, nil); r.code(t) != "GRAPHQL_VALIDATION_FAILED" || !strings.Contains(r.Errors[0].Message, "depth") {
		t.Fatalf("too deep with data: %s", r.raw)
	}
	r := exec(t, srv, `{ __type(name: "productInput") { inputFields { name type { name kind } } } }`, nil).ok(t)
	want := `{"__type":{"inputFields":[{"name":"author","type":{"name":"String","kind":"SCALAR"}},{"name":"name","type":{"name":"String","kind":"SCALAR"}},{"name":"price","type":{"name":"Float","kind":"SCALAR"}}]}}`
	if got := strings.TrimSuffix(strings.TrimPrefix(r.raw, `{"data":`), "}"); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

func TestPartialUpdate(t *testing.T) {
	tbl := products()
	tbl.Fields = append(tbl.Fields, store.Field{Name: "extra", Type: store.FieldType{Scalar: store.Float}})
	srv := serve(t, gql.Config{Tables: []gql.Table{tbl}})
	const upd = `mutation($uid: ID, $data: productInput!) { updateProduct(uid: $uid, data: $data) { uid name price author createdAt updatedAt extra } }`
	var p product
	exec(t, srv, `mutation($data: productInput!) { createProduct(data: $data) { uid name price author createdAt updatedAt extra } }`,
		map[string]any{"data": map[string]any{"name": "book", "price": 10, "author": "ann", "extra": 1.5}}).ok(t).decode(t, "createProduct", &p)
	if p.Extra == nil || *p.Extra != 1.5 || p.Author != "ann" {
		t.Fatalf("created %+v", p)
	}
	time.Sleep(2 * time.Millisecond)
	var u product
	exec(t, srv, upd, map[string]any{"uid": p.UID, "data": map[string]any{"price": 12.25}}).ok(t).decode(t, "updateProduct", &u)
	if u.Name != "book" || u.Author != "ann" || u.Price != 12.25 || u.Extra == nil || *u.Extra != 1.5 || u.CreatedAt != p.CreatedAt || u.UpdatedAt <= p.UpdatedAt {
		t.Fatalf("after updating price: %+v (was %+v)", u, p)
	}
	// null removes an optional field: a String reads back as "", other scalars as null.
	exec(t, srv, upd, map[string]any{"uid": p.UID, "data": map[string]any{"author": nil, "extra": nil}}).ok(t).decode(t, "updateProduct", &u)
	if u.Author != "" || u.Extra != nil || u.Name != "book" || u.Price != 12.25 {
		t.Fatalf("after removing author and extra: %+v", u)
	}
	var list []product
	exec(t, srv, `query($uid: ID) { products(uid: $uid) { uid name price author createdAt updatedAt extra } }`, map[string]any{"uid": p.UID}).ok(t).decode(t, "products", &list)
	if len(list) != 1 || list[0] != u {
		t.Fatalf("fetched %+v, updated %+v", list, u)
	}
}

// TestConcurrentUpdates updates different fields of one record at the same time: every
// update must take effect.
func TestConcurrentUpdates(t *testing.T) {
	tbl := table("counters", "counter")
	const n = 8
	for i := range n {
		tbl.Fields = append(tbl.Fields, store.Field{Name: fmt.Sprintf("f%d", i), Type: store.FieldType{Scalar: store.Int}})
	}
	srv := serve(t, gql.Config{Tables: []gql.Table{tbl}})
	for round := range 5 {
		var c struct{ UID string }
		exec(t, srv, `mutation { createCounter(data: {}) { uid } }`, nil).ok(t).decode(t, "createCounter", &c)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				exec(t, srv, fmt.Sprintf(`mutation($uid: ID) { updatecounter(uid: $uid, data: {f%d: %d}) { uid } }`, i, round*100+i), map[string]any{"uid": c.UID}).ok(t)
			})
		}
		wg.Wait()
		r := exec(t, srv, `query($uid: ID) { counters(uid: $uid) { f0 f1 f2 f3 f4 f5 f6 f7 } }`, map[string]any{"uid": c.UID}).ok(t)
		want := fmt.Sprintf(`[{"f0":%d,"f1":%d,"f2":%d,"f3":%d,"f4":%d,"f5":%d,"f6":%d,"f7":%d}]`,
			round*100, round*100+1, round*100+2, round*100+3, round*100+4, round*100+5, round*100+6, round*100+7)
		if got := string(r.Data["counters"]); got != want {
			t.Fatalf("round %d: lost an update: %s, want %s", round, got, want)
		}
	}
}

// TestSchemaSwap swaps the API for one with an added table while requests run, as the
// project cache does when a definition changes: no request may fail.
func TestSchemaSwap(t *testing.T) {
	orders := table("orders", "order", store.Field{Name: "qty", Type: store.FieldType{Scalar: store.Int}, Required: true})
	recs := records(t, orders, products())
	v1, err := gql.New(gql.Config{Tables: []gql.Table{products()}, Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := gql.New(gql.Config{Tables: []gql.Table{orders, products()}, Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	var cur atomic.Pointer[gql.API]
	cur.Store(v1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { cur.Load().ServeHTTP(w, r) }))
	defer srv.Close()

	stop := make(chan struct{})
	var requests, failures atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var r result
				if (w+i)%2 == 0 {
					r = exec(t, srv, createDoc, map[string]any{"data": map[string]any{"name": "n", "price": i}})
				} else {
					r = exec(t, srv, `{ products(limit: 5) { uid name } productsCount }`, nil)
				}
				requests.Add(1)
				if len(r.Errors) > 0 {
					failures.Add(1)
					t.Errorf("request failed during swap: %s", r.raw)
				}
			}
		})
	}
	for i := range 20 {
		time.Sleep(10 * time.Millisecond)
		if i%2 == 0 {
			cur.Store(v2)
		} else {
			cur.Store(v1)
		}
	}
	cur.Store(v2)
	close(stop)
	wg.Wait()
	if requests.Load() == 0 || failures.Load() > 0 {
		t.Fatalf("%d requests, %d failed", requests.Load(), failures.Load())
	}
	exec(t, srv, `mutation { createorder(data: {qty: 3}) { qty } }`, nil).ok(t)
	if got := exec(t, srv, `{ orders { qty } }`, nil).ok(t).Data["orders"]; string(got) != `[{"qty":3}]` {
		t.Fatalf("orders after the swap: %s", got)
	}
}

func TestListArguments(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}, DefaultLimit: 4, MaxLimit: 10})
	// 12 products: names p00..p11, prices 0..5 twice, authors ann/bob/unset.
	var all []product
	for i := range 12 {
		data := map[string]any{"name": fmt.Sprintf("p%02d", i), "price": float64(i%6) + 0.5}
		switch i % 3 {
		case 0:
			data["author"] = "ann"
		case 1:
			data["author"] = "bob.smith"
		}
		all = append(all, create(t, srv, data))
	}
	names := func(query string, vars map[string]any) string {
		t.Helper()
		var list []product
		exec(t, srv, query, vars).ok(t).decode(t, "products", &list)
		var out []string
		for _, p := range list {
			out = append(out, p.Name)
		}
		return strings.Join(out, ",")
	}
	cases := []struct {
		name, args, want string
		count            int // productsCount with the same where; -1 when args has no where
	}{
		{"default limit, creation order", ``, "p00,p01,p02,p03", -1},
		{"limit", `(limit: 6)`, "p00,p01,p02,p03,p04,p05", -1},
		{"offset", `(limit: 3, offset: 10)`, "p10,p11", -1},
		{"limit 0", `(limit: 0)`, "", -1},
		{"eq", `(where: {name: {eq: "p03"}})`, "p03", 1},
		{"ne", `(where: {author: {ne: "ann"}}, limit: 10)`, "p01,p02,p04,p05,p07,p08,p10,p11", 8},
		{"gt", `(where: {price: {gt: 4.5}})`, "p05,p11", 2},
		{"gte lte", `(where: {price: {gte: 2.5, lte: 3.5}})`, "p02,p03,p08,p09", 4},
		{"lt", `(where: {price: {lt: 1}})`, "p00,p06", 2},
		{"in", `(where: {name: {in: ["p01", "p07", "zz"]}})`, "p01,p07", 2},
		{"contains, not a pattern", `(where: {author: {contains: "b.s"}}, limit: 10)`, "p01,p04,p07,p10", 4},
		{"contains nothing", `(where: {author: {contains: ".*"}})`, "", 0},
		{"and", `(where: {and: [{price: {gt: 1}}, {price: {lt: 3}}]})`, "p01,p02,p07,p08", 4},
		{"or", `(where: {or: [{name: {eq: "p00"}}, {price: {eq: 5.5}}]})`, "p00,p05,p11", 3},
		{"fields and or together", `(where: {author: {eq: "ann"}, or: [{price: {eq: 0.5}}, {price: {eq: 3.5}}]})`, "p00,p03,p06,p09", 4},
		{"uid", fmt.Sprintf(`(where: {uid: {in: [%q, %q]}})`, all[2].UID, all[9].UID), "p02,p09", 2},
		{"createdAt", fmt.Sprintf(`(where: {createdAt: {gte: %q}}, limit: 10)`, all[10].CreatedAt), "", -2},
		{"order desc", `(orderBy: {field: price, direction: DESC})`, "p11,p05,p10,p04", -1},
		{"order two fields", `(orderBy: [{field: price, direction: DESC}, {field: name, direction: DESC}], limit: 5)`, "p11,p05,p10,p04,p09", -1},
		{"order default asc", `(orderBy: [{field: author}, {field: name, direction: DESC}], limit: 5)`, "p11,p08,p05,p02,p09", -1},
		{"page of a sorted filter", `(where: {price: {gte: 1}}, orderBy: [{field: price}], limit: 3, offset: 2)`, "p02,p08,p03", 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := names(`{ products`+c.args+` { name } }`, nil)
			if c.count == -2 { // times: at least p10 and p11, maybe earlier ones of the same millisecond
				if !strings.HasSuffix(got, "p10,p11") {
					t.Fatalf("got %q", got)
				}
				return
			}
			if got != c.want {
				t.Fatalf("products%s: got %q, want %q", c.args, got, c.want)
			}
			if c.count < 0 {
				return
			}
			where := c.args[strings.Index(c.args, "where:"):]
			if i := strings.Index(where, "}, orderBy"); i > 0 {
				where = where[:i+1]
			} else if i := strings.Index(where, "}, limit"); i > 0 {
				where = where[:i+1]
			} else {
				where = strings.TrimSuffix(where, ")")
			}
			var n int
			exec(t, srv, `{ productsCount(`+where+`) }`, nil).ok(t).decode(t, "productsCount", &n)
			if n != c.count {
				t.Fatalf("productsCount(%s) = %d, want %d", where, n, c.count)
			}
		})
	}
}

// testGuard decides like a project's access rules would: callers are named by the X-Sub
// header; reads and writes of other callers' records are refused by a filter on _owner,
// and records whose name starts with "secret" by a per-record check.
type testGuard struct {
	sub     string
	checked bool // ask Allow for each record too
}

func (g testGuard) Filter(table string, op gql.Operation) (store.Filter, bool, error) {
	switch {
	case g.sub == "nobody":
		return store.None, false, fmt.Errorf("%s %s: %w", op, table, gql.ErrForbidden)
	case g.sub == "broken":
		return store.None, false, errors.New("rule store unavailable")
	case op == gql.Read && g.sub == "admin":
		return store.All, g.checked, nil
	}
	return store.Compare(store.KeyOwner, store.Eq, g.sub), g.checked, nil
}

func (g testGuard) Allow(table string, op gql.Operation, record, data map[string]any) error {
	name, _ := data["name"].(string)
	if record != nil {
		if _, ok := record["createdAt"].(time.Time); !ok {
			return fmt.Errorf("record without time: %v", record)
		}
		name, _ = record["name"].(string)
	}
	if strings.HasPrefix(name, "secret") && (op != gql.Create || g.sub != "alice") {
		return fmt.Errorf("%s of %q: %w", op, name, gql.ErrForbidden)
	}
	return nil
}

func (g testGuard) Owner() string { return g.sub }

func TestGuard(t *testing.T) {
	for _, checked := range []bool{false, true} {
		t.Run(fmt.Sprintf("checked=%v", checked), func(t *testing.T) {
			api, err := gql.New(gql.Config{Tables: []gql.Table{products()}, Records: records(t, products())})
			if err != nil {
				t.Fatal(err)
			}
			callers := map[string]*httptest.Server{}
			for _, sub := range []string{"alice", "bob", "admin", "nobody", "broken"} {
				g := testGuard{sub: sub, checked: checked}
				callers[sub] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					api.ServeHTTP(w, r.WithContext(gql.WithGuard(r.Context(), g)))
				}))
				defer callers[sub].Close()
			}
			alice, bob, admin := callers["alice"], callers["bob"], callers["admin"]
			// bob's records come first, so that a page of alice's needs the filter.
			for i := range 5 {
				create(t, bob, map[string]any{"name": fmt.Sprintf("b%d", i), "price": 1})
			}
			a1 := create(t, alice, map[string]any{"name": "a1", "price": 1})
			create(t, alice, map[string]any{"name": "a2", "price": 2})
			create(t, alice, map[string]any{"name": "a3", "price": 3})
			if c := exec(t, bob, createDoc, map[string]any{"data": map[string]any{"name": "secret-b", "price": 1}}).code(t); c != "FORBIDDEN" {
				t.Fatalf("create refused by Allow: %s", c)
			}
			sec := create(t, alice, map[string]any{"name": "secret-a", "price": 4})

			list := func(srv *httptest.Server, args string) string {
				var ps []product
				exec(t, srv, `{ products`+args+` { name } }`, nil).ok(t).decode(t, "products", &ps)
				var out []string
				for _, p := range ps {
					out = append(out, p.Name)
				}
				return strings.Join(out, ",")
			}
			wantAlice := "a1,a2,a3,secret-a"
			if checked {
				wantAlice = "a1,a2,a3"
			}
			if got := list(alice, ""); got != wantAlice {
				t.Fatalf("alice lists %q, want %q", got, wantAlice)
			}
			if got := list(alice, "(limit: 2, offset: 1)"); got != "a2,a3" {
				t.Fatalf("alice's page: %q", got)
			}
			if got := list(admin, "(limit: 3, offset: 4)"); got != "b4,a1,a2" {
				t.Fatalf("admin's page: %q", got)
			}
			var n int
			exec(t, alice, `{ productsCount }`, nil).ok(t).decode(t, "productsCount", &n)
			if n != strings.Count(wantAlice, ",")+1 {
				t.Fatalf("alice counts %d", n)
			}
			if got := list(callers["nobody"], ""); got != "" {
				t.Fatalf("nobody lists %q", got)
			}
			if c := exec(t, callers["broken"], `{ products { name } }`, nil).code(t); c != "INTERNAL" {
				t.Fatalf("broken rule: %s", c)
			}

			upd := `mutation($uid: ID) { updateproduct(uid: $uid, data: {price: 9}) { price } }`
			if c := exec(t, bob, upd, map[string]any{"uid": a1.UID}).code(t); c != "FORBIDDEN" {
				t.Fatalf("bob updates alice's record: %s", c)
			}
			if c := exec(t, callers["nobody"], upd, map[string]any{"uid": a1.UID}).code(t); c != "FORBIDDEN" {
				t.Fatalf("nobody updates: %s", c)
			}
			exec(t, alice, upd, map[string]any{"uid": a1.UID}).ok(t)
			del := `mutation($uid: ID) { deleteproduct(uid: $uid) }`
			if c := exec(t, bob, del, map[string]any{"uid": a1.UID}).code(t); c != "FORBIDDEN" {
				t.Fatalf("bob deletes alice's record: %s", c)
			}
			if checked {
				if c := exec(t, alice, del, map[string]any{"uid": sec.UID}).code(t); c != "FORBIDDEN" {
					t.Fatalf("delete refused by Allow: %s", c)
				}
			}
			exec(t, alice, del, map[string]any{"uid": a1.UID}).ok(t)
			if c := exec(t, alice, del, map[string]any{"uid": a1.UID}).code(t); c != "NOT_FOUND" {
				t.Fatalf("delete twice: %s", c)
			}
		})
	}
}

func TestResponseKeys(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}})
	p := create(t, srv, map[string]any{"name": "a", "price": 1})
	vars := map[string]any{"uid": p.UID}
	cases := []struct{ query, want string }{
		{`mutation { createproduct(data: {name: "b", price: 2}) { name } }`, `{"createProduct":{"name":"b"}}`},
		{`mutation { createProduct(data: {name: "b", price: 2}) { name } }`, `{"createProduct":{"name":"b"}}`},
		{`mutation { made: createproduct(data: {name: "b", price: 2}) { name } }`, `{"made":{"name":"b"}}`},
		{`mutation { createproduct : createproduct(data: {name: "b", price: 2}) { name } }`, `{"createproduct":{"name":"b"}}`},
		{`mutation($uid: ID) { updateproduct(uid: $uid, data: {price: 3}) { price } }`, `{"createProduct":{"price":3}}`},
		{`mutation($uid: ID) { updateProduct(uid: $uid, data: {price: 4}) { price } }`, `{"updateProduct":{"price":4}}`},
		{`mutation($uid: ID) { createproduct(data: {name: "c", price: 1}) { name } updateproduct(uid: $uid, data: {price: 5}) { price } }`, `{"createProduct":{"name":"c"},"updateProduct":{"price":5}}`},
		{`mutation($uid: ID) { ...u } fragment u on Mutation { updateproduct(uid: $uid, data: {price: 6}) { price } }`, `{"createProduct":{"price":6}}`},
		{`mutation { x: createproduct(data: {name: "é", price: 2}) { name } deleteproduct(uid: "` + p.UID + `") }`, `{"x":{"name":"é"},"deleteProduct":"Document Deleted"}`},
	}
	for _, c := range cases {
		r := exec(t, srv, c.query, vars)
		if got := strings.TrimSuffix(strings.TrimPrefix(r.raw, `{"data":`), "}"); got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.query, r.raw, c.want)
		}
	}
}

func TestNewRejectsCollisions(t *testing.T) {
	f := func(name string) store.Field {
		return store.Field{Name: name, Type: store.FieldType{Scalar: store.String}}
	}
	one := []store.Field{f("a")}
	cases := []struct {
		name   string
		tables []gql.Table
		want   string
	}{
		{"same type name", []gql.Table{table("products", "product", one...), table("productz", "product", one...)}, `"product"`},
		{"list and count", []gql.Table{table("items", "item", one...), table("itemsCount", "tally", one...)}, `"itemsCount"`},
		{"built-in type", []gql.Table{table("filters", "StringFilter", one...)}, `"StringFilter"`},
		{"input type of another", []gql.Table{table("as", "a", one...), table("bs", "aInput", one...)}, `"aInput"`},
		{"no fields", []gql.Table{table("items", "item")}, `"items" has no fields`},
		{"reserved field", []gql.Table{table("items", "item", []store.Field{f("uid")}...)}, `"uid"`},
		{"where keyword", []gql.Table{table("items", "item", []store.Field{f("or")}...)}, `"or"`},
		{"enum keyword", []gql.Table{table("items", "item", []store.Field{f("null")}...)}, `"null"`},
		{"bad name", []gql.Table{table("items", "item", []store.Field{f("a-b")}...)}, `"a-b"`},
	}
	for _, c := range cases {
		_, err := gql.New(gql.Config{Tables: c.tables, Records: records(t, c.tables...)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one naming %s", c.name, err, c.want)
		}
	}
}

func TestNoTables(t *testing.T) {
	srv := serve(t, gql.Config{})
	if c := exec(t, srv, `{ products { uid } }`, nil).code(t); c != "GRAPHQL_VALIDATION_FAILED" {
		t.Fatalf("code %s", c)
	}
}

func TestFieldTypes(t *testing.T) {
	ft := func(s store.Scalar, list bool) store.FieldType { return store.FieldType{Scalar: s, List: list} }
	tbl := table("things", "thing", []store.Field{
		{Name: "b", Type: ft(store.Boolean, false)},
		{Name: "d", Type: ft(store.DateTime, false)},
		{Name: "i", Type: ft(store.Int, false), Required: true},
		{Name: "ref", Type: ft(store.ID, false)},
		{Name: "j", Type: ft(store.JSON, false)},
		{Name: "s", Type: ft(store.String, false), Default: "dflt"},
		{Name: "tags", Type: ft(store.String, true)},
		{Name: "when", Type: ft(store.DateTime, true)},
	}...)
	srv := serve(t, gql.Config{Tables: []gql.Table{tbl}})
	const fields = `b d i ref j s tags when`
	r := exec(t, srv, `mutation($data: thingInput!) { creatething(data: $data) { `+fields+` } }`, map[string]any{"data": map[string]any{
		"b": true, "d": "2026-11-22T11:04:05.123456+01:00", "i": 42, "ref": "x1",
		"j":    map[string]any{"k": []any{1, "two", nil}},
		"tags": []any{"red", "blue"}, "when": "2026-01-02T03:04:05Z",
	}}).ok(t)
	want := `{"b":true,"d":"2026-11-22T10:04:05.123Z","i":42,"ref":"x1","j":{"k":[1,"two",null]},"s":"dflt","tags":["red","blue"],"when":["2026-01-02T03:04:05.000Z"]}`
	if got := string(r.Data["createThing"]); got != want {
		t.Fatalf("created\n got %s\nwant %s", got, want)
	}
	r = exec(t, srv, `mutation { creatething(data: {i: 1, s: null}) { `+fields+` } }`, nil).ok(t)
	if got, want := string(r.Data["createThing"]), `{"b":null,"d":null,"i":1,"ref":null,"j":null,"s":"dflt","tags":null,"when":null}`; got != want {
		t.Fatalf("created with defaults\n got %s\nwant %s", got, want)
	}
	r = exec(t, srv, `{ things(where: {tags: {eq: "blue"}, d: {lt: "2027-01-01T00:00:00Z"}, b: {eq: true}}) { i } thingsCount(where: {i: {in: [1, 42]}}) }`, nil).ok(t)
	if got := string(r.Data["things"]) + string(r.Data["thingsCount"]); got != `[{"i":42}]2` {
		t.Fatalf("filters on typed fields: %s", r.raw)
	}
	if c := exec(t, srv, `mutation { creatething(data: {i: 1.5}) { i } }`, nil).code(t); c != "GRAPHQL_VALIDATION_FAILED" {
		t.Fatalf("Int literal 1.5: %s", c)
	}
	if c := exec(t, srv, `mutation($d: thingInput!) { creatething(data: $d) { i } }`, map[string]any{"d": map[string]any{"i": 1, "d": "soon"}}).code(t); c != "BAD_USER_INPUT" {
		t.Fatalf("bad DateTime: %s", c)
	}
	if c := exec(t, srv, `mutation($d: thingInput!) { creatething(data: $d) { i } }`, map[string]any{"d": map[string]any{"i": 1, "j": map[string]any{"a": []any{map[string]any{"$set": 1}}}}}).code(t); c != "BAD_USER_INPUT" {
		t.Fatalf("JSON with an operator key: %s", c)
	}
}

// slowGuard takes longer to decide than the request may take.
type slowGuard struct{ testGuard }

func (g slowGuard) Filter(table string, op gql.Operation) (store.Filter, bool, error) {
	time.Sleep(50 * time.Millisecond)
	return store.All, false, nil
}

func TestTimeout(t *testing.T) {
	api, err := gql.New(gql.Config{Tables: []gql.Table{products()}, Records: records(t, products()), Timeout: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.ServeHTTP(w, r.WithContext(gql.WithGuard(r.Context(), slowGuard{})))
	}))
	defer srv.Close()
	r := exec(t, srv, `{ products { uid } }`, nil)
	// Running out of time is the request's doing, not a bug: never INTERNAL.
	if r.code(t) != "TIMEOUT" || !strings.Contains(r.Errors[0].Message, "10ms") {
		t.Fatalf("got %s", r.raw)
	}
}
