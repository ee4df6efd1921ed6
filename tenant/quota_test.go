package tenant_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/tenant"
)

// TestQuotasRefresh: a replica that missed the notice of a quota change (here the change is
// written to the control database behind the registry's back) serves the new quotas after
// its next background refresh, as it would a new document.
func TestQuotasRefresh(t *testing.T) {
	ctx := context.Background()
	stores := openStores(t)
	reg, err := tenant.NewRegistry(ctx, stores, tenant.Options{Refresh: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	p, err := tenant.ParseDocument([]byte(`{"id":"shop","tables":{"products":{"fields":{"name":{"type":"String"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.Put(ctx, p); err != nil {
		t.Fatal(err)
	}
	if rt, err := reg.Runtime(ctx, "shop"); err != nil || rt.Quotas.Records != 0 {
		t.Fatalf("before: %+v, %v", rt, err)
	}
	if err := stores.Projects().SetQuotas(ctx, "shop", map[string]int64{"records": 5}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		rt, err := reg.Runtime(ctx, "shop")
		if err != nil {
			t.Fatal(err)
		}
		if rt.Quotas.Records == 5 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the runtime still holds %+v", rt.Quotas)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRateQuotaBatches: replicas taking a busy project's rate quota in batches never admit
// more than the quota allows (its burst, plus what refills while the test runs), and refuse
// early at most what their unspent batches hold.
func TestRateQuotaBatches(t *testing.T) {
	ctx := context.Background()
	stores := openStores(t)
	var servers []*echo.Echo
	for range 2 {
		reg, err := tenant.NewRegistry(ctx, stores, tenant.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(reg.Close)
		e := echo.New()
		e.Use(reg.Hosts(tenant.HostOptions{Domain: "localhost"}))
		reg.MountGraphQL(e)
		servers = append(servers, e)
		if len(servers) == 1 {
			p, err := tenant.ParseDocument([]byte(`{"id":"busy","tables":{"products":{"fields":{"name":{"type":"String"}},"access":{"read":"public"}}}}`))
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := reg.Put(ctx, p); err != nil {
				t.Fatal(err)
			}
			// 100 a second: each replica takes 10 at once.
			if _, err := reg.SetQuotas(ctx, "busy", map[string]int64{"requestsPerMinute": 6000}); err != nil {
				t.Fatal(err)
			}
		}
	}
	const sent = 7000
	start := time.Now()
	served := 0
	for i := range sent {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/graphql", strings.NewReader(`{"query":"{ productsCount }"}`))
		req.Host = "busy.localhost"
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		servers[i%2].ServeHTTP(w, req)
		switch w.Code {
		case http.StatusOK:
			served++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("request %d: %d %s", i, w.Code, w.Body)
		}
	}
	refilled := int(time.Since(start).Seconds()*100) + 1
	if served > 6000+refilled || served < 6000-2*10 {
		t.Errorf("%d requests at 6000 a minute over two replicas in %v: %d served; want 5980 to %d", sent, time.Since(start), served, 6000+refilled)
	}
}
