package tenant_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// TestRegisteredDocumentsAdmin: a project's manifest goes in through the admin API, checked
// (hashes, bounds) and kept in the control database; the project's API serves it from the
// next request on, refusing any other document in registered-only mode, and a DELETE
// removes it.
func TestRegisteredDocumentsAdmin(t *testing.T) {
	stores := openStores(t)
	srv := adminServerOn(t, stores, tenant.Options{Persisted: tenant.PersistedOptions{MaxDocuments: 2, MaxManifestBytes: 1024}})
	if st, out := request(t, srv, "PUT", "platform.test", "/admin/v1/projects/shop", `{"id":"shop","tables":{"products":{"fields":{"name":{"type":"String"}},"access":{"read":"public"}}}}`, nil); st != http.StatusCreated {
		t.Fatalf("apply: %d %s", st, out)
	}
	const list, count = `query List { products { id name } }`, `query Count { productsCount }`
	manifest := func(only bool, docs ...string) string {
		m := tenant.Manifest{RegisteredOnly: only, Documents: map[string]string{}}
		for i, d := range docs {
			key := gql.DocumentHash(d)
			if i == 0 {
				key = "sha256:" + key // as Code Generator writes them
			}
			m.Documents[key] = d
		}
		js, _ := json.Marshal(m)
		return string(js)
	}
	for _, tc := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"a key that is not the document's hash", "/admin/v1/projects/shop/documents", `{"documents":{"abc":"{ productsCount }"}}`, 400, "the key must be the SHA-256"},
		{"too many documents", "/admin/v1/projects/shop/documents", manifest(false, list, count, `{ a: productsCount }`), 400, "3 documents, more than the limit of 2"},
		{"too large", "/admin/v1/projects/shop/documents", `{"documents":{"x":"` + strings.Repeat("a", 2000) + `"}}`, 413, "larger than 1024 bytes"},
		{"not a manifest", "/admin/v1/projects/shop/documents", `{"docs":{}}`, 400, "the body is not a manifest"},
		{"a project that does not exist", "/admin/v1/projects/nope/documents", manifest(true, list), 404, "PROJECT_NOT_FOUND"},
		{"registered only", "/admin/v1/projects/shop/documents", manifest(true, list), 200, `"registeredOnly":true,"documents":1,"hashes":["` + gql.DocumentHash(list) + `"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if st, out := request(t, srv, "PUT", "platform.test", tc.path, tc.body, nil); st != tc.status || !strings.Contains(out, tc.want) {
				t.Errorf("%d %s, want %d %s", st, out, tc.status, tc.want)
			}
		})
	}
	if st, out := request(t, srv, "GET", "platform.test", "/admin/v1/projects/shop/documents", "", nil); st != 200 || !strings.Contains(out, `"documents":1`) {
		t.Errorf("GET: %d %s", st, out)
	}
	graphql := func(body string) string {
		_, out := request(t, srv, "POST", "shop.platform.test", "/api/v1/graphql", body, nil)
		return out
	}
	if got := graphql(fmt.Sprintf(`{"documentId":"sha256:%s"}`, gql.DocumentHash(list))); got != `{"data":{"products":[]}}` {
		t.Errorf("the registered document by its id: %s", got)
	}
	if got := graphql(fmt.Sprintf(`{"query":%q}`, count)); !strings.Contains(got, `"code":"PERSISTED_QUERY_ONLY"`) {
		t.Errorf("another document in registered-only mode: %s", got)
	}
	if st, out := request(t, srv, "DELETE", "platform.test", "/admin/v1/projects/shop/documents", "", nil); st != 200 || !strings.Contains(out, `"documents":0`) {
		t.Errorf("DELETE: %d %s", st, out)
	}
	if got := graphql(fmt.Sprintf(`{"query":%q}`, count)); got != `{"data":{"productsCount":0}}` {
		t.Errorf("any document once the manifest is removed: %s", got)
	}
	for action, want := range map[string]int{"documents.register": 5, "documents.remove": 1} {
		entries, err := stores.Audit().Read(context.Background(), store.AuditQuery{Project: "shop", Action: action})
		if err != nil || len(entries) != want {
			t.Errorf("audit of %s: %d entries (%v), want %d: %+v", action, len(entries), err, want, entries)
		}
	}
}

// TestFieldNamedID: a table may not declare id, which every record type has for client
// caches (the uid); the refusal names the field's path, as apply shows it.
func TestFieldNamedID(t *testing.T) {
	_, err := tenant.ParseDocument([]byte(`{"id":"shop","tables":{"products":{"fields":{"id":{"type":"String"},"name":{"type":"String"}}}}}`))
	var de *tenant.DocumentError
	if !errors.As(err, &de) || len(de.Problems) != 1 || de.Problems[0].Path != "tables.products.fields.id" || !strings.Contains(de.Problems[0].Message, "client caches") {
		t.Fatalf("a field named id: %v, want one problem at tables.products.fields.id", err)
	}
}

// TestPersistedByGET: a document named by its hash over GET (documentId, or the
// persistedQuery extension) runs for the caller the token names, as a query in the URL
// does; without a token it is refused when the rules want one.
func TestPersistedByGET(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	if _, err := s.reg.EnsureDemo(ctx, s.issuer, s.jwks); err != nil {
		t.Fatal(err)
	}
	alice := s.token(t, "demo", "alice")
	if got := s.post(t, "demo", alice, createDoc, map[string]any{"data": map[string]any{"name": "Tea", "price": 3.5}}); got.code() != "" {
		t.Fatalf("create: %+v", got.Errors)
	}
	const count = `query Count { productsCount }`
	if err := s.reg.SetManifest(ctx, "demo", tenant.Manifest{Documents: map[string]string{gql.DocumentHash(count): count}}); err != nil {
		t.Fatal(err)
	}
	for _, params := range []string{
		"documentId=" + gql.DocumentHash(count),
		"extensions=" + url.QueryEscape(`{"persistedQuery":{"version":1,"sha256Hash":"`+gql.DocumentHash(count)+`"}}`),
	} {
		for _, tc := range []struct {
			token  string
			status int
			want   string
		}{
			{alice, http.StatusOK, `{"data":{"productsCount":1}}`},
			{"", http.StatusUnauthorized, `"code":"UNAUTHENTICATED"`},
		} {
			req, _ := http.NewRequest(http.MethodGet, s.url+"/api/v1/graphql?"+params, nil)
			req.Host = "demo.platform.test"
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.status || !strings.Contains(string(out), tc.want) {
				t.Errorf("GET ?%s with token %v: %d %s, want %d %s", params, tc.token != "", res.StatusCode, out, tc.status, tc.want)
			}
		}
	}
}
