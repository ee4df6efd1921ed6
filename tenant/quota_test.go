package tenant_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
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

// heldBody is a request body that says when the handler starts reading it, and then holds
// the request in flight until its channel closes.
type heldBody struct {
	reading chan struct{}
	once    sync.Once
	end     <-chan struct{}
	body    io.Reader
}

func (b *heldBody) Read(p []byte) (int, error) {
	b.once.Do(func() { close(b.reading) })
	<-b.end
	return b.body.Read(p)
}

// TestConcurrencyLeases: two replicas that lease a project's concurrency slots from Redis
// (embedded, or a real redis-server they share) never have more requests in flight than
// its quota, refuse none while a slot is free (a replica short of slots gets back the ones
// the other leases and does not use), keep at most an eighth of the quota each once every
// request ended, and give those back once idle.
func TestConcurrencyLeases(t *testing.T) {
	for _, backend := range []struct {
		name string
		open func(testing.TB) *store.Stores
	}{{"embedded", openStores}, {"redis-server", openRedisServerStores}} {
		for _, quota := range []int{8, 128} {
			t.Run(fmt.Sprintf("%s/quota %d", backend.name, quota), func(t *testing.T) {
				testConcurrencyLeases(t, backend.open(t), quota)
			})
		}
	}
}

func testConcurrencyLeases(t *testing.T, stores *store.Stores, quota int) {
	ctx := context.Background()
	var (
		servers []*echo.Echo
		regs    []*tenant.Registry
	)
	for range 2 {
		reg, err := tenant.NewRegistry(ctx, stores, tenant.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(reg.Close)
		e := echo.New()
		e.Use(reg.Hosts(tenant.HostOptions{Domain: "localhost"}))
		reg.MountGraphQL(e)
		servers, regs = append(servers, e), append(regs, reg)
	}
	p, err := tenant.ParseDocument([]byte(`{"id":"leased","tables":{"products":{"fields":{"name":{"type":"String"}},"access":{"read":"public"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := regs[0].Put(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := regs[0].SetQuotas(ctx, "leased", map[string]int64{"concurrentRequests": int64(quota)}); err != nil {
		t.Fatal(err)
	}
	held := func() int64 {
		t.Helper()
		rep, err := regs[1].QuotaReport(ctx, "leased")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range rep.Quotas {
			if l.Quota == "concurrentRequests" {
				return *l.Used
			}
		}
		t.Fatal("no concurrentRequests in the report")
		return 0
	}
	send := func(s *echo.Echo, body io.Reader) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/graphql", body)
		req.Host = "leased.localhost"
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w
	}

	// fill sends requests that stay in flight, the ith to on(i), until one is refused, and
	// answers how many were admitted; closing end ends them.
	fill := func(on func(i int) *echo.Echo, end chan struct{}, inFlight *sync.WaitGroup) (admitted int) {
		for i := 0; ; i++ {
			b := &heldBody{reading: make(chan struct{}), end: end, body: strings.NewReader(`{"query":"{ productsCount }"}`)}
			refused := make(chan *httptest.ResponseRecorder, 1)
			inFlight.Go(func() {
				if w := send(on(i), b); w.Code != http.StatusOK {
					refused <- w
				}
			})
			select {
			case <-b.reading:
				admitted++
				continue
			case w := <-refused:
				if w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), `"quota":"concurrentRequests"`) {
					t.Fatalf("request %d: %d %s", i, w.Code, w.Body)
				}
			}
			return admitted
		}
	}

	end := make(chan struct{})
	var inFlight sync.WaitGroup
	if n := fill(func(i int) *echo.Echo { return servers[i%2] }, end, &inFlight); n != quota {
		t.Errorf("requests in flight on two replicas at a quota of %d: %d", quota, n)
	}
	if n := held(); n > int64(quota) {
		t.Errorf("slots held in Redis: %d, more than the quota", n)
	}
	close(end)
	inFlight.Wait()
	if n, most := held(), 2*min(max(quota/8, 1), 32); n > int64(most) {
		t.Errorf("slots held once every request ended: %d; want at most %d", n, most)
	}
	// The first replica keeps slots it does not use; the second gets them when it needs them.
	end = make(chan struct{})
	if n := fill(func(int) *echo.Echo { return servers[1] }, end, &inFlight); n != quota {
		t.Errorf("requests in flight on one replica, the other idle, at a quota of %d: %d", quota, n)
	}
	close(end)
	inFlight.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for held() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the replicas still hold %d slots, idle for 5 s", held())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
