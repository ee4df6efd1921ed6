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
	UID   string `json:"uid"`
	Title string `json:"title"`
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
