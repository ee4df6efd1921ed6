package tenant_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// BenchmarkQuotaOverhead is issue 27's overhead figure for quotas: fetch by uid through the
// whole project path (in-process ServeHTTP), for a project without quotas, with storage
// quotas only (nothing to do on a read), and with rate and concurrency quotas of several
// sizes (both taken from Redis in batches and spent locally: the replica keeps the
// concurrency slots it leased while requests keep coming, coord.Pool). The ratio to "none"
// is the cost.
//
// Under "embedded" Redis is the in-process one, under "redis-server" a real one (when
// installed), as replicas share it.
func BenchmarkQuotaOverhead(b *testing.B) {
	b.Run("embedded", func(b *testing.B) { benchmarkQuotaOverhead(b, openStores(b)) })
	if testenv.Use("redis-server") {
		b.Run("redis-server", func(b *testing.B) { benchmarkQuotaOverhead(b, openRedisServerStores(b)) })
	}
}

func benchmarkQuotaOverhead(b *testing.B, stores *store.Stores) {
	ctx := context.Background()
	reg, err := tenant.NewRegistry(ctx, stores, tenant.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(reg.Close)
	e := echo.New()
	e.Use(reg.Hosts(tenant.HostOptions{Domain: "localhost"}))
	reg.MountGraphQL(e)
	for i, c := range []struct {
		name   string
		quotas map[string]int64
	}{
		{"none", nil},
		{"storage", map[string]int64{"records": 1 << 30, "bytesStored": 1 << 40}},
		{"rate", map[string]int64{"requestsPerMinute": 10_000_000}},
		{"concurrency-8", map[string]int64{"concurrentRequests": 8}},
		{"concurrency-32", map[string]int64{"concurrentRequests": 32}},
		{"concurrency-128", map[string]int64{"concurrentRequests": 128}},
		{"rate+concurrency-8", map[string]int64{"requestsPerMinute": 10_000_000, "concurrentRequests": 8}},
	} {
		id := fmt.Sprintf("q%d", i)
		p, err := tenant.ParseDocument([]byte(`{"id":"` + id + `","tables":{"products":{"fields":{"name":{"type":"String"}},"access":{"read":"public"}}}}`))
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := reg.Put(ctx, p); err != nil {
			b.Fatal(err)
		}
		if _, err := reg.SetQuotas(ctx, id, c.quotas); err != nil {
			b.Fatal(err)
		}
		rt, err := reg.Runtime(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		var out []struct{ UID string }
		if err := rt.Records.Insert(ctx, "products", "", []map[string]any{{"name": "mug"}}, &out); err != nil {
			b.Fatal(err)
		}
		body := []byte(`{"query":"{ products(uid: \"` + out[0].UID + `\") { name } }"}`)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/api/v1/graphql", bytes.NewReader(body))
				req.Host = id + ".localhost"
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				e.ServeHTTP(w, req)
				if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"mug"`)) {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}
