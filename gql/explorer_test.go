package gql_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
)

// serveExplorer serves the API and the explorer's files as a project host does.
func serveExplorer(t *testing.T, cfg gql.Config) *httptest.Server {
	t.Helper()
	cfg.Records = records(t, cfg.Tables...)
	api, err := gql.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/v1/graphql", api)
	mux.Handle(gql.ExplorerPath, gql.ExplorerAssets())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestExplorer: a browser opening the endpoint gets GraphiQL, whose every file the service
// itself serves (no CDN); API clients still get JSON.
func TestExplorer(t *testing.T) {
	srv := serveExplorer(t, gql.Config{Tables: []gql.Table{products()}})
	browser := "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

	status, ct, page := call(t, "GET", srv.URL+"/api/v1/graphql", browser, "")
	if status != 200 || ct != "text/html; charset=utf-8" || !strings.Contains(page, "GraphiQL.createFetcher") || strings.Contains(page, "Bearer <token>") {
		t.Fatalf("page: %d %q %.300s", status, ct, page)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) != 4 {
		t.Fatalf("the page refers to %v, want GraphiQL's script and style and React's two scripts", refs)
	}
	for _, ref := range refs {
		if strings.Contains(ref[1], "//") {
			t.Errorf("the page loads %s from elsewhere", ref[1])
			continue
		}
		url := srv.URL + "/api/v1/" + ref[1]
		// Go's client asks for gzip itself and unzips; a client that does not gets plain text.
		for _, enc := range []string{"", "identity"} {
			req, _ := http.NewRequest("GET", url, nil)
			if enc != "" {
				req.Header.Set("Accept-Encoding", enc)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body io.Reader = res.Body
			if res.Header.Get("Content-Encoding") == "gzip" {
				if body, err = gzip.NewReader(res.Body); err != nil {
					t.Fatal(err)
				}
			}
			b, err := io.ReadAll(body)
			res.Body.Close()
			if err != nil || res.StatusCode != 200 || len(b) < 4000 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/") {
				t.Errorf("%s (Accept-Encoding %q): %d %v, %d bytes, %v", ref[1], enc, res.StatusCode, res.Header, len(b), err)
			}
		}
	}
	if status, _, _ := call(t, "GET", srv.URL+gql.ExplorerPath+"nope.js", "", ""); status != 404 {
		t.Errorf("an unknown file: %d", status)
	}
	// A query in the URL runs even from a browser's Accept; without one, JSON clients get 400.
	if status, _, body := call(t, "GET", srv.URL+"/api/v1/graphql?query=%7BproductsCount%7D", browser, ""); status != 200 || body != `{"data":{"productsCount":0}}` {
		t.Errorf("query from a browser: %d %s", status, body)
	}
	if status, _, _ := call(t, "GET", srv.URL+"/api/v1/graphql", "application/json", ""); status != 400 {
		t.Errorf("GET without a query, JSON: %d", status)
	}
}
