package gql_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// TestAliasedCreates: single creates of one table in a row in a mutation (a client seeding
// with aliased calls) are written in one store call, and answer as the calls one after
// another would: a record its checks refuse, or that a unique index refuses, fails alone
// and the others are written.
func TestAliasedCreates(t *testing.T) {
	tbl := products()
	tbl.Indexes = []store.Index{{Fields: []string{"name"}, Unique: true}}
	for _, c := range []struct {
		name string
		doc  string
		sub  string // the caller, decided by testGuard
		// want is each key's answer; writes the store calls the document makes, products
		// the records after it.
		want     map[string]string
		codes    []string
		writes   int64
		products int
	}{{
		name: "all written at once",
		doc:  `mutation { a: createproduct(data: {name: "a", price: 1}) { name } b: createproduct(data: {name: "b", price: 2}) { name price } c: createProduct(data: {name: "c", price: 3}) { name } }`,
		want: map[string]string{"a": `{"name":"a"}`, "b": `{"name":"b","price":2}`, "c": `{"name":"c"}`}, writes: 1, products: 3,
	}, {
		name: "a record without a required field fails alone",
		doc:  `mutation { a: createproduct(data: {name: "a", price: 1}) { name } b: createproduct(data: {name: "b"}) { name } c: createproduct(data: {name: "c", price: 3}) { name } }`,
		want: map[string]string{"a": `{"name":"a"}`, "b": "null", "c": `{"name":"c"}`}, codes: []string{"BAD_USER_INPUT"}, writes: 1, products: 2,
	}, {
		name: "a record the create rule refuses fails alone",
		sub:  "bob",
		doc:  `mutation { a: createproduct(data: {name: "a", price: 1}) { name } b: createproduct(data: {name: "secret", price: 2}) { name } c: createproduct(data: {name: "c", price: 3}) { name } }`,
		want: map[string]string{"a": `{"name":"a"}`, "b": "null", "c": `{"name":"c"}`}, codes: []string{"FORBIDDEN"}, writes: 1, products: 2,
	}, {
		name: "a unique value taken in the run fails alone, written one by one",
		doc:  `mutation { a: createproduct(data: {name: "a", price: 1}) { name } b: createproduct(data: {name: "b", price: 2}) { name } c: createproduct(data: {name: "a", price: 3}) { name } }`,
		want: map[string]string{"a": `{"name":"a"}`, "b": `{"name":"b"}`, "c": "null"}, codes: []string{"CONFLICT"}, writes: 1 + 3, products: 2,
	}, {
		name: "another field ends a run",
		doc:  `mutation { a: createproduct(data: {name: "a", price: 1}) { name } b: createproduct(data: {name: "b", price: 2}) { name } n: deleteproduct(uid: "missing") c: createproduct(data: {name: "c", price: 3}) { name } d: createproduct(data: {name: "d", price: 4}) { name } }`,
		want: map[string]string{"a": `{"name":"a"}`, "b": `{"name":"b"}`, "n": "null", "c": `{"name":"c"}`, "d": `{"name":"d"}`}, codes: []string{"NOT_FOUND"}, writes: 1 + 2 + 1, products: 4, // the delete: a delete and a count
	}, {
		name: "a skipped field is not written",
		doc:  `mutation { a: createproduct(data: {name: "a", price: 1}) { name } b: createproduct(data: {name: "b", price: 2}) @skip(if: true) { name } c: createproduct(data: {name: "c", price: 3}) { name } }`,
		want: map[string]string{"a": `{"name":"a"}`, "c": `{"name":"c"}`}, writes: 1, products: 2,
	}, {
		name: "one create alone",
		doc:  `mutation { a: createproduct(data: {name: "a", price: 1}) { name } }`,
		want: map[string]string{"a": `{"name":"a"}`}, writes: 1, products: 1,
	}} {
		t.Run(c.name, func(t *testing.T) {
			recs := records(t, tbl)
			api, err := gql.New(gql.Config{Tables: []gql.Table{tbl}, Records: recs})
			if err != nil {
				t.Fatal(err)
			}
			sub := c.sub
			if sub == "" {
				sub = "alice"
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				api.ServeHTTP(w, r.WithContext(gql.WithGuard(r.Context(), testGuard{sub: sub})))
			}))
			t.Cleanup(srv.Close)
			before := recs.Queries()
			r := exec(t, srv, c.doc, nil)
			writes := recs.Queries() - before
			if len(r.Data) != len(c.want) {
				t.Errorf("keys %d, want %d: %s", len(r.Data), len(c.want), r.raw)
			}
			for key, want := range c.want {
				if got := string(r.Data[key]); got != want {
					t.Errorf("%s: %s, want %s (%s)", key, got, want, r.raw)
				}
			}
			var codes []string
			for _, e := range r.Errors {
				code, _ := e.Extensions["code"].(string)
				codes = append(codes, code)
			}
			if len(codes) != len(c.codes) || len(codes) > 0 && codes[0] != c.codes[0] {
				t.Errorf("error codes %v, want %v: %s", codes, c.codes, r.raw)
			}
			if writes != c.writes {
				t.Errorf("%d store calls, want %d", writes, c.writes)
			}
			if n := count(t, srv, ""); n != c.products {
				t.Errorf("%d products, want %d", n, c.products)
			}
		})
	}
}
