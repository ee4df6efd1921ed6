package tenant_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/tenant"
)

// scopeCase is how the route × scope test calls a route, and the scopes it lets through
// (the admin token always passes). The keys are the routes as Echo lists them: a route
// registered without a row here fails the test, so each new route must say what it needs.
type scopeCase struct {
	path, body string
	allowed    []string
}

const (
	scOperator  = "operator"
	scRead      = "operator:read"
	scShopAdmin = "project:shop:admin"
	scShopRead  = "project:shop:read"
	scBlogAdmin = "project:blog:admin"
)

var shopDoc = `{"id":"shop","tables":{"items":{"fields":{"name":{"type":"String"}}}}}`

// Paths are chosen so that an allowed call changes nothing the next call needs: a dry run,
// a version or key that does not exist, a project that does not exist for an operator route.
var adminScopeTable = map[string]scopeCase{
	"GET /admin/v1/projects":                     {"/admin/v1/projects", "", []string{scOperator, scRead}},
	"GET /admin/v1/projects/:id":                 {"/admin/v1/projects/shop", "", []string{scOperator, scRead, scShopAdmin, scShopRead}},
	"PUT /admin/v1/projects/:id":                 {"/admin/v1/projects/shop?dryRun=true", shopDoc, []string{scOperator, scShopAdmin}},
	"DELETE /admin/v1/projects/:id":              {"/admin/v1/projects/nosuch", "", []string{scOperator}},
	"GET /admin/v1/projects/:id/versions":        {"/admin/v1/projects/shop/versions", "", []string{scOperator, scRead, scShopAdmin, scShopRead}},
	"GET /admin/v1/projects/:id/versions/:n":     {"/admin/v1/projects/shop/versions/1", "", []string{scOperator, scRead, scShopAdmin, scShopRead}},
	"POST /admin/v1/projects/:id/rollback":       {"/admin/v1/projects/shop/rollback?to=99", "", []string{scOperator, scShopAdmin}},
	"POST /admin/v1/projects/:id/undelete":       {"/admin/v1/projects/nosuch/undelete", "", []string{scOperator}},
	"GET /admin/v1/projects/:id/backups":         {"/admin/v1/projects/shop/backups", "", []string{scOperator, scRead, scShopAdmin, scShopRead}},
	"POST /admin/v1/projects/:id/backups":        {"/admin/v1/projects/shop/backups", "", []string{scOperator, scShopAdmin}},
	"POST /admin/v1/projects/:id/restore":        {"/admin/v1/projects/shop/restore", "", []string{scOperator, scShopAdmin}},
	"GET /admin/v1/projects/:id/export":          {"/admin/v1/projects/shop/export", "", []string{scOperator, scShopAdmin}},
	"POST /admin/v1/projects/:id/import":         {"/admin/v1/projects/shop/import", "", []string{scOperator, scShopAdmin}},
	"GET /admin/v1/keys":                         {"/admin/v1/keys", "", []string{scOperator}},
	"POST /admin/v1/keys":                        {"/admin/v1/keys", `{"name":"Not A Name","scope":"operator"}`, []string{scOperator}},
	"DELETE /admin/v1/keys/:name":                {"/admin/v1/keys/nosuch", "", []string{scOperator}},
	"GET /admin/v1/audit":                        {"/admin/v1/audit?project=shop", "", []string{scOperator, scRead, scShopAdmin, scShopRead}},
	"GET /admin/v1/audit (every project)":        {"/admin/v1/audit", "", []string{scOperator, scRead}},
	"POST /admin/v1/projects/:id/restore (as)":   {"/admin/v1/projects/shop/restore", `{"as":"blog"}`, []string{scOperator}},
	"GET /admin/v1/projects/:id/usage":           {"/admin/v1/projects/shop/usage", "", []string{scOperator, scRead, scShopAdmin, scShopRead}},
	"GET /admin/v1/usage":                        {"/admin/v1/usage", "", []string{scOperator, scRead}},
	"GET /admin/v1/projects/:id/quotas":          {"/admin/v1/projects/shop/quotas", "", []string{scOperator, scRead}},
	"PUT /admin/v1/projects/:id/quotas":          {"/admin/v1/projects/nosuch/quotas", `{}`, []string{scOperator}},
	"GET /admin/v1/projects/:id/documents":       {"/admin/v1/projects/shop/documents", "", []string{scOperator, scRead, scShopAdmin, scShopRead}},
	"PUT /admin/v1/projects/:id/documents":       {"/admin/v1/projects/shop/documents", `{"documents":{"nohash":"{ items { name } }"}}`, []string{scOperator, scShopAdmin}},
	"DELETE /admin/v1/projects/:id/documents":    {"/admin/v1/projects/shop/documents", "", []string{scOperator, scShopAdmin}},
	"GET /admin/v1/projects/:id/advice":          {"/admin/v1/projects/shop/advice", "", []string{scOperator, scRead, scShopAdmin, scShopRead}},
	"POST /admin/v1/projects/:id/advice/declare": {"/admin/v1/projects/shop/advice/declare?dryRun=true", `{"table":"items","fields":["name"]}`, []string{scOperator, scShopAdmin}},

	"GET /admin/v1/projects/:id/webhooks":                                   {"/admin/v1/projects/shop/webhooks", "", []string{scOperator, scRead, scShopAdmin, scShopRead}},
	"GET /admin/v1/projects/:id/webhooks/:name/deliveries":                  {"/admin/v1/projects/shop/webhooks/nosuch/deliveries", "", []string{scOperator, scRead, scShopAdmin, scShopRead}},
	"POST /admin/v1/projects/:id/webhooks/:name/deliveries/:delivery/retry": {"/admin/v1/projects/shop/webhooks/nosuch/deliveries/msg_x/retry", "", []string{scOperator, scShopAdmin}},
	"GET /admin/v1/projects/:id/webhooks/:name/secret":                      {"/admin/v1/projects/shop/webhooks/nosuch/secret", "", []string{scOperator, scShopAdmin}},
	"POST /admin/v1/projects/:id/webhooks/:name/secret":                     {"/admin/v1/projects/shop/webhooks/nosuch/secret", "", []string{scOperator, scShopAdmin}},
}

func TestAdminRouteScopes(t *testing.T) {
	stores := openStores(t)
	ctx := context.Background()
	reg, err := tenant.NewRegistry(ctx, stores, tenant.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	gate, err := tenant.NewAdminGate(tenant.AdminGateConfig{Token: "secret", Redis: stores.Redis, Keys: stores.Keys(), AttemptsPerMinute: 1000})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.Use(reg.Hosts(tenant.HostOptions{Domain: "platform.test"}))
	reg.MountAdmin(e, gate)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)

	keys := map[string]string{"bootstrap": "secret"}
	for _, sc := range []string{scOperator, scRead, scShopAdmin, scShopRead, scBlogAdmin} {
		k, err := reg.CreateKey(ctx, strings.NewReplacer(":", "-").Replace(sc), sc, 0)
		if err != nil {
			t.Fatal(err)
		}
		keys[sc] = k.Key
	}
	call := func(method, path, body, key string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Host = "platform.test"
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, body := call(http.MethodPut, "/admin/v1/projects/shop", shopDoc, "secret"); status != http.StatusCreated {
		t.Fatalf("create shop: %d %s", status, body)
	}

	seen := map[string]bool{}
	for _, r := range e.Routes() {
		if !strings.HasPrefix(r.Path, "/admin/") || r.Method == echo.RouteNotFound {
			continue
		}
		route := r.Method + " " + r.Path
		seen[route] = true
		if _, ok := adminScopeTable[route]; !ok {
			t.Errorf("%s is not in the route × scope table: declare its scope (Needs) and add its row", route)
		}
	}
	for name, c := range adminScopeTable {
		method, route, _ := strings.Cut(name, " ")
		route, _, _ = strings.Cut(route, " ")
		if !seen[method+" "+route] {
			t.Errorf("the table has %s, which the admin API does not register", name)
			continue
		}
		for sc, key := range keys {
			status, body := call(method, c.path, c.body, key)
			allowed := sc == "bootstrap" || slices.Contains(c.allowed, sc)
			switch {
			case allowed && (status == http.StatusForbidden || status == http.StatusUnauthorized):
				t.Errorf("%s with %s: %d %s, want it let through", name, sc, status, body)
			case !allowed && status != http.StatusForbidden:
				t.Errorf("%s with %s: %d %s, want 403", name, sc, status, body)
			}
		}
	}
}

func TestParseScope(t *testing.T) {
	for _, c := range []struct {
		in, err string
		want    tenant.Scope
	}{
		{in: "operator", want: tenant.Scope{Change: true}},
		{in: "operator:read", want: tenant.Scope{}},
		{in: "project:shop:admin", want: tenant.Scope{Project: "shop", Change: true}},
		{in: "project:shop:read", want: tenant.Scope{Project: "shop"}},
		{in: "project:Shop:read", err: `scope "project:Shop:read"`},
		{in: "project:shop", err: "want operator, operator:read, project:<id>:admin or project:<id>:read"},
		{in: "project::admin", err: `scope "project::admin"`},
		{in: "project:shop:write", err: "want operator"},
		{in: "operator:admin", err: "want operator"},
		{in: "", err: "want operator"},
	} {
		got, err := tenant.ParseScope(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseScope(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want || got.String() != c.in):
			t.Errorf("ParseScope(%q) = %+v (%s), %v; want %+v", c.in, got, got, err, c.want)
		}
	}
}
