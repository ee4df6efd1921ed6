package gql_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// shop is makers, their products and orders of products. Relations are added by each test.
func shop() (orders, prods, makers gql.Table) {
	makers = table("makers", "maker", store.Field{Name: "name", Type: store.FieldType{Scalar: store.String}, Required: true})
	prods = products()
	prods.Fields = append(prods.Fields, store.Field{Name: "makerId", Type: store.FieldType{Scalar: store.ID}})
	orders = table("orders", "order",
		store.Field{Name: "productId", Type: store.FieldType{Scalar: store.ID}},
		store.Field{Name: "qty", Type: store.FieldType{Scalar: store.Int}, Required: true})
	return orders, prods, makers
}

// shopServer serves tables to callers named by the X-Sub header (decided by testGuard) and
// tells how many store queries each request cost.
type shopServer struct {
	srv  *httptest.Server
	recs *store.Records
}

func newShop(t *testing.T, tables ...gql.Table) *shopServer {
	t.Helper()
	return newShopWith(t, gql.Config{Tables: tables, Records: records(t, tables...)})
}

// newShopWith serves cfg as newShop does, and its subscriptions over SSE (with Changes) to
// callers named by the Authorization header ("Bearer alice").
func newShopWith(t *testing.T, cfg gql.Config) *shopServer {
	t.Helper()
	return newShopOf(t, cfg, gql.New)
}

// newShopOf is newShopWith with the API build makes (gql.New, or gql.NewReference).
func newShopOf(t *testing.T, cfg gql.Config, build func(gql.Config) (*gql.API, error)) *shopServer {
	t.Helper()
	recs := cfg.Records
	api, err := build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	auth := func(ctx context.Context, authorization string) (context.Context, context.CancelFunc, error) {
		sub, _ := strings.CutPrefix(authorization, "Bearer ")
		ctx, cancel := context.WithCancel(gql.WithGuard(ctx, testGuard{sub: sub}))
		return ctx, cancel, nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gql.IsEventStream(r) {
			api.ServeSSE(w, r, auth)
			return
		}
		// "admin-checked" is admin whose rule is asked about each record too.
		sub, checked := strings.CutSuffix(r.Header.Get("X-Sub"), "-checked")
		api.ServeHTTP(w, r.WithContext(gql.WithGuard(r.Context(), testGuard{sub: sub, checked: checked})))
	}))
	t.Cleanup(srv.Close)
	return &shopServer{srv: srv, recs: recs}
}

// run sends query with vars as sub and answers the response and the store queries it cost.
func (s *shopServer) run(t *testing.T, sub, query, vars string) (string, int64) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.srv.URL, strings.NewReader(body(query, vars)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Sub", sub)
	before := s.recs.Queries()
	res, err := s.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), s.recs.Queries() - before
}

// uids creates records as sub with one batch and answers their uids.
func (s *shopServer) uids(t *testing.T, sub, mutation string, data []string) []string {
	t.Helper()
	out, _ := s.run(t, sub, fmt.Sprintf(`mutation { %s(data: [%s]) { uid } }`, mutation, strings.Join(data, ", ")), "{}")
	var got []string
	for _, part := range strings.Split(out, `"uid":"`)[1:] {
		got = append(got, part[:strings.IndexByte(part, '"')])
	}
	if len(got) != len(data) {
		t.Fatalf("%s: %s", mutation, out)
	}
	return got
}

// hundredProducts creates products p00..p99 (price i) and, for each, alice's orders of qty i
// and i+100 and bob's of qty i+200; it answers the products' uids.
func (s *shopServer) hundredProducts(t *testing.T) []string {
	t.Helper()
	var pdata []string
	for i := range 100 {
		pdata = append(pdata, fmt.Sprintf(`{name: "p%02d", price: %d}`, i, i))
	}
	pu := s.uids(t, "alice", "createproducts", pdata)
	var odata []string
	for i := range 300 {
		odata = append(odata, fmt.Sprintf(`{qty: %d, productId: %q}`, i, pu[i%100]))
	}
	s.uids(t, "alice", "createorders", odata[:200])
	s.uids(t, "bob", "createorders", odata[200:])
	return pu
}

// relateBothWays declares orders.product and products.orders, as issue 13's example does.
func relateBothWays(orders, prods *gql.Table) {
	orders.Relations = []gql.Relation{{Name: "product", Table: "products", Field: "productId"}}
	prods.Relations = []gql.Relation{{Name: "orders", Table: "orders", ForeignField: "productId"}}
}

func TestRelationsManyToOne(t *testing.T) {
	orders, prods, makers := shop()
	orders.Relations = []gql.Relation{{Name: "product", Table: "products", Field: "productId"}}
	prods.Relations = []gql.Relation{{Name: "maker", Table: "makers", Field: "makerId"}}
	s := newShop(t, orders, prods, makers)

	mk := s.uids(t, "alice", "createmakers", []string{`{name: "Acme"}`, `{name: "Bolt Co"}`})
	var pdata []string
	for i := range 10 {
		pdata = append(pdata, fmt.Sprintf(`{name: "p%d", price: %d, makerId: %q}`, i, i, mk[i%2]))
	}
	pu := s.uids(t, "alice", "createproducts", pdata)
	secret := s.uids(t, "bob", "createproducts", []string{`{name: "bob's", price: 1}`})[0]
	var odata []string
	for i := range 100 {
		odata = append(odata, fmt.Sprintf(`{qty: %d, productId: %q}`, i, pu[i%10]))
	}
	odata = append(odata[:99], fmt.Sprintf(`{qty: 99, productId: %q}`, secret))
	s.uids(t, "alice", "createorders", odata)
	s.uids(t, "alice", "createorders", []string{`{qty: 100}`, `{qty: 101, productId: "missing"}`})

	// 100 orders with their product and its maker: one query per level.
	out, n := s.run(t, "alice", `{ orders(limit: 100) { qty product { name maker { name } } } }`, "{}")
	t.Logf("100 orders with their product and its maker: %d store queries", n)
	if n > 3 {
		t.Errorf("100 orders with product and maker cost %d store queries, want at most 3", n)
	}
	if !strings.HasPrefix(out, `{"data":{"orders":[{"qty":0,"product":{"name":"p0","maker":{"name":"Acme"}}},{"qty":1,"product":{"name":"p1","maker":{"name":"Bolt Co"}}},`) {
		t.Fatalf("orders: %.300s", out)
	}
	// The products table's read rule applies to what is nested: bob's product is not
	// alice's to read, so her order answers null there, as for a missing product.
	if !strings.Contains(out, `{"qty":98,"product":{"name":"p8","maker":{"name":"Acme"}}},{"qty":99,"product":null}]}}`) {
		t.Errorf("the order of bob's product: %.300s", out[len(out)-300:])
	}
	out, _ = s.run(t, "alice", `{ orders(where: {qty: {gte: 100}}) { qty product { name } } }`, "{}")
	if out != `{"data":{"orders":[{"qty":100,"product":null},{"qty":101,"product":null}]}}` {
		t.Errorf("orders without a product: %s", out)
	}
	// A page of the connection and a created record load their relations too.
	out, n = s.run(t, "alice", `{ ordersConnection(first: 2) { edges { node { qty product { name } } } } }`, "{}")
	if out != `{"data":{"ordersConnection":{"edges":[{"node":{"qty":0,"product":{"name":"p0"}}},{"node":{"qty":1,"product":{"name":"p1"}}}]}}}` || n != 2 {
		t.Errorf("connection (%d queries): %s", n, out)
	}
	out, _ = s.run(t, "alice", fmt.Sprintf(`mutation { createOrder(data: {qty: 5, productId: %q}) { qty product { name } } }`, pu[3]), "{}")
	if out != `{"data":{"createOrder":{"qty":5,"product":{"name":"p3"}}}}` {
		t.Errorf("create: %s", out)
	}
	// Without the relation selected, nothing more is read.
	if _, n := s.run(t, "alice", `{ orders(limit: 100) { qty } }`, "{}"); n != 1 {
		t.Errorf("orders alone cost %d store queries", n)
	}
}

func TestRelationsOneToMany(t *testing.T) {
	orders, prods, _ := shop()
	prods.Relations = []gql.Relation{{Name: "orders", Table: "orders", ForeignField: "productId"}}
	s := newShop(t, orders, prods)
	s.hundredProducts(t)

	// 100 products with their orders: one query for the products, one for every order.
	out, n := s.run(t, "alice", `{ products(limit: 100) { name orders(orderBy: [{field: qty, direction: DESC}]) { qty } } }`, "{}")
	t.Logf("100 products with their orders: %d store queries", n)
	if n > 3 {
		t.Errorf("100 products with their orders cost %d store queries, want at most 3", n)
	}
	// bob's orders (qty 200 and up) are not alice's to read.
	if !strings.HasPrefix(out, `{"data":{"products":[{"name":"p00","orders":[{"qty":100},{"qty":0}]},{"name":"p01","orders":[{"qty":101},{"qty":1}]},`) {
		t.Fatalf("products: %.300s", out)
	}
	out, _ = s.run(t, "alice", `query($w: orderWhere) { products(limit: 2) { name orders(where: $w, limit: 1) { qty } } }`, `{"w": {"qty": {"lt": 100}}}`)
	if out != `{"data":{"products":[{"name":"p00","orders":[{"qty":0}]},{"name":"p01","orders":[{"qty":1}]}]}}` {
		t.Errorf("where and limit: %s", out)
	}
	out, _ = s.run(t, "alice", `{ products(limit: 1) { orders(limit: -1) { qty } } }`, "{}")
	if !strings.Contains(out, `"message":"orders.limit must be between 0 and 1000, got -1"`) {
		t.Errorf("a bad limit: %s", out)
	}
}

func TestRelationDefinitions(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(orders, prods *gql.Table)
		want string
	}{
		{"unknown table", func(o, _ *gql.Table) {
			o.Relations = []gql.Relation{{Name: "product", Table: "prods", Field: "productId"}}
		},
			`table "orders": relation "product": no table "prods"`},
		{"unknown field", func(o, _ *gql.Table) {
			o.Relations = []gql.Relation{{Name: "product", Table: "products", Field: "product"}}
		}, `table "orders": relation "product": field "product": table "orders" has no such field`},
		{"unknown foreign field", func(_, p *gql.Table) {
			p.Relations = []gql.Relation{{Name: "orders", Table: "orders", ForeignField: "prodId"}}
		}, `table "products": relation "orders": foreignField "prodId": table "orders" has no such field`},
		{"a number cannot hold a uid", func(o, _ *gql.Table) {
			o.Relations = []gql.Relation{{Name: "product", Table: "products", Field: "qty"}}
		}, `table "orders": relation "product": field "qty" must be an ID or String field to hold a uid`},
		{"both ways", func(o, _ *gql.Table) {
			o.Relations = []gql.Relation{{Name: "product", Table: "products", Field: "productId", ForeignField: "x"}}
		}, `table "orders": relation "product": give exactly one of field`},
		{"name of a field", func(o, _ *gql.Table) {
			o.Relations = []gql.Relation{{Name: "qty", Table: "products", Field: "productId"}}
		}, `table "orders": relation "qty": the name is taken`},
	} {
		orders, prods, _ := shop()
		c.set(&orders, &prods)
		_, err := gql.New(gql.Config{Tables: []gql.Table{orders, prods}, Records: records(t, orders, prods)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
