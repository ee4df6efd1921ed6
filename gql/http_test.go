package gql_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// call sends one request and returns the status, the Content-Type and the body.
func call(t *testing.T, method, target, accept, body string) (int, string, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header.Get("Content-Type"), string(b)
}

// TestGraphQLOverHTTP: GET for queries, the two media types and their status codes, 406.
func TestGraphQLOverHTTP(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}})
	create(t, srv, map[string]any{"name": "Tea", "price": 3.5})
	get := func(params url.Values) string { return srv.URL + "/api/v1/graphql?" + params.Encode() }
	const (
		gqlResp = "application/graphql-response+json; charset=utf-8"
		jsonCT  = "application/json; charset=utf-8"
	)
	cases := []struct {
		name, method, target, accept, body string
		status                             int
		contentType, want                  string
	}{
		{"GET query", "GET", get(url.Values{"query": {"{ products { name } }"}}), "", "", 200, jsonCT, `{"data":{"products":[{"name":"Tea"}]}}`},
		{"GET with variables and operationName", "GET", get(url.Values{
			"query": {"query a { x: productsCount } query b($w: productWhere) { productsCount(where: $w) }"}, "operationName": {"b"},
			"variables": {`{"w": {"name": {"eq": "Coffee"}}}`}, "extensions": {`{}`}}), gqlResp[:33], "", 200, gqlResp, `{"data":{"productsCount":0}}`},
		{"GET mutation", "GET", get(url.Values{"query": {`mutation { deleteproduct(uid: "x") }`}}), "", "", 405, jsonCT, `a mutation must be sent with POST`},
		{"GET variables not JSON", "GET", get(url.Values{"query": {"{ productsCount }"}, "variables": {"{"}}), "", "", 400, jsonCT, `the variables parameter is not JSON`},
		{"POST, Accept graphql-response+json", "POST", srv.URL, "application/graphql-response+json", `{"query":"{ productsCount }"}`, 200, gqlResp, `{"data":{"productsCount":1}}`},
		{"Accept prefers application/json", "POST", srv.URL, "application/graphql-response+json;q=0.5, application/json", `{"query":"{ productsCount }"}`, 200, jsonCT, `{"data":{"productsCount":1}}`},
		{"Accept */*", "POST", srv.URL, "*/*", `{"query":"{ productsCount }"}`, 200, jsonCT, `{"data":{"productsCount":1}}`},
		{"Accept text/plain", "POST", srv.URL, "text/plain", `{"query":"{ productsCount }"}`, 406, jsonCT, `this endpoint answers application/graphql-response+json or application/json`},
		{"syntax error, graphql-response+json", "POST", srv.URL, "application/graphql-response+json", `{"query":"{"}`, 400, gqlResp, `GRAPHQL_VALIDATION_FAILED`},
		{"syntax error, json", "POST", srv.URL, "application/json", `{"query":"{"}`, 200, jsonCT, `GRAPHQL_VALIDATION_FAILED`},
		{"variable coercion, graphql-response+json", "POST", srv.URL, "application/graphql-response+json", `{"query":"query q($id: ID!) { __typename }","variables":{"id":null}}`, 400, gqlResp, `"errors"`},
		{"variable coercion, json", "POST", srv.URL, "application/json", `{"query":"query q($id: ID!) { __typename }","variables":{"id":null}}`, 200, jsonCT, `"errors"`},
		{"execution error keeps 200", "POST", srv.URL, "application/graphql-response+json", `{"query":"mutation { deleteproduct(uid: \"nope\") }"}`, 200, gqlResp, `"NOT_FOUND"`},
		{"body not JSON", "POST", srv.URL, "application/graphql-response+json", `{`, 400, gqlResp, `BAD_REQUEST`},
		{"variable out of range", "POST", srv.URL, "", `{"query":"query q($x: Float) { productsCount }","variables":{"x":1e309}}`, 400, jsonCT, `variables.x: the number 1e309 is out of range`},
		{"nested variable out of range", "POST", srv.URL, "", `{"query":"query q($x: JSON) { productsCount }","variables":{"x":{"a":[1,-2e400]}}}`, 400, jsonCT, `variables.x.a[1]: the number -2e400 is out of range`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, ct, body := call(t, c.method, c.target, c.accept, c.body)
			if status != c.status || ct != c.contentType || !strings.Contains(body, c.want) {
				t.Errorf("%d %q %s\nwant %d %q with %s", status, ct, body, c.status, c.contentType, c.want)
			}
			if c.status == 400 && strings.Contains(body, `"data"`) {
				t.Errorf("a request error has a data entry: %s", body)
			}
		})
	}
}

// TestStandardIntrospection: the query graphql-js's getIntrospectionQuery prints, which every
// GraphQL tool sends first, answers under the default depth limit, which still holds for data.
func TestStandardIntrospection(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}, Introspection: true})
	q, err := os.ReadFile("testdata/introspection.graphql")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"query": string(q), "operationName": "IntrospectionQuery"})
	status, _, out := call(t, "POST", srv.URL, "application/graphql-response+json", string(body))
	var r struct {
		Data struct {
			Schema struct {
				QueryType struct{ Name string }
				Types     []struct{ Name string }
			} `json:"__schema"`
		}
		Errors []any
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || status != 200 || len(r.Errors) > 0 || r.Data.Schema.QueryType.Name != "Query" || len(r.Data.Schema.Types) < 10 {
		t.Fatalf("%d %.400s (%v)", status, out, err)
	}
	deep := `{ productsConnection { edges { node { uid } } } __type(name: "product") { fields { type ` +
		strings.Repeat("{ ofType ", 9) + "{ name }" + strings.Repeat(" }", 9) + " } } }"
	if c := exec(t, srv, deep, nil); len(c.Errors) == 0 || !strings.Contains(c.raw, "exceeds max depth") {
		t.Errorf("a document mixing data and deep introspection: %s, want the depth limit", c.raw)
	}
}

// TestReadableErrors: messages say what is wrong in GraphQL's terms, never Go's.
func TestReadableErrors(t *testing.T) {
	items := table("items", "item", store.Field{Name: "name", Type: store.FieldType{Scalar: store.String}})
	srv := serve(t, gql.Config{Tables: []gql.Table{products(), items}, Introspection: true})
	cases := []struct {
		name, query string
		vars        map[string]any
		want        string
	}{
		{"a number for a StringFilter", `query($w: productWhere) { products(where: $w) { uid } }`, map[string]any{"w": map[string]any{"name": 1}}, `variables: "name" must be a StringFilter, got a number`},
		{"a list for an input", `query($w: productWhere) { products(where: $w) { uid } }`, map[string]any{"w": map[string]any{"price": []any{}}}, `variables: "price" must be a FloatFilter, got a list`},
		{"an object as uid", `query($u: ID) { products(uid: $u) { uid } }`, map[string]any{"u": map[string]any{"a": 1}}, `uid: want an ID (a string), got an object`},
		{"an object as uid of an update", `mutation($u: ID) { updateproduct(uid: $u, data: {price: 1}) { uid } }`, map[string]any{"u": map[string]any{}}, `uid: want an ID (a string), got an object`},
		{"a number for a String", `mutation($d: itemInput!) { createitem(data: $d) { uid } }`, map[string]any{"d": map[string]any{"name": 1}}, `data.name: want a String, got a number`},
		{"a string for an Int", `query($l: Int) { products(limit: $l) { uid } }`, map[string]any{"l": "x"}, `must be an Int`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := exec(t, srv, c.query, c.vars)
			if len(r.Errors) == 0 || !strings.Contains(r.Errors[0].Message, c.want) || strings.Contains(r.raw, "%!") {
				t.Errorf("got %s\nwant a message with %q", r.raw, c.want)
			}
		})
	}
	r := exec(t, srv, `{ __type(name: "Mutation") { fields { name description } } }`, nil).ok(t)
	for _, want := range []string{`"Create an item; the required fields must be given."`, `"Create a product; the required fields must be given."`} {
		if !strings.Contains(r.raw, want) {
			t.Errorf("mutation descriptions %s\nlack %s", r.raw, want)
		}
	}
	r = exec(t, srv, `{ __type(name: "itemEdge") { description } }`, nil).ok(t)
	if !strings.Contains(r.raw, `"An item and its position`) {
		t.Errorf("edge description %s", r.raw)
	}
}

// TestDocumentsSentAgain sends the same documents several times and in different ways: the
// endpoint remembers what it read from a document, and each answer must still be the one
// its method and operationName call for.
func TestDocumentsSentAgain(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}, Introspection: true})
	const mutation = `mutation createproduct($data: productInput!) { createproduct(data: $data) { name } }`
	two := `query a { products { name } } mutation b { createproduct(data: {name: "Tea", price: 1}) { name } }`
	get := func(query, op string) string {
		params := url.Values{"query": {query}}
		if op != "" {
			params.Set("operationName", op)
		}
		return srv.URL + "/api/v1/graphql?" + params.Encode()
	}
	postBody := func(query, op string, vars map[string]any) string {
		b, err := json.Marshal(map[string]any{"query": query, "operationName": op, "variables": vars})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	vars := map[string]any{"data": map[string]any{"name": "Tea", "price": 3.5}}
	for round := range 3 {
		for _, c := range []struct {
			name, method, target, body string
			status                     int
			want                       string
		}{
			{"POST mutation", "POST", srv.URL, postBody(mutation, "", vars), 200, `{"data":{"createProduct":{"name":"Tea"}}}`},
			{"GET mutation", "GET", get(mutation, ""), "", 405, `"a mutation must be sent with POST`},
			{"GET query of two", "GET", get(two, "a"), "", 200, `{"data":{"products":[`},
			{"GET mutation of two", "GET", get(two, "b"), "", 405, `"a mutation must be sent with POST`},
			{"POST mutation of two", "POST", srv.URL, postBody(two, "b", nil), 200, `{"data":{"createProduct":{"name":"Tea"}}}`},
			{"POST introspection", "POST", srv.URL, postBody(`{ __type(name: "product") { name } }`, "", nil), 200, `{"data":{"__type":{"name":"product"}}}`},
		} {
			status, _, body := call(t, c.method, c.target, "", c.body)
			if status != c.status || !strings.Contains(body, c.want) {
				t.Errorf("round %d, %s: %d %s, want %d %s", round, c.name, status, body, c.status, c.want)
			}
		}
	}
}
