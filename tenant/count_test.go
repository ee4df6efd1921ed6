package tenant_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tenant"
)

// TestCountAfterEveryWrite counts the records in a range over HTTP, twice (the second time
// from the store's cache where it keeps one), after a write by each path a user has: one
// create, one update moving a record into the range and one out of it, a delete, the batch
// mutations and an import through the admin API. Every count is what a list of the records
// finds.
func TestCountAfterEveryWrite(t *testing.T) {
	srv := adminServerOn(t, openStores(t), tenant.Options{})
	const doc = `{"id":"shop","tables":{"products":{"fields":{"name":{"type":"String","required":true},"price":{"type":"Float","required":true}},
		"indexes":[{"fields":["price"]}],
		"access":{"read":"public","create":"public","update":"public","delete":"public"}}}}`
	if st, out := request(t, srv, http.MethodPut, "platform.test", "/admin/v1/projects/shop", doc, nil); st != http.StatusCreated {
		t.Fatalf("PUT: %d %s", st, out)
	}
	gql := func(t *testing.T, query string, vars map[string]any) gqlAnswer {
		t.Helper()
		a := postGraphQL(t, srv.URL+"/api/v1/graphql", "shop.platform.test", "", query, vars)
		if a.status != http.StatusOK || len(a.Errors) > 0 {
			t.Fatalf("%s: %d %+v", query, a.status, a.Errors)
		}
		return a
	}
	var made struct {
		Products []struct{ UID string } `json:"createproducts"`
	}
	a := gql(t, `mutation { createproducts(data: [{name: "a", price: 0}, {name: "b", price: 1}, {name: "c", price: 5}, {name: "d", price: 9}]) { uid } }`, nil)
	if err := json.Unmarshal(a.Data["createproducts"], &made.Products); err != nil || len(made.Products) != 4 {
		t.Fatalf("createproducts: %s %v", a.Data["createproducts"], err)
	}
	uid := func(i int) string { return made.Products[i].UID }

	check := func(t *testing.T) {
		t.Helper()
		var all []struct{ Price float64 }
		if err := json.Unmarshal(gql(t, `{ products(limit: 1000) { price } }`, nil).Data["products"], &all); err != nil {
			t.Fatal(err)
		}
		want, sum := 0, 0.0
		for _, r := range all {
			if r.Price >= 5 {
				want++
				sum += r.Price
			}
		}
		wantJSON := fmt.Sprintf(`{"count":%d,"sum":{"price":%v}}`, want, sum)
		if want == 0 {
			wantJSON = `{"count":0,"sum":{"price":null}}`
		}
		for try := range 2 {
			a := gql(t, `{ productsCount(where: {price: {gte: 5}}) productsAggregate(where: {price: {gte: 5}}) { count sum { price } } }`, nil)
			if got := string(a.Data["productsCount"]); got != fmt.Sprint(want) {
				t.Errorf("count %d: %s, want %d", try, got, want)
			}
			if got := string(a.Data["productsAggregate"]); got != wantJSON {
				t.Errorf("aggregate %d: %s, want %s", try, got, wantJSON)
			}
		}
	}
	check(t)
	exportOf := func(prices ...float64) string {
		var b strings.Builder
		fmt.Fprintf(&b, `{"format":"platform-export/1","project":"shop","version":1,"document":%s,"tables":["products"]}`+"\n", strings.ReplaceAll(doc, "\n\t\t", ""))
		for i, p := range prices {
			fmt.Fprintf(&b, `{"table":"products","record":{"uid":"01a21cf1-0000-7000-8000-%012d","_owner":"","createdAt":"2026-11-27T12:00:00.000Z","updatedAt":"2026-11-27T12:00:00.000Z","name":"i","price":%v}}`+"\n", i, p)
		}
		fmt.Fprintf(&b, `{"end":{"records":{"products":%d}}}`+"\n", len(prices))
		return b.String()
	}
	steps := []struct {
		name, query string
		vars        map[string]any
	}{
		{"create", `mutation { createproduct(data: {name: "e", price: 7}) { uid } }`, nil},
		{"update into the range", `mutation($uid: ID) { updateproduct(uid: $uid, data: {price: 6}) { uid } }`, map[string]any{"uid": uid(1)}},
		{"update out of the range", `mutation($uid: ID) { updateproduct(uid: $uid, data: {price: 2}) { uid } }`, map[string]any{"uid": uid(3)}},
		{"delete", `mutation($uid: ID) { deleteproduct(uid: $uid) }`, map[string]any{"uid": uid(2)}},
		{"batch create", `mutation { createproducts(data: [{name: "f", price: 8}, {name: "g", price: 3}]) { uid } }`, nil},
		{"batch update", `mutation { updateproducts(where: {price: {lt: 5}}, data: {price: 50}) }`, nil},
		{"batch delete", `mutation { deleteproducts(where: {price: {eq: 50}}) }`, nil},
		{"import", "", nil},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			if step.query != "" {
				gql(t, step.query, step.vars)
			} else if st, out := request(t, srv, http.MethodPost, "platform.test", "/admin/v1/projects/shop/import?replace=true", exportOf(1, 5, 6, 500), nil); st != http.StatusOK {
				t.Fatalf("import: %d %s", st, out)
			}
			check(t)
		})
	}
}

// TestCountKeepsCallersApart: under the owner rule, each caller's count is of their own
// records, asked in turn so that each could be served what the other was answered.
func TestCountKeepsCallersApart(t *testing.T) {
	s := newStack(t)
	p := s.project(tenant.Access{Read: tenant.RuleOwner, Create: tenant.RuleAuthenticated})
	p.seed(t, "alice", "Tea", 3)
	for range 3 {
		p.seed(t, "bob", "Jam", 4)
	}
	tokens := map[string]string{"alice": s.token(p.id, "alice", nil), "bob": s.token(p.id, "bob", nil), "carol": s.token(p.id, "carol", nil)}
	counts := func(want map[string]string) {
		t.Helper()
		for range 2 {
			for _, who := range []string{"alice", "bob", "carol"} {
				a := p.do(t, tokens[who], `{ productsCount productsAggregate { count } }`, nil)
				if got := string(a.Data["productsCount"]) + " " + string(a.Data["productsAggregate"]); got != want[who] {
					t.Errorf("%s's count: %s (%+v), want %s", who, got, a.Errors, want[who])
				}
			}
		}
	}
	counts(map[string]string{"alice": `1 {"count":1}`, "bob": `3 {"count":3}`, "carol": `0 {"count":0}`})
	if a := p.do(t, tokens["carol"], createDoc, map[string]any{"data": map[string]any{"name": "Jam", "price": 4.0}}); len(a.Errors) > 0 {
		t.Fatal(a.Errors)
	}
	counts(map[string]string{"alice": `1 {"count":1}`, "bob": `3 {"count":3}`, "carol": `1 {"count":1}`})
}
