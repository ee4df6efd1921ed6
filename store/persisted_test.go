package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
)

// TestConformanceDocuments: a project's registered documents are kept beside it, replaced
// whole, removed by "" and by purge, on both backends.
func TestConformanceDocuments(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		p := s.Projects()
		if _, _, err := p.Put(ctx, "d", `{"id":"d"}`, store.Applied{}); err != nil {
			t.Fatal(err)
		}
		check := func(id, want string) {
			t.Helper()
			if got, err := p.Documents(ctx, id); err != nil || got != want {
				t.Fatalf("documents of %s: %q, %v; want %q", id, got, err, want)
			}
		}
		check("d", "")
		for _, m := range []string{`{"documents":{"a":"{ x }"}}`, `{"registeredOnly":true,"documents":{}}`} {
			if err := p.SetDocuments(ctx, "d", m); err != nil {
				t.Fatal(err)
			}
			check("d", m)
		}
		if err := p.SetDocuments(ctx, "other", `{"documents":{}}`); err != nil {
			t.Fatal(err)
		}
		if err := p.SetDocuments(ctx, "d", ""); err != nil {
			t.Fatal(err)
		}
		check("d", "")
		if err := p.SetDocuments(ctx, "d", `{"documents":{}}`); err != nil {
			t.Fatal(err)
		}
		if err := p.Purge(ctx, "d"); err != nil {
			t.Fatal(err)
		}
		check("d", "")
		check("other", `{"documents":{}}`)
	})
}

// TestPersistedQueries: a remembered document is found by its hash, per project, and past
// the bound the oldest are forgotten.
func TestPersistedQueries(t *testing.T) {
	s, err := store.Open(t.Context(), store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	ctx := t.Context()
	c := s.PersistedQueries(time.Minute, 2)
	a, b := c.Project("a"), c.Project("b")
	for i := range 3 {
		if err := a.Remember(ctx, fmt.Sprint("h", i), fmt.Sprint("doc ", i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // distinct expiries, so that the order is the sending's
	}
	for hash, want := range map[string]string{"h0": "", "h1": "doc 1", "h2": "doc 2"} {
		got, ok, err := a.Document(ctx, hash)
		if err != nil || got != want || ok != (want != "") {
			t.Errorf("%s: %q %v %v, want %q", hash, got, ok, err, want)
		}
	}
	if _, ok, err := b.Document(ctx, "h1"); ok || err != nil {
		t.Errorf("another project's hash: %v %v, want none", ok, err)
	}
}
