package main

import (
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocumentLimitsThroughTheBinary: `platform apply` of a billion-laughs document (under 500
// bytes whose anchors expand to 9^9 nodes) exits non-zero naming the limit, and the admin
// API of `platform serve` answers the same document with 400 BAD_REQUEST naming it; a
// document with ordinary anchors and merge keys applies, and a file past the size bound is
// refused by its size.
func TestDocumentLimitsThroughTheBinary(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data, "PLATFORM_DEV_ISSUER=off")
	dir := t.TempDir()
	apply := func(content string) (string, error) {
		file := filepath.Join(dir, "project.yaml")
		writeFile(t, file, content)
		out, err := exec.Command(binary, "apply", "-f", file, "--server", "http://"+s.addr, "--data", data).CombinedOutput()
		return string(out), err
	}
	var laughs strings.Builder
	laughs.WriteString("id: shop\ntables: {}\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&laughs, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 9), ","))
	}
	const limit = "YAML aliases expand to more than 10000 nodes"
	if out, err := apply(laughs.String()); err == nil || !strings.Contains(out, limit) {
		t.Errorf("apply of a billion laughs: %v\n%s", err, out)
	}
	st, body := s.do(http.MethodPut, "localhost", "/admin/v1/projects/shop", s.token, []byte(laughs.String()))
	if st != http.StatusBadRequest || !strings.Contains(string(body), `"code":"BAD_REQUEST"`) || !strings.Contains(string(body), limit) {
		t.Errorf("PUT of a billion laughs: %d %s", st, body)
	}
	if out, err := apply("id: shop\ntables: {}\n# " + strings.Repeat("x", 1<<20) + "\n"); err == nil || !strings.Contains(out, "document is larger than 1048576 bytes") {
		t.Errorf("apply of a file past the size bound: %v\n%.300s", err, out)
	}
	out, err := apply(`id: shop
tables:
  products:
    fields:
      name: &name {type: String, required: true}
    access: &open {read: authenticated, create: authenticated, update: owner, delete: owner}
  orders:
    fields:
      label: {<<: *name, required: false}
    access: *open
`)
	if err != nil || !strings.Contains(out, "project shop created (version 1)") || !strings.Contains(out, "+ table orders") {
		t.Errorf("apply of a document with anchors: %v\n%s", err, out)
	}
}
