package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
)

// The conformance suite: the same cases, through the exported API, on both backends, so that
// their semantics cannot drift apart. The mongo backend runs against an embedded FerretDB.

// forEachBackend runs test on a fresh Stores of each backend.
func forEachBackend(t *testing.T, test func(t *testing.T, s *store.Stores)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		s, err := store.Open(t.Context(), store.Config{DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(context.Background()) })
		test(t, s)
	})
	t.Run("mongo", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
		uri, stop, err := store.StartFerretDB(t.Context(), dir, logger)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stop(context.Background()) })
		s, err := store.Open(t.Context(), store.Config{DataDir: dir, MongoURI: uri, Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(context.Background()) })
		test(t, s)
	})
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// items is the table most cases query: every scalar type, a list, and optional fields.
var items = store.Table{
	Name: "items",
	Fields: []store.Field{
		{Name: "at", Type: store.FieldType{Scalar: store.DateTime}},
		{Name: "label", Type: store.FieldType{Scalar: store.String}},
		{Name: "meta", Type: store.FieldType{Scalar: store.JSON}},
		{Name: "n", Type: store.FieldType{Scalar: store.Int}},
		{Name: "name", Type: store.FieldType{Scalar: store.String}, Required: true},
		{Name: "note", Type: store.FieldType{Scalar: store.String}},
		{Name: "ok", Type: store.FieldType{Scalar: store.Boolean}},
		{Name: "price", Type: store.FieldType{Scalar: store.Float}},
		{Name: "raw", Type: store.FieldType{Scalar: store.JSON, List: true}},
		{Name: "ref", Type: store.FieldType{Scalar: store.ID}},
		{Name: "tags", Type: store.FieldType{Scalar: store.String, List: true}},
	},
	Indexes: []store.Index{{Fields: []string{"price"}}, {Fields: []string{"note", "n"}}},
}

func day(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }

// itemRecords are inserted one by one in this order (so their uids sort so): a and e tie on
// note, missing and "" differ, c's price is a Float with an integral value, a's and c's raw
// hold a null.
var itemRecords = []map[string]any{
	{"name": "a", "note": "x", "n": int64(1), "price": 1.5, "ok": true, "tags": []any{"red", "blue"}, "at": day(1), "label": "Ünïcode Straße", "ref": "r1", "meta": map[string]any{"k": "v"}, "raw": []any{"x", nil}},
	{"name": "b", "note": "", "n": int64(2), "price": 2.0, "ok": false, "tags": []any{"blue"}, "at": day(2), "label": "plain"},
	{"name": "c", "n": int64(3), "price": 3.0, "tags": []any{}, "label": "ÄBC", "ref": "r3", "raw": []any{nil}},
	{"name": "d", "note": "y", "label": "straße"},
	{"name": "e", "note": "x", "n": int64(5), "price": 2.5, "ok": true, "tags": []any{"green"}, "at": day(3), "label": "tail"},
}

// seedItems returns the project's records with itemRecords inserted, a to e by alice but d by
// bob.
func seedItems(t *testing.T, s *store.Stores, tables ...store.Table) *store.Records {
	t.Helper()
	ctx := t.Context()
	recs, err := s.ProjectRecords(ctx, "conf", "", append([]store.Table{items}, tables...))
	if err != nil {
		t.Fatal(err)
	}
	if err := recs.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range itemRecords {
		owner := "alice"
		if r["name"] == "d" {
			owner = "bob"
		}
		if err := recs.Insert(ctx, "items", owner, []map[string]any{r}, nil); err != nil {
			t.Fatal(err)
		}
		// UUIDv7s of one millisecond are ordered by a counter in the same process; a
		// millisecond apart, createdAt orders them too.
		time.Sleep(2 * time.Millisecond)
	}
	return recs
}

type item struct {
	UID       string         `json:"uid"`
	Owner     string         `json:"_owner"`
	CreatedAt string         `json:"createdAt"`
	UpdatedAt string         `json:"updatedAt"`
	Name      string         `json:"name"`
	Note      *string        `json:"note"`
	N         *float64       `json:"n"`
	Price     *float64       `json:"price"`
	Tags      []string       `json:"tags"`
	Meta      map[string]any `json:"meta"`
}

func names(t *testing.T, recs *store.Records, q store.Query) string {
	t.Helper()
	var got []item
	if err := recs.Find(t.Context(), "items", q, &got); err != nil {
		t.Fatalf("find %v: %v", q.Filter, err)
	}
	var b strings.Builder
	for _, it := range got {
		b.WriteString(it.Name)
	}
	return b.String()
}

func TestConformanceFilters(t *testing.T) {
	c := store.Compare
	str := func(s ...any) []any { return s }
	cases := []struct {
		f    store.Filter
		want string // names, in uid order
	}{
		{store.All, "abcde"},
		{store.None, ""},
		// A String never set reads as "".
		{c("note", store.Eq, "x"), "ae"},
		{c("note", store.Eq, ""), "bc"},
		{c("note", store.Ne, "x"), "bcd"},
		{c("note", store.Ne, ""), "ade"},
		{c("note", store.Gt, ""), "ade"},
		{c("note", store.Gte, ""), "abcde"},
		{c("note", store.Gte, "x"), "ade"},
		{c("note", store.Lt, "y"), "abce"},
		{c("note", store.Lt, ""), ""},
		{c("note", store.Lte, "x"), "abce"},
		{c("note", store.Lte, ""), "bc"},
		{c("note", store.In, str("", "y")), "bcd"},
		{c("note", store.Nin, str("")), "ade"},
		{c("note", store.Nin, str("x", "y")), "bc"},
		{c("note", store.IsNull, true), "c"},
		{c("note", store.IsNull, false), "abde"},
		{c("note", store.Eq, nil), "c"},
		{c("note", store.Ne, nil), "abde"},
		{c("note", store.Contains, ""), "abcde"},
		{c("note", store.StartsWith, ""), "abcde"},
		// Other types: a missing value compares with nothing but Ne, Nin and IsNull.
		{c("n", store.Eq, nil), "d"},
		{c("n", store.Ne, nil), "abce"},
		{c("n", store.Eq, int64(3)), "c"},
		{c("n", store.Ne, int64(3)), "abde"},
		{c("n", store.Lt, int64(3)), "ab"},
		{c("n", store.Lte, int64(3)), "abc"},
		{c("n", store.Gt, int64(2)), "ce"},
		{c("n", store.Gte, int64(2)), "bce"},
		{c("n", store.In, str(int64(1), int64(5))), "ae"},
		{c("n", store.In, str()), ""},
		{c("n", store.In, str(nil, int64(1))), "ad"},
		{c("n", store.Nin, str(int64(1), int64(5))), "bcd"},
		{c("n", store.Nin, str()), "abcde"},
		{c("n", store.Nin, str(nil)), "abce"},
		// Int and Float compare by value.
		{c("n", store.Eq, 3.0), "c"},
		{c("n", store.Gt, 2.5), "ce"},
		{c("price", store.Eq, int64(3)), "c"},
		{c("price", store.Gt, int64(2)), "ce"},
		{c("price", store.Gte, int64(2)), "bce"},
		{c("price", store.In, str(int64(2), 1.5)), "ab"},
		{c("ok", store.Eq, true), "ae"},
		{c("ok", store.Eq, false), "b"},
		{c("ok", store.Ne, true), "bcd"},
		{c("at", store.Gt, day(1).Add(12*time.Hour)), "be"},
		{c("at", store.Lte, day(2)), "ab"},
		{c("at", store.Eq, day(3)), "e"},
		{c("at", store.IsNull, true), "cd"},
		{c("ref", store.Eq, "r1"), "a"},
		{c("ref", store.Eq, ""), ""},
		{c("ref", store.Ne, "r1"), "bcde"},
		// Strings: by code point, case-sensitively but for IContains, which folds Unicode.
		{c("label", store.Contains, "tra"), "ad"},
		{c("label", store.Contains, "Tra"), ""},
		{c("label", store.Contains, "e."), ""},
		{c("label", store.IContains, "STRASSE"), ""},
		{c("label", store.IContains, "STRAßE"), "ad"},
		{c("label", store.IContains, "äbc"), "c"},
		{c("label", store.IContains, "ÜNÏ"), "a"},
		{c("label", store.IContains, "%"), ""},
		{c("label", store.StartsWith, "Ü"), "a"},
		{c("label", store.StartsWith, "str"), "d"},
		{c("label", store.StartsWith, "_"), ""},
		{c("label", store.Gt, "z"), "ac"},
		{c("label", store.Lt, "q"), "b"},
		// Lists: a comparison holds for an element.
		{c("tags", store.Has, "blue"), "ab"},
		{c("tags", store.Eq, "blue"), "ab"},
		{c("tags", store.Ne, "blue"), "cde"},
		{c("tags", store.In, str("red", "green")), "ae"},
		{c("tags", store.Nin, str("red", "green")), "bcd"},
		{c("tags", store.Gt, "p"), "a"},
		{c("tags", store.IsNull, true), "d"},
		{c("tags", store.Contains, "ree"), "e"},
		// A list holding a null is present (MongoDB's {raw: null} looks into arrays). Found by
		// tenant's TestAccessFiltersMatchCEL, seed 1 rule #74: has(record.lj).
		{c("raw", store.IsNull, false), "ac"},
		{c("raw", store.IsNull, true), "bde"},
		{c("raw", store.Ne, nil), "ac"},
		{c("raw", store.Eq, nil), "bde"},
		// Keys the service keeps.
		{c(store.KeyOwner, store.Eq, "bob"), "d"},
		{c(store.KeyOwner, store.Ne, "bob"), "abce"},
		{c(store.KeyOwner, store.IsNull, true), ""},
		{c(store.KeyCreatedAt, store.Gt, day(1)), "abcde"},
		{c(store.KeyUID, store.In, str()), ""},
		// Joins.
		{store.Not(c("note", store.Eq, "x")), "bcd"},
		{store.Not(c("n", store.Gt, int64(2))), "abd"},
		{store.Not(c("label", store.Contains, "a")), "c"},
		{store.Not(store.Not(c("n", store.Gt, int64(2)))), "ce"},
		{store.Or(c("n", store.Eq, int64(1)), c("note", store.Eq, "y")), "ad"},
		{store.And(c("price", store.Gte, int64(2)), c("price", store.Lt, int64(3))), "be"},
		{store.And(c("note", store.Eq, "x"), store.Not(c("tags", store.Has, "red"))), "e"},
		{store.Or(store.None, c("n", store.Eq, int64(1))), "a"},
		// A part that decides a join without reading a record (the owner is never missing):
		// the parts before it leave no SQLite parameter behind. Found by tenant's
		// TestAccessFiltersMatchCEL, seed 3: "datatype mismatch".
		{store.Or(c(store.KeyOwner, store.Eq, "bob"), c(store.KeyOwner, store.IsNull, false)), "abcde"},
		{store.Or(store.And(c("note", store.Eq, "x"), c(store.KeyOwner, store.IsNull, true)), c("note", store.Eq, "y")), "d"},
		{store.Not(store.Or(c("n", store.Lt, int64(2)), c("n", store.Gt, int64(4)))), "bcd"},
	}
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		recs := seedItems(t, s)
		for _, tc := range cases {
			if got := names(t, recs, store.Query{Filter: tc.f}); got != tc.want {
				t.Errorf("%v: got %q, want %q", tc.f, got, tc.want)
			}
			n, err := recs.Count(t.Context(), "items", tc.f)
			if err != nil || n != int64(len(tc.want)) {
				t.Errorf("count %v = %d, %v; want %d", tc.f, n, err, len(tc.want))
			}
			if got := matched(t, recs, tc.f); got != tc.want {
				t.Errorf("Match %v: got %q, want %q", tc.f, got, tc.want)
			}
		}
	})
}

func TestConformanceOrder(t *testing.T) {
	cases := []struct {
		order []store.Order
		want  string
	}{
		{nil, "abcde"},
		// A missing String sorts just before "", ties by uid in the direction of the last key.
		{[]store.Order{{Key: "note"}}, "cbaed"},
		{[]store.Order{{Key: "note", Desc: true}}, "deabc"},
		// Missing values sort first, so last in a descending order.
		{[]store.Order{{Key: "n"}}, "dabce"},
		{[]store.Order{{Key: "n", Desc: true}}, "ecbad"},
		{[]store.Order{{Key: "price", Desc: true}}, "cebad"},
		{[]store.Order{{Key: "ok"}, {Key: "price", Desc: true}}, "cdbea"},
		{[]store.Order{{Key: "ok", Desc: true}}, "eabdc"},
		{[]store.Order{{Key: "at", Desc: true}}, "ebadc"},
		// By code point: ASCII before Ä before Ü.
		{[]store.Order{{Key: "label"}}, "bdeca"},
		{[]store.Order{{Key: store.KeyOwner, Desc: true}, {Key: store.KeyUID, Desc: true}}, "decba"},
		{[]store.Order{{Key: store.KeyCreatedAt, Desc: true}}, "edcba"},
	}
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		recs := seedItems(t, s)
		for _, tc := range cases {
			if got := names(t, recs, store.Query{Order: tc.order}); got != tc.want {
				t.Errorf("order %v: got %q, want %q", tc.order, got, tc.want)
			}
		}
		// Offset pages.
		q := store.Query{Order: []store.Order{{Key: "n", Desc: true}}, Offset: 1, Limit: 2}
		if got := names(t, recs, q); got != "cb" {
			t.Errorf("offset 1 limit 2: got %q, want cb", got)
		}
		q.Offset = 4
		if got := names(t, recs, q); got != "d" {
			t.Errorf("offset 4 limit 2: got %q, want d", got)
		}
	})
}

// TestConformanceKeyset pages through orders with ties and missing values, each key asc and
// desc: the pages, one after the other, are the whole answer.
func TestConformanceKeyset(t *testing.T) {
	orders := [][]store.Order{
		nil,
		{{Key: "note"}, {Key: "ok", Desc: true}, {Key: "price"}},
		{{Key: "note", Desc: true}, {Key: "ok"}, {Key: "price", Desc: true}},
		{{Key: "ok"}, {Key: "n", Desc: true}},
		{{Key: "price", Desc: true}},
		{{Key: "n"}},
		{{Key: "note"}},
		{{Key: "label", Desc: true}},
		{{Key: "at"}, {Key: "note", Desc: true}},
		{{Key: store.KeyCreatedAt, Desc: true}},
		{{Key: store.KeyOwner}, {Key: "label", Desc: true}},
	}
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		recs := seedItems(t, s)
		table := items
		for _, order := range orders {
			for _, filter := range []store.Filter{store.All, store.Compare("name", store.Ne, "c")} {
				want := names(t, recs, store.Query{Filter: filter, Order: order})
				for size := int64(1); size <= 3; size++ {
					got := pages(t, recs, table, store.Query{Filter: filter, Order: order, Limit: size})
					if got != want {
						t.Errorf("order %v, %v, pages of %d: got %q, want %q", order, filter, size, got, want)
					}
				}
			}
		}
	})
}

// pages reads q's answer a page of q.Limit records at a time, each after the cursor of the
// page before (through its opaque form, as a client sends it), and answers the names read.
func pages(t *testing.T, recs *store.Records, table store.Table, q store.Query) string {
	t.Helper()
	var got strings.Builder
	for page := 0; page < 20; page++ {
		var last store.Record
		n := 0
		err := recs.Each(t.Context(), table.Name, q, func(r store.Record) (bool, error) {
			var it item
			if err := json.Unmarshal(r, &it); err != nil {
				return false, err
			}
			got.WriteString(it.Name)
			last, n = r, n+1
			return true, nil
		})
		if err != nil {
			t.Fatalf("order %v page %d: %v", q.Order, page, err)
		}
		if n == 0 {
			break
		}
		cur, err := table.CursorOf(last, q.Order)
		if err != nil {
			t.Fatal(err)
		}
		if q.After, err = table.ParseCursor(table.Encode(cur, q), q); err != nil {
			t.Fatal(err)
		}
	}
	return got.String()
}

// TestConformanceKeysetAcrossStoredKinds pages through an order on a field whose records
// store values of other kinds than its type (as written under an earlier definition): the
// pages are the whole answer, a record of another kind is not lost after a page boundary.
// Times under the field (j and k) are only held to this: no page shows a record twice. A
// record shows a time as text, so a cursor on it holds text, and the mongo backend does not
// know where the record sorts (see keysetAcrossKinds).
func TestConformanceKeysetAcrossStoredKinds(t *testing.T) {
	mixed := store.Table{Name: "mixed", Fields: []store.Field{
		{Name: "name", Type: store.FieldType{Scalar: store.String}},
		{Name: "v", Type: store.FieldType{Scalar: store.Int}},
	}, Indexes: []store.Index{{Fields: []string{"v"}}}}
	values := []any{int64(3), "text", true, 2.5, nil, "42", false, int64(-1), "", day(2), day(1)}
	noTimes := store.Compare("name", store.Nin, []any{"j", "k"})
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		recs, err := s.ProjectRecords(ctx, "kinds", "", []store.Table{mixed})
		if err != nil {
			t.Fatal(err)
		}
		if err := recs.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		for i, v := range values {
			if err := recs.Insert(ctx, "mixed", "", []map[string]any{{"name": string(rune('a' + i)), "v": v}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, desc := range []bool{false, true} {
			order := []store.Order{{Key: "v", Desc: desc}}
			var all []item
			if err := recs.Find(ctx, "mixed", store.Query{Filter: noTimes, Order: order}, &all); err != nil {
				t.Fatal(err)
			}
			var want strings.Builder
			for _, it := range all {
				want.WriteString(it.Name)
			}
			for size := int64(1); size <= 3; size++ {
				if got := pages(t, recs, mixed, store.Query{Filter: noTimes, Order: order, Limit: size}); got != want.String() || len(got) != len(values)-2 {
					t.Errorf("v desc=%v, pages of %d: got %q, want %q", desc, size, got, want.String())
				}
				got := pages(t, recs, mixed, store.Query{Order: order, Limit: size})
				for _, r := range got {
					if strings.Count(got, string(r)) > 1 {
						t.Errorf("v desc=%v, pages of %d with times: %q shows %c twice", desc, size, got, r)
						break
					}
				}
			}
		}
	})
}

func TestConformanceWrites(t *testing.T) {
	skus := store.Table{
		Name: "skus",
		Fields: []store.Field{
			{Name: "sku", Type: store.FieldType{Scalar: store.String}},
			{Name: "size", Type: store.FieldType{Scalar: store.Int}},
		},
		Indexes: []store.Index{{Fields: []string{"sku"}, Unique: true}},
	}
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		recs := seedItems(t, s, skus)
		insert := func(fields ...map[string]any) error {
			return recs.Insert(ctx, "skus", "alice", fields, nil)
		}
		if err := insert(map[string]any{"sku": "a1", "size": int64(1)}, map[string]any{"sku": "b2"}); err != nil {
			t.Fatal(err)
		}
		// A unique index refuses a duplicate with the fields and value; a batch with one is
		// written not at all.
		err := insert(map[string]any{"sku": "c3"}, map[string]any{"sku": "a1"})
		var ce *store.ConflictError
		if !errors.As(err, &ce) || !slices.Equal(ce.Fields, []string{"sku"}) || ce.Table != "skus" {
			t.Fatalf("duplicate sku: %v, want a ConflictError on [sku]", err)
		}
		if n, err := recs.Count(ctx, "skus", store.All); n != 2 || err != nil {
			t.Fatalf("after a refused batch: %d records, %v; want 2", n, err)
		}
		var b item
		var all []struct {
			UID string `json:"uid"`
			Sku string `json:"sku"`
		}
		if err := recs.Find(ctx, "skus", store.Query{}, &all); err != nil || len(all) != 2 {
			t.Fatal(all, err)
		}
		err = recs.Update(ctx, "skus", all[1].UID, store.All, map[string]any{"sku": "a1"}, nil, &b)
		if !errors.As(err, &ce) || !slices.Equal(ce.Fields, []string{"sku"}) {
			t.Fatalf("update to a duplicate sku: %v, want a ConflictError on [sku]", err)
		}

		// Update sets and removes fields, bumps updatedAt, and answers the record.
		var before item
		if err := recs.Get(ctx, "items", firstUID(t, recs, "a"), store.All, &before); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
		var after item
		err = recs.Update(ctx, "items", before.UID, store.All, map[string]any{"note": "z", "n": int64(7)}, []string{"price", "tags"}, &after)
		if err != nil {
			t.Fatal(err)
		}
		if *after.Note != "z" || *after.N != 7 || after.Price != nil || after.Tags != nil || after.Name != "a" ||
			after.CreatedAt != before.CreatedAt || after.UpdatedAt <= before.UpdatedAt || after.Owner != "alice" || after.Meta["k"] != "v" {
			t.Fatalf("after update: %+v (before %+v)", after, before)
		}
		if got := names(t, recs, store.Query{Filter: store.Compare("price", store.IsNull, true)}); got != "ad" {
			t.Fatalf("after removing a's price, missing prices: %q, want ad", got)
		}
		// An update or delete whose filter does not match the record finds nothing.
		bob := store.Compare(store.KeyOwner, store.Eq, "bob")
		if err := recs.Update(ctx, "items", before.UID, bob, map[string]any{"note": "w"}, nil, nil); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("update through a filter that excludes it: %v, want ErrNotFound", err)
		}
		if err := recs.Delete(ctx, "items", before.UID, bob); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete through a filter that excludes it: %v, want ErrNotFound", err)
		}
		if err := recs.Delete(ctx, "items", before.UID, store.All); err != nil {
			t.Fatal(err)
		}
		if err := recs.Delete(ctx, "items", before.UID, store.All); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("second delete: %v, want ErrNotFound", err)
		}
		if ok, err := recs.Exists(ctx, "items", before.UID); ok || err != nil {
			t.Fatalf("deleted record exists: %v, %v", ok, err)
		}
		if err := recs.Get(ctx, "items", before.UID, store.All, &after); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("get deleted: %v", err)
		}
	})
}

func firstUID(t *testing.T, recs *store.Records, name string) string {
	t.Helper()
	var got []item
	if err := recs.Find(t.Context(), "items", store.Query{Filter: store.Compare("name", store.Eq, name)}, &got); err != nil || len(got) != 1 {
		t.Fatalf("find %s: %v, %v", name, got, err)
	}
	return got[0].UID
}

func TestConformanceIndexes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		recs := seedItems(t, s)
		// A unique index that the records break is refused with a duplicate value, and the
		// table keeps accepting the records it accepted.
		unique := items
		unique.Indexes = append(slices.Clone(items.Indexes), store.Index{Fields: []string{"note"}, Unique: true})
		r2, err := s.ProjectRecords(ctx, "conf", "", []store.Table{unique})
		if err != nil {
			t.Fatal(err)
		}
		err = r2.Ensure(ctx)
		var ie *store.IndexError
		if !errors.As(err, &ie) || !slices.Equal(ie.Value, []any{"x"}) || !ie.Index.Unique {
			t.Fatalf("unique index on duplicate notes: %v, want an IndexError with value x", err)
		}
		if err := recs.Insert(ctx, "items", "alice", []map[string]any{{"name": "f", "note": "x"}}, nil); err != nil {
			t.Fatalf("insert after a refused index: %v", err)
		}
		// Once the duplicates are gone it builds, and enforces; ensuring again changes
		// nothing, and an index no longer declared goes.
		if err := recs.Delete(ctx, "items", firstUID(t, recs, "a"), store.All); err != nil {
			t.Fatal(err)
		}
		if err := recs.Delete(ctx, "items", firstUID(t, recs, "e"), store.All); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := r2.Ensure(ctx); err != nil {
				t.Fatal(err)
			}
		}
		var ce *store.ConflictError
		if err := r2.Insert(ctx, "items", "alice", []map[string]any{{"name": "g", "note": "x"}}, nil); !errors.As(err, &ce) || !slices.Equal(ce.Fields, []string{"note"}) {
			t.Fatalf("insert of a duplicate note: %v, want a ConflictError on [note]", err)
		}
		if err := recs.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		if err := recs.Insert(ctx, "items", "alice", []map[string]any{{"name": "g", "note": "x"}}, nil); err != nil {
			t.Fatalf("insert after the unique index went: %v", err)
		}
		if got := names(t, recs, store.Query{Filter: store.Compare("note", store.Eq, "x"), Order: []store.Order{{Key: "name"}}}); got != "fg" {
			t.Fatalf("notes x: %q, want fg", got)
		}
	})
}

func TestConformanceMaxBytes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		recs := seedItems(t, s)
		var all []store.Record
		if err := recs.Each(ctx, "items", store.Query{}, func(r store.Record) (bool, error) {
			all = append(all, r)
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		size := int64(len(all[0]) + len(all[1]) + len(all[2]))
		var got []item
		err := recs.Find(ctx, "items", store.Query{MaxBytes: size}, &got)
		var tl *store.TooLargeError
		if !errors.As(err, &tl) || tl.Records != 3 || tl.MaxBytes != size {
			t.Fatalf("find beyond %d bytes: %v, want a TooLargeError after 3 records", size, err)
		}
		got = nil
		if err := recs.Find(ctx, "items", store.Query{MaxBytes: size, Limit: 3}, &got); err != nil || len(got) != 3 {
			t.Fatalf("find of 3 within %d bytes: %d, %v", size, len(got), err)
		}
	})
}

func TestConformanceImportAndDrop(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		recs := seedItems(t, s)
		var exported []store.Record
		if err := recs.Each(ctx, "items", store.Query{}, func(r store.Record) (bool, error) {
			exported = append(exported, r)
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		other, err := s.ProjectRecords(ctx, "other", "", []store.Table{items})
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		if err := other.Import(ctx, "items", exported); err != nil {
			t.Fatal(err)
		}
		var want, got []map[string]any
		if err := recs.Find(ctx, "items", store.Query{}, &want); err != nil {
			t.Fatal(err)
		}
		if err := other.Find(ctx, "items", store.Query{}, &got); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("imported records differ:\n got %v\nwant %v", got, want)
		}
		// Importing a uid again is a conflict, and writes nothing of the batch.
		err = other.Import(ctx, "items", exported[:1])
		var ce *store.ConflictError
		if !errors.As(err, &ce) || !slices.Equal(ce.Fields, []string{store.KeyUID}) {
			t.Fatalf("import of an existing uid: %v, want a ConflictError on [uid]", err)
		}

		tables, err := other.StoredTables(ctx)
		if err != nil || !slices.Equal(tables, []string{"items"}) {
			t.Fatalf("stored tables: %v, %v", tables, err)
		}
		if err := other.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		if tables, err := other.StoredTables(ctx); err != nil || len(tables) != 0 {
			t.Fatalf("stored tables after drop: %v, %v", tables, err)
		}
		// The other project is untouched.
		if n, err := recs.Count(ctx, "items", store.All); n != 5 || err != nil {
			t.Fatalf("other project after drop: %d records, %v", n, err)
		}
	})
}

func TestConformanceProjects(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		p := s.Projects()
		prev, cur, err := p.Put(ctx, "b", `{"id":"b"}`, store.Applied{})
		if err != nil || prev != nil || cur.Version != 1 {
			t.Fatalf("first put: %+v %+v %v", prev, cur, err)
		}
		time.Sleep(2 * time.Millisecond)
		// An unchanged document changes nothing.
		prev, cur2, err := p.Put(ctx, "b", `{"id":"b"}`, store.Applied{})
		if err != nil || prev == nil || cur2.Version != 1 || !cur2.UpdatedAt.Equal(cur.UpdatedAt) {
			t.Fatalf("unchanged put: %+v %+v %v", prev, cur2, err)
		}
		prev, cur2, err = p.Put(ctx, "b", `{"id":"b","tables":{}}`, store.Applied{})
		if err != nil || prev.Version != 1 || cur2.Version != 2 || !cur2.UpdatedAt.After(cur.UpdatedAt) {
			t.Fatalf("changed put: %+v %+v %v", prev, cur2, err)
		}
		if _, _, err := p.Put(ctx, "a", `{"id":"a"}`, store.Applied{}); err != nil {
			t.Fatal(err)
		}
		list, err := p.List(ctx)
		if err != nil || len(list) != 2 || list[0].ID != "a" || list[1].Document != `{"id":"b","tables":{}}` {
			t.Fatalf("list: %+v, %v", list, err)
		}
		if err := p.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := p.Delete(ctx, "a"); !errors.Is(err, store.ErrDeleted) {
			t.Fatalf("second delete: %v", err)
		}
		if _, err := p.Get(ctx, "a"); !errors.Is(err, store.ErrNotFound) || !errors.Is(err, store.ErrDeleted) {
			t.Fatalf("get deleted: %v", err)
		}
		if err := p.Purge(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Lookup(ctx, "a"); !errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrDeleted) {
			t.Fatalf("get purged: %v", err)
		}
		if err := p.Delete(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete purged: %v", err)
		}
		if err := s.PingDatabase(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestConformanceProjectsWithWebhooks: the projects whose documents declare webhooks (as Put
// was told) are listed without the others, and not once deleted; MarkWebhooks corrects the
// version it names only.
func TestConformanceProjectsWithWebhooks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		p := s.Projects()
		listed := func(want ...string) {
			t.Helper()
			list, err := p.WithWebhooks(ctx)
			var got []string
			for _, sp := range list {
				got = append(got, sp.ID)
			}
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("with webhooks: %v, %v; want %v", got, err, want)
			}
		}
		for _, id := range []string{"c", "b", "a"} {
			if _, _, err := p.Put(ctx, id, `{"id":"`+id+`"}`, store.Applied{Webhooks: id != "b"}); err != nil {
				t.Fatal(err)
			}
		}
		listed("a", "c")
		if _, _, err := p.Put(ctx, "c", `{"id":"c","tables":{}}`, store.Applied{}); err != nil {
			t.Fatal(err)
		}
		listed("a")
		if err := p.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		listed()
		sp, err := p.Restore(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		listed("a")
		if err := p.MarkWebhooks(ctx, "a", sp.Version+1, false); err != nil {
			t.Fatal(err)
		}
		listed("a")
		if err := p.MarkWebhooks(ctx, "a", sp.Version, false); err != nil {
			t.Fatal(err)
		}
		listed()
	})
}

// TestConformanceProjectHistory: every applied version is kept with who applied it and what
// changed; a project deleted without purge keeps its document and history, refuses a new
// document and comes back as it was; a purge forgets it all.
func TestConformanceProjectHistory(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		p := s.Projects()
		docs := []string{`{"id":"h"}`, `{"id":"h","tables":{"a":{}}}`, `{"id":"h","tables":{"b":{}}}`}
		var seen []string // what each Changes call got as the previous document
		for i, doc := range docs {
			by := store.Applied{Who: fmt.Sprintf("client %d", i+1), Changes: func(prev *store.StoredProject) []string {
				if prev == nil {
					seen = append(seen, "")
					return []string{"+ project h"}
				}
				seen = append(seen, prev.Document)
				return []string{fmt.Sprintf("~ from version %d", prev.Version)}
			}}
			if _, _, err := p.Put(ctx, "h", doc, by); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		// An unchanged document is no new version.
		if _, cur, err := p.Put(ctx, "h", docs[2], store.Applied{Who: "again"}); err != nil || cur.Version != 3 {
			t.Fatalf("unchanged put: %+v, %v", cur, err)
		}
		if !slices.Equal(seen, []string{"", docs[0], docs[1]}) {
			t.Fatalf("Changes saw %q", seen)
		}
		vs, err := p.Versions(ctx, "h")
		if err != nil || len(vs) != 3 {
			t.Fatalf("versions: %+v, %v", vs, err)
		}
		for i, v := range vs {
			n := int64(3 - i)
			if v.Version != n || v.Who != fmt.Sprintf("client %d", n) || v.Document != "" || v.AppliedAt.IsZero() {
				t.Errorf("versions[%d] = %+v", i, v)
			}
			if i > 0 && !v.AppliedAt.Before(vs[i-1].AppliedAt) {
				t.Errorf("versions[%d] applied at %v, not before %v", i, v.AppliedAt, vs[i-1].AppliedAt)
			}
		}
		if !slices.Equal(vs[0].Changes, []string{"~ from version 2"}) || !slices.Equal(vs[2].Changes, []string{"+ project h"}) {
			t.Errorf("changes: %q, %q", vs[0].Changes, vs[2].Changes)
		}
		v1, err := p.Version(ctx, "h", 1)
		if err != nil || v1.Document != docs[0] || v1.Who != "client 1" {
			t.Fatalf("version 1: %+v, %v", v1, err)
		}
		if _, err := p.Version(ctx, "h", 4); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("version 4: %v", err)
		}
		if _, err := p.Versions(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("versions of no project: %v", err)
		}

		// Deleted without purge: kept, listed apart, refusing a new document.
		if err := p.Delete(ctx, "h"); err != nil {
			t.Fatal(err)
		}
		if list, err := p.List(ctx); err != nil || len(list) != 0 {
			t.Fatalf("list after delete: %+v, %v", list, err)
		}
		if del, err := p.Deleted(ctx); err != nil || len(del) != 1 || del[0].ID != "h" || del[0].DeletedAt.IsZero() {
			t.Fatalf("deleted: %+v, %v", del, err)
		}
		if _, _, err := p.Put(ctx, "h", `{"id":"h","tables":{"c":{}}}`, store.Applied{}); !errors.Is(err, store.ErrDeleted) {
			t.Fatalf("put over a deleted project: %v, want ErrDeleted", err)
		}
		if _, _, err := p.Put(ctx, "h", docs[2], store.Applied{}); !errors.Is(err, store.ErrDeleted) {
			t.Fatalf("put of the same document over a deleted project: %v, want ErrDeleted", err)
		}
		if vs, err := p.Versions(ctx, "h"); err != nil || len(vs) != 3 {
			t.Fatalf("versions of the deleted project: %d, %v", len(vs), err)
		}
		back, err := p.Restore(ctx, "h")
		if err != nil || back.Version != 3 || back.Document != docs[2] || !back.DeletedAt.IsZero() {
			t.Fatalf("restore: %+v, %v", back, err)
		}
		if _, err := p.Restore(ctx, "h"); !errors.Is(err, store.ErrNotDeleted) {
			t.Fatalf("restore of a serving project: %v", err)
		}
		if _, err := p.Restore(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("restore of no project: %v", err)
		}
		if _, cur, err := p.Put(ctx, "h", docs[0], store.Applied{Who: "rollback"}); err != nil || cur.Version != 4 {
			t.Fatalf("put after restore: %+v, %v", cur, err)
		}

		// Purged: a new project of the id starts a new history.
		if err := p.Purge(ctx, "h"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := p.Put(ctx, "h", docs[1], store.Applied{Who: "new"}); err != nil {
			t.Fatal(err)
		}
		if vs, err := p.Versions(ctx, "h"); err != nil || len(vs) != 1 || vs[0].Version != 1 || vs[0].Who != "new" {
			t.Fatalf("versions after purge and create: %+v, %v", vs, err)
		}
	})
}

// TestConformanceReplace: a Replacement writes beside the table and puts the new records in
// its place in one step; until then, and whenever it fails, the table keeps its records.
func TestConformanceReplace(t *testing.T) {
	codes := store.Table{
		Name:    "codes",
		Fields:  []store.Field{{Name: "code", Type: store.FieldType{Scalar: store.String}}},
		Indexes: []store.Index{{Fields: []string{"code"}, Unique: true}},
	}
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		recs := seedItems(t, s, codes)
		if err := recs.Insert(ctx, "codes", "o", []map[string]any{{"code": "a"}}, nil); err != nil {
			t.Fatal(err)
		}
		var exported []store.Record
		if err := recs.Each(ctx, "items", store.Query{}, func(r store.Record) (bool, error) {
			exported = append(exported, r)
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		names := func() []string {
			t.Helper()
			var got []item
			if err := recs.Find(ctx, "items", store.Query{Order: []store.Order{{Key: "price"}}}, &got); err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, it := range got {
				out = append(out, it.Name)
			}
			return out
		}
		all := names()
		if len(all) != 5 {
			t.Fatalf("seeded: %v", all)
		}
		// An interrupted replacement leaves its staging table; the next one starts afresh.
		if _, err := recs.Replace(ctx, []string{"items"}); err != nil {
			t.Fatal(err)
		}
		rp, err := recs.Replace(ctx, []string{"items", "codes"})
		if err != nil {
			t.Fatal(err)
		}
		if err := rp.Import(ctx, "items", exported[:2]); err != nil {
			t.Fatal(err)
		}
		// A uid written before is a conflict, as in Import.
		var ce *store.ConflictError
		if err := rp.Import(ctx, "items", exported[1:2]); !errors.As(err, &ce) {
			t.Fatalf("a uid twice: %v, want a ConflictError", err)
		}
		if got := names(); !slices.Equal(got, all) {
			t.Fatalf("before commit the table holds %v, want %v", got, all)
		}
		if tables, err := recs.StoredTables(ctx); err != nil || !slices.Equal(tables, []string{"codes", "items"}) {
			t.Fatalf("stored tables while staging: %v, %v", tables, err)
		}
		// Without replace, a table that holds records is not replaced.
		if err := rp.Commit(ctx, false); !errors.Is(err, store.ErrNotEmpty) {
			t.Fatalf("commit over records without replace: %v, want ErrNotEmpty", err)
		}
		if got := names(); !slices.Equal(got, all) {
			t.Fatalf("after a refused commit the table holds %v, want %v", got, all)
		}

		rp, err = recs.Replace(ctx, []string{"items"})
		if err != nil {
			t.Fatal(err)
		}
		if err := rp.Import(ctx, "items", exported[:2]); err != nil {
			t.Fatal(err)
		}
		if err := rp.Abort(ctx); err != nil {
			t.Fatal(err)
		}
		if got := names(); !slices.Equal(got, all) {
			t.Fatalf("after abort the table holds %v, want %v", got, all)
		}

		rp, err = recs.Replace(ctx, []string{"items"})
		if err != nil {
			t.Fatal(err)
		}
		if err := rp.Import(ctx, "items", exported[:2]); err != nil {
			t.Fatal(err)
		}
		if err := rp.Commit(ctx, true); err != nil {
			t.Fatal(err)
		}
		if got := names(); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("after commit the table holds %v, want [a b]", got)
		}
		var got []map[string]any
		if err := recs.Find(ctx, "items", store.Query{}, &got); err != nil {
			t.Fatal(err)
		}
		var want []map[string]any
		for _, r := range exported[:2] {
			var m map[string]any
			if err := json.Unmarshal(r, &m); err != nil {
				t.Fatal(err)
			}
			want = append(want, m)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("replaced records:\n got %v\nwant %v", got, want)
		}
		// The table is a table of the project as before: written, and listed.
		if err := recs.Insert(ctx, "items", "o", []map[string]any{{"name": "f"}}, nil); err != nil {
			t.Fatal(err)
		}
		if tables, err := recs.StoredTables(ctx); err != nil || !slices.Equal(tables, []string{"codes", "items"}) {
			t.Fatalf("stored tables after commit: %v, %v", tables, err)
		}

		// New records that break a unique index replace nothing.
		rp, err = recs.Replace(ctx, []string{"codes"})
		if err != nil {
			t.Fatal(err)
		}
		dup := []store.Record{
			store.Record(`{"uid":"u1","_owner":"o","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z","code":"b"}`),
			store.Record(`{"uid":"u2","_owner":"o","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z","code":"b"}`),
		}
		err = rp.Import(ctx, "codes", dup)
		if err == nil {
			err = rp.Commit(ctx, true)
		} else {
			_ = rp.Abort(ctx)
		}
		var ie *store.IndexError
		if !errors.As(err, &ce) && !errors.As(err, &ie) {
			t.Fatalf("records breaking a unique index: %v, want a ConflictError or an IndexError", err)
		}
		var left []map[string]any
		if err := recs.Find(ctx, "codes", store.Query{}, &left); err != nil || len(left) != 1 || left[0]["code"] != "a" {
			t.Fatalf("codes after a refused replacement: %v, %v", left, err)
		}
	})
}
