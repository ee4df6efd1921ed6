package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
)

// BenchmarkCount counts the peer benchmark's query d (price >= 500: half the records) at
// 100,000 and 1,000,000 records, each time right after a write to the table (miss-ns/op:
// the count itself, the cache cannot serve it), then twice with nothing written since,
// served from the cache (hit-ns/op, the first read after the write; again-ns/op, the next,
// as a count repeated by many clients is). ns/op also holds the write.
func BenchmarkCount(b *testing.B) {
	ctx := context.Background()
	gte500 := store.Compare("price", store.Gte, 500.0)
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			recs := seedProducts(b, openSQLiteStores(b), n)
			var first []struct{ UID string }
			if err := recs.Find(ctx, "products", store.Query{Limit: 1}, &first); err != nil || len(first) != 1 {
				b.Fatal(first, err)
			}
			count := func() time.Duration {
				began := time.Now()
				c, err := recs.Count(ctx, "products", gte500)
				if err != nil || c != int64(n/2) {
					b.Fatalf("count %d, %v; want %d", c, err, n/2)
				}
				return time.Since(began)
			}
			var miss, hit, again time.Duration
			i := 0
			for b.Loop() {
				i++
				if err := recs.Update(ctx, "products", first[0].UID, store.All, map[string]any{"name": fmt.Sprintf("renamed-%d", i)}, nil, nil); err != nil {
					b.Fatal(err)
				}
				miss += count()
				hit += count()
				again += count()
			}
			b.ReportMetric(float64(again.Nanoseconds())/float64(i), "again-ns/op")
			b.ReportMetric(float64(miss.Nanoseconds())/float64(i), "miss-ns/op")
			b.ReportMetric(float64(hit.Nanoseconds())/float64(i), "hit-ns/op")
		})
	}
}

// BenchmarkInsertGeneration writes the peer benchmark's records in batches of 100 into two
// tables alike but for the triggers that draw the table's generation (see
// TestCountCacheFollowsEveryWrite), each batch into one then the other, so that a shared
// machine's load weighs on both alike: what keeping counts exact costs a write.
func BenchmarkInsertGeneration(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	s := openSQLiteAt(b, dir)
	with := seedTable(b, s, "with", benchProducts, 0)
	without := seedTable(b, s, "without", benchProducts, 0)
	raw, err := sql.Open("sqlite", filepath.Join(dir, "projects", "without.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	for _, op := range []string{"insert", "update", "delete"} {
		if _, err := raw.ExecContext(ctx, `DROP TRIGGER "gen:products:`+op+`"`); err != nil {
			b.Fatal(err)
		}
	}
	batch := make([]map[string]any, 100)
	i := 0
	insert := func(recs *store.Records) time.Duration {
		for j := range batch {
			batch[j] = map[string]any{"name": fmt.Sprintf("item-%d", i), "price": float64(i%1000) + 0.5, "sku": fmt.Sprintf("sku-%d", i), "author": "author-1"}
			i++
		}
		began := time.Now()
		if err := recs.Insert(ctx, "products", "alice", batch, nil); err != nil {
			b.Fatal(err)
		}
		return time.Since(began)
	}
	var dWith, dWithout time.Duration
	n := 0
	for b.Loop() {
		dWith += insert(with)
		dWithout += insert(without)
		n += len(batch)
	}
	b.ReportMetric(float64(dWith.Nanoseconds())/float64(n), "with-ns/record")
	b.ReportMetric(float64(dWithout.Nanoseconds())/float64(n), "without-ns/record")
	b.ReportMetric(float64(dWith)/float64(dWithout), "with/without")
}
