package gql_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
)

// TestIntrospectionCurrentSpec: the introspection fields of the current spec that
// graph-gophers lacks (__Directive.isRepeatable, __Type.isOneOf, __Schema.description) answer
// their values wherever a document selects them: under aliases, in fragments, beside data,
// under @include, in the operation operationName picks; the fields graph-gophers has answer
// as before.
func TestIntrospectionCurrentSpec(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}, Introspection: true})
	for _, c := range []struct {
		name, query string
		vars        map[string]any
		opName      string
		want        string
	}{
		{"schema description", `{ __schema { description queryType { name } } }`, nil, "",
			`{"data":{"__schema":{"description":null,"queryType":{"name":"Query"}}}}`},
		{"directives, aliased", `{ __schema { directives { name r: isRepeatable args(includeDeprecated: true) { name isDeprecated } } } }`, nil, "",
			`{"data":{"__schema":{"directives":[{"name":"deprecated","r":false,"args":[{"name":"reason","isDeprecated":false}]},{"name":"include","r":false,"args":[{"name":"if","isDeprecated":false}]},{"name":"oneOf","r":false,"args":[]},{"name":"skip","r":false,"args":[{"name":"if","isDeprecated":false}]},{"name":"specifiedBy","r":false,"args":[{"name":"url","isDeprecated":false}]}]}}}`},
		{"in a fragment, twice", `{ __type(name: "productInput") { ...T kind } } fragment T on __Type { name isOneOf specifiedByURL ... on __Type { isOneOf } inputFields(includeDeprecated: true) { name isDeprecated deprecationReason } }`, nil, "",
			`{"data":{"__type":{"name":"productInput","isOneOf":false,"specifiedByURL":null,"inputFields":[{"name":"author","isDeprecated":false,"deprecationReason":null},{"name":"name","isDeprecated":false,"deprecationReason":null},{"name":"price","isDeprecated":false,"deprecationReason":null}],"kind":"INPUT_OBJECT"}}}`},
		{"nested types", `{ __type(name: "product") { fields { name type { isOneOf ofType { name isOneOf } } } } }`, nil, "",
			`{"data":{"__type":{"fields":[{"name":"uid","type":{"isOneOf":false,"ofType":{"name":"ID","isOneOf":false}}},{"name":"id","type":{"isOneOf":false,"ofType":{"name":"ID","isOneOf":false}}},{"name":"author","type":{"isOneOf":false,"ofType":{"name":"String","isOneOf":false}}},{"name":"name","type":{"isOneOf":false,"ofType":{"name":"String","isOneOf":false}}},{"name":"price","type":{"isOneOf":false,"ofType":{"name":"Float","isOneOf":false}}},{"name":"createdAt","type":{"isOneOf":false,"ofType":{"name":"DateTime","isOneOf":false}}},{"name":"updatedAt","type":{"isOneOf":false,"ofType":{"name":"DateTime","isOneOf":false}}}]}}}`},
		{"beside data", `{ productsCount __type(name: "product") { isOneOf description } }`, nil, "",
			`{"data":{"productsCount":0,"__type":{"isOneOf":false,"description":"A record of the table products."}}}`},
		{"@include false", `query($x: Boolean!) { __type(name: "product") { name isOneOf @include(if: $x) } }`, map[string]any{"x": false}, "",
			`{"data":{"__type":{"name":"product"}}}`},
		{"@include true", `query($x: Boolean!) { __type(name: "product") { name isOneOf @include(if: $x) } }`, map[string]any{"x": true}, "",
			`{"data":{"__type":{"name":"product","isOneOf":false}}}`},
		{"operationName", `query A { __type(name: "product") { isOneOf } } query B { __schema { d: description } }`, nil, "B",
			`{"data":{"__schema":{"d":null}}}`},
		{"an unknown type", `{ __type(name: "nope") { name isOneOf } }`, nil, "",
			`{"data":{"__type":null}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"query": c.query, "variables": c.vars, "operationName": c.opName})
			status, out := post(t, srv, string(body))
			if status != 200 || out != c.want {
				t.Errorf("%d %s\nwant %s", status, out, c.want)
			}
		})
	}
	// A field graph-gophers lacks, asked with a selection, is refused as invalid.
	if r := exec(t, srv, `{ __type(name: "product") { isOneOf { name } } }`, nil); r.code(t) != "GRAPHQL_VALIDATION_FAILED" || !strings.Contains(r.raw, "isOneOf") {
		t.Errorf("isOneOf with a selection: %s", r.raw)
	}
}
