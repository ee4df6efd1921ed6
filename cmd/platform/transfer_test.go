package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/platform-dev/platform/internal/testbackend"
	"github.com/platform-dev/platform/store"
)

// run runs the platform binary and answers its standard output and error.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	// An offline command on a data folder works on that folder's stores of the test backend.
	if i := slices.Index(args, "--data"); i >= 0 && i+1 < len(args) && !slices.Contains(args, "--mongodb-uri") {
		cmd.Env = append(os.Environ(), backendEnv(t, args[i+1], nil)...)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// shopDoc is a project with every kind of field, a declared index and two tables, trusting
// the development issuer of the server at addr.
func shopDoc(addr string) string {
	return `{"id":"shop","auth":{"jwksURL":"http://` + addr + `/.well-known/jwks.json","issuer":"urn:platform:dev-issuer","audience":"shop"},
"tables":{
 "products":{"fields":{"name":{"type":"String","required":true},"price":{"type":"Float","required":true},
   "author":{"type":"String"},"stock":{"type":"Int"},"sale":{"type":"Boolean"},"since":{"type":"DateTime"},
   "tags":{"type":"[String]"},"extra":{"type":"JSON"}},
  "indexes":[{"fields":["price"]}],
  "access":{"read":"public","create":"authenticated","update":"owner","delete":"owner"}},
 "orders":{"fields":{"total":{"type":"Float"}},
  "access":{"read":"public","create":"authenticated","update":"owner","delete":"owner"}}}}`
}

const shopList = `{ products(orderBy: [{field: price, direction: ASC}]) { uid name price author stock sale since tags extra createdAt updatedAt }
  orders { uid total createdAt updatedAt } }`

// fillShop applies the shop project to s and creates records as two callers.
func fillShop(t *testing.T, s *server) {
	t.Helper()
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, []byte(shopDoc(s.addr))); st != http.StatusCreated {
		t.Fatalf("PUT shop: %d %s", st, body)
	}
	for i, who := range []string{"alice", "bob"} {
		token := mintToken(t, s.DataDir, "shop", who, s.storeArgs...)
		for j, data := range []map[string]any{
			{"name": "Ünïcode ✓ " + who, "price": 10.5 + float64(i), "stock": 3, "sale": true, "since": "2026-11-22T10:04:05.123Z",
				"tags": []string{"a", "b"}, "extra": map[string]any{"k": []any{1, "x", nil}}},
			{"name": "plain " + who, "price": 20 + float64(i)},
		} {
			st, out, err := s.graphql("shop", token, `mutation($d: productInput!) { createProduct(data: $d) { uid } }`, map[string]any{"d": data})
			if err != nil || st != http.StatusOK || out["errors"] != nil {
				t.Fatalf("create product %d as %s: %d %v %v", j, who, st, out, err)
			}
		}
		st, out, err := s.graphql("shop", token, `mutation { createOrder(data: {total: 99.25}) { uid } }`, nil)
		if err != nil || st != http.StatusOK || out["errors"] != nil {
			t.Fatalf("create order as %s: %d %v %v", who, st, out, err)
		}
	}
}

// list answers the shop's records as the API shows them to an anonymous caller.
func list(t *testing.T, s *server) any {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": shopList})
	st, raw := s.do("POST", "shop.localhost", "/api/v1/graphql", "", body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil || st != http.StatusOK || out["errors"] != nil {
		t.Fatalf("list: %d %s %v", st, raw, err)
	}
	return out["data"]
}

// export runs `platform export` of the shop with args naming the store, and answers the
// file's lines decoded.
func export(t *testing.T, args ...string) (header exportHeader, records []exportLine, end exportEnd) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "shop.jsonl")
	_, stderr, err := run(t, append([]string{"export", "--project", "shop", "-o", file}, args...)...)
	if err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan(); n++ {
		var l exportLine
		switch {
		case n == 0:
			if err := json.Unmarshal(sc.Bytes(), &header); err != nil {
				t.Fatalf("header: %v: %s", err, sc.Bytes())
			}
		case json.Unmarshal(sc.Bytes(), &l) != nil:
			t.Fatalf("line %d: %s", n+1, sc.Bytes())
		case l.End != nil:
			end = *l.End
		default:
			records = append(records, l)
		}
	}
	return header, records, end
}

// decoded is a record line as plain JSON values, so that records written by two backends
// compare by value (1.0 and 1 are one number).
func decoded(t *testing.T, lines []exportLine) []any {
	t.Helper()
	var out []any
	for _, l := range lines {
		var v any
		if err := json.Unmarshal(l.Record, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, map[string]any{"table": l.Table, "record": v})
	}
	return out
}

// TestExportImport moves a project from the embedded store to another data folder and to the
// mongo backend (an embedded FerretDB) and back: every record comes back with its uid, owner,
// times and values, and the API answers the same.
func TestExportImport(t *testing.T) {
	a := startServer(t, t.TempDir())
	fillShop(t, a)
	want := list(t, a)

	// Exported while the server runs.
	header, records, end := export(t, "--data", a.DataDir)
	if header.Format != exportFormat || header.Project != "shop" || !reflect.DeepEqual(header.Tables, []string{"orders", "products"}) {
		t.Errorf("header: %+v", header)
	}
	if !reflect.DeepEqual(end.Records, map[string]int64{"orders": 2, "products": 4}) || len(records) != 6 {
		t.Errorf("end line %v with %d records", end.Records, len(records))
	}
	owners := map[string]int{}
	for _, l := range records {
		var r struct {
			UID   string `json:"uid"`
			Owner string `json:"_owner"`
		}
		if err := json.Unmarshal(l.Record, &r); err != nil || r.UID == "" {
			t.Fatalf("record %s: %v", l.Record, err)
		}
		owners[r.Owner]++
	}
	if !reflect.DeepEqual(owners, map[string]int{"alice": 3, "bob": 3}) {
		t.Errorf("owners in the export: %v", owners)
	}
	file := filepath.Join(t.TempDir(), "shop.jsonl")
	_, stderr, err := run(t, "export", "--project", "shop", "--data", a.DataDir, "-o", file)
	if err != nil || !strings.Contains(stderr, "exported project shop: 6 records") || !strings.Contains(stderr, "(orders 2, products 4)") {
		t.Fatalf("export: %v\n%s", err, stderr)
	}

	// -o names a file that is not a regular one (a pipe, /dev/null, a terminal): the export
	// is written into it, not put in its place. (Before, the rename replaced /dev/null.)
	t.Run("into a pipe", func(t *testing.T) {
		pipe := filepath.Join(t.TempDir(), "pipe")
		if err := syscall.Mkfifo(pipe, 0o600); err != nil {
			t.Fatal(err)
		}
		read := make(chan []byte, 1)
		go func() {
			b, _ := os.ReadFile(pipe)
			read <- b
		}()
		if _, stderr, err := run(t, "export", "--project", "shop", "--data", a.DataDir, "-o", pipe); err != nil {
			t.Fatalf("export into a pipe: %v\n%s", err, stderr)
		}
		if fi, err := os.Lstat(pipe); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("the pipe was replaced: %v %v", fi.Mode(), err)
		}
		if got, want := len(bytes.Split(bytes.TrimSpace(<-read), []byte("\n"))), 8; got != want {
			t.Errorf("the pipe carried %d lines, want %d (header, 6 records, end)", got, want)
		}
	})

	t.Run("into another data folder", func(t *testing.T) {
		data := t.TempDir()
		_, stderr, err := run(t, "import", "-f", file, "--data", data)
		if err != nil || !strings.Contains(stderr, "imported project shop: 6 records") {
			t.Fatalf("import: %v\n%s", err, stderr)
		}
		_, stderr, err = run(t, "import", "-f", file, "--data", data)
		if err == nil || !strings.Contains(stderr, "already holds") || !strings.Contains(stderr, "--replace") {
			t.Errorf("a second import into the same tables: %v\n%s", err, stderr)
		}
		if _, stderr, err := run(t, "import", "--replace", "-f", file, "--data", data); err != nil {
			t.Fatalf("import --replace: %v\n%s", err, stderr)
		}
		_, again, _ := export(t, "--data", data)
		if !reflect.DeepEqual(decoded(t, again), decoded(t, records)) {
			t.Errorf("records after the round trip differ:\n%v\nwant\n%v", decoded(t, again), decoded(t, records))
		}
		b := startServer(t, data)
		if got := list(t, b); !reflect.DeepEqual(got, want) {
			t.Errorf("the API answers after import\n%v\nwant\n%v", got, want)
		}
	})

	t.Run("into MongoDB and back", func(t *testing.T) {
		ctx := context.Background()
		uri, stop, err := store.StartFerretDB(ctx, t.TempDir(), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stop(context.Background()) })
		if _, stderr, err := run(t, "import", "-f", file, "--mongodb-uri", uri); err != nil {
			t.Fatalf("import into mongo: %v\n%s", err, stderr)
		}
		_, fromMongo, _ := export(t, "--mongodb-uri", uri)
		if !reflect.DeepEqual(decoded(t, fromMongo), decoded(t, records)) {
			t.Errorf("records exported from mongo differ:\n%v\nwant\n%v", decoded(t, fromMongo), decoded(t, records))
		}
	})

	t.Run("a cut export is refused and stores no project", func(t *testing.T) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(bytes.TrimSpace(raw), []byte("\n"))
		cut := filepath.Join(t.TempDir(), "cut.jsonl")
		writeFile(t, cut, string(bytes.Join(lines[:len(lines)-1], nil)))
		data := t.TempDir()
		_, stderr, err := run(t, "import", "-f", cut, "--data", data)
		if err == nil || !strings.Contains(stderr, "incomplete") {
			t.Fatalf("import of a cut export: %v\n%s", err, stderr)
		}
		if _, stderr, err := run(t, "export", "--project", "shop", "--data", data); err == nil || !strings.Contains(stderr, "not found") {
			t.Errorf("the project of a cut export was stored: %v\n%s", err, stderr)
		}
	})
}

func TestExportUnknownProject(t *testing.T) {
	_, stderr, err := run(t, "export", "--project", "nope", "--data", t.TempDir())
	if err == nil || !strings.Contains(stderr, `"nope"`) || !strings.Contains(stderr, "not found") {
		t.Fatalf("export of an unknown project: %v\n%s", err, stderr)
	}
}

// copyTree copies the folder from into to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestConvertsFerretDBDataFolder starts on a data folder written by the previous embedded
// store (testdata/ferretdb-data, see its README): every project and record is served as
// before, the old files are kept as a backup, and the next start converts nothing. Leftovers
// of an interrupted conversion do not disturb it.
func TestConvertsFerretDBDataFolder(t *testing.T) {
	testbackend.SQLiteOnly(t, "serve converts a FerretDB-era data folder into SQLite files")
	data := t.TempDir()
	copyTree(t, filepath.Join("testdata", "ferretdb-data", "data"), data)
	var want struct {
		Answer any               `json:"answer"`
		Owners map[string]string `json:"owners"`
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "ferretdb-data", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	// What an interrupted conversion leaves: a half-written store in the temporary folder and
	// files already moved into place, but no control database.
	for _, dir := range []string{convertingFolder, "projects"} {
		if err := os.MkdirAll(filepath.Join(data, dir), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(data, convertingFolder, "left-over"), "x")
	writeFile(t, filepath.Join(data, "projects", "half.db"), "not a database")

	s := startServer(t, data)
	if !strings.Contains(s.Log(), "converted the data folder to SQLite") {
		t.Fatalf("no conversion in the log:\n%s", s.Log())
	}
	if got := list(t, s); !reflect.DeepEqual(got, want.Answer) {
		t.Errorf("after the conversion the API answers\n%v\nwant (what the previous version answered)\n%v", got, want.Answer)
	}
	_, records, _ := export(t, "--data", data)
	for _, l := range records {
		var r struct {
			UID   string `json:"uid"`
			Owner string `json:"_owner"`
		}
		if err := json.Unmarshal(l.Record, &r); err != nil || want.Owners[r.UID] != r.Owner {
			t.Errorf("record %s: owner %q, want %q (%v)", r.UID, r.Owner, want.Owners[r.UID], err)
		}
	}
	for _, gone := range []string{ferretDBFolder, convertingFolder, filepath.Join("projects", "half.db")} {
		if _, err := os.Stat(filepath.Join(data, gone)); !os.IsNotExist(err) {
			t.Errorf("%s is still in the data folder (%v)", gone, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(data, ferretDBBackup)); err != nil || !fi.IsDir() {
		t.Errorf("no backup of the old files: %v", err)
	}
	s.Stop()

	again := startServer(t, data)
	if strings.Contains(again.Log(), "convert") {
		t.Errorf("the second start converted again:\n%s", again.Log())
	}
	if got := list(t, again); !reflect.DeepEqual(got, want.Answer) {
		t.Errorf("after a restart the API answers\n%v\nwant\n%v", got, want.Answer)
	}
}
