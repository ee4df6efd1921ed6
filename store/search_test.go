package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/platform-dev/platform/store"
)

var searchNotes = store.Table{
	Name: "notes",
	Fields: []store.Field{
		{Name: "body", Type: store.FieldType{Scalar: store.String}},
		{Name: "n", Type: store.FieldType{Scalar: store.Int}},
		{Name: "title", Type: store.FieldType{Scalar: store.String}},
	},
	Search: &store.Search{Fields: []store.SearchField{{Name: "title", Weight: 4}, {Name: "body", Weight: 1}}},
}

type note struct {
	UID        string            `json:"uid"`
	Title      string            `json:"title"`
	Rank       float64           `json:"_rank"`
	Highlights map[string]string `json:"_highlights"`
}

func titles(t *testing.T, recs *store.Records, q store.Query) string {
	t.Helper()
	var got []note
	if err := recs.Find(t.Context(), "notes", q, &got); err != nil {
		t.Fatalf("find %v: %v", q.Filter, err)
	}
	var out []string
	for _, n := range got {
		out = append(out, n.Title)
	}
	return strings.Join(out, ",")
}

func matches(t *testing.T, text string) store.Filter {
	t.Helper()
	f, err := store.Matches(text, false)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSearchIndexBuildsInPages declares a search on a table whose records span several
// pages of the build, and on the mongo backend finds the search refused.
func TestSearchIndexBuildsInPages(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		plain := searchNotes
		plain.Search = nil
		recs, err := s.ProjectRecords(ctx, "p", "", []store.Table{plain})
		if err != nil {
			t.Fatal(err)
		}
		if err := recs.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		var batch []map[string]any
		for i := range 4500 {
			title := fmt.Sprintf("note %d", i)
			if i%1000 == 7 {
				title = fmt.Sprintf("zebra %d", i)
			}
			batch = append(batch, map[string]any{"title": title, "n": int64(i)})
		}
		if err := recs.Insert(ctx, "notes", "alice", batch, nil); err != nil {
			t.Fatal(err)
		}
		if recs, err = s.ProjectRecords(ctx, "p", "", []store.Table{searchNotes}); err != nil {
			t.Fatal(err)
		}
		if err := recs.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		var got []note
		err = recs.Find(ctx, "notes", store.Query{Filter: matches(t, "zebras"), Order: []store.Order{{Key: store.KeyRank}}}, &got)
		if s.Backend == "mongo" {
			if !errors.Is(err, store.ErrSearchUnsupported) {
				t.Fatalf("search on mongo: %v, want ErrSearchUnsupported", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 5 {
			t.Fatalf("found %d zebras, want 5", len(got))
		}
		n, err := recs.Count(ctx, "notes", store.And(matches(t, "zebra"), store.Compare("n", store.Gt, int64(2000))))
		if err != nil || n != 3 {
			t.Fatalf("count = %d, %v; want 3", n, err)
		}
	})
}

func TestSearchSQLite(t *testing.T) {
	ctx := t.Context()
	s, err := store.Open(ctx, store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	recs, err := s.ProjectRecords(ctx, "p", "", []store.Table{searchNotes})
	if err != nil {
		t.Fatal(err)
	}
	if err := recs.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range []map[string]any{
		{"title": "Red wine", "body": "A red wine from Bordeaux <b>", "n": int64(1)},
		{"title": "White wine", "body": "not red at all", "n": int64(2)},
		{"title": "Beer", "body": "red ale", "n": int64(3)},
		{"title": "Water", "body": "clear", "n": int64(4)},
	} {
		if err := recs.Insert(ctx, "notes", "alice", []map[string]any{r}, nil); err != nil {
			t.Fatal(err)
		}
	}
	ranked := []store.Order{{Key: store.KeyRank}}
	if got := titles(t, recs, store.Query{Filter: matches(t, "red"), Order: ranked}); got != "Red wine,Beer,White wine" {
		t.Errorf("red = %s", got)
	}
	hl, err := store.Matches(`"red wine"`, true)
	if err != nil {
		t.Fatal(err)
	}
	var got []note
	if err := recs.Find(ctx, "notes", store.Query{Filter: hl, Order: ranked}, &got); err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", got)
	// pages
	var all []string
	q := store.Query{Filter: matches(t, "red"), Order: ranked, Limit: 1}
	tbl := searchNotes
	for range 5 {
		var page []note
		var raw []store.Record
		if err := recs.Each(ctx, "notes", q, func(r store.Record) (bool, error) { raw = append(raw, r); return true, nil }); err != nil {
			t.Fatal(err)
		}
		if len(raw) == 0 {
			break
		}
		if err := recs.Find(ctx, "notes", q, &page); err != nil {
			t.Fatal(err)
		}
		all = append(all, page[0].Title)
		c, err := tbl.CursorOf(raw[0], ranked)
		if err != nil {
			t.Fatal(err)
		}
		q.After = &c
	}
	if strings.Join(all, ",") != "Red wine,Beer,White wine" {
		t.Errorf("pages: %v", all)
	}
	// writes in step
	if _, err := recs.UpdateWhere(ctx, "notes", store.Compare("n", store.Eq, int64(4)), map[string]any{"title": "red water"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := titles(t, recs, store.Query{Filter: matches(t, "water"), Order: ranked}); got != "red water" {
		t.Errorf("water = %s", got)
	}
	if _, err := recs.DeleteWhere(ctx, "notes", store.Compare("n", store.Eq, int64(3))); err != nil {
		t.Fatal(err)
	}
	if got := titles(t, recs, store.Query{Filter: matches(t, "ale")}); got != "" {
		t.Errorf("ale = %s", got)
	}
}

// TestSearchAfterReplaceAndDrop: an import that replaces a table builds its index anew (the
// old records are no longer found, the new ones are), and a table dropped and created again
// starts with an empty index.
func TestSearchAfterReplaceAndDrop(t *testing.T) {
	ctx := t.Context()
	s, err := store.Open(ctx, store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	recs, err := s.ProjectRecords(ctx, "p", "", []store.Table{searchNotes})
	if err != nil {
		t.Fatal(err)
	}
	if err := recs.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recs.Insert(ctx, "notes", "alice", []map[string]any{{"title": "old apple"}}, nil); err != nil {
		t.Fatal(err)
	}
	rp, err := recs.Replace(ctx, []string{"notes"})
	if err != nil {
		t.Fatal(err)
	}
	uid, err := store.NewUID()
	if err != nil {
		t.Fatal(err)
	}
	rec := fmt.Sprintf(`{"uid":%q,"_owner":"bob","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z","title":"new apple"}`, uid)
	if err := rp.Import(ctx, "notes", []store.Record{store.Record(rec)}); err != nil {
		t.Fatal(err)
	}
	if err := rp.Commit(ctx, true); err != nil {
		t.Fatal(err)
	}
	if got := titles(t, recs, store.Query{Filter: matches(t, "apple")}); got != "new apple" {
		t.Errorf("after the replacement: %q", got)
	}
	if err := recs.DropTable(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	if err := recs.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if got := titles(t, recs, store.Query{Filter: matches(t, "apple")}); got != "" {
		t.Errorf("after drop: %q", got)
	}
	if err := recs.Insert(ctx, "notes", "alice", []map[string]any{{"title": "green apple"}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := titles(t, recs, store.Query{Filter: matches(t, "apple")}); got != "green apple" {
		t.Errorf("created again: %q", got)
	}
}
