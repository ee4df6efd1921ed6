package tenant_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/tenant"
)

// billionLaughs is a project document whose anchors expand to 9^9 nodes, in under 500 bytes.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("id: shop\ntables: {}\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 9), ","))
	}
	return b.String()
}

// TestAdminDocumentLimits: through the admin API, a billion-laughs document, one nested too
// deep (YAML or JSON) and one too large are refused with 400 BAD_REQUEST naming the limit,
// within a few megabytes of allocation; a document with ordinary anchors and merge keys, and
// one exactly at the depth limit, apply.
func TestAdminDocumentLimits(t *testing.T) {
	srv := adminServer(t)
	client := srv.Client()
	client.Timeout = 30 * time.Second // a guard against a hang, not a measure
	put := func(t *testing.T, doc string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/admin/v1/projects/shop", strings.NewReader(doc))
		req.Host = "platform.test"
		req.Header.Set("Authorization", "Bearer secret")
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	// A JSON document whose field default nests to depth levels in all (the document's own
	// levels: the top, tables, shop's table, fields, the field).
	jsonDepth := func(depth int) string {
		n := depth - 5
		return `{"id":"shop","tables":{"t":{"fields":{"j":{"type":"JSON","default":` +
			strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}}}`
	}
	yamlDepth := func(depth int) string {
		n := depth - 5
		return "id: shop\ntables:\n  t:\n    fields:\n      j:\n        type: JSON\n        default: " +
			strings.Repeat("[", n) + strings.Repeat("]", n) + "\n"
	}
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"billion laughs", billionLaughs(), "YAML aliases expand to more than 10000 nodes"},
		{"JSON past the depth limit", jsonDepth(101), "document nests deeper than 100 levels"},
		{"YAML past the depth limit", yamlDepth(101), "document nests deeper than 100 levels"},
		{"YAML aliases past the expanded size", "id: shop\ntables: {}\nx: &x " + strings.Repeat("y", 400_000) + "\nz: [*x, *x]\n", "YAML aliases expand the document past 1048576 bytes"},
		{"too large", "id: shop\ntables: {}\n#" + strings.Repeat("y", 1<<20), "document is larger than 1048576 bytes"},
		{"an alias of its own anchor", "id: shop\ntables: &t {t: *t}\n", "YAML alias refers to an anchor that contains it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			st, body := put(t, tc.doc)
			runtime.ReadMemStats(&after)
			if st != http.StatusBadRequest || !strings.Contains(body, `"code":"BAD_REQUEST"`) || !strings.Contains(body, tc.want) {
				t.Fatalf("status %d, want 400 BAD_REQUEST naming %q: %s", st, tc.want, body)
			}
			var eb tenant.ErrorBody
			if err := json.Unmarshal([]byte(body), &eb); err != nil || len(eb.Errors) != 1 {
				t.Fatalf("not the GraphQL error shape: %s", body)
			}
			t.Logf("the refusal allocated %d KB", (after.TotalAlloc-before.TotalAlloc)>>10)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("the refusal allocated %d MB", grew>>20)
			}
		})
	}

	for _, tc := range []struct{ name, doc string }{
		{"JSON at the depth limit", jsonDepth(100)},
		{"YAML at the depth limit", yamlDepth(100)},
		{"anchors and merge keys", `
id: shop
tables:
  products:
    fields:
      name: &name {type: String, required: true}
      price: {type: Float, required: true}
    access: &owner {read: authenticated, create: authenticated, update: owner, delete: owner}
  orders:
    fields:
      product: *name
      label:
        <<: *name
        required: false
    access:
      <<: *owner
      read: owner
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := put(t, tc.doc)
			if st != http.StatusOK && st != http.StatusCreated {
				t.Fatalf("status %d: %s", st, body)
			}
			if tc.name == "anchors and merge keys" && !strings.Contains(body, `"orders":{"fields":{"label":{"type":"String"},"product":{"type":"String","required":true}},"access":{"read":"owner","create":"authenticated","update":"owner","delete":"owner"}}`) {
				t.Errorf("the aliases and merge keys did not expand as written: %s", body)
			}
		})
	}
}
