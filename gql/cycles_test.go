package gql_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// TestRelationsBothWays: orders name their product and products list their orders, as
// issue 13 declares them.
func TestRelationsBothWays(t *testing.T) {
	orders, prods, _ := shop()
	relateBothWays(&orders, &prods)
	tables := []gql.Table{orders, prods}
	s := newShopWith(t, gql.Config{Tables: tables, Records: records(t, tables...), Introspection: true})
	pu := s.hundredProducts(t)

	// The figures of issue 13: each direction costs one store query per level.
	out, n := s.run(t, "alice", `{ products(limit: 100) { name orders(orderBy: [{field: qty, direction: DESC}]) { qty } } }`, "{}")
	t.Logf("100 products with their orders: %d store queries", n)
	if n > 3 {
		t.Errorf("100 products with their orders cost %d store queries, want at most 3", n)
	}
	// bob's orders (qty 200 and up) are not alice's to read.
	if !strings.HasPrefix(out, `{"data":{"products":[{"name":"p00","orders":[{"qty":100},{"qty":0}]},{"name":"p01","orders":[{"qty":101},{"qty":1}]},`) || !strings.HasSuffix(out, `{"name":"p99","orders":[{"qty":199},{"qty":99}]}]}}`) {
		t.Errorf("products with their orders: %.300s", out)
	}
	out, n = s.run(t, "alice", `{ orders(limit: 100) { qty product { name } } }`, "{}")
	t.Logf("100 orders with their product: %d store queries", n)
	if n > 3 {
		t.Errorf("100 orders with their product cost %d store queries, want at most 3", n)
	}
	if !strings.HasPrefix(out, `{"data":{"orders":[{"qty":0,"product":{"name":"p00"}},{"qty":1,"product":{"name":"p01"}},`) {
		t.Errorf("orders with their product: %.300s", out)
	}
	// Four levels, both directions: one query per level.
	out, n = s.run(t, "alice", `{ products(limit: 100) { orders { product { orders { uid } } } } }`, "{}")
	if n != 4 || !strings.HasPrefix(out, `{"data":{"products":[{"orders":[{"product":{"orders":[{"uid":"`) {
		t.Errorf("four levels (%d store queries): %.300s", n, out)
	}

	desc := `orderBy: [{field: qty, direction: DESC}]`
	for _, c := range []struct {
		name, sub, query, vars, want string
	}{
		{"four levels", "alice", `{ products(limit: 2) { name orders(limit: 1) { qty product { name orders(` + desc + `) { qty } } } } }`, `{}`,
			`{"data":{"products":[{"name":"p00","orders":[{"qty":0,"product":{"name":"p00","orders":[{"qty":100},{"qty":0}]}}]},{"name":"p01","orders":[{"qty":1,"product":{"name":"p01","orders":[{"qty":101},{"qty":1}]}}]}]}}`},
		{"where, orderBy and limit nested", "alice", `query($p: ID) { products(uid: $p) { orders(where: {qty: {lt: 150}}, ` + desc + `, limit: 5) { qty product { price } } } }`, fmt.Sprintf(`{"p": %q}`, pu[7]),
			`{"data":{"products":[{"orders":[{"qty":107,"product":{"price":7}},{"qty":7,"product":{"price":7}}]}]}}`},
		{"root arguments", "alice", `{ products(where: {price: {gte: 97}}, orderBy: [{field: price, direction: DESC}], limit: 2, offset: 1) { name orders(limit: 1, ` + desc + `) { qty } } }`, `{}`,
			`{"data":{"products":[{"name":"p98","orders":[{"qty":198}]},{"name":"p97","orders":[{"qty":197}]}]}}`},
		{"aliases and fragments", "alice", `query { products(limit: 1) { ...P } } fragment P on product { n: name few: orders(limit: 1, ` + desc + `) { qty } all: orders(orderBy: [{field: qty}]) { ...O } orders(limit: 1) { __typename } } fragment O on order { qty product { __typename name } }`, `{}`,
			`{"data":{"products":[{"n":"p00","few":[{"qty":100}],"all":[{"qty":0,"product":{"__typename":"product","name":"p00"}},{"qty":100,"product":{"__typename":"product","name":"p00"}}],"orders":[{"__typename":"order"}]}]}}`},
		{"the same relation twice merges", "alice", `{ products(limit: 1) { orders(limit: 1) { qty } ... on product { orders(limit: 1) { product { name } } } } }`, `{}`,
			`{"data":{"products":[{"orders":[{"qty":0,"product":{"name":"p00"}}]}]}}`},
		{"merged deep", "alice", `{ products(limit: 1) { orders(limit: 1) { product { name } } ...F } } fragment F on product { orders(limit: 1) { qty product { price } } }`, `{}`,
			`{"data":{"products":[{"orders":[{"product":{"name":"p00","price":0},"qty":0}]}]}}`},
		{"a connection", "alice", `query($after: String) { productsConnection(first: 2, after: $after, orderBy: [{field: name}]) { __typename totalCount pageInfo { hasNextPage __typename } edges { __typename node { name orders(limit: 1) { qty product { orders(` + desc + `) { qty } } } } } } }`, `{}`,
			`{"data":{"productsConnection":{"__typename":"productConnection","totalCount":100,"pageInfo":{"hasNextPage":true,"__typename":"PageInfo"},"edges":[{"__typename":"productEdge","node":{"name":"p00","orders":[{"qty":0,"product":{"orders":[{"qty":100},{"qty":0}]}}]}},{"__typename":"productEdge","node":{"name":"p01","orders":[{"qty":1,"product":{"orders":[{"qty":101},{"qty":1}]}}]}}]}}}`},
		{"a connection failing below", "alice", `{ productsConnection(first: 1) { edges { cursor node { orders(limit: -1) { qty } } } pageInfo { endCursor } } }`, `{}`,
			`{"data":null,"errors":[{"message":"orders.limit must be between 0 and 1000, got -1","path":["productsConnection","edges",0,"node","orders"],"extensions":{"code":"BAD_USER_INPUT"}}]}`},
		{"variables and directives", "alice", `query($lim: Int = 1, $deep: Boolean!) { __typename products(limit: 1) { orders(limit: $lim) { qty product @include(if: $deep) { name } uid @skip(if: true) } ...F @skip(if: $deep) } } fragment F on product { name }`, `{"deep": true}`,
			`{"data":{"__typename":"Query","products":[{"orders":[{"qty":0,"product":{"name":"p00"}}]}]}}`},
		{"directives the other way", "alice", `query($lim: Int = 1, $deep: Boolean!) { products(limit: 1) { orders(limit: $lim) { qty product @include(if: $deep) { name } } ...F @skip(if: $deep) } } fragment F on product { name }`, `{"deep": false, "lim": 2}`,
			`{"data":{"products":[{"orders":[{"qty":0},{"qty":100}],"name":"p00"}]}}`},
		// The orders' read rule applies below a product: bob reads his own orders only, and
		// alice's products not at all.
		{"read rule of the related table", "bob", `query($p: ID) { orders(where: {productId: {eq: $p}}) { qty product { name } } }`, fmt.Sprintf(`{"p": %q}`, pu[3]),
			`{"data":{"orders":[{"qty":203,"product":null}]}}`},
		{"a product no one may read", "bob", `{ products { orders { qty } } }`, `{}`, `{"data":{"products":[]}}`},
		// A nullable field stops the null of a failed non-null list.
		{"an argument refused deep inside", "alice", `{ products(limit: 2) { name orders(limit: 1) { qty product { orders(limit: -1) { qty } } } } }`, `{}`,
			`{"data":{"products":[{"name":"p00","orders":[{"qty":0,"product":null}]},{"name":"p01","orders":[{"qty":1,"product":null}]}]},"errors":[{"message":"orders.limit must be between 0 and 1000, got -1","path":["products",0,"orders",0,"product","orders"],"extensions":{"code":"BAD_USER_INPUT"}},{"message":"orders.limit must be between 0 and 1000, got -1","path":["products",1,"orders",0,"product","orders"],"extensions":{"code":"BAD_USER_INPUT"}}]}`},
		{"an argument graph-gophers refuses", "alice", `{ products(limit: 1) { name orders(where: {qty: {like: 1}}) { qty } } }`, `{}`,
			`{"errors":[{"message":"Field \"like\" is not defined by type \"IntFilter\".","locations":[{"line":1,"column":50}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}`},
		{"a where the table refuses", "alice", `{ products(limit: 1) { name orders(where: {uid: {eq: 1, in: [[]]}}) { qty } } }`, `{}`,
			`{"data":null,"errors":[{"message":"orders.where.uid.in[0]: want an ID, got a list","path":["products",0,"orders"],"extensions":{"code":"BAD_USER_INPUT"}}]}`},
		{"a root list refused", "alice", `{ products(limit: -1) { orders { qty } } }`, `{}`,
			`{"data":null,"errors":[{"message":"limit must be between 0 and 1000, got -1","path":["products"],"extensions":{"code":"BAD_USER_INPUT"}}]}`},
		{"a variable of the wrong type", "alice", `query($l: Int) { products(limit: 1) { orders(limit: $l) { qty } } }`, `{"l": "x"}`,
			`{"data":null,"errors":[{"message":"orders.limit must be an Int","path":["products",0,"orders"],"extensions":{"code":"BAD_USER_INPUT"}}]}`},
		{"mutations", "alice", fmt.Sprintf(`mutation { createproduct(data: {name: "x", price: 1}) { name orders { qty } } u: updateProduct(uid: %q, data: {price: 8}) { price orders(limit: 1) { qty product { name } } } __typename no: createProduct(data: {price: 1}) { orders { qty } } }`, pu[8]), `{}`,
			`{"data":{"createProduct":{"name":"x","orders":[]},"u":{"price":8,"orders":[{"qty":8,"product":{"name":"p08"}}]},"__typename":"Mutation","no":null},"errors":[{"message":"data.name is required to create a product","path":["no"],"extensions":{"code":"BAD_USER_INPUT"}}]}`},
		{"a batch mutation", "alice", fmt.Sprintf(`mutation { createorders(data: [{qty: 1000, productId: %q}]) { qty product { name orders(where: {qty: {gte: 1000}}) { qty } } } updateOrders(where: {qty: {eq: 1000}}, data: {qty: 1001}) deleteorders(where: {qty: {eq: 1001}}) }`, pu[9]), `{}`,
			`{"data":{"createorders":[{"qty":1000,"product":{"name":"p09","orders":[{"qty":1000}]}}],"updateOrders":1,"deleteorders":1}}`},
		{"a mutation failing below", "alice", `mutation { createProduct(data: {name: "y", price: 1}) { name orders(limit: -1) { qty } } }`, `{}`,
			`{"data":{"createProduct":null},"errors":[{"message":"orders.limit must be between 0 and 1000, got -1","path":["createProduct","orders"],"extensions":{"code":"BAD_USER_INPUT"}}]}`},
		// The mutations above created two products of price 1: four cost less than 2, five
		// less than 3.
		{"a count beside", "alice", `{ productsCount(where: {price: {lt: 2}}) products(limit: 1) { orders(limit: 1) { qty } } }`, `{}`,
			`{"data":{"productsCount":4,"products":[{"orders":[{"qty":0}]}]}}`},
		{"an aggregate beside", "alice", `{ productsAggregate(where: {price: {lt: 3}}) { __typename count sum { price __typename } avg { price } min { name price } mx: max { price createdAt @skip(if: true) } } products(limit: 1) { orders { qty } } }`, `{}`,
			`{"data":{"productsAggregate":{"__typename":"productAggregate","count":5,"sum":{"price":5,"__typename":"productNumbers"},"avg":{"price":1},"min":{"name":"p00","price":0},"mx":{"price":2}},"products":[{"orders":[{"qty":0},{"qty":100}]}]}}`},
		{"the depth limit", "alice", `{ products(limit: 1) { orders { product { orders { product { orders { product { orders { product { orders { product { name } } } } } } } } } } } }`, `{}`,
			`{"errors":[{"message":"Field \"product\" has depth 11 that exceeds max depth 10","locations":[{"line":1,"column":109}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}`},
		{"introspection shows both directions", "alice", `{ p: __type(name: "product") { fields { name } } o: __type(name: "order") { fields { name } } }`, `{}`,
			`{"data":{"p":{"fields":[{"name":"uid"},{"name":"id"},{"name":"author"},{"name":"name"},{"name":"price"},{"name":"makerId"},{"name":"orders"},{"name":"createdAt"},{"name":"updatedAt"}]},"o":{"fields":[{"name":"uid"},{"name":"id"},{"name":"productId"},{"name":"qty"},{"name":"product"},{"name":"createdAt"},{"name":"updatedAt"}]}}}`},
		{"a mutation selecting the other direction", "alice", fmt.Sprintf(`mutation { createOrder(data: {qty: 5, productId: %q}) { qty product { name } } }`, pu[4]), `{}`,
			`{"data":{"createOrder":{"qty":5,"product":{"name":"p04"}}}}`},
	} {
		out, _ := s.run(t, c.sub, c.query, c.vars)
		out = stripRequestIDs(out)
		if out != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, out, c.want)
		}
	}
}

// stripRequestIDs drops the request ids error answers carry.
func stripRequestIDs(s string) string {
	for {
		i := strings.Index(s, `,"requestId":"`)
		if i < 0 {
			return s
		}
		j := strings.IndexByte(s[i+len(`,"requestId":"`):], '"')
		s = s[:i] + s[i+len(`,"requestId":"`)+j+1:]
	}
}

// TestRelationsToItself: employees with their manager and their reports, a table related
// to itself both ways.
func TestRelationsToItself(t *testing.T) {
	emp := table("employees", "employee",
		store.Field{Name: "name", Type: store.FieldType{Scalar: store.String}, Required: true},
		store.Field{Name: "managerId", Type: store.FieldType{Scalar: store.ID}})
	emp.Relations = []gql.Relation{
		{Name: "manager", Table: "employees", Field: "managerId"},
		{Name: "reports", Table: "employees", ForeignField: "managerId"},
	}
	s := newShop(t, emp)
	boss := s.uids(t, "alice", "createemployees", []string{`{name: "boss"}`})[0]
	mid := s.uids(t, "alice", "createemployees", []string{fmt.Sprintf(`{name: "ann", managerId: %q}`, boss), fmt.Sprintf(`{name: "bo", managerId: %q}`, boss)})
	s.uids(t, "alice", "createemployees", []string{fmt.Sprintf(`{name: "cy", managerId: %q}`, mid[0]), fmt.Sprintf(`{name: "di", managerId: %q}`, mid[0])})

	for _, c := range []struct {
		name, query string
		queries     int64
		want        string
	}{
		{"down", `{ employees(where: {name: {eq: "boss"}}) { name manager { name } reports(orderBy: [{field: name}]) { name reports(orderBy: [{field: name, direction: DESC}]) { name reports { name } } } } }`, 4,
			`{"data":{"employees":[{"name":"boss","manager":null,"reports":[{"name":"ann","reports":[{"name":"di","reports":[]},{"name":"cy","reports":[]}]},{"name":"bo","reports":[]}]}]}}`},
		{"up", `{ employees(orderBy: [{field: name}]) { name manager { name manager { name manager { name } } } } }`, 3,
			`{"data":{"employees":[{"name":"ann","manager":{"name":"boss","manager":null}},{"name":"bo","manager":{"name":"boss","manager":null}},{"name":"boss","manager":null},{"name":"cy","manager":{"name":"ann","manager":{"name":"boss","manager":null}}},{"name":"di","manager":{"name":"ann","manager":{"name":"boss","manager":null}}}]}}`},
		{"up and down", `{ employees(where: {name: {eq: "cy"}}) { manager { reports(orderBy: [{field: name}]) { name manager { name } } } } }`, 4,
			`{"data":{"employees":[{"manager":{"reports":[{"name":"cy","manager":{"name":"ann"}},{"name":"di","manager":{"name":"ann"}}]}}]}}`},
		// Every relation of the table closes a cycle; a mutation may select them too.
		{"a mutation", fmt.Sprintf(`mutation { createEmployee(data: {name: "ed", managerId: %q}) { name manager { name reports(orderBy: [{field: name}]) { name } } } }`, mid[1]), 3,
			`{"data":{"createEmployee":{"name":"ed","manager":{"name":"bo","reports":[{"name":"ed"}]}}}}`},
	} {
		out, n := s.run(t, "alice", c.query, "{}")
		if out != c.want || n != c.queries {
			t.Errorf("%s (%d store queries, want %d):\n got %s\nwant %s", c.name, n, c.queries, out, c.want)
		}
	}
}

// TestNestedAnswersAsGraphGophers sends each document to two APIs over the same records: one
// whose orders and products relate both ways (products.orders closes the cycle), and the
// reference with products.orders alone, where graph-gophers' own executor runs it
// (gql.NewReference). The answers must be the same bytes with the same status.
func TestNestedAnswersAsGraphGophers(t *testing.T) {
	ft := func(s store.Scalar, list bool) store.FieldType { return store.FieldType{Scalar: s, List: list} }
	orders := table("orders", "order",
		store.Field{Name: "productId", Type: ft(store.ID, false)},
		store.Field{Name: "qty", Type: ft(store.Int, false), Required: true},
		store.Field{Name: "total", Type: ft(store.Float, false)},
		store.Field{Name: "paid", Type: ft(store.Boolean, false)},
		store.Field{Name: "at", Type: ft(store.DateTime, false)},
		store.Field{Name: "label", Type: ft(store.String, false)},
		store.Field{Name: "tags", Type: ft(store.String, true)},
		store.Field{Name: "note", Type: ft(store.JSON, false)})
	prods := products()
	prods.Relations = []gql.Relation{{Name: "orders", Table: "orders", ForeignField: "productId"}}
	recs := records(t, orders, prods)
	// A small selection limit, so that a document can pass it.
	oneWay := newShopOf(t, gql.Config{Tables: []gql.Table{orders, prods}, Records: recs, MaxSelections: 40}, gql.NewReference)
	orders.Relations = []gql.Relation{{Name: "product", Table: "products", Field: "productId"}}
	bothWays := newShopWith(t, gql.Config{Tables: []gql.Table{orders, prods}, Records: recs, MaxSelections: 40})

	pu := oneWay.uids(t, "alice", "createproducts", []string{`{name: "Widget", price: 19.99, author: "ann"}`, `{name: "<b>&amp;</b> \"q\"", price: 1e21}`, `{name: "secret", price: 0.1}`})
	oneWay.uids(t, "bob", "createproducts", []string{`{name: "bob's", price: 2}`})
	oneWay.uids(t, "alice", "createorders", []string{
		fmt.Sprintf(`{qty: 1, productId: %q, total: 1.5e300, paid: true, at: "2026-11-22T11:04:05.123456+01:00", label: "é ü \u2028 日本", tags: ["red", "a&b"], note: {k: [1, "two", null, "<&>"]}}`, pu[0]),
		fmt.Sprintf(`{qty: 2, productId: %q, total: 0.1, paid: false, tags: []}`, pu[0]),
		fmt.Sprintf(`{qty: 3, productId: %q, label: "tab\there", note: "x"}`, pu[1]),
		fmt.Sprintf(`{qty: 4, productId: %q, total: -1e-7}`, pu[2]),
	})
	oneWay.uids(t, "bob", "createorders", []string{fmt.Sprintf(`{qty: 5, productId: %q}`, pu[0])})

	all := `uid qty productId total paid at label tags note createdAt updatedAt __typename`
	for _, c := range []struct{ sub, query, vars string }{
		{"alice", `{ products(orderBy: [{field: name}]) { uid name price author __typename orders(orderBy: [{field: qty}]) { ` + all + ` } } }`, `{}`},
		{"admin", `{ products(orderBy: [{field: price, direction: DESC}]) { name orders(orderBy: [{field: qty, direction: DESC}], limit: 2) { ` + all + ` } } }`, `{}`},
		{"admin-checked", `{ products { name orders { qty } } }`, `{}`},
		{"bob", `{ products { name orders { qty label } } }`, `{}`},
		{"nobody", `{ products { name orders { qty } } }`, `{}`},
		{"alice", `query($p: ID, $w: orderWhere, $x: Boolean = false) { a: products(uid: $p) { ...P } b: products(limit: 1, offset: 1) { n: name o: orders { ...O @include(if: $x) q: qty } } } fragment P on product { name orders(where: $w) { ...O } } fragment O on order { paid tags @skip(if: $x) }`,
			fmt.Sprintf(`{"p": %q, "w": {"or": [{"paid": {"eq": true}}, {"label": {"startsWith": "tab"}}]}}`, pu[0])},
		{"alice", `{ products(where: {name: {in: ["Widget"]}}) { orders(where: {tags: {has: "red"}, qty: {nin: [2]}}) { qty } } }`, `{}`},
		{"alice", `{ products(limit: 1) { name orders(limit: -1) { qty } } }`, `{}`},
		{"alice", `{ products(limit: 1) { name orders(orderBy: [{field: tags}]) { qty } } }`, `{}`},
		{"alice", `{ products(limit: 1) { name orders(where: {qty: {eq: 1.5}}) { qty } } }`, `{}`},
		{"alice", `query($l: Int) { products(limit: 1) { orders(limit: $l) { qty } } }`, `{"l": 1.5}`},
		{"alice", `query($w: orderWhere!) { products(limit: 1) { orders(where: $w) { qty } } }`, `{}`},
		{"alice", `{ products(where: {sku: {eq: 1}}) { orders { qty } } }`, `{}`},
		{"alice", `{ products(limit: 1001) { orders { qty } } }`, `{}`},
		{"broken", `{ products { orders { qty } } }`, `{}`},
		{"alice", `{ products { orders { ...Q ...Q ...Q2 } } } fragment Q on order { qty paid tags ...Q2 } fragment Q2 on order { a: qty b: qty c: qty d: qty e: qty f: qty g: qty h: qty i: qty j: qty }`, `{}`},
		{"alice", `{ products(limit: 2) { orders(limit: 1) { qty } ...F } } fragment F on product { orders(limit: 1) { paid qty } }`, `{}`},
		{"admin", `{ productsConnection(first: 2, orderBy: [{field: name}]) { __typename totalCount pageInfo { hasNextPage endCursor __typename } edges { cursor __typename node { name orders { qty } } } } }`, `{}`},
		{"alice", `query($a: String) { productsConnection(after: $a) { edges { node { orders { qty } } } } }`, `{"a": "x"}`},
		{"alice", `{ productsConnection(first: 1) { edges { cursor node { orders(limit: -1) { qty } } } totalCount } }`, `{}`},
		{"broken", `{ productsConnection { totalCount edges { node { orders { qty } } } } }`, `{}`},
		{"admin-checked", `{ productsAggregate { count sum { price } avg { price } min { name price createdAt } max { name price updatedAt } } products { orders { qty } } }`, `{}`},
		{"alice", `query($w: productWhere) { a: productsAggregate(where: $w) { count max { price } } productsCount(where: $w) products(where: $w) { orders { qty } } }`, `{"w": {"price": {"gt": 10}}}`},
		{"alice", `{ productsAggregate(where: {name: {like: 1}}) { count } products { orders { qty } } }`, `{}`},
		{"alice", `{ ...A ...B } fragment A on Query { products(limit: 2) { name orders(limit: 1) { qty } } } fragment B on Query { products(limit: 2) { price orders(limit: 1) { paid } } }`, `{}`},
		{"alice", `query($id: ID!) { product(id: $id) { id name orders { qty } } none: product(id: "nope") { id orders { qty } } }`, `{"id": "nope"}`},
		{"alice", `{ p: products(limit: 1) { id } product(id: "") { name orders(limit: 1) { qty } } }`, `{}`},
		// A directive's argument that is not a Boolean: an error, and the selection stays.
		{"alice", `query($c: Boolean!) { products(limit: 1) { name orders @include(if: $c) { qty } } }`, `{"c": "yes"}`},
		// One field under one key twice, each decided by its own directives.
		{"alice", `query($a: Boolean!, $b: Boolean!) { products(limit: 2) { orders @include(if: $a) { qty } orders @include(if: $b) { paid orders: qty } } x: products(limit: 1) @skip(if: $a) { name } x: products(limit: 1) @skip(if: $b) { price } }`, `{"a": false, "b": true}`},
		{"alice", `query($a: Boolean!, $b: Boolean!) { products(limit: 2) { orders @include(if: $a) { qty } orders @include(if: $b) { paid } } }`, `{"a": false, "b": false}`},
		// graph-gophers counts the selections directives leave.
		{"alice", `{ products(limit: 1) { name orders @skip(if: true) { ...Q2 ...Q2 ...Q2 ...Q2 ...Q2 } } } fragment Q2 on order { a: qty b: qty c: qty d: qty e: qty f: qty g: qty h: qty i: qty j: qty }`, `{}`},
		// Mutations last: each runs twice, once on each API, and answers the same.
		{"alice", `mutation { createProduct(data: {name: "m", price: 1}) { name price author __typename orders { qty } } gone: deleteProduct(uid: "nope") { id name } n: updateOrders(where: {qty: {eq: 999}}, data: {qty: 1000}) __typename }`, `{}`},
		{"alice", `mutation($d: [productInput!]!) { createproducts(data: $d) { name orders { qty } } }`, `{"d": [{"name": "b1", "price": 1}, {"name": "b2", "price": 2}]}`},
		{"alice", `mutation { a: createProduct(data: {name: "z", price: 1}) { orders(limit: -1) { qty } } b: createProduct(data: {name: "z2"}) { orders { qty } } }`, `{}`},
		{"nobody", `mutation { createProduct(data: {name: "m", price: 1}) { orders { qty } } }`, `{}`},
	} {
		want, _ := oneWay.run(t, c.sub, c.query, c.vars)
		got, _ := bothWays.run(t, c.sub, c.query, c.vars)
		if got != want {
			t.Errorf("%s as %s:\n nested       %s\n graph-gophers %s", c.query, c.sub, got, want)
		}
	}
}

// TestSubscriptionSelectingACycle: a subscription may select a relation that closes a cycle
// (product.orders, with order.product). Its events are answered by the executor, under each
// subscriber's read rules, with the bytes graph-gophers' own executor writes for the same
// event where the relation closes no cycle (gql.NewReference); and its arguments are
// refused as graph-gophers refuses them.
func TestSubscriptionSelectingACycle(t *testing.T) {
	orders, prods, _ := shop()
	prods.Relations = []gql.Relation{{Name: "orders", Table: "orders", ForeignField: "productId"}}
	cfg := gql.Config{Tables: []gql.Table{orders, prods}, Records: records(t, orders, prods), Changes: stores.Changes().Project("cycles"),
		Where: store.Bounds{MaxNodes: 1000, MaxDepth: 16, MaxIn: 1}}
	oneWay := newShopOf(t, cfg, gql.NewReference)
	orders.Relations = []gql.Relation{{Name: "product", Table: "products", Field: "productId"}}
	cfg.Tables = []gql.Table{orders, prods}
	bothWays := newShopWith(t, cfg)

	tea := oneWay.uids(t, "alice", "createproducts", []string{`{name: "Tea", price: 3}`})[0]
	oneWay.uids(t, "alice", "createorders", []string{fmt.Sprintf(`{qty: 1, productId: %q}`, tea)})
	oneWay.uids(t, "bob", "createorders", []string{fmt.Sprintf(`{qty: 2, productId: %q}`, tea)})

	const same = `subscription($n: String = "Tea") { products(where: {name: {eq: $n}}) { __typename op ... on productEvent { record { __typename name price orders(orderBy: [{field: qty}]) { qty __typename } } } } }`
	const deeper = `subscription { products { record { name orders(orderBy: [{field: qty}]) { qty product { name } } } } }`
	update := fmt.Sprintf(`mutation($p: Float!) { updateProduct(uid: %q, data: {price: $p}) { uid } }`, tea)
	// What the update costs with nobody subscribed.
	_, write := oneWay.run(t, "alice", update, `{"p": 3.5}`)
	// An argument refused below the record nulls the record, with the error at its path.
	const refused = `subscription { products { uid record { name orders(limit: -1) { qty } } } }`
	type streams struct{ graphGophers, nested, deeper, refusedGG, refusedNested <-chan string }
	subs := map[string]streams{}
	for _, sub := range []string{"alice", "admin"} {
		subs[sub] = streams{oneWay.subscribe(t, sub, same), bothWays.subscribe(t, sub, same), bothWays.subscribe(t, sub, deeper),
			oneWay.subscribe(t, sub, refused), bothWays.subscribe(t, sub, refused)}
	}
	before := oneWay.recs.Queries()
	oneWay.run(t, "alice", update, `{"p": 4}`)
	for sub, want := range map[string][2]string{
		// bob's order is not alice's to read.
		"alice": {`{"data":{"products":{"__typename":"productEvent","op":"UPDATE","record":{"__typename":"product","name":"Tea","price":4,"orders":[{"qty":1,"__typename":"order"}]}}}}`,
			`{"data":{"products":{"record":{"name":"Tea","orders":[{"qty":1,"product":{"name":"Tea"}}]}}}}`},
		"admin": {`{"data":{"products":{"__typename":"productEvent","op":"UPDATE","record":{"__typename":"product","name":"Tea","price":4,"orders":[{"qty":1,"__typename":"order"},{"qty":2,"__typename":"order"}]}}}}`,
			`{"data":{"products":{"record":{"name":"Tea","orders":[{"qty":1,"product":{"name":"Tea"}},{"qty":2,"product":{"name":"Tea"}}]}}}}`},
	} {
		s := subs[sub]
		if got := receive(t, sub+" on graph-gophers", s.graphGophers); got != want[0] {
			t.Errorf("%s on graph-gophers: %s", sub, got)
		}
		if got := receive(t, sub+" on the nested plan", s.nested); got != want[0] {
			t.Errorf("%s on the nested plan: %s", sub, got)
		}
		if got := receive(t, sub+" deeper", s.deeper); got != want[1] {
			t.Errorf("%s deeper: %s", sub, got)
		}
		gg, nested := receive(t, sub+" refused on graph-gophers", s.refusedGG), receive(t, sub+" refused on the nested plan", s.refusedNested)
		if gg != nested || !strings.Contains(nested, `"record":null}},"errors":[{"message":"orders.limit must be between 0 and 1000, got -1","path":["products","record","orders"]`) {
			t.Errorf("%s, a refused argument:\n nested        %s\n graph-gophers %s", sub, nested, gg)
		}
	}
	// One store query per relation per level of each subscriber's event, whatever the
	// number of parents: the orders, then the product of every order of the deeper one.
	if n := oneWay.recs.Queries() - before - write; n != 8 {
		t.Errorf("the update's events cost %d store queries, want 2×(1+1+2)", n)
	}

	for _, doc := range []string{
		`subscription { products(where: {name: {in: ["a", "b"]}}) { record { name orders { qty } } } }`,
		`subscription { products { record { name orders { qty nope } } } }`,
	} {
		want, _ := oneWay.refused(t, "alice", doc)
		got, status := bothWays.refused(t, "alice", doc)
		if got != want || status != http.StatusBadRequest {
			t.Errorf("%s:\n nested        %d %s\n graph-gophers %s", doc, status, got, want)
		}
	}
}
