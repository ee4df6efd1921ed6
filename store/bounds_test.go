package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/platform-dev/platform/store"
)

// nowhere is the i-th of a cycle of comparisons that match none of itemRecords, one of each
// shape the SQL compiler writes (parameters, ranges, subqueries, folding), so that a filter
// made of many of them reaches every limit of the database at once.
func nowhere(i int) store.Filter {
	c := store.Compare
	s := fmt.Sprintf("zz%d", i)
	switch i % 7 {
	case 0:
		return c("note", store.Eq, s)
	case 1:
		return c("n", store.Gt, int64(1000+i))
	case 2:
		return c("label", store.StartsWith, s)
	case 3:
		return c("tags", store.Has, s)
	case 4:
		return c("label", store.IContains, s)
	case 5:
		return c("price", store.Lt, float64(-i))
	}
	return c("ref", store.In, []any{s})
}

func startsZZ(i int) store.Filter {
	return store.Compare("label", store.StartsWith, fmt.Sprintf("zz%d", i))
}

// everywhere is the i-th of a cycle of comparisons that match every one of itemRecords.
func everywhere(i int) store.Filter {
	c := store.Compare
	s := fmt.Sprintf("zz%d", i)
	switch i % 4 {
	case 0:
		return c("note", store.Ne, s)
	case 1:
		return c("name", store.Lt, s)
	case 2:
		return store.Not(c("tags", store.Has, s))
	}
	return c("label", store.Nin, []any{s})
}

// cycle is n comparisons of a cycle, then f.
func cycle(n int, of func(int) store.Filter, f store.Filter) []store.Filter {
	parts := make([]store.Filter, 0, n+1)
	for i := range n {
		parts = append(parts, of(i))
	}
	return append(parts, f)
}

// nest wraps f in levels alternating joins, each with one comparison beside it, that keep
// what f matches.
func nest(levels int, f store.Filter) store.Filter {
	for i := range levels {
		if i%2 == 0 {
			f = store.Or(f, nowhere(i))
		} else {
			f = store.And(f, everywhere(i))
		}
	}
	return f
}

func values(n int, last ...any) []any {
	l := make([]any, 0, n)
	for i := range n - len(last) {
		l = append(l, int64(1000+i))
	}
	return append(l, last...)
}

// TestConformanceBounds: a filter at the edge of each of DefaultBounds answers on both
// backends, below the databases' own limits (SQLite's expression depth is 1000, which a chain
// of 1000 comparisons joined by OR used to pass); one past the edge is refused by Check.
func TestConformanceBounds(t *testing.T) {
	b := store.DefaultBounds
	c := store.Compare
	const deepest = "MaxNodes comparisons MaxDepth levels deep"
	isC := c("name", store.Eq, "c")
	isA := c("name", store.Eq, "a")
	cases := []struct {
		name  string
		f     store.Filter
		want  string
		over  store.Filter // the same shape one past the bound
		bound string       // what Check names when refusing over
	}{
		{
			name:  "or of MaxNodes comparisons",
			f:     store.Or(cycle(b.MaxNodes-1, nowhere, isC)...),
			want:  "c",
			over:  store.Or(cycle(b.MaxNodes, nowhere, isC)...),
			bound: fmt.Sprintf("more than %d comparisons", b.MaxNodes),
		},
		{
			// Two parameters each.
			name:  "or of MaxNodes ranges",
			f:     store.Or(cycle(b.MaxNodes-1, startsZZ, isC)...),
			want:  "c",
			over:  store.Or(cycle(b.MaxNodes, startsZZ, isC)...),
			bound: fmt.Sprintf("more than %d comparisons", b.MaxNodes),
		},
		{
			name:  "and of MaxNodes comparisons",
			f:     store.And(cycle(b.MaxNodes-1, everywhere, isA)...),
			want:  "a",
			over:  store.And(cycle(b.MaxNodes, everywhere, isA)...),
			bound: fmt.Sprintf("more than %d comparisons", b.MaxNodes),
		},
		{
			name:  "not of an or of MaxNodes comparisons",
			f:     store.Not(store.Or(cycle(b.MaxNodes-1, nowhere, isC)...)),
			want:  "abde",
			over:  store.Not(store.Or(cycle(b.MaxNodes, nowhere, isC)...)),
			bound: fmt.Sprintf("more than %d comparisons", b.MaxNodes),
		},
		{
			name:  "in of MaxIn values",
			f:     c("n", store.In, values(b.MaxIn, int64(3), int64(5))),
			want:  "ce",
			over:  c("n", store.In, values(b.MaxIn+1, int64(3), int64(5))),
			bound: fmt.Sprintf("at most %d are allowed", b.MaxIn),
		},
		{
			name:  "nin of MaxIn values",
			f:     c("n", store.Nin, values(b.MaxIn, int64(1))),
			want:  "bcde",
			over:  c("n", store.Nin, values(b.MaxIn+1, int64(1))),
			bound: fmt.Sprintf("at most %d are allowed", b.MaxIn),
		},
		{
			name:  "list in of MaxIn values",
			f:     c("tags", store.In, append(values(b.MaxIn-1), "green")),
			want:  "e",
			over:  c("tags", store.In, append(values(b.MaxIn), "green")),
			bound: fmt.Sprintf("at most %d are allowed", b.MaxIn),
		},
		{
			name:  "MaxDepth levels",
			f:     nest(b.MaxDepth, isC),
			want:  "c",
			over:  nest(b.MaxDepth+1, isC),
			bound: fmt.Sprintf("more than %d levels deep", b.MaxDepth),
		},
		{
			// The deepest level holds what the other levels leave of MaxNodes.
			name:  deepest,
			f:     nest(b.MaxDepth-1, store.Or(cycle(b.MaxNodes-b.MaxDepth, nowhere, isC)...)),
			want:  "c",
			over:  nest(b.MaxDepth-1, store.Or(cycle(b.MaxNodes-b.MaxDepth+1, nowhere, isC)...)),
			bound: fmt.Sprintf("more than %d comparisons", b.MaxNodes),
		},
		{
			name:  "MaxNodes comparisons in lists",
			f:     store.Or(c("n", store.In, values(b.MaxIn-1, int64(3))), c("name", store.In, []any{"zz"})),
			want:  "c",
			over:  store.Or(c("n", store.In, values(b.MaxIn, int64(3))), c("name", store.In, []any{"zz"})),
			bound: fmt.Sprintf("more than %d comparisons", b.MaxNodes),
		},
	}
	for _, tc := range cases {
		if err := tc.f.Check(b); err != nil {
			t.Errorf("%s: Check: %v, want the filter within the bounds", tc.name, err)
		}
		err := tc.over.Check(b)
		if !errors.Is(err, store.ErrFilterTooLarge) || !strings.Contains(err.Error(), tc.bound) {
			t.Errorf("%s, one past: Check: %v, want ErrFilterTooLarge naming %q", tc.name, err, tc.bound)
		}
	}
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		recs := seedItems(t, s)
		ctx := t.Context()
		for _, tc := range cases {
			var got []item
			if err := recs.Find(ctx, "items", store.Query{Filter: tc.f}, &got); err != nil {
				t.Errorf("%s: find: %.300v", tc.name, err)
			}
			var b strings.Builder
			for _, it := range got {
				b.WriteString(it.Name)
			}
			if b.String() != tc.want {
				t.Errorf("%s: got %q, want %q", tc.name, b.String(), tc.want)
			}
			if got := matched(t, recs, tc.f); got != tc.want {
				t.Errorf("%s: Match: got %q, want %q", tc.name, got, tc.want)
			}
			// The other statements that take a filter, with the largest one: preparing a
			// statement of 1,000 comparisons takes seconds under the race detector.
			if tc.name != deepest {
				continue
			}
			// A keyset page adds its own conditions to the filter.
			order := []store.Order{{Key: "note"}, {Key: "price", Desc: true}}
			var first []store.Record
			if err := recs.Each(ctx, "items", store.Query{Filter: store.All, Order: order, Limit: 1}, func(r store.Record) (bool, error) {
				first = append(first, r)
				return true, nil
			}); err != nil || len(first) != 1 {
				t.Fatalf("first page: %v", err)
			}
			cur, err := items.CursorOf(first[0], order)
			if err != nil {
				t.Fatal(err)
			}
			var page []item
			if err := recs.Find(ctx, "items", store.Query{Filter: tc.f, Order: order, After: &cur}, &page); err != nil {
				t.Errorf("%s: keyset page: %.300v", tc.name, err)
			}
			agg, err := recs.Aggregate(ctx, "items", tc.f, []store.Aggregate{{Func: store.Max, Key: "name"}})
			if err != nil || agg.Count != int64(len(tc.want)) {
				t.Errorf("%s: aggregate: %+v, %.300v; want a count of %d", tc.name, agg, err, len(tc.want))
			}
			updated, err := recs.UpdateWhere(ctx, "items", tc.f, map[string]any{"ok": true}, nil)
			if err != nil || len(updated) != len(tc.want) {
				t.Errorf("%s: update where: %d records, %.300v; want %d", tc.name, len(updated), err, len(tc.want))
			}
		}
	})
}

// BenchmarkFilterAtBounds: the cost of a count with the largest filters DefaultBounds let
// through, on SQLite (five records: the cost is the statement's, not the scan's). Each
// iteration's filter differs in its values only, so the prepared statement is reused as it
// would be for a client repeating one shape; "fresh" varies the shape too, as an attacker
// would, so every iteration prepares.
func BenchmarkFilterAtBounds(b *testing.B) {
	s, err := store.Open(b.Context(), store.Config{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close(context.Background()) })
	ctx := b.Context()
	recs, err := s.ProjectRecords(ctx, "bench", "", []store.Table{items})
	if err == nil {
		err = recs.Ensure(ctx)
	}
	if err == nil {
		err = recs.Insert(ctx, "items", "alice", itemRecords, nil)
	}
	if err != nil {
		b.Fatal(err)
	}
	n := store.DefaultBounds.MaxNodes
	for _, bc := range []struct {
		name  string
		fresh bool
	}{{"repeated", false}, {"fresh", true}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				size := n
				if bc.fresh {
					size = n - i%(n/2)
				}
				f := store.Or(cycle(size-1, nowhere, store.Compare("name", store.Eq, "c"))...)
				if got, err := recs.Count(ctx, "items", f); err != nil || got != 1 {
					b.Fatalf("count: %d, %v", got, err)
				}
			}
		})
	}
}
