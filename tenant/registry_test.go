package tenant_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform-dev/platform/internal/testbackend"
	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

func openStores(tb testing.TB) *store.Stores {
	tb.Helper()
	return testbackend.Open(tb, store.Config{DataDir: tb.TempDir()})
}

// openRedisServerStores opens stores whose Redis is a real redis-server, as replicas share
// it.
func openRedisServerStores(tb testing.TB) *store.Stores {
	tb.Helper()
	addr, _ := testenv.RedisServer(tb)
	return testbackend.Open(tb, store.Config{DataDir: tb.TempDir(), RedisURL: "redis://" + addr})
}

func putProjects(tb testing.TB, reg *tenant.Registry, n int) {
	tb.Helper()
	ctx := context.Background()
	for i := range n {
		p, err := tenant.ParseDocument(fmt.Appendf(nil, `{"id":"p%d","tables":{"products":{"fields":{
			"name":{"type":"String","required":true},"price":{"type":"Float"},"tags":{"type":"[String]"}}}}}`, i))
		if err != nil {
			tb.Fatal(err)
		}
		if _, _, err := reg.Put(ctx, p); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestCacheIsBounded touches more projects than the cache holds: it keeps at most its size,
// and every project still serves.
func TestCacheIsBounded(t *testing.T) {
	s := openStores(t)
	ctx := context.Background()
	reg, err := tenant.NewRegistry(ctx, s, tenant.Options{CacheSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	putProjects(t, reg, 300)
	for i := range 300 {
		rt, err := reg.Runtime(ctx, fmt.Sprintf("p%d", i))
		if err != nil || rt.Project.ID != fmt.Sprintf("p%d", i) {
			t.Fatalf("project p%d: %v", i, err)
		}
		if n := reg.CachedProjects(); n > 50 {
			t.Fatalf("cache holds %d projects, more than its size 50", n)
		}
	}
	if _, err := reg.Runtime(ctx, "p-missing"); err == nil {
		t.Fatal("a missing project was found")
	}
}

// TestIdleProjectsAreEvicted: a project nobody asks for leaves memory.
func TestIdleProjectsAreEvicted(t *testing.T) {
	s := openStores(t)
	ctx := context.Background()
	reg, err := tenant.NewRegistry(ctx, s, tenant.Options{IdleTTL: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	putProjects(t, reg, 3)
	for i := range 3 {
		if _, err := reg.Runtime(ctx, fmt.Sprintf("p%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for reg.CachedProjects() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d idle projects still cached after 5s with a 200ms idle limit", reg.CachedProjects())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPublishedSchemaMatches keeps docs/project.schema.json equal to the schema the service
// validates with.
func TestPublishedSchemaMatches(t *testing.T) {
	published, err := os.ReadFile("../docs/project.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(published, tenant.DocumentSchema) {
		t.Fatal("docs/project.schema.json differs from tenant/project.schema.json: copy it over")
	}
}

func TestSingular(t *testing.T) {
	for in, want := range map[string]string{
		"products": "product", "categories": "category", "addresses": "address", "boxes": "box",
		"matches": "match", "wishes": "wish", "status": "status", "analysis": "analysis",
		"data": "data", "people": "people", "s": "s", "Orders": "Order", "glass": "glass",
	} {
		if got := tenant.Singular(in); got != want {
			t.Errorf("Singular(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkTenThousandProjects applies 10,000 projects, touches every one through a cache of
// 1,000, and reports the live heap: it stays bounded by the cache size, not the project count.
func BenchmarkTenThousandProjects(b *testing.B) {
	s := openStores(b)
	ctx := context.Background()
	reg, err := tenant.NewRegistry(ctx, s, tenant.Options{CacheSize: 1000})
	if err != nil {
		b.Fatal(err)
	}
	defer reg.Close()
	const n = 10000
	putProjects(b, reg, n)
	heap := func() float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc)
	}
	touch := func(count int) {
		for i := range count {
			if _, err := reg.Runtime(ctx, fmt.Sprintf("p%d", i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	touch(1000)
	at1k := heap()
	b.ResetTimer()
	for b.Loop() {
		touch(n)
	}
	b.StopTimer()
	at10k := heap()
	b.ReportMetric(at1k/(1<<20), "heapMiB@1k")
	b.ReportMetric(at10k/(1<<20), "heapMiB@10k")
	b.ReportMetric(float64(reg.CachedProjects()), "cached")
}

// TestChangeBuildsOnce: a replica that applies a change and serves the project at once
// builds it once. Redis echoes the replica's own change notice back to it; forgetting the
// project again then dropped (or refused to keep) the build that read the new document, and
// the next request built it again.
func TestChangeBuildsOnce(t *testing.T) {
	s := openStores(t)
	ctx := context.Background()
	metrics := prometheus.NewRegistry()
	reg, err := tenant.NewRegistry(ctx, s, tenant.Options{Registerer: metrics})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	const changes = 20
	for i := range changes {
		p, err := tenant.ParseDocument(fmt.Appendf(nil, `{"id":"shop","tables":{"products":{"fields":{"f%d":{"type":"String"}}}}}`, i))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := reg.Put(ctx, p); err != nil {
			t.Fatal(err)
		}
		if _, err := reg.Runtime(ctx, "shop"); err != nil {
			t.Fatal(err)
		}
		// Long enough for the notice to come back and be handled.
		time.Sleep(20 * time.Millisecond)
		if _, err := reg.Runtime(ctx, "shop"); err != nil {
			t.Fatal(err)
		}
	}
	if n := metricValue(t, metrics, "platform_project_builds_total", "load"); n != changes {
		t.Errorf("%d changes, each served twice, built the project %v times, want %d", changes, n, changes)
	}
}
