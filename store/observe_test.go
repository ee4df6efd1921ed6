package store_test

import (
	"testing"

	"github.com/platform-dev/platform/store"
)

// TestConformanceQueries: Records.Queries counts one per call into the database, reads and
// writes alike.
func TestConformanceQueries(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		recs := seedItems(t, s)
		start := recs.Queries()
		calls := []func() error{
			func() error { _, err := recs.Count(ctx, "items", store.All); return err },
			func() error {
				return recs.Each(ctx, "items", store.Query{}, func(store.Record) (bool, error) { return true, nil })
			},
			func() error {
				_, err := recs.Aggregate(ctx, "items", store.All, []store.Aggregate{{Func: store.Max, Key: "n"}})
				return err
			},
			func() error {
				return recs.Insert(ctx, "items", "", []map[string]any{{"name": "f"}, {"name": "g"}}, nil)
			},
			func() error {
				_, err := recs.UpdateWhere(ctx, "items", store.All, map[string]any{"n": int64(1)}, nil)
				return err
			},
			func() error { _, err := recs.DeleteWhere(ctx, "items", store.All); return err },
		}
		for i, call := range calls {
			if err := call(); err != nil {
				t.Fatal(err)
			}
			if got := recs.Queries() - start; got != int64(i+1) {
				t.Fatalf("after call %d: %d queries counted", i+1, got)
			}
		}
		// A filter that selects nothing never reaches the database.
		if _, err := recs.Count(ctx, "items", store.None); err != nil || recs.Queries()-start != int64(len(calls)) {
			t.Fatalf("a count through None was sent: %v", err)
		}
	})
}
