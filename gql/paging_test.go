package gql_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

type connection struct {
	Edges []struct {
		Cursor string  `json:"cursor"`
		Node   product `json:"node"`
	} `json:"edges"`
	PageInfo struct {
		HasNextPage bool    `json:"hasNextPage"`
		EndCursor   *string `json:"endCursor"`
	} `json:"pageInfo"`
	TotalCount int `json:"totalCount"`
}

const connQuery = `query($first: Int, $after: String, $order: [productOrderBy!], $where: productWhere) {
  productsConnection(first: $first, after: $after, orderBy: $order, where: $where) {
    edges { cursor node { uid name price author } }
    pageInfo { hasNextPage endCursor }
    totalCount
  }
}`

// TestConnectionPages walks every keyset page of orders with ties and missing values, in
// both directions, and checks that the pages together are the list in the same order.
func TestConnectionPages(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}})
	for i := range 23 {
		data := map[string]any{"name": fmt.Sprintf("p%02d", i), "price": float64(i % 4)}
		if i%3 == 0 {
			data["author"] = fmt.Sprintf("a%d", i%2)
		}
		create(t, srv, data)
	}
	orders := map[string][]any{
		"price desc":             {map[string]any{"field": "price", "direction": "DESC"}},
		"author, price desc":     {map[string]any{"field": "author"}, map[string]any{"field": "price", "direction": "DESC"}},
		"author desc, price":     {map[string]any{"field": "author", "direction": "DESC"}, map[string]any{"field": "price"}},
		"creation (no order)":    nil,
		"uid desc":               {map[string]any{"field": "uid", "direction": "DESC"}},
		"updatedAt, name desc":   {map[string]any{"field": "updatedAt"}, map[string]any{"field": "name", "direction": "DESC"}},
		"filtered by price >= 1": {map[string]any{"field": "price"}},
	}
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			var where map[string]any
			if strings.HasPrefix(name, "filtered") {
				where = map[string]any{"price": map[string]any{"gte": 1}}
			}
			var full []product
			exec(t, srv, `query($order: [productOrderBy!], $where: productWhere) { products(orderBy: $order, where: $where, limit: 100) { uid name price author } }`,
				map[string]any{"order": order, "where": where}).ok(t).decode(t, "products", &full)
			var paged []product
			var after any
			for pages := 0; ; pages++ {
				if pages > 10 {
					t.Fatal("more pages than records")
				}
				var c connection
				exec(t, srv, connQuery, map[string]any{"first": 5, "after": after, "order": order, "where": where}).ok(t).decode(t, "productsConnection", &c)
				if c.TotalCount != len(full) {
					t.Fatalf("totalCount %d, want %d", c.TotalCount, len(full))
				}
				for _, e := range c.Edges {
					paged = append(paged, e.Node)
				}
				if !c.PageInfo.HasNextPage {
					break
				}
				if c.PageInfo.EndCursor == nil || *c.PageInfo.EndCursor != c.Edges[len(c.Edges)-1].Cursor {
					t.Fatalf("endCursor %v is not the last edge's cursor", c.PageInfo.EndCursor)
				}
				after = *c.PageInfo.EndCursor
			}
			if len(paged) != len(full) {
				t.Fatalf("pages hold %d records, the list %d", len(paged), len(full))
			}
			for i := range full {
				if paged[i] != full[i] {
					t.Fatalf("record %d: pages %+v, list %+v", i, paged[i], full[i])
				}
			}
		})
	}
}

// TestConnectionBadCursors: a cursor the API did not write for this query is BAD_USER_INPUT.
func TestConnectionBadCursors(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}})
	for i := range 3 {
		create(t, srv, map[string]any{"name": fmt.Sprintf("p%d", i), "price": float64(i)})
	}
	var c connection
	byPrice := []any{map[string]any{"field": "price"}}
	exec(t, srv, connQuery, map[string]any{"first": 1, "order": byPrice}).ok(t).decode(t, "productsConnection", &c)
	good := *c.PageInfo.EndCursor
	forged := base64.RawURLEncoding.EncodeToString([]byte(`["x","1","2"]`))
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	var parts []any
	if err := json.Unmarshal(raw, &parts); err != nil {
		t.Fatal(err)
	}
	parts[1] = "not a number"
	wrongType, _ := json.Marshal(parts)
	cases := map[string]struct {
		after string
		order []any
	}{
		"not base64":              {"%%%", byPrice},
		"not JSON":                {base64.RawURLEncoding.EncodeToString([]byte("{{")), byPrice},
		"forged":                  {forged, byPrice},
		"another order":           {good, []any{map[string]any{"field": "name"}}},
		"a value of another type": {base64.RawURLEncoding.EncodeToString(wrongType), byPrice},
		"huge":                    {strings.Repeat("A", 10000), byPrice},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := exec(t, srv, connQuery, map[string]any{"first": 1, "after": tc.after, "order": tc.order})
			if code := r.code(t); code != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, "after") {
				t.Fatalf("code %s: %s", code, r.raw)
			}
		})
	}
}

// TestResultTooLarge: a list that would read more than the byte budget answers
// RESULT_TOO_LARGE with a hint to page; a smaller page of the same records answers.
func TestResultTooLarge(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}, MaxResultBytes: 4 << 10})
	for i := range 8 {
		create(t, srv, map[string]any{"name": strings.Repeat("x", 1000) + fmt.Sprint(i), "price": 1.0})
	}
	r := exec(t, srv, `{ products { uid } }`, nil)
	if code := r.code(t); code != "RESULT_TOO_LARGE" || !strings.Contains(r.Errors[0].Message, "productsConnection(first, after)") {
		t.Fatalf("code %s: %s", code, r.raw)
	}
	var list []product
	exec(t, srv, `{ products(limit: 2) { uid } }`, nil).ok(t).decode(t, "products", &list)
	if len(list) != 2 {
		t.Fatalf("limit 2: %d records", len(list))
	}
	var c connection
	exec(t, srv, connQuery, map[string]any{"first": 2}).ok(t).decode(t, "productsConnection", &c)
	if len(c.Edges) != 2 || !c.PageInfo.HasNextPage {
		t.Fatalf("a page of 2: %+v", c)
	}
}

// TestWhereBounds: a where larger than the bounds is BAD_USER_INPUT before any database
// work; in of an empty list matches nothing.
func TestWhereBounds(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}, Where: store.Bounds{MaxNodes: 50, MaxDepth: 4, MaxIn: 20}})
	create(t, srv, map[string]any{"name": "tea", "price": 1.0})
	many := make([]any, 21)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	nested := map[string]any{"name": map[string]any{"eq": "tea"}}
	for range 6 {
		nested = map[string]any{"or": []any{nested}}
	}
	wide := make([]any, 60)
	for i := range wide {
		wide[i] = map[string]any{"name": map[string]any{"eq": fmt.Sprint(i)}}
	}
	cases := map[string]map[string]any{
		"in too long": {"name": map[string]any{"in": many}},
		"too deep":    nested,
		"too many":    {"or": wide},
	}
	for name, where := range cases {
		t.Run(name, func(t *testing.T) {
			r := exec(t, srv, `query($w: productWhere) { products(where: $w) { uid } }`, map[string]any{"w": where})
			if code := r.code(t); code != "BAD_USER_INPUT" {
				t.Fatalf("code %s: %s", code, r.raw)
			}
		})
	}
	r := exec(t, srv, `{ products(where: {name: {in: []}}) { uid } productsCount(where: {name: {in: []}}) }`, nil).ok(t)
	if got := string(r.Data["products"]) + string(r.Data["productsCount"]); got != "[]0" {
		t.Fatalf("in []: %s", r.raw)
	}
}

// TestUniqueIndexConflict: a write that breaks a unique index answers CONFLICT naming the
// field, and writes nothing.
func TestUniqueIndexConflict(t *testing.T) {
	tbl := products()
	tbl.Fields = append(tbl.Fields, store.Field{Name: "sku", Type: store.FieldType{Scalar: store.String}})
	tbl.Indexes = []store.Index{{Fields: []string{"sku"}, Unique: true}}
	srv := serve(t, gql.Config{Tables: []gql.Table{tbl}})
	const createSKU = `mutation($d: productInput!) { createProduct(data: $d) { uid sku } }`
	exec(t, srv, createSKU, map[string]any{"d": map[string]any{"name": "a", "price": 1, "sku": "S-1"}}).ok(t)
	var other struct{ UID string }
	exec(t, srv, createSKU, map[string]any{"d": map[string]any{"name": "b", "price": 1, "sku": "S-2"}}).ok(t).decode(t, "createProduct", &other)

	r := exec(t, srv, createSKU, map[string]any{"d": map[string]any{"name": "c", "price": 1, "sku": "S-1"}})
	if code := r.code(t); code != "CONFLICT" || !strings.Contains(r.Errors[0].Message, "sku") || fmt.Sprint(r.Errors[0].Extensions["fields"]) != "[sku]" {
		t.Fatalf("duplicate create: %s", r.raw)
	}
	r = exec(t, srv, `mutation($u: ID, $d: productInput!) { updateProduct(uid: $u, data: $d) { sku } }`, map[string]any{"u": other.UID, "d": map[string]any{"sku": "S-1"}})
	if code := r.code(t); code != "CONFLICT" {
		t.Fatalf("duplicate update: %s", r.raw)
	}
	r = exec(t, srv, `{ productsCount products(where: {sku: {eq: "S-2"}}) { name } }`, nil).ok(t)
	if got := string(r.Data["productsCount"]) + string(r.Data["products"]); got != `2[{"name":"b"}]` {
		t.Fatalf("after the conflicts: %s", r.raw)
	}
}

// TestResultLimitCountsWhatTheRuleKeeps: when a read rule is checked record by record, the
// records it refuses do not count towards the result limit, only those answered do.
func TestResultLimitCountsWhatTheRuleKeeps(t *testing.T) {
	api, err := gql.New(gql.Config{Tables: []gql.Table{products()}, Records: records(t, products()), MaxResultBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	serveAs := func(g testGuard) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			api.ServeHTTP(w, r.WithContext(gql.WithGuard(r.Context(), g)))
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	alice, admin := serveAs(testGuard{sub: "alice"}), serveAs(testGuard{sub: "admin", checked: true})
	// Twenty large records the rule refuses, then two small ones it lets through.
	for i := range 20 {
		create(t, alice, map[string]any{"name": "secret-" + strings.Repeat("x", 1000) + fmt.Sprint(i), "price": 1.0})
	}
	create(t, alice, map[string]any{"name": "open-1", "price": 1.0})
	create(t, alice, map[string]any{"name": "open-2", "price": 1.0})
	var list []product
	exec(t, admin, `{ products { name } }`, nil).ok(t).decode(t, "products", &list)
	if len(list) != 2 || list[0].Name != "open-1" {
		t.Fatalf("kept records: %+v", list)
	}
}
