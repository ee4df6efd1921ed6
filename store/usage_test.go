package store_test

import (
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
)

// TestConformanceUsage holds both backends to the same usage store: deltas add up per hour
// and per day whoever writes them, gauges keep their largest sample, totals sum each
// project's days, and pruning hours keeps the days.
func TestConformanceUsage(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		u := s.Usage()
		h := func(d, hour int) time.Time { return day(d).Add(time.Duration(hour) * time.Hour) }
		// Two "replicas" add for the same hours; minutes within the hour fall into it.
		for _, batch := range [][]store.Usage{
			{{Project: "a", Start: h(1, 9).Add(5 * time.Minute), Requests: 3, Queries: 2, BytesOut: 100, RecordsStored: 10, BytesStored: 4096},
				{Project: "b", Start: h(1, 9), Requests: 1, Errors: 1}},
			{{Project: "a", Start: h(1, 9).Add(59 * time.Minute), Requests: 4, Mutations: 1, RecordsWritten: 2, StoreMicros: 70, RecordsStored: 7}},
			{{Project: "a", Start: h(1, 23), Requests: 5, ConnMillis: 60, Events: 9, Subscriptions: 1, RecordsRead: 11, BytesStored: 8192}},
			{{Project: "a", Start: h(2, 0), Requests: 1}},
		} {
			if err := u.Add(ctx, batch); err != nil {
				t.Fatal(err)
			}
		}
		hours, err := u.Hours(ctx, "a", day(1), day(3))
		if err != nil {
			t.Fatal(err)
		}
		want := []store.Usage{
			{Project: "a", Start: h(1, 9), Requests: 7, Queries: 2, Mutations: 1, BytesOut: 100, RecordsWritten: 2, StoreMicros: 70, RecordsStored: 10, BytesStored: 4096},
			{Project: "a", Start: h(1, 23), Requests: 5, ConnMillis: 60, Events: 9, Subscriptions: 1, RecordsRead: 11, BytesStored: 8192},
			{Project: "a", Start: h(2, 0), Requests: 1},
		}
		equalUsage(t, "hours", hours, want)

		days, err := u.Days(ctx, "a", day(1), day(2))
		if err != nil {
			t.Fatal(err)
		}
		equalUsage(t, "days", days, []store.Usage{
			{Project: "a", Start: day(1), Requests: 12, Queries: 2, Mutations: 1, BytesOut: 100, RecordsWritten: 2, StoreMicros: 70,
				ConnMillis: 60, Events: 9, Subscriptions: 1, RecordsRead: 11, RecordsStored: 10, BytesStored: 8192},
		})

		totals, err := u.Totals(ctx, day(1), day(3))
		if err != nil {
			t.Fatal(err)
		}
		equalUsage(t, "totals", totals, []store.Usage{
			{Project: "a", Start: day(1), Requests: 13, Queries: 2, Mutations: 1, BytesOut: 100, RecordsWritten: 2, StoreMicros: 70,
				ConnMillis: 60, Events: 9, Subscriptions: 1, RecordsRead: 11, RecordsStored: 10, BytesStored: 8192},
			{Project: "b", Start: day(1), Requests: 1, Errors: 1},
		})

		if err := u.PruneHours(ctx, day(2)); err != nil {
			t.Fatal(err)
		}
		hours, err = u.Hours(ctx, "", day(1), day(3))
		if err != nil {
			t.Fatal(err)
		}
		equalUsage(t, "hours after pruning", hours, want[2:])
		if days, err = u.Days(ctx, "b", day(1), day(3)); err != nil || len(days) != 1 {
			t.Fatalf("b's days after pruning hours = %v, %v; want one", days, err)
		}
	})
}

func equalUsage(t *testing.T, what string, got, want []store.Usage) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows %+v, want %d %+v", what, len(got), got, len(want), want)
	}
	for i := range got {
		if !got[i].Start.Equal(want[i].Start) {
			t.Errorf("%s[%d]: start %v, want %v", what, i, got[i].Start, want[i].Start)
		}
		got[i].Start = want[i].Start
		if got[i] != want[i] {
			t.Errorf("%s[%d] = %+v\nwant %+v", what, i, got[i], want[i])
		}
	}
}

// TestRecordsCountInto: the database work of a project's Records is counted where it is
// done, whichever call did it.
func TestRecordsCountInto(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		recs := seedItems(t, s)
		var a store.Activity
		recs.CountInto(&a)
		if err := recs.Insert(ctx, "items", "alice", []map[string]any{{"name": "f"}, {"name": "g"}}, nil); err != nil {
			t.Fatal(err)
		}
		var got []item
		if err := recs.Find(ctx, "items", store.Query{}, &got); err != nil {
			t.Fatal(err)
		}
		if _, err := recs.DeleteWhere(ctx, "items", store.Compare("name", store.Eq, "f")); err != nil {
			t.Fatal(err)
		}
		if r, w := a.RecordsRead.Load(), a.RecordsWritten.Load(); r != 7 || w != 3 || a.StoreNanos.Load() <= 0 {
			t.Errorf("read %d, written %d, store time %v; want 7, 3 and some time", r, w, time.Duration(a.StoreNanos.Load()))
		}
		st, err := recs.Stored(ctx)
		if err != nil || st.Records != 6 || st.Bytes <= 0 {
			t.Errorf("Stored = %+v, %v; want 6 records and some bytes", st, err)
		}
		if sample, err := recs.StoredSample(ctx); err != nil || sample.Records != 6 || sample.Bytes <= 0 {
			t.Errorf("StoredSample = %+v, %v; want 6 records and some bytes", sample, err)
		}
	})
}
