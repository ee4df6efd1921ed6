package tenant_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/tenant"
)

// TestAdminTokenGuessesAreLimitedPerClient: wrong admin tokens are counted per client, and the
// client is the TCP peer unless that peer is a trusted proxy, whose X-Forwarded-For then names
// it. Without a trusted proxy, a guesser cannot escape the limit by writing the header.
func TestAdminTokenGuessesAreLimitedPerClient(t *testing.T) {
	for _, tc := range []struct {
		name    string
		proxies []string
		// secondClientLimited: after the first client spent its attempts, is a second
		// X-Forwarded-For address refused too?
		secondClientLimited bool
	}{
		{"no trusted proxy: X-Forwarded-For is ignored", nil, true},
		{"loopback is a trusted proxy", []string{"127.0.0.1"}, false},
		{"a trusted CIDR", []string{"10.0.0.0/8", "127.0.0.0/8"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stores := openStores(t)
			reg, err := tenant.NewRegistry(context.Background(), stores, tenant.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(reg.Close)
			proxies, err := tenant.ParseProxies(tc.proxies)
			if err != nil {
				t.Fatal(err)
			}
			clientIP := proxies.ClientIP()
			gate, err := tenant.NewAdminGate(tenant.AdminGateConfig{Token: "secret", Redis: stores.Redis, AttemptsPerMinute: 2, ClientIP: clientIP})
			if err != nil {
				t.Fatal(err)
			}
			e := echo.New()
			e.Use(reg.Hosts(tenant.HostOptions{Domain: "platform.test"}))
			reg.MountAdmin(e, gate)
			srv := httptest.NewServer(e)
			t.Cleanup(srv.Close)
			get := func(forwardedFor, token string) *http.Response {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+"/admin/v1/projects", nil)
				req.Host = "platform.test"
				req.Header.Set("X-Forwarded-For", forwardedFor)
				req.Header.Set("Authorization", "Bearer "+token)
				res, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				return res
			}
			// A token in the address is refused before the header is read, and not counted.
			for _, query := range []string{"?token=secret", "?access_token=secret", "?api_key=x&limit=1"} {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+"/admin/v1/projects"+query, nil)
				req.Host = "platform.test"
				req.Header.Set("Authorization", "Bearer secret")
				res, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Authorization header") {
					t.Fatalf("admin token in the address %s: %d %s", query, res.StatusCode, body)
				}
			}
			for i := range 2 {
				if res := get("203.0.113.1", "guess"); res.StatusCode != http.StatusUnauthorized {
					t.Fatalf("guess %d: %d", i+1, res.StatusCode)
				}
			}
			if res := get("203.0.113.1", "secret"); res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "30" {
				t.Fatalf("right token after the attempts are spent: %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
			}
			want := http.StatusOK
			if tc.secondClientLimited {
				want = http.StatusTooManyRequests
			}
			if res := get("203.0.113.2", "secret"); res.StatusCode != want {
				t.Fatalf("another client: %d, want %d", res.StatusCode, want)
			}
		})
	}
	if _, err := tenant.ParseProxies([]string{"10.0.0.0/33"}); err == nil {
		t.Error("a bad CIDR was accepted")
	}
}
