package console_test

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
	"github.com/platform-dev/platform/tenant/console"
)

// TestBackups backs a project up from the console, lists its backups and restores one in
// place and under a new id, and shows the caller's mistakes.
func TestBackups(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "backups")
	f := startWith(t, console.Config{}, tenant.Options{Backups: tenant.BackupOptions{Target: store.BackupFolder(dir)}})
	ctx := context.Background()
	p := f.apply(t, `{"id":"shop","tables":{"notes":{"fields":{"text":{"type":"String"}}}}}`)
	recs, err := f.stores.ProjectRecords(ctx, "shop", "", p.StoreTables())
	if err != nil {
		t.Fatal(err)
	}
	insert := func(text string) {
		if err := recs.Insert(ctx, "notes", "alice", []map[string]any{{"text": text}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	insert("kept")
	b := f.browser(t)
	b.signIn()

	if page := b.do(http.MethodGet, "/console/projects/shop", nil, false); !strings.Contains(page.body, `href="/console/projects/shop/backups"`) {
		t.Errorf("the project page links no backups: %s", page.body)
	}
	page := b.do(http.MethodGet, "/console/projects/shop/backups", nil, false)
	if page.status != http.StatusOK || !strings.Contains(page.body, "No backups of shop in <code>"+dir+"</code> yet") || !strings.Contains(page.body, "Back up now") {
		t.Fatalf("backups page before any: %d %s", page.status, page.body)
	}
	taken := b.do(http.MethodPost, "/console/projects/shop/backups", url.Values{}, true)
	m := regexp.MustCompile(`backup (shop/\S+\.sqlite) taken`).FindStringSubmatch(taken.body)
	if taken.status != http.StatusOK || m == nil || !strings.Contains(taken.body, "1 backups in") {
		t.Fatalf("back up now: %d %s", taken.status, taken.body)
	}
	at := regexp.MustCompile(`name="at" value="([^"]+)"`).FindStringSubmatch(taken.body)
	if at == nil {
		t.Fatalf("no restore form: %s", taken.body)
	}
	insert("lost")

	restored := b.do(http.MethodPost, "/console/projects/shop/restore", url.Values{"at": {at[1]}, "as": {"shop-copy"}}, true)
	if restored.status != http.StatusOK || !strings.Contains(restored.body, "restored project shop-copy from "+m[1]+": notes 1") {
		t.Fatalf("restore as shop-copy: %d %s", restored.status, restored.body)
	}
	if n, err := recs.Count(ctx, "notes", store.All); n != 2 || err != nil {
		t.Fatalf("shop after a restore into another project: %d records, %v", n, err)
	}
	restored = b.do(http.MethodPost, "/console/projects/shop/restore", url.Values{"at": {at[1]}}, true)
	if restored.status != http.StatusOK || !strings.Contains(restored.body, "restored project shop from "+m[1]+": notes 1") {
		t.Fatalf("restore in place: %d %s", restored.status, restored.body)
	}
	var notes []struct{ Text string }
	if err := recs.Find(ctx, "notes", store.Query{}, &notes); err != nil || len(notes) != 1 || notes[0].Text != "kept" {
		t.Fatalf("shop after the restore: %+v, %v", notes, err)
	}

	for _, c := range []struct {
		name string
		form url.Values
		want string
	}{
		{"into a project that exists", url.Values{"at": {at[1]}, "as": {"shop-copy"}}, "project exists"},
		{"under an id that is not one", url.Values{"at": {at[1]}, "as": {"Shop Copy"}}, "invalid project id"},
		{"from before the first backup", url.Values{"at": {"2000-01-01T00:00:00Z"}}, "no backup taken at or before 2000-01-01T00:00:00Z"},
	} {
		a := b.do(http.MethodPost, "/console/projects/shop/restore", c.form, true)
		if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, c.want) {
			t.Errorf("restore %s: %d, want %q in %s", c.name, a.status, c.want, a.body)
		}
	}
}

// TestBackupsOff: a server that keeps no backups says so.
func TestBackupsOff(t *testing.T) {
	f := start(t, console.Config{})
	b := f.browser(t)
	b.signIn()
	page := b.do(http.MethodGet, "/console/projects/shop/backups", nil, false)
	if !strings.Contains(page.body, "this server keeps no backups") {
		t.Errorf("backups page without a target: %d %s", page.status, page.body)
	}
}
