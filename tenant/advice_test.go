package tenant_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/internal/testbackend"
	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// adviceDoc is project id with a products table no index serves but the platform's own.
func adviceDoc(id string) string {
	return `{"id":"` + id + `","tables":{"products":{"fields":{"name":{"type":"String"},"price":{"type":"Float"},
		"author":{"type":"String"},"sku":{"type":"String"},"tags":{"type":"[String]"}},"access":{"read":"public","create":"public"}}}}`
}

// TestIndexAdvisor sends each shape of query through GraphQL to a project whose log keeps
// every query, reads the advice through the admin API, declares the index it names (dry run
// first, then for real), and checks that the index is in the document and that the advice
// now says it is declared.
func TestIndexAdvisor(t *testing.T) {
	stores := testbackend.Open(t, store.Config{DataDir: t.TempDir(), SlowQuery: time.Nanosecond})
	srv := adminServerOn(t, stores, tenant.Options{})

	cases := []struct {
		name  string
		query string
		index []string // nil: no index serves the shape
		why   string   // a part of the advice's reason
	}{
		{"equality", `{ products(where: {sku: {eq: "sku-7"}}) { uid } }`, []string{"sku"}, "equal on sku"},
		{"range", `{ products(where: {price: {gte: 25}}) { uid } }`, []string{"price"}, "range of price"},
		{"order", `{ products(orderBy: [{field: price, direction: DESC}], limit: 5) { uid } }`, []string{"price"}, "order asked"},
		{"equality and order", `{ products(where: {author: {eq: "author-1"}}, orderBy: [{field: price}], limit: 5) { uid } }`, []string{"author", "price"}, "equal on author, then hands them in the order"},
		{"count", `{ productsCount(where: {author: {eq: "author-1"}, price: {gte: 10}}) }`, []string{"author", "price"}, "count is answered from the index alone"},
		{"contains", `{ products(where: {name: {contains: "7"}}) { uid } }`, nil, "no index serves"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("advice%d", i)
			admin := func(method, path, body string) (int, string) {
				return request(t, srv, method, "platform.test", "/admin/v1/projects/"+id+path, body, nil)
			}
			if status, body := admin(http.MethodPut, "", adviceDoc(id)); status != http.StatusCreated {
				t.Fatalf("PUT project: %d %s", status, body)
			}
			var seed strings.Builder
			seed.WriteString(`mutation { createproducts(data: [`)
			for j := range 200 {
				fmt.Fprintf(&seed, `{name: "item-%d", price: %d.5, sku: "sku-%d", author: "author-%d"}`, j, j%50, j, j%4)
			}
			seed.WriteString(`]) { uid } }`)
			for _, q := range []string{seed.String(), tc.query, tc.query} {
				if status, body := gqlCall(t, srv, id, q); status != http.StatusOK || strings.Contains(body, `"errors"`) {
					t.Fatalf("%s: %d %s", q, status, body)
				}
			}

			status, body := admin(http.MethodGet, "/advice", "")
			if status != http.StatusOK {
				t.Fatalf("GET advice: %d %s", status, body)
			}
			a := shapeAdvice(t, body, tc.index)
			// SQLite tells the rows a query read from its plan; the mongo backend cannot
			// (store.SlowQuery: -1), and so cannot tell the rows an index would save.
			wantRead, wantSaved := int64(200), 2*(200-a.RowsReturned)
			if testbackend.Mongo() {
				wantRead, wantSaved = -1, -1
			}
			if a.Times != 2 || a.RowsRead != wantRead || !strings.Contains(a.Why, tc.why) {
				t.Errorf("advice %s: times %d, rows read %d (want 2, %d), why %q (want %q)", body, a.Times, a.RowsRead, wantRead, a.Why, tc.why)
			}
			if tc.index == nil {
				if a.Index != nil {
					t.Errorf("an index for a shape none serves: %s", body)
				}
				return
			}
			if a.RowsSaved != wantSaved || a.Declared {
				t.Errorf("rows saved %d (returned %d), declared %v: %s", a.RowsSaved, a.RowsReturned, a.Declared, body)
			}

			declare, _ := json.Marshal(tenant.DeclareIndex{Table: "products", Fields: a.Index})
			status, body = admin(http.MethodPost, "/advice/declare?dryRun=true", string(declare))
			var dry tenant.DryRunResult
			if err := json.Unmarshal([]byte(body), &dry); err != nil || status != http.StatusOK || !dry.DryRun ||
				!slices.Equal(dry.Changes, []string{"~ indexes products"}) || !slices.Equal(dry.Project.Tables["products"].Indexes[0].Fields, tc.index) {
				t.Fatalf("dry run: %d %s", status, body)
			}
			if _, doc := admin(http.MethodGet, "", ""); strings.Contains(doc, `"indexes"`) {
				t.Fatalf("the dry run declared the index: %s", doc)
			}
			status, body = admin(http.MethodPost, "/advice/declare", string(declare))
			if status != http.StatusOK {
				t.Fatalf("declare: %d %s", status, body)
			}
			var applied tenant.PutResult
			if err := json.Unmarshal([]byte(body), &applied); err != nil {
				t.Fatal(err)
			}
			if got := applied.Project.Tables["products"].Indexes; len(got) != 1 || !slices.Equal(got[0].Fields, tc.index) {
				t.Errorf("applied indexes %v, want %v: %s", got, tc.index, body)
			}
			if status, body := gqlCall(t, srv, id, tc.query); status != http.StatusOK || strings.Contains(body, `"errors"`) {
				t.Fatalf("the query after the apply: %d %s", status, body)
			}
			_, body = admin(http.MethodGet, "/advice", "")
			if a := shapeAdvice(t, body, tc.index); !a.Declared {
				t.Errorf("after the apply, the advice does not say the index is declared: %s", body)
			}
		})
	}
}

// shapeAdvice is the one advice of body, which names index.
func shapeAdvice(t *testing.T, body string, index []string) tenant.AdviceOfShape {
	t.Helper()
	var got tenant.ProjectAdvice
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Advice) != 1 {
		t.Fatalf("want the advice for one shape, got %s", body)
	}
	a := got.Advice[0]
	if (a.Index == nil) != (index == nil) || !slices.Equal(a.Index, index) {
		t.Fatalf("advice names index %v, want %v: %s", a.Index, index, body)
	}
	return a
}

func gqlCall(t *testing.T, srv *httptest.Server, project, query string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": query})
	return request(t, srv, http.MethodPost, project+".platform.test", "/api/v1/graphql", string(body), nil)
}
