package tenant_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tenant"
)

// TestImportBodyBound: an import through the admin API larger than the bound is refused with
// 413 and changes nothing; one within it is imported, and exports again byte for byte.
func TestImportBodyBound(t *testing.T) {
	srv := adminServerOn(t, openStores(t), tenant.Options{MaxImportBytes: 4 << 10})
	call := func(method, path string, body []byte) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
		req.Host = "platform.test"
		req.Header.Set("Authorization", "Bearer secret")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		return res.StatusCode, out
	}
	if st, out := call(http.MethodPut, "/admin/v1/projects/shop", []byte(`{"id":"shop","tables":{"notes":{"fields":{"text":{"type":"String"}}}}}`)); st != http.StatusCreated {
		t.Fatalf("PUT: %d %s", st, out)
	}
	exportOf := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"format":"platform-export/1","project":"shop","version":1,"document":{"id":"shop","tables":{"notes":{"fields":{"text":{"type":"String"}}}}},"tables":["notes"]}` + "\n")
		for i := range n {
			fmt.Fprintf(&b, `{"table":"notes","record":{"uid":"01a21cf1-0000-7000-8000-%012d","_owner":"","createdAt":"2026-11-27T12:00:00.000Z","updatedAt":"2026-11-27T12:00:00.000Z","text":"note %d"}}`+"\n", i, i)
		}
		fmt.Fprintf(&b, `{"end":{"records":{"notes":%d}}}`+"\n", n)
		return []byte(b.String())
	}
	small, large := exportOf(10), exportOf(40)
	if len(small) > 4<<10 || len(large) <= 4<<10 {
		t.Fatalf("exports of %d and %d bytes do not frame the bound", len(small), len(large))
	}
	if st, out := call(http.MethodPost, "/admin/v1/projects/shop/import", small); st != http.StatusOK || string(out) != `{"project":"shop","records":{"notes":10}}`+"\n" {
		t.Fatalf("import within the bound: %d %s", st, out)
	}
	st, out := call(http.MethodPost, "/admin/v1/projects/shop/import?replace=true", large)
	var eb tenant.ErrorBody
	if err := json.Unmarshal(out, &eb); err != nil || st != http.StatusRequestEntityTooLarge || len(eb.Errors) == 0 ||
		!strings.Contains(eb.Errors[0].Message, "larger than 4096 bytes") {
		t.Errorf("import past the bound: %d %s", st, out)
	}
	// The document an import brings is held to the project's tables quota, as an apply is.
	// (Before, a project's key could import a document past it.)
	if st, out := call(http.MethodPut, "/admin/v1/projects/shop/quotas", []byte(`{"tables":1}`)); st != http.StatusOK {
		t.Fatalf("quotas: %d %s", st, out)
	}
	twoTables := bytes.Replace(small, []byte(`"tables":{"notes":{"fields":{"text":{"type":"String"}}}}`), []byte(`"tables":{"notes":{"fields":{"text":{"type":"String"}}},"more":{"fields":{"text":{"type":"String"}}}}`), 1)
	st, out = call(http.MethodPost, "/admin/v1/projects/shop/import?replace=true", twoTables)
	if st != http.StatusBadRequest || !strings.Contains(string(out), `"code":"QUOTA_EXCEEDED"`) || !strings.Contains(string(out), "declares 2 tables") {
		t.Errorf("import past the tables quota: %d %s", st, out)
	}
	if st, out := call(http.MethodGet, "/admin/v1/projects/shop/export", nil); st != http.StatusOK || !bytes.Equal(out, small) {
		t.Errorf("export after a refused import: %d\n%s\nwant\n%s", st, out, small)
	}
}
