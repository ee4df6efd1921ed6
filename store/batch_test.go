package store_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/platform-dev/platform/store"
)

func TestConformanceWriteWhere(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		recs := seedItems(t, s)
		alice := store.Compare(store.KeyOwner, store.Eq, "alice")

		// Only the records both filters select change; they come back changed.
		changed, err := recs.UpdateWhere(ctx, "items", store.And(store.Compare("note", store.Eq, "x"), alice), map[string]any{"n": int64(9)}, []string{"tags"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, rec := range changed {
			var it item
			if err := json.Unmarshal(rec, &it); err != nil {
				t.Fatal(err)
			}
			if it.N == nil || *it.N != 9 || it.Tags != nil || it.UpdatedAt <= it.CreatedAt {
				t.Fatalf("updated record %s", rec)
			}
			got = append(got, it.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, []string{"a", "e"}) {
			t.Fatalf("updated %v, want [a e]", got)
		}
		if n := names(t, recs, store.Query{Filter: store.Compare("n", store.Eq, int64(9))}); n != "ae" {
			t.Fatalf("records with n 9: %q, want ae", n)
		}
		// A filter that selects nothing changes nothing.
		if changed, err := recs.UpdateWhere(ctx, "items", store.Compare("name", store.Eq, "zz"), map[string]any{"n": int64(1)}, nil); err != nil || len(changed) != 0 {
			t.Fatalf("update of nothing: %d records, %v", len(changed), err)
		}
		if changed, err := recs.UpdateWhere(ctx, "items", store.None, map[string]any{"n": int64(1)}, nil); err != nil || len(changed) != 0 {
			t.Fatalf("update through None: %d records, %v", len(changed), err)
		}

		// Delete removes what both filters select and names the uids.
		b := firstUID(t, recs, "b")
		uids, err := recs.DeleteWhere(ctx, "items", store.And(store.Compare("name", store.In, []any{"b", "d"}), alice))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(uids, []string{b}) {
			t.Fatalf("deleted %v, want b's uid [%s]", uids, b)
		}
		if n := names(t, recs, store.Query{}); n != "acde" {
			t.Fatalf("after deleting alice's b and d: %q, want acde", n)
		}
		if uids, err := recs.DeleteWhere(ctx, "items", store.None); err != nil || len(uids) != 0 {
			t.Fatalf("delete through None: %v, %v", uids, err)
		}
	})
}
