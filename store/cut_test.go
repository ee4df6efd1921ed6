package store_test

import (
	"testing"

	"github.com/platform-dev/platform/store"
)

// TestConformanceRepeatedPages: a page ordered on a field that starts no index answers the
// same when it is asked again (the embedded backend then bounds it by the order key of the
// last record of its previous answer), and after writes that move records into, out of and
// within that bound: each page is the slice of the whole order at its offset.
func TestConformanceRepeatedPages(t *testing.T) {
	orders := [][]store.Order{
		{{Key: "n"}},
		{{Key: "n", Desc: true}},
		{{Key: "label"}},
		{{Key: "name", Desc: true}},
		{{Key: "at", Desc: true}},
		{{Key: "ok"}, {Key: "price", Desc: true}},
		{{Key: store.KeyUpdatedAt, Desc: true}},
	}
	filters := []store.Filter{store.All, store.Compare("name", store.Ne, "b")}
	pages := []struct{ offset, limit int64 }{{0, 1}, {0, 2}, {1, 2}, {2, 3}, {0, 5}}
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		recs := seedItems(t, s)
		ctx := t.Context()
		check := func(step string) {
			t.Helper()
			for _, o := range orders {
				for _, f := range filters {
					all := names(t, recs, store.Query{Filter: f, Order: o})
					for _, p := range pages {
						want := all[min(int(p.offset), len(all)):min(int(p.offset+p.limit), len(all))]
						for run := range 2 {
							q := store.Query{Filter: f, Order: o, Offset: p.offset, Limit: p.limit}
							if got := names(t, recs, q); got != want {
								t.Errorf("%s, run %d: %v where %v, offset %d limit %d: got %q, want %q of %q", step, run+1, o, f, p.offset, p.limit, got, want, all)
							}
						}
					}
				}
			}
		}
		check("seeded")
		// f sorts first or last in each order.
		if err := recs.Insert(ctx, "items", "alice", []map[string]any{{"name": "f", "n": int64(9), "label": "A", "at": day(9), "ok": true, "price": 9.0}}, nil); err != nil {
			t.Fatal(err)
		}
		check("f inserted")
		for name, set := range map[string]map[string]any{"e": {"n": int64(0), "label": "zz"}, "c": {"ok": true, "price": 0.5}} {
			if err := recs.Update(ctx, "items", firstUID(t, recs, name), store.All, set, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		check("e and c updated")
		for _, name := range []string{"f", "a", "d"} {
			if err := recs.Delete(ctx, "items", firstUID(t, recs, name), store.All); err != nil {
				t.Fatal(err)
			}
		}
		check("f, a and d deleted")
	})
}
