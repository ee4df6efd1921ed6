package tenant_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/platform-dev/platform/tenant"
)

// TestHosts: the apex is the domain itself or an IP address, <project>.<domain> a project's,
// whatever the case, port or trailing dot; any other host is not served. The development
// issuer's key set, served on the apex only, tells which a request reached.
func TestHosts(t *testing.T) {
	s := newService(t)
	p, err := tenant.ParseDocument([]byte(`{"id": "shop", "tables": {"products": {"fields": {"name": {"type": "String"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.reg.Put(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	const apex, project = "", "NOT_FOUND: apex only"
	for _, tc := range []struct {
		host, want string
	}{
		{"platform.test", apex},
		{"PLATFORM.test.:8080", apex},
		{"127.0.0.1", apex},
		{"127.0.0.1:8080", apex},
		{"[::1]:8080", apex},
		{"shop.platform.test", project},
		{"Shop.Platform.Test.:8080", project},
		{"nope.platform.test", tenant.CodeProjectNotFound},
		{"-bad-.platform.test", tenant.CodeProjectNotFound},
		{"a.shop.platform.test", tenant.CodeNotFound},
		{"10.0.0.1.platform.test", tenant.CodeNotFound},
		{"platform.test.example", tenant.CodeNotFound},
		{"8.8.8.8.example", tenant.CodeNotFound},
	} {
		req, err := http.NewRequest(http.MethodGet, s.url+tenant.DevIssuerJWKSPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = tc.host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body tenant.ErrorBody
		_ = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		got := apex
		if res.StatusCode != http.StatusOK {
			if res.StatusCode != http.StatusNotFound || len(body.Errors) != 1 {
				t.Errorf("host %q: %d %+v", tc.host, res.StatusCode, body)
				continue
			}
			got, _ = body.Errors[0].Extensions["code"].(string)
			if body.Errors[0].Message == "this path is served on the apex host only" {
				got = project
			}
		}
		if got != tc.want {
			t.Errorf("host %q reached %q, want %q", tc.host, got, tc.want)
		}
	}
}
