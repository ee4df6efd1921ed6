package gql_test

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

const aggDoc = `query($where: productWhere) { productsAggregate(where: $where) { count sum { price } avg { price } min { price name createdAt } max { price author createdAt } } }`

func TestAggregate(t *testing.T) {
	for _, checked := range []bool{false, true} {
		t.Run(fmt.Sprintf("checked=%v", checked), func(t *testing.T) {
			alice, bob, _, nobody := guardedProducts(t, checked)
			var made []product
			exec(t, alice, `mutation { createproducts(data: [{name: "b", price: 2}, {name: "a", price: 4.5, author: "zed"}, {name: "secret", price: 100}]) { uid createdAt } }`, nil).ok(t).decode(t, "createproducts", &made)
			exec(t, bob, `mutation { createproducts(data: [{name: "c", price: 1000}]) { uid } }`, nil).ok(t)

			// alice reads her own records (not the secret one when the rule checks each).
			want := `{"count":3,"sum":{"price":106.5},"avg":{"price":35.5},"min":{"price":2,"name":"a","createdAt":"` + made[0].CreatedAt + `"},"max":{"price":100,"author":"zed","createdAt":"` + made[2].CreatedAt + `"}}`
			if checked {
				want = `{"count":2,"sum":{"price":6.5},"avg":{"price":3.25},"min":{"price":2,"name":"a","createdAt":"` + made[0].CreatedAt + `"},"max":{"price":4.5,"author":"zed","createdAt":"` + made[1].CreatedAt + `"}}`
			}
			if got := string(exec(t, alice, aggDoc, nil).ok(t).Data["productsAggregate"]); got != want {
				t.Errorf("alice's aggregates\n got %s\nwant %s", got, want)
			}
			// where narrows them (b has no author: a missing value is left out); nothing
			// matching answers count 0 and nulls.
			got := string(exec(t, alice, aggDoc, map[string]any{"where": map[string]any{"price": map[string]any{"lt": 3}}}).ok(t).Data["productsAggregate"])
			if want := `{"count":1,"sum":{"price":2},"avg":{"price":2},"min":{"price":2,"name":"b","createdAt":"` + made[0].CreatedAt + `"},"max":{"price":2,"author":null,"createdAt":"` + made[0].CreatedAt + `"}}`; got != want {
				t.Errorf("alice's under 3\n got %s\nwant %s", got, want)
			}
			empty := `{"count":0,"sum":{"price":null},"avg":{"price":null},"min":{"price":null,"name":null,"createdAt":null},"max":{"price":null,"author":null,"createdAt":null}}`
			if got := string(exec(t, alice, aggDoc, map[string]any{"where": map[string]any{"name": map[string]any{"eq": "none"}}}).ok(t).Data["productsAggregate"]); got != empty {
				t.Errorf("nothing matches: %s", got)
			}
			// A rule that refuses every read answers the empty aggregates, as a list answers [].
			if got := string(exec(t, nobody, aggDoc, nil).ok(t).Data["productsAggregate"]); got != empty {
				t.Errorf("nobody: %s", got)
			}
			if got := string(exec(t, bob, `{ productsAggregate { count max { price } } }`, nil).ok(t).Data["productsAggregate"]); got != `{"count":1,"max":{"price":1000}}` {
				t.Errorf("bob: %s", got)
			}
			if c := exec(t, alice, `{ productsAggregate(where: {colour: {eq: 1}}) { count } }`, nil); len(c.Errors) != 1 {
				t.Errorf("unknown field in where: %s", c.raw)
			}
		})
	}
}

// TestAggregateTypes: min and max keep each field's type; a table without numbers has no
// sum or avg.
func TestAggregateTypes(t *testing.T) {
	events := table("events", "event",
		store.Field{Name: "at", Type: store.FieldType{Scalar: store.DateTime}},
		store.Field{Name: "n", Type: store.FieldType{Scalar: store.Int}},
		store.Field{Name: "ref", Type: store.FieldType{Scalar: store.ID}},
		store.Field{Name: "tags", Type: store.FieldType{Scalar: store.String, List: true}},
	)
	notes := table("notes", "note", store.Field{Name: "text", Type: store.FieldType{Scalar: store.String}})
	srv := serve(t, gql.Config{Tables: []gql.Table{events, notes}})
	exec(t, srv, `mutation { createevents(data: [{at: "2026-01-02T00:00:00Z", n: 3, ref: "r2"}, {at: "2026-01-01T10:00:00.5Z", n: -4, ref: "r1"}, {tags: ["x"]}]) { uid } }`, nil).ok(t)
	got := string(exec(t, srv, `{ eventsAggregate { count sum { n } avg { n } min { at n ref } max { at n ref } } }`, nil).ok(t).Data["eventsAggregate"])
	if want := `{"count":3,"sum":{"n":-1},"avg":{"n":-0.5},"min":{"at":"2026-01-01T10:00:00.500Z","n":-4,"ref":"r1"},"max":{"at":"2026-01-02T00:00:00.000Z","n":3,"ref":"r2"}}`; got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	if r := exec(t, srv, `{ notesAggregate { sum { text } } }`, nil); len(r.Errors) != 1 || r.code(t) != "GRAPHQL_VALIDATION_FAILED" {
		t.Errorf("sum of a table without numbers: %s", r.raw)
	}
	if r := exec(t, srv, `{ eventsAggregate { min { tags } } }`, nil); len(r.Errors) != 1 {
		t.Errorf("min of a list: %s", r.raw)
	}
}

// TestAggregateAliasesChargedOnce: a figure selected under several aliases is computed and
// charged to the response budget once, as graph-gophers' executor charges it
// (gql.NewReference): under a small budget both answer the same.
func TestAggregateAliasesChargedOnce(t *testing.T) {
	cfg := gql.Config{Tables: []gql.Table{products()}, MaxResultBytes: 400}
	cfg.Records = records(t, cfg.Tables...)
	api, err := gql.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := gql.NewReference(cfg)
	if err != nil {
		t.Fatal(err)
	}
	send := func(api *gql.API, query string) (int, string) {
		srv := httptest.NewServer(api)
		defer srv.Close()
		return post(t, srv, body(query, `{}`))
	}
	send(api, `mutation { createproducts(data: [{name: "a", price: 1}, {name: "b", price: 2}]) { name } }`)
	query := `{ productsAggregate { avg { a1: price price } min { price a2: name } avg { a3: price a4: price a5: price } max { a6: name a7: name a8: name } } }`
	wantStatus, want := send(ref, query)
	if status, got := send(api, query); status != wantStatus || got != want {
		t.Errorf("got %d %s\nwant %d %s", status, got, wantStatus, want)
	}
}
