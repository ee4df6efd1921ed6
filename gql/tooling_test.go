package gql_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// TestSubscriptionRoot: with subscriptions, introspection names the Subscription type as
// the schema's subscription root and the SDL declares it, as code generators and GraphiQL
// need; a subscription sent by HTTP is told where it runs.
func TestSubscriptionRoot(t *testing.T) {
	cfg := gql.Config{Tables: []gql.Table{products()}, Introspection: true, Changes: stores.Changes().Project("roots")}
	srv := serve(t, cfg)
	r := exec(t, srv, `{ __schema { queryType { name } mutationType { name } subscriptionType { name fields { name } } } }`, nil).ok(t)
	if got, want := string(r.Data["__schema"]), `{"queryType":{"name":"Query"},"mutationType":{"name":"Mutation"},"subscriptionType":{"name":"Subscription","fields":[{"name":"products"}]}}`; got != want {
		t.Errorf("__schema\n got %s\nwant %s", got, want)
	}
	api, err := gql.New(gql.Config{Tables: cfg.Tables, Records: records(t, cfg.Tables...), Changes: cfg.Changes})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(api.SDL(), "schema { query: Query mutation: Mutation subscription: Subscription }") {
		t.Errorf("the SDL does not declare the subscription root:\n%s", api.SDL())
	}
	if c := exec(t, srv, `subscription { products { op } }`, nil).code(t); c != gql.CodeBadRequest {
		t.Errorf("a subscription by POST: %s, want %s", c, gql.CodeBadRequest)
	}
}

// TestRecordID: every record type has id, the uid again, on every execution path (the
// first sending runs on graph-gophers, the second on the document's plan) and in every
// answer (lists, connections, mutations); createdAt and updatedAt are DateTime; a table may
// not declare id.
func TestRecordID(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}, Introspection: true})
	r := exec(t, srv, `mutation { createProduct(data: {name: "Tea", price: 3.5}) { uid id } }`, nil).ok(t)
	var made struct{ UID, ID string }
	r.decode(t, "createProduct", &made)
	if made.UID == "" || made.ID != made.UID {
		t.Fatalf("created %s: id must be the uid", r.raw)
	}
	for i := range 2 {
		if got, want := exec(t, srv, `{ products { id uid } }`, nil).ok(t).raw, fmt.Sprintf(`{"data":{"products":[{"id":%q,"uid":%q}]}}`, made.UID, made.UID); got != want {
			t.Errorf("list, sending %d:\n got %s\nwant %s", i+1, got, want)
		}
	}
	for i := range 2 {
		if got, want := exec(t, srv, `query($id: ID!) { product(id: $id) { id name } none: product(id: "nope") { id } }`, map[string]any{"id": made.UID}).ok(t).raw,
			fmt.Sprintf(`{"data":{"product":{"id":%q,"name":"Tea"},"none":null}}`, made.UID); got != want {
			t.Errorf("product(id), sending %d:\n got %s\nwant %s", i+1, got, want)
		}
	}
	if got := exec(t, srv, `{ productsConnection { edges { node { id } } } }`, nil).ok(t).raw; !strings.Contains(got, `"id":"`+made.UID+`"`) {
		t.Errorf("connection: %s", got)
	}
	if got := exec(t, srv, `mutation($u: ID) { updateProduct(uid: $u, data: {price: 4}) { id price } }`, map[string]any{"u": made.UID}).ok(t).raw; got != fmt.Sprintf(`{"data":{"updateProduct":{"id":%q,"price":4}}}`, made.UID) {
		t.Errorf("update: %s", got)
	}
	r = exec(t, srv, `{ __type(name: "product") { fields { name type { kind ofType { name } } } } }`, nil).ok(t)
	for _, want := range []string{`{"name":"id","type":{"kind":"NON_NULL","ofType":{"name":"ID"}}}`, `{"name":"createdAt","type":{"kind":"NON_NULL","ofType":{"name":"DateTime"}}}`} {
		if !strings.Contains(r.raw, want) {
			t.Errorf("product's fields %s lack %s", r.raw, want)
		}
	}
	// A table named as its record type keeps its list under that name: no field for one.
	same := table("thing", "thing", store.Field{Name: "n", Type: store.FieldType{Scalar: store.Int}})
	if got := exec(t, serve(t, gql.Config{Tables: []gql.Table{same}}), `{ thing { id } }`, nil).ok(t).raw; got != `{"data":{"thing":[]}}` {
		t.Errorf("a table named as its type: %s", got)
	}
	withID := products()
	withID.Fields = append(withID.Fields, store.Field{Name: "id", Type: store.FieldType{Scalar: store.String}})
	if _, err := gql.New(gql.Config{Tables: []gql.Table{withID}, Records: records(t, products())}); err == nil || !strings.Contains(err.Error(), `field "id"`) {
		t.Errorf("a table declaring id: %v, want it refused", err)
	}
}

// TestDeleteAnswers: deleteProduct answers the deleted record (by its id a client cache
// evicts it), the seed's deleteproduct its text, under the seed's key; a record that is not
// there is NOT_FOUND for both.
func TestDeleteAnswers(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}})
	uids := make([]string, 2)
	for i := range uids {
		var made struct{ UID string }
		exec(t, srv, `mutation { createProduct(data: {name: "Tea", price: 3.5}) { uid } }`, nil).ok(t).decode(t, "createProduct", &made)
		uids[i] = made.UID
	}
	if got, want := exec(t, srv, `mutation($u: ID) { deleteProduct(uid: $u) { __typename id name } }`, map[string]any{"u": uids[0]}).ok(t).raw,
		fmt.Sprintf(`{"data":{"deleteProduct":{"__typename":"product","id":%q,"name":"Tea"}}}`, uids[0]); got != want {
		t.Errorf("deleteProduct\n got %s\nwant %s", got, want)
	}
	if got, want := exec(t, srv, seedDelete, map[string]any{"uid": uids[1]}).ok(t).raw, `{"data":{"deleteProduct":"Document Deleted"}}`; got != want {
		t.Errorf("deleteproduct\n got %s\nwant %s", got, want)
	}
	if c := exec(t, srv, `mutation($u: ID) { deleteProduct(uid: $u) { id } }`, map[string]any{"u": uids[0]}).code(t); c != gql.CodeNotFound {
		t.Errorf("deleting it again: %s, want NOT_FOUND", c)
	}
	if got := exec(t, srv, `{ productsCount }`, nil).ok(t).raw; got != `{"data":{"productsCount":0}}` {
		t.Errorf("after both deletes: %s", got)
	}
}

// TestAcceptListingEventStream: clients such as urql list text/event-stream after the JSON
// media types in the Accept of every request; a query or mutation so sent is answered as
// JSON, and only a request that prefers the stream gets one.
func TestAcceptListingEventStream(t *testing.T) {
	srv := serveRealtime(t, "accept")
	const urqlAccept = "application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed"
	for _, tc := range []struct {
		accept, want string
	}{
		{urqlAccept, `{"data":{"productsCount":0}}`},
		{"application/json;q=0.5, text/event-stream;q=0.4", `{"data":{"productsCount":0}}`},
		{"text/event-stream, application/json", "event: "},
		{"text/event-stream", "event: "},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/v1/graphql", strings.NewReader(`{"query":"{ productsCount }"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", tc.accept)
		req.Header.Set("Authorization", "Bearer secret")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		buf := make([]byte, 512)
		n, _ := io.ReadAtLeast(res.Body, buf, len(tc.want))
		res.Body.Close()
		cancel()
		if got := string(buf[:n]); !strings.Contains(got, tc.want) && !(tc.want == "event: " && res.StatusCode >= 400) {
			t.Errorf("Accept %q: %d %s, want %s", tc.accept, res.StatusCode, got, tc.want)
		}
	}
}
