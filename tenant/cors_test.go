package tenant_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tenant"
)

// TestCORS: a browser on an origin the project lists gets its preflight answered and may read
// the answers; other origins, projects without cors, and the admin API get no CORS headers.
func TestCORS(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	for id, cors := range map[string]string{
		"shop":   `"cors": {"origins": ["https://App.example.com", "http://localhost:5173"]},`,
		"open":   `"cors": {"origins": ["*"]},`,
		"closed": ``,
	} {
		p, err := tenant.ParseDocument([]byte(`{"id": "` + id + `", ` + cors + `
			"tables": {"products": {"fields": {"name": {"type": "String"}}, "access": {"read": "public"}}}}`))
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if _, _, err := s.reg.Put(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	send := func(method, host, origin string, preflight bool) *http.Response {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"query": "{ products { uid } }"}`)
		}
		req, err := http.NewRequest(method, s.url+"/api/v1/graphql", body)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if preflight {
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	for _, tc := range []struct {
		name, host, origin string
		preflight          bool
		method             string
		status             int
		allow              string
	}{
		{"preflight, listed origin", "shop.platform.test", "https://app.example.com", true, http.MethodOptions, 204, "https://app.example.com"},
		{"preflight, second origin", "shop.platform.test", "http://localhost:5173", true, http.MethodOptions, 204, "http://localhost:5173"},
		{"preflight, unlisted origin", "shop.platform.test", "https://evil.example", true, http.MethodOptions, 403, ""},
		{"preflight, any origin", "open.platform.test", "https://anywhere.example", true, http.MethodOptions, 204, "*"},
		{"preflight, no cors", "closed.platform.test", "https://app.example.com", true, http.MethodOptions, 403, ""},
		{"POST, listed origin", "shop.platform.test", "https://app.example.com", false, http.MethodPost, 200, "https://app.example.com"},
		{"POST, unlisted origin", "shop.platform.test", "https://evil.example", false, http.MethodPost, 200, ""},
		{"POST, any origin", "open.platform.test", "https://anywhere.example", false, http.MethodPost, 200, "*"},
		{"OPTIONS without preflight headers", "shop.platform.test", "", false, http.MethodOptions, 405, ""},
		{"apex host preflight", "platform.test", "https://app.example.com", true, http.MethodOptions, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := send(tc.method, tc.host, tc.origin, tc.preflight)
			if res.StatusCode != tc.status {
				t.Errorf("status %d, want %d", res.StatusCode, tc.status)
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != tc.allow {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tc.allow)
			}
			if tc.preflight && tc.status == 204 {
				h := res.Header
				if !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "GET") ||
					!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") ||
					h.Get("Access-Control-Max-Age") != "600" {
					t.Errorf("preflight headers %v", h)
				}
			}
		})
	}
}

// TestCORSNotOnAdmin: the admin API answers a browser's preflight with no CORS headers, even
// from an origin a project lists.
func TestCORSNotOnAdmin(t *testing.T) {
	srv := adminServer(t)
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/admin/v1/projects", nil)
	req.Host = "platform.test"
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "GET")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode < 400 || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("admin preflight: %d %v, want a refusal without CORS headers", res.StatusCode, res.Header)
	}
}

// TestCORSDocument: origins must be what a browser sends.
func TestCORSDocument(t *testing.T) {
	for _, origin := range []string{`"https://app.example.com/"`, `"app.example.com"`, `"ftp://x"`, `""`} {
		_, err := tenant.ParseDocument([]byte(`{"id": "p", "cors": {"origins": [` + origin + `]}, "tables": {}}`))
		if err == nil || !strings.Contains(err.Error(), "cors.origins.0") {
			t.Errorf("origin %s: %v, want a problem at cors.origins.0", origin, err)
		}
	}
}

// TestExplorerWithoutToken: a browser opens a project's explorer before it has a token; a
// query sent by GET still needs one.
func TestExplorerWithoutToken(t *testing.T) {
	s := newService(t)
	if _, err := s.reg.EnsureDemo(context.Background(), s.issuer, s.jwks); err != nil {
		t.Fatal(err)
	}
	get := func(path, accept string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.url+path, nil)
		req.Host = "demo.platform.test"
		req.Header.Set("Accept", accept)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode, res.Header.Get("Content-Type")
	}
	if status, ct := get("/api/v1/graphql", "text/html"); status != 200 || !strings.HasPrefix(ct, "text/html") {
		t.Errorf("explorer: %d %s", status, ct)
	}
	if status, ct := get("/api/v1/graphql/explorer/graphiql-3.8.3.min.js", "*/*"); status != 200 || !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("explorer script: %d %s", status, ct)
	}
	if status, _ := get("/api/v1/graphql?query=%7BproductsCount%7D", "application/json"); status != http.StatusUnauthorized {
		t.Errorf("GET query without a token: %d, want 401", status)
	}
}
