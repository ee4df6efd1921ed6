package gql_test

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/platform-dev/platform/gql"
)

// The seed's five documents, with the fields the seed's record table lists selected.
const (
	seedList   = `query products { products { uid name price author createdAt updatedAt } }`
	seedFetch  = `query products($uid: ID) { products(uid: $uid) { uid name price author createdAt updatedAt } }`
	seedCreate = `mutation createproduct($data: productInput!) { createproduct(data: $data) { uid name price author createdAt updatedAt } }`
	seedUpdate = `mutation updateproduct($uid: ID, $data: productInput!) { updateproduct(uid: $uid, data: $data) { uid name price author createdAt updatedAt } }`
	seedDelete = `mutation deleteproduct($uid: ID) { deleteproduct(uid: $uid) }`
)

var (
	uidRE  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	timeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
)

// body is a request body as a client of the seed sends it, the query verbatim.
func body(query, variables string) string {
	return fmt.Sprintf(`{"query": %q, "variables": %s}`, query, variables)
}

// TestSeed sends each document of the seed byte for byte and checks each response byte for
// byte, with the uid and times the service assigned.
func TestSeed(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}, Introspection: true})

	status, got := post(t, srv, body(seedCreate, `{"data": {"name": "Widget", "price": 19.99}}`))
	if status != http.StatusOK {
		t.Fatalf("create: status %d: %s", status, got)
	}
	m := regexp.MustCompile(`^\{"data":\{"createProduct":\{"uid":"([^"]+)","name":"Widget","price":19.99,"author":"","createdAt":"([^"]+)","updatedAt":"([^"]+)"\}\}\}$`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("create answered %s", got)
	}
	uid, created := m[1], m[2]
	if !uidRE.MatchString(uid) || !timeRE.MatchString(created) || m[3] != created {
		t.Fatalf("create: uid %q, createdAt %q, updatedAt %q", uid, created, m[3])
	}
	record := func(price, updated string) string {
		return fmt.Sprintf(`{"uid":"%s","name":"Widget","price":%s,"author":"","createdAt":"%s","updatedAt":"%s"}`, uid, price, created, updated)
	}

	check := func(name, req, want string) {
		t.Helper()
		status, got := post(t, srv, req)
		if status != http.StatusOK || got != want {
			t.Fatalf("%s: status %d\n got %s\nwant %s", name, status, got, want)
		}
	}
	check("list", body(seedList, `{}`), `{"data":{"products":[`+record("19.99", created)+`]}}`)
	check("fetch", body(seedFetch, fmt.Sprintf(`{"uid": %q}`, uid)), `{"data":{"products":[`+record("19.99", created)+`]}}`)

	// Times have milliseconds: make sure the update happens in a later one.
	time.Sleep(5 * time.Millisecond)
	status, got = post(t, srv, body(seedUpdate, fmt.Sprintf(`{"uid": %q, "data": {"price": 24.5}}`, uid)))
	m = regexp.MustCompile(`"updatedAt":"([^"]+)"`).FindStringSubmatch(got)
	if status != http.StatusOK || m == nil {
		t.Fatalf("update: status %d: %s", status, got)
	}
	updated := m[1]
	if want := `{"data":{"createProduct":` + record("24.5", updated) + `}}`; got != want {
		t.Fatalf("update\n got %s\nwant %s", got, want)
	}
	if !timeRE.MatchString(updated) || updated <= created {
		t.Fatalf("update: updatedAt %q not after createdAt %q", updated, created)
	}
	check("fetch after update", body(seedFetch, fmt.Sprintf(`{"uid": %q}`, uid)), `{"data":{"products":[`+record("24.5", updated)+`]}}`)

	check("delete", body(seedDelete, fmt.Sprintf(`{"uid": %q}`, uid)), `{"data":{"deleteProduct":"Document Deleted"}}`)
	check("fetch after delete", body(seedFetch, fmt.Sprintf(`{"uid": %q}`, uid)), `{"data":{"products":[]}}`)
	check("list after delete", body(seedList, `{}`), `{"data":{"products":[]}}`)
}
