package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tenant/console"
)

// TestEditorDocumentLimits: the editor answers a billion-laughs document (under 500 bytes whose
// anchors expand to 9^9 nodes) with the limit it passed, as a problem of the document,
// within a few megabytes of allocation; a document with ordinary anchors and merge keys
// checks as it would apply.
func TestEditorDocumentLimits(t *testing.T) {
	f := start(t, console.Config{})
	b := f.browser(t)
	b.signIn()

	var laughs strings.Builder
	laughs.WriteString("id: shop\ntables: {}\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&laughs, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 9), ","))
	}
	for _, path := range []string{"check", "apply"} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		a := b.do(http.MethodPost, "/console/projects/"+path, url.Values{"document": {laughs.String()}}, true)
		runtime.ReadMemStats(&after)
		if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "YAML aliases expand to more than 10000 nodes") {
			t.Fatalf("%s of a billion laughs: %d %s", path, a.status, a.body)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Errorf("%s of a billion laughs allocated %d MB", path, grew>>20)
		}
	}

	anchors := `id: shop
tables:
  products:
    fields:
      name: &name {type: String, required: true}
    access: &open {read: authenticated, create: authenticated, update: owner, delete: owner}
  orders:
    fields:
      label: {<<: *name, required: false}
    access: *open
`
	a := b.do(http.MethodPost, "/console/projects/check", url.Values{"document": {anchors}}, true)
	if a.status != http.StatusOK || !strings.Contains(a.body, "project shop would be created") || !strings.Contains(a.body, "+ table orders") {
		t.Fatalf("a document with anchors: %d %s", a.status, a.body)
	}
}
