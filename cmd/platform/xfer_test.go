package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tenant"
)

// TestExportImportOverAdminAPI: a project's admin key exports and imports its project through
// the admin API (`platform export/import --server`) without the server's files; another
// project's key is refused; a cut export changes nothing; the round trip is exact and the
// server serves the imported records at once; every import is in the audit log.
func TestExportImportOverAdminAPI(t *testing.T) {
	s := startServer(t, t.TempDir())
	fillShop(t, s)
	want := list(t, s)
	shopKey := createKey(t, s, "shop-admin", "project:shop:admin")
	shopRead := createKey(t, s, "shop-read", "project:shop:read")
	blogKey := createKey(t, s, "blog-admin", "project:blog:admin")
	remote := func(key string, args ...string) (string, error) {
		t.Helper()
		// No --data: the key is all the command has.
		_, stderr, err := run(t, append(args, "--server", "http://"+s.addr, "--admin-token", key, "--data", t.TempDir())...)
		return stderr, err
	}

	local := filepath.Join(t.TempDir(), "local.jsonl")
	if _, stderr, err := run(t, "export", "--project", "shop", "--data", s.DataDir, "-o", local); err != nil {
		t.Fatalf("export from the data folder: %v\n%s", err, stderr)
	}
	file := filepath.Join(t.TempDir(), "shop.jsonl")
	if stderr, err := remote(shopKey, "export", "--project", "shop", "-o", file); err != nil || !strings.Contains(stderr, "exported project shop: 6 records") {
		t.Fatalf("export --server with the project's admin key: %v\n%s", err, stderr)
	}
	exported := readFile(t, file)
	if !bytes.Equal(exported, readFile(t, local)) {
		t.Fatalf("the admin API's export differs from the data folder's:\n%s\nwant\n%s", exported, readFile(t, local))
	}

	for _, c := range []struct {
		name, key string
		args      []string
		want      string
	}{
		{"another project's key exports", blogKey, []string{"export", "--project", "shop"}, "403 Forbidden"},
		{"a read key exports", shopRead, []string{"export", "--project", "shop"}, "403 Forbidden"},
		{"another project's key imports", blogKey, []string{"import", "--replace", "-f", file}, "403 Forbidden"},
		{"a read key imports", shopRead, []string{"import", "--replace", "-f", file}, "403 Forbidden"},
	} {
		if stderr, err := remote(c.key, c.args...); err == nil || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: %v\n%s", c.name, err, stderr)
		}
	}
	// A project's key sends another project's export to its own project's route.
	status, body := s.do("POST", "localhost", "/admin/v1/projects/blog/import", blogKey, exported)
	if msg, code := errorOf(t, body); status != http.StatusBadRequest || code != "BAD_REQUEST" || !strings.Contains(msg, `the export is of project "shop", not "blog"`) {
		t.Errorf("blog's key imports shop's export into blog: %d %s", status, body)
	}

	lines := bytes.SplitAfter(bytes.TrimSpace(exported), []byte("\n"))
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	writeFile(t, cut, string(bytes.Join(lines[:len(lines)-1], nil)))
	if stderr, err := remote(shopKey, "import", "--replace", "-f", cut); err == nil || !strings.Contains(stderr, "400 Bad Request") || !strings.Contains(stderr, "incomplete") || !strings.Contains(stderr, "nothing was imported") {
		t.Errorf("import --server of a cut export: %v\n%s", err, stderr)
	}
	if got := list(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a cut import the API answers\n%v\nwant\n%v", got, want)
	}
	if stderr, err := remote(shopKey, "import", "-f", file); err == nil || !strings.Contains(stderr, "409 Conflict") || !strings.Contains(stderr, "already holds") {
		t.Errorf("import --server over records without --replace: %v\n%s", err, stderr)
	}

	// A record created since the export goes, and the exported ones are served at once.
	token := mintToken(t, s.DataDir, "shop", "carol")
	if st, out, err := s.graphql("shop", token, `mutation { createOrder(data: {total: 1}) { uid } }`, nil); err != nil || st != http.StatusOK || out["errors"] != nil {
		t.Fatalf("create: %d %v %v", st, out, err)
	}
	if stderr, err := remote(shopKey, "import", "--replace", "-f", file); err != nil || !strings.Contains(stderr, "imported project shop: 6 records") || !strings.Contains(stderr, "(orders 2, products 4)") {
		t.Fatalf("import --server --replace with the project's admin key: %v\n%s", err, stderr)
	}
	if got := list(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("right after the import the API answers\n%v\nwant\n%v", got, want)
	}
	again := filepath.Join(t.TempDir(), "again.jsonl")
	if stderr, err := remote(shopKey, "export", "--project", "shop", "-o", again); err != nil {
		t.Fatalf("export after the import: %v\n%s", err, stderr)
	}
	if got := readFile(t, again); !bytes.Equal(got, exported) {
		t.Errorf("the round trip is not exact:\n%s\nwant\n%s", got, exported)
	}

	status, body = s.do("GET", "localhost", "/admin/v1/audit?project=shop", shopKey, nil)
	if status != http.StatusOK {
		t.Fatalf("audit: %d %s", status, body)
	}
	var imports []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		var l tenant.AuditLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if l.Action == "project.import" {
			imports = append(imports, l.Key+" "+l.Outcome+" "+strings.Join(l.Diff, ";"))
		}
	}
	wantImports := []string{"blog-admin failed 403", "shop-read failed 403", "shop-admin failed 400", "shop-admin failed 409", "shop-admin ok ~ records replaced by an import"}
	if len(imports) != len(wantImports) {
		t.Fatalf("the imports in shop's audit log:\n%s", strings.Join(imports, "\n"))
	}
	for i, w := range wantImports {
		if !strings.HasPrefix(imports[i], w) {
			t.Errorf("import %d in shop's audit log: %s, want %s", i, imports[i], w)
		}
	}

	// Whatever is wrong in the body is the caller's: 400, never INTERNAL, and nothing changes.
	join := func(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
	for _, c := range []struct {
		name string
		body []byte
		want string
	}{
		{"no header", []byte("hello\n"), "not a platform-export/1 header"},
		{"a uid twice", join(join(lines[:2]...), join(lines[1:]...)), "uid"},
		{"a record without createdAt", join(join(lines[:3]...), []byte(`{"table":"products","record":{"uid":"x"}}`+"\n"), join(lines[3:]...)), "createdAt"},
		{"a table the header does not list", join(join(lines[:3]...), []byte(`{"table":"users","record":{"uid":"x","createdAt":"2026-01-01T00:00:00.000Z"}}`+"\n"), join(lines[3:]...)), `table "users"`},
	} {
		status, body := s.do("POST", "localhost", "/admin/v1/projects/shop/import?replace=true", shopKey, c.body)
		if msg, code := errorOf(t, body); status != http.StatusBadRequest || code != "BAD_REQUEST" || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %s", c.name, status, body)
		}
	}
	if got := list(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("after refused imports the API answers\n%v\nwant\n%v", got, want)
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
