package tenant_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// adminServer serves the admin API (token "secret") and the projects' GraphQL APIs under
// platform.test, on a registry of its own.
func adminServer(t *testing.T) *httptest.Server {
	t.Helper()
	return adminServerOn(t, openStores(t), tenant.Options{})
}

// adminServerOn is adminServer on stores, with opts.
func adminServerOn(t *testing.T, stores *store.Stores, opts tenant.Options) *httptest.Server {
	t.Helper()
	reg, err := tenant.NewRegistry(context.Background(), stores, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	gate, err := tenant.NewAdminGate(tenant.AdminGateConfig{Token: "secret", Redis: stores.Redis})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.Use(reg.Hosts(tenant.HostOptions{Domain: "platform.test"}))
	reg.MountAdmin(e, gate)
	reg.MountGraphQL(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv
}

// request sends body to srv as host (the admin token with the apex host) and answers the
// status and body.
func request(t *testing.T, srv *httptest.Server, method, host, path, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	if host == "platform.test" {
		req.Header.Set("Authorization", "Bearer secret")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(out)
}

// TestApplyNamesEveryChange: a PUT of a changed document answers one line per change, so an
// apply that changed only relations, indexes or CORS origins is not reported as unchanged.
func TestApplyNamesEveryChange(t *testing.T) {
	srv := adminServer(t)
	put := func(t *testing.T, doc string) tenant.PutResult {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/admin/v1/projects/shop", strings.NewReader(doc))
		req.Host = "platform.test"
		req.Header.Set("Authorization", "Bearer secret")
		req.Header.Set("Content-Type", "application/json")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out tenant.PutResult
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode >= 300 {
			t.Fatalf("PUT: %d %v", res.StatusCode, err)
		}
		return out
	}
	// doc is the project with the parts a case changes.
	doc := func(cors, productsExtra, ordersExtra string) string {
		return fmt.Sprintf(`{"id":"shop",%s"tables":{
			"products":{"fields":{"name":{"type":"String"}}%s},
			"orders":{"fields":{"productId":{"type":"ID"},"giftId":{"type":"ID"},"qty":{"type":"Int"}}%s}}}`, cors, productsExtra, ordersExtra)
	}
	put(t, doc("", "", ""))
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"nothing", doc("", "", ""), []string{}},
		{"a relation added", doc("", "", `,"relations":{"product":{"table":"products","field":"productId"}}`), []string{"+ relation orders.product"}},
		{"a relation changed", doc("", "", `,"relations":{"product":{"table":"products","field":"giftId"}}`), []string{"~ relation orders.product"}},
		{"a relation removed, an index added", doc("", "", `,"indexes":[{"fields":["qty"]}]`), []string{"- relation orders.product", "~ indexes orders"}},
		{"CORS origins", doc(`"cors":{"origins":["https://app.example.com"]},`, "", `,"indexes":[{"fields":["qty"]}]`), []string{"~ cors"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := put(t, tc.doc).Changes; !slices.Equal(got, tc.want) {
				t.Errorf("changes %q, want %q", got, tc.want)
			}
		})
	}
}
