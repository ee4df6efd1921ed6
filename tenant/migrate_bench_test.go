package tenant_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform-dev/platform/tenant"
)

// BenchmarkTypeChange applies a type change over 100,000 records (n: Int -> String, then
// back, each op converting every record) while a client reads a page of 20 records through
// GraphQL over HTTP in a loop: the time of the apply, and how many reads were served during
// it (and the p99 of those reads).
func BenchmarkTypeChange(b *testing.B) {
	const records = 100_000
	ctx := context.Background()
	stores := openStores(b)
	reg, srv := graphQLServer(b, stores, tenant.Options{}, "platform.test")
	doc := func(nType string) *tenant.Project {
		p, err := tenant.ParseDocument([]byte(`{"id":"big","tables":{"products":{"fields":{"name":{"type":"String","required":true},
			"n":{"type":"` + nType + `"}},"indexes":[{"fields":["n"]}],"access":{"read":"public"}}}}`))
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	if _, _, err := reg.Put(ctx, doc("Int")); err != nil {
		b.Fatal(err)
	}
	recs, err := stores.ProjectRecords(ctx, "big", "", doc("Int").StoreTables())
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]map[string]any, 0, 1000)
	for i := range records {
		batch = append(batch, map[string]any{"name": fmt.Sprintf("item-%d", i), "n": int64(i)})
		if len(batch) == cap(batch) {
			if err := recs.Insert(ctx, "products", "", batch, nil); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}

	var reads atomic.Int64
	var applying atomic.Bool
	var mu sync.Mutex
	var took []time.Duration
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			a := postGraphQL(b, srv.URL+"/api/v1/graphql", "big.platform.test", "", `{ products(limit: 20) { name n } }`, nil)
			if len(a.Errors) > 0 {
				b.Errorf("read during the change: %+v", a.Errors)
				return
			}
			reads.Add(1)
			if applying.Load() {
				mu.Lock()
				took = append(took, time.Since(t0))
				mu.Unlock()
			}
		}
	}()
	types := []string{"String", "Int"}
	var during int64
	i := 0
	b.ResetTimer()
	for b.Loop() {
		before := reads.Load()
		applying.Store(true)
		_, _, rep, err := reg.Apply(ctx, doc(types[i%2]), tenant.ApplyOptions{})
		applying.Store(false)
		if err != nil || len(rep.Data) != 1 {
			b.Fatalf("apply: %v %+v", err, rep)
		}
		during += reads.Load() - before
		i++
	}
	b.StopTimer()
	close(stop)
	<-done
	b.ReportMetric(float64(records), "records/op")
	b.ReportMetric(float64(during)/float64(i), "reads/op")
	mu.Lock()
	slices.Sort(took)
	if len(took) > 0 {
		b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "read-p99-ms")
	}
	mu.Unlock()
}
