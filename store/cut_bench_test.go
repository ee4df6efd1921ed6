package store_test

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
)

// BenchmarkSQLiteUnindexedPage measures query c of the peer benchmark (price >= 500, price
// desc, first 20) on a table that declares no index, in one loop: "first" as a query's
// first run answers it, sorting every match (its bound, just below 500, is new each time,
// so no earlier answer bounds it, and it selects the same records), "repeat" as the same
// query again answers it (bounded by the last price of its previous page), and "count" the
// count of the same records (query d): the scan alone. 100,000 records; 1,000,000 with
// BENCH_1M=1.
func BenchmarkSQLiteUnindexedPage(b *testing.B) {
	n := 100_000
	if os.Getenv("BENCH_1M") != "" {
		n = 1_000_000
	}
	ctx := context.Background()
	noIndex := benchProducts
	noIndex.Indexes = nil
	recs := seedTable(b, openSQLiteStores(b), "benchnoidx", noIndex, n)
	desc := []store.Order{{Key: "price", Desc: true}}
	page := func(from float64) error {
		got := 0
		err := recs.Each(ctx, "products", store.Query{Filter: store.Compare("price", store.Gte, from), Order: desc, Limit: 20}, func(r store.Record) (bool, error) {
			got++
			return true, nil
		})
		if err == nil && got != 20 {
			err = fmt.Errorf("%d records, want 20", got)
		}
		return err
	}
	// The process's CPU time, which the other work of a shared machine moves less than
	// the wall clock.
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var first, repeat, count time.Duration
	i := 0
	for b.Loop() {
		i++
		t0 := cpu()
		if err := page(499.9 + float64(i%100_000)*1e-6); err != nil {
			b.Fatal(err)
		}
		t1 := cpu()
		if err := page(500); err != nil {
			b.Fatal(err)
		}
		t2 := cpu()
		c, err := recs.Count(ctx, "products", store.Compare("price", store.Gte, 500.0))
		if err != nil || c != int64(n/2) {
			b.Fatal(c, err)
		}
		first, repeat, count = first+t1-t0, repeat+t2-t1, count+cpu()-t2
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(i) }
	b.ReportMetric(per(first), "first-cpu-ns/op")
	b.ReportMetric(per(repeat), "repeat-cpu-ns/op")
	b.ReportMetric(per(count), "count-cpu-ns/op")
	b.ReportMetric(float64(repeat)/float64(first), "repeat/first")
}
