package tenant_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/platform-dev/platform/tenant"
)

// TestProjectPaths: <apex>/p/<project>/api/v1/graphql reaches the project as its host does,
// with the same token checks and the same isolation: one project's path never reaches
// another's records, nothing of the apex host is reachable under /p/, and a project host
// does not take the path form.
func TestProjectPaths(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	for _, id := range []string{"alpha", "beta"} {
		p, err := s.issuer.DemoProject(s.jwks)
		if err != nil {
			t.Fatal(err)
		}
		p.ID, p.Auth = id, s.issuer.Auth(id, s.jwks)
		if _, _, err := s.reg.Put(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	alpha, beta := s.token(t, "alpha", "alice"), s.token(t, "beta", "alice")
	path := func(project string) string { return s.url + "/p/" + project + "/api/v1/graphql" }

	created := postGraphQL(t, path("alpha"), "", alpha, createDoc, map[string]any{"data": map[string]any{"name": "Tea", "price": 3.5}})
	var rec struct{ UID string }
	if created.code() != "" || json.Unmarshal(created.Data["createProduct"], &rec) != nil || rec.UID == "" {
		t.Fatalf("create through /p/alpha: %d %+v %s", created.status, created.Errors, created.Data["createProduct"])
	}
	if got := s.post(t, "alpha", alpha, `{ products { uid } }`, nil).uids(t, "products"); len(got) != 1 || got[0] != rec.UID {
		t.Errorf("alpha's host lists %v, want the product created through its path", got)
	}
	for _, tc := range []struct {
		name, url, host, token string
		status                 int
		code                   string
		records                int
	}{
		{"the project's path", path("alpha"), "", alpha, http.StatusOK, "", 1},
		{"the path in capitals", s.url + "/p/ALPHA/api/v1/graphql", "", alpha, http.StatusOK, "", 1},
		{"the path on an IP address", path("alpha"), "127.0.0.1", alpha, http.StatusOK, "", 1},
		{"another project's path", path("beta"), "", beta, http.StatusOK, "", 0},
		{"another project's path with the first's token", path("beta"), "", alpha, http.StatusUnauthorized, "UNAUTHENTICATED", 0},
		{"no token", path("alpha"), "", "", http.StatusUnauthorized, "UNAUTHENTICATED", 0},
		{"a project that does not exist", path("nope"), "", alpha, http.StatusNotFound, "PROJECT_NOT_FOUND", 0},
		{"a name that cannot be a project", path("-bad-"), "", alpha, http.StatusNotFound, "PROJECT_NOT_FOUND", 0},
		{"the path form on a project's host", path("alpha"), "beta.platform.test", alpha, http.StatusNotFound, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := tc.host
			if host == "" {
				host = "platform.test"
			}
			got := postGraphQL(t, tc.url, host, tc.token, `{ products { uid } }`, nil)
			if got.status != tc.status || (tc.code != "" && got.code() != tc.code) {
				t.Fatalf("%d %+v, want %d %s", got.status, got.Errors, tc.status, tc.code)
			}
			if tc.status == http.StatusOK {
				if uids := got.uids(t, "products"); len(uids) != tc.records {
					t.Errorf("lists %v, want %d records", uids, tc.records)
				}
			}
		})
	}
	// The development issuer's key set is served on the apex host only.
	if res, err := http.Get(s.url + tenant.DevIssuerJWKSPath); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the key set on the apex: %v %v", res, err)
	}
	res, err := http.Get(s.url + "/p/alpha" + tenant.DevIssuerJWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("the apex's key set under /p/alpha: %d, want 404", res.StatusCode)
	}
}
