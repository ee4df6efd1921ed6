package store_test

import (
	"reflect"
	"testing"

	"github.com/platform-dev/platform/store"
)

func TestConformanceAggregate(t *testing.T) {
	aggs := []store.Aggregate{
		{Func: store.Sum, Key: "n"}, {Func: store.Avg, Key: "n"}, {Func: store.Sum, Key: "price"}, {Func: store.Avg, Key: "price"},
		{Func: store.Min, Key: "price"}, {Func: store.Max, Key: "price"}, {Func: store.Min, Key: "n"}, {Func: store.Max, Key: "n"},
		{Func: store.Min, Key: "at"}, {Func: store.Max, Key: "at"}, {Func: store.Min, Key: "note"}, {Func: store.Max, Key: "note"},
		{Func: store.Max, Key: "name"},
	}
	none := make([]any, len(aggs))
	cases := []struct {
		name  string
		f     store.Filter
		count int64
		want  []any
	}{
		{"all", store.All, 5, []any{11.0, 2.75, 9.0, 2.25, 1.5, 3.0, int64(1), int64(5), day(1), day(3), "", "y", "e"}},
		{"alice's", store.Compare(store.KeyOwner, store.Eq, "alice"), 4, []any{11.0, 2.75, 9.0, 2.25, 1.5, 3.0, int64(1), int64(5), day(1), day(3), "", "x", "e"}},
		{"values missing", store.Compare("name", store.Eq, "d"), 1, []any{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, "y", "y", "d"}},
		{"nothing matches", store.Compare("name", store.Eq, "zz"), 0, none},
		{"None", store.None, 0, none},
	}
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		recs := seedItems(t, s)
		for _, c := range cases {
			got, err := recs.Aggregate(ctx, "items", c.f, aggs)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if got.Count != c.count || !reflect.DeepEqual(got.Values, c.want) {
				t.Errorf("%s: %d %#v\nwant %d %#v", c.name, got.Count, got.Values, c.count, c.want)
			}
			// The Aggregator computes the same in Go over the records the filter selects.
			g, err := store.NewAggregator(items, aggs)
			if err != nil {
				t.Fatal(err)
			}
			err = recs.Each(ctx, "items", store.Query{Filter: c.f}, func(rec store.Record) (bool, error) { return true, g.Add(rec) })
			if err != nil {
				t.Fatal(err)
			}
			if res := g.Result(); res.Count != c.count || !reflect.DeepEqual(res.Values, c.want) {
				t.Errorf("%s, in Go: %d %#v\nwant %d %#v", c.name, res.Count, res.Values, c.count, c.want)
			}
		}
		// createdAt is a key like the fields.
		first, err := recs.Aggregate(ctx, "items", store.All, []store.Aggregate{{Func: store.Min, Key: store.KeyCreatedAt}, {Func: store.Max, Key: store.KeyUID}})
		if err != nil {
			t.Fatal(err)
		}
		var a item
		if err := recs.Get(ctx, "items", firstUID(t, recs, "a"), store.All, &a); err != nil {
			t.Fatal(err)
		}
		if got := first.Values[0]; got == nil || got.(interface{ Format(string) string }).Format(store.TimeLayout) != a.CreatedAt || first.Values[1] != firstUID(t, recs, "e") {
			t.Errorf("min createdAt, max uid: %#v, want a's %s and e's uid", first.Values, a.CreatedAt)
		}
		// Aggregates a key cannot have are refused.
		for _, bad := range []store.Aggregate{{Func: store.Sum, Key: "name"}, {Func: store.Min, Key: "tags"}, {Func: store.Max, Key: "meta"}, {Func: store.Min, Key: "ok"}, {Func: store.Min, Key: "nope"}, {Func: "median", Key: "n"}, {Func: store.Min, Key: store.KeyOwner}} {
			if _, err := recs.Aggregate(ctx, "items", store.All, []store.Aggregate{bad}); err == nil {
				t.Errorf("%v: no error", bad)
			}
		}
	})
}
