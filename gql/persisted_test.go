package gql_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/gql"
)

const graphqlResponse = "application/graphql-response+json"

// apq is the persistedQuery extension of a document's hash.
func apq(hash string) string {
	return fmt.Sprintf(`{"persistedQuery":{"version":1,"sha256Hash":%q}}`, hash)
}

// TestAutomaticPersistedQueries: a document sent once with its SHA-256 runs afterwards by
// the hash alone, by POST and GET, on any replica (the cache is in Redis); an unknown hash
// is PERSISTED_QUERY_NOT_FOUND as Apollo's clients expect, a hash that is not the
// document's is refused, and the cache keeps at most its bound per project.
func TestAutomaticPersistedQueries(t *testing.T) {
	cache := stores.PersistedQueries(time.Minute, 2).Project(fmt.Sprintf("apq%d", dbSeq.Add(1)))
	cfg := gql.Config{Tables: []gql.Table{products()}, Persisted: cache}
	cfg.Records = records(t, cfg.Tables...)
	replicaA, replicaB := serve(t, cfg), serve(t, cfg)
	const doc = `{ productsCount }`
	hash := gql.DocumentHash(doc)
	endpoint := func(srv string) string { return srv + "/api/v1/graphql" }
	get := func(srv, hash string) string {
		return endpoint(srv) + "?extensions=" + url.QueryEscape(apq(hash))
	}
	for _, tc := range []struct {
		name, method, target, accept, body string
		status                             int
		want                               string
	}{
		{"unknown hash", "POST", endpoint(replicaA.URL), "", `{"extensions":` + apq(hash) + `}`, 200,
			`{"errors":[{"message":"PersistedQueryNotFound","extensions":{"code":"PERSISTED_QUERY_NOT_FOUND"}}]}`},
		{"unknown hash, graphql-response+json", "POST", endpoint(replicaA.URL), graphqlResponse, `{"extensions":` + apq(hash) + `}`, 400,
			`{"errors":[{"message":"PersistedQueryNotFound","extensions":{"code":"PERSISTED_QUERY_NOT_FOUND"}}]}`},
		{"unknown hash by GET", "GET", get(replicaA.URL, hash), "", "", 200,
			`{"errors":[{"message":"PersistedQueryNotFound","extensions":{"code":"PERSISTED_QUERY_NOT_FOUND"}}]}`},
		{"a hash that is not the document's", "POST", endpoint(replicaA.URL), "", fmt.Sprintf(`{"query":%q,"extensions":%s}`, doc, apq(strings.Repeat("0", 64))), 400,
			`provided sha does not match query`},
		{"another version", "POST", endpoint(replicaA.URL), "", `{"extensions":{"persistedQuery":{"version":2,"sha256Hash":"` + hash + `"}}}`, 400,
			`version 1 is supported`},
		{"the document with its hash", "POST", endpoint(replicaA.URL), "", fmt.Sprintf(`{"query":%q,"extensions":%s}`, doc, apq(hash)), 200,
			`{"data":{"productsCount":0}}`},
		{"then the hash alone", "POST", endpoint(replicaA.URL), "", `{"extensions":` + apq(hash) + `}`, 200, `{"data":{"productsCount":0}}`},
		{"the hash alone by GET", "GET", get(replicaA.URL, hash), "", "", 200, `{"data":{"productsCount":0}}`},
		{"the hash alone on another replica", "POST", endpoint(replicaB.URL), "", `{"extensions":` + apq(hash) + `}`, 200, `{"data":{"productsCount":0}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, got := call(t, tc.method, tc.target, tc.accept, tc.body)
			if status != tc.status || !strings.Contains(got, tc.want) {
				t.Errorf("%d %s, want %d %s", status, got, tc.status, tc.want)
			}
		})
	}
	// A mutation by hash still needs POST.
	mutation := `mutation { createProduct(data: {name: "Tea", price: 1}) { id } }`
	if status, _, got := call(t, "POST", endpoint(replicaA.URL), "", fmt.Sprintf(`{"query":%q,"extensions":%s}`, mutation, apq(gql.DocumentHash(mutation)))); status != 200 || !strings.Contains(got, `"id"`) {
		t.Fatalf("mutation with its hash: %d %s", status, got)
	}
	if status, _, _ := call(t, "GET", get(replicaA.URL, gql.DocumentHash(mutation)), "", ""); status != http.StatusMethodNotAllowed {
		t.Errorf("a mutation by hash over GET: %d, want 405", status)
	}
	// The bound: two documents more, and the first is forgotten.
	for _, d := range []string{`{ a: productsCount }`, `{ b: productsCount }`} {
		if status, _, got := call(t, "POST", endpoint(replicaA.URL), "", fmt.Sprintf(`{"query":%q,"extensions":%s}`, d, apq(gql.DocumentHash(d)))); status != 200 {
			t.Fatalf("%s: %d %s", d, status, got)
		}
	}
	if _, _, got := call(t, "POST", endpoint(replicaA.URL), "", `{"extensions":`+apq(hash)+`}`); !strings.Contains(got, "PERSISTED_QUERY_NOT_FOUND") {
		t.Errorf("the oldest of three documents, past a bound of 2: %s, want it forgotten", got)
	}
}

// TestRegisteredDocuments: a project's registered documents run by their hash (in the
// persistedQuery extension or as documentId); in registered-only mode every other document
// is refused with PERSISTED_QUERY_ONLY, whether sent whole, by an unknown hash, or to be
// cached with its hash, and a registered one sent whole still runs.
func TestRegisteredDocuments(t *testing.T) {
	const count, list = `query Count { productsCount }`, `query List { products { id name } }`
	registered := map[string]string{gql.DocumentHash(count): count}
	cache := stores.PersistedQueries(time.Minute, 10).Project(fmt.Sprintf("reg%d", dbSeq.Add(1)))
	open := serve(t, gql.Config{Tables: []gql.Table{products()}, Persisted: cache, Registered: registered})
	only := serve(t, gql.Config{Tables: []gql.Table{products()}, Persisted: cache, Registered: registered, RegisteredOnly: true})
	endpoint := func(srv string) string { return srv + "/api/v1/graphql" }
	const refused = `"code":"PERSISTED_QUERY_ONLY"`
	for _, tc := range []struct {
		name, srv, body, want string
	}{
		{"registered, by hash", open.URL, `{"extensions":` + apq(gql.DocumentHash(count)) + `}`, `{"data":{"productsCount":0}}`},
		{"registered, by documentId", open.URL, `{"documentId":"sha256:` + gql.DocumentHash(count) + `"}`, `{"data":{"productsCount":0}}`},
		{"any document, when not registered-only", open.URL, fmt.Sprintf(`{"query":%q}`, list), `{"data":{"products":[]}}`},
		{"registered-only: by hash", only.URL, `{"extensions":` + apq(gql.DocumentHash(count)) + `}`, `{"data":{"productsCount":0}}`},
		{"registered-only: the registered document whole", only.URL, fmt.Sprintf(`{"query":%q}`, count), `{"data":{"productsCount":0}}`},
		{"registered-only: another document", only.URL, fmt.Sprintf(`{"query":%q}`, list), refused},
		{"registered-only: an unknown hash", only.URL, `{"extensions":` + apq(gql.DocumentHash(list)) + `}`, refused},
		{"registered-only: another document with its hash", only.URL, fmt.Sprintf(`{"query":%q,"extensions":%s}`, list, apq(gql.DocumentHash(list))), refused},
		{"registered-only: introspection", only.URL, `{"query":"{ __schema { queryType { name } } }"}`, refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, got := call(t, "POST", endpoint(tc.srv), "", tc.body); !strings.Contains(got, tc.want) {
				t.Errorf("%s, want %s", got, tc.want)
			}
		})
	}
}

// TestRegisteredSubscriptions: in registered-only mode a subscription runs only when its
// document is registered; another is refused before its stream starts.
func TestRegisteredSubscriptions(t *testing.T) {
	const sub = `subscription OnProduct { products { op } }`
	cfg := gql.Config{Tables: []gql.Table{products()}, Changes: stores.Changes().Project("registered-subs"),
		Registered: map[string]string{gql.DocumentHash(sub): sub}, RegisteredOnly: true}
	cfg.Records = records(t, cfg.Tables...)
	api, err := gql.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	auth := func(ctx context.Context, _ string) (context.Context, context.CancelFunc, error) {
		ctx, cancel := context.WithCancel(ctx)
		return ctx, cancel, nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { api.ServeSSE(w, r, auth) }))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		query  string
		status int
	}{
		{sub, http.StatusOK},
		{`subscription { products { op uid } }`, http.StatusBadRequest},
	} {
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(fmt.Sprintf(`{"query":%q}`, tc.query)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		var body []byte
		if res.StatusCode != http.StatusOK {
			body, _ = io.ReadAll(res.Body)
		}
		res.Body.Close()
		cancel()
		if res.StatusCode != tc.status || (tc.status != http.StatusOK && !strings.Contains(string(body), "PERSISTED_QUERY_ONLY")) {
			t.Errorf("%s: %d %s, want %d", tc.query, res.StatusCode, body, tc.status)
		}
	}
}
