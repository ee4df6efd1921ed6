package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/platform-dev/platform/store"
)

// adminArgs are the flags that point a command at s's admin API.
func adminArgs(s *server) []string {
	return []string{"--server", "http://" + s.addr, "--data", s.DataDir}
}

// errorOf decodes an error answer's message and code.
func errorOf(t *testing.T, body []byte) (msg, code string) {
	t.Helper()
	var eb struct {
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &eb); err != nil || len(eb.Errors) == 0 {
		t.Fatalf("not an error answer: %s (%v)", body, err)
	}
	code, _ = eb.Errors[0].Extensions["code"].(string)
	return eb.Errors[0].Message, code
}

// TestDeletedProjectIsKept: a project deleted without purge stops serving but keeps its
// document, history and records; its id cannot be taken by a new document (which used to
// serve the old records) until it is restored, as it was, or purged.
func TestDeletedProjectIsKept(t *testing.T) {
	s := startServer(t, t.TempDir())
	fillShop(t, s)
	want := list(t, s)
	if st, body := s.do("DELETE", "localhost", "/admin/v1/projects/shop", s.token, nil); st != http.StatusOK {
		t.Fatalf("DELETE: %d %s", st, body)
	}
	body, _ := json.Marshal(map[string]string{"query": shopList})
	if st, out := s.do("POST", "shop.localhost", "/api/v1/graphql", "", body); st != http.StatusNotFound {
		t.Fatalf("the deleted project answers: %d %s", st, out)
	}
	st, out := s.do("GET", "localhost", "/admin/v1/projects/shop", s.token, nil)
	if msg, code := errorOf(t, out); st != http.StatusNotFound || code != "PROJECT_NOT_FOUND" || !strings.Contains(msg, "was deleted") {
		t.Errorf("GET of the deleted project: %d %s", st, out)
	}
	if st, out := s.do("GET", "localhost", "/admin/v1/projects", s.token, nil); st != http.StatusOK || strings.Contains(string(out), `"shop"`) {
		t.Errorf("the deleted project is listed: %d %s", st, out)
	}

	// A new document under the deleted id is refused, naming the ways out.
	st, out = s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, []byte(shopDoc(s.addr)))
	msg, code := errorOf(t, out)
	if st != http.StatusConflict || code != "CONFLICT" || !strings.Contains(msg, "/admin/v1/projects/shop/undelete") || !strings.Contains(msg, "?purge=true") {
		t.Fatalf("PUT over the deleted project: %d %s", st, out)
	}
	st, out = s.do("DELETE", "localhost", "/admin/v1/projects/shop", s.token, nil)
	if _, code := errorOf(t, out); st != http.StatusConflict || code != "CONFLICT" {
		t.Errorf("second DELETE: %d %s", st, out)
	}
	if st, out := s.do("POST", "localhost", "/admin/v1/projects/nope/undelete", s.token, nil); st != http.StatusNotFound {
		t.Errorf("restore of no project: %d %s", st, out)
	}

	stdout, stderr, err := run(t, append([]string{"undelete", "--project", "shop"}, adminArgs(s)...)...)
	if err != nil || stdout != "project shop restored (version 1)\n" {
		t.Fatalf("undelete: %v\n%s%s", err, stdout, stderr)
	}
	if got := list(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("after undelete the API answers\n%v\nwant\n%v", got, want)
	}
	st, out = s.do("POST", "localhost", "/admin/v1/projects/shop/undelete", s.token, nil)
	if _, code := errorOf(t, out); st != http.StatusConflict || code != "CONFLICT" {
		t.Errorf("restore of a serving project: %d %s", st, out)
	}

	// Deleted and purged, then created again: a new project, with no records.
	if st, out := s.do("DELETE", "localhost", "/admin/v1/projects/shop", s.token, nil); st != http.StatusOK {
		t.Fatalf("DELETE: %d %s", st, out)
	}
	if st, out := s.do("DELETE", "localhost", "/admin/v1/projects/shop?purge=true", s.token, nil); st != http.StatusOK {
		t.Fatalf("DELETE ?purge=true of the deleted project: %d %s", st, out)
	}
	if st, out := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, []byte(shopDoc(s.addr))); st != http.StatusCreated {
		t.Fatalf("PUT after purge: %d %s", st, out)
	}
	if got, _ := json.Marshal(list(t, s)); string(got) != `{"orders":[],"products":[]}` {
		t.Errorf("the project created after the purge serves %s", got)
	}
	st, out = s.do("GET", "localhost", "/admin/v1/projects/shop/versions", s.token, nil)
	var h struct {
		Versions []struct {
			Version int64 `json:"version"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(out, &h); err != nil || st != http.StatusOK || len(h.Versions) != 1 {
		t.Errorf("history after the purge: %d %s", st, out)
	}
}

// history is GET /admin/v1/projects/{id}/versions.
type history struct {
	Project  string `json:"project"`
	Deleted  bool   `json:"deleted"`
	Versions []struct {
		Version   int64    `json:"version"`
		AppliedAt string   `json:"appliedAt"`
		Who       string   `json:"who"`
		Changes   []string `json:"changes"`
	} `json:"versions"`
}

func (s *server) history(t *testing.T, id string) history {
	t.Helper()
	st, out := s.do("GET", "localhost", "/admin/v1/projects/"+id+"/versions", s.token, nil)
	var h history
	if err := json.Unmarshal(out, &h); err != nil || st != http.StatusOK {
		t.Fatalf("versions: %d %s (%v)", st, out, err)
	}
	return h
}

// TestHistoryAndRollback: every applied version is listed with who applied it and what
// changed, each can be read back, and a rollback applies one again, through the checks a
// new document passes, as a new version.
func TestHistoryAndRollback(t *testing.T) {
	s := startServer(t, t.TempDir())
	auth := `"auth":{"jwksURL":"http://` + s.addr + `/.well-known/jwks.json","issuer":"urn:platform:dev-issuer","audience":"shop"}`
	access := `"access":{"read":"public","create":"authenticated","update":"owner","delete":"owner"}`
	v1 := `{"id":"shop",` + auth + `,"tables":{"products":{"fields":{"name":{"type":"String","required":true}},"indexes":[{"fields":["name"],"unique":true}],` + access + `}}}`
	v2 := `{"id":"shop",` + auth + `,"tables":{"products":{"fields":{"name":{"type":"String","required":true},"stock":{"type":"Int"}},` + access + `}}}`
	file := filepath.Join(t.TempDir(), "shop.json")
	writeFile(t, file, v1)
	if stdout, stderr, err := run(t, append([]string{"apply", "-f", file}, adminArgs(s)...)...); err != nil {
		t.Fatalf("apply: %v\n%s%s", err, stdout, stderr)
	}
	if st, out := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, []byte(v2)); st != http.StatusOK {
		t.Fatalf("PUT v2: %d %s", st, out)
	}
	h := s.history(t, "shop")
	if len(h.Versions) != 2 || h.Project != "shop" || h.Deleted {
		t.Fatalf("history: %+v", h)
	}
	newest, first := h.Versions[0], h.Versions[1]
	if newest.Version != 2 || newest.Who != "admin API from 127.0.0.1" ||
		!reflect.DeepEqual(newest.Changes, []string{"~ indexes products", "+ field products.stock"}) && !reflect.DeepEqual(newest.Changes, []string{"+ field products.stock", "~ indexes products"}) {
		t.Errorf("version 2: %+v", newest)
	}
	if first.Version != 1 || first.Who != "platform apply from 127.0.0.1" || !reflect.DeepEqual(first.Changes, []string{"+ project shop", "+ table products"}) || first.AppliedAt > newest.AppliedAt {
		t.Errorf("version 1: %+v", first)
	}
	st, out := s.do("GET", "localhost", "/admin/v1/projects/shop/versions/1", s.token, nil)
	var doc struct {
		Version int64          `json:"version"`
		Tables  map[string]any `json:"tables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || st != http.StatusOK || doc.Version != 1 || strings.Contains(string(out), "stock") || !strings.Contains(string(out), `"unique":true`) {
		t.Fatalf("version 1: %d %s", st, out)
	}
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/admin/v1/projects/shop/versions/9", http.StatusNotFound},
		{"GET", "/admin/v1/projects/shop/versions/x", http.StatusBadRequest},
		{"GET", "/admin/v1/projects/nope/versions", http.StatusNotFound},
		{"POST", "/admin/v1/projects/shop/rollback?to=9", http.StatusNotFound},
		{"POST", "/admin/v1/projects/shop/rollback", http.StatusBadRequest},
		{"POST", "/admin/v1/projects/shop/rollback?to=0", http.StatusBadRequest},
	} {
		if st, out := s.do(tc.method, "localhost", tc.path, s.token, nil); st != tc.want {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, st, out, tc.want)
		}
	}

	// Records version 1's unique index refuses: the rollback is refused, and changes nothing.
	token := mintToken(t, s.DataDir, "shop", "alice")
	for range 2 {
		if st, out, err := s.graphql("shop", token, `mutation { createProduct(data: {name: "twin"}) { uid } }`, nil); err != nil || st != http.StatusOK || out["errors"] != nil {
			t.Fatalf("create: %d %v %v", st, out, err)
		}
	}
	stdout, stderr, err := run(t, append([]string{"rollback", "--project", "shop", "--to", "1"}, adminArgs(s)...)...)
	if err == nil || !strings.Contains(stderr, "400") || !strings.Contains(stderr, "cannot be unique") {
		t.Fatalf("rollback over duplicates: %v\n%s%s", err, stdout, stderr)
	}
	if h := s.history(t, "shop"); len(h.Versions) != 2 {
		t.Fatalf("a refused rollback made a version: %+v", h)
	}
	if st, out, err := s.graphql("shop", token, `{ products { uid } }`, nil); err != nil || st != http.StatusOK || out["errors"] != nil {
		t.Fatalf("list: %d %v %v", st, out, err)
	} else {
		for _, p := range out["data"].(map[string]any)["products"].([]any) {
			uid := p.(map[string]any)["uid"].(string)
			if st, out, err := s.graphql("shop", token, `mutation($u: ID!) { deleteProduct(uid: $u) { id } }`, map[string]any{"u": uid}); err != nil || st != http.StatusOK || out["errors"] != nil {
				t.Fatalf("delete: %d %v %v", st, out, err)
			}
		}
	}

	stdout, stderr, err = run(t, append([]string{"rollback", "--project", "shop", "--to", "1"}, adminArgs(s)...)...)
	if err != nil || !strings.HasPrefix(stdout, "project shop rolled back to version 1 (version 3)\n") || !strings.Contains(stdout, "  - field products.stock\n") {
		t.Fatalf("rollback: %v\n%s%s", err, stdout, stderr)
	}
	st, out = s.do("GET", "localhost", "/admin/v1/projects/shop", s.token, nil)
	if st != http.StatusOK || strings.Contains(string(out), "stock") || !strings.Contains(string(out), `"version":3`) {
		t.Errorf("the project after the rollback: %d %s", st, out)
	}
	if st, out, err := s.graphql("shop", token, `{ products { stock } }`, nil); err != nil || st != http.StatusOK || out["errors"] == nil {
		t.Errorf("the rolled back API still has stock: %d %v %v", st, out, err)
	}
	h = s.history(t, "shop")
	if len(h.Versions) != 3 || h.Versions[0].Who != "platform rollback from 127.0.0.1 (rollback to version 1)" {
		t.Errorf("history after the rollback: %+v", h)
	}
	stdout, stderr, err = run(t, append([]string{"versions", "--project", "shop"}, adminArgs(s)...)...)
	if err != nil || !strings.HasPrefix(stdout, "version 3  ") || !strings.Contains(stdout, "platform rollback from 127.0.0.1 (rollback to version 1)\n  - field products.stock\n") ||
		!strings.Contains(stdout, "platform apply from 127.0.0.1\n  + project shop\n  + table products\n") {
		t.Errorf("versions: %v\n%s%s", err, stdout, stderr)
	}
}

// TestImportReplaceKeepsRecordsOnFailure: an import --replace of an export that is cut,
// malformed or miscounted, into the data folder of a running server, fails and leaves every
// record (it used to drop them first: 6 records -> 0); a complete one is served at once.
func TestImportReplaceKeepsRecordsOnFailure(t *testing.T) {
	s := startServer(t, t.TempDir())
	fillShop(t, s)
	want := list(t, s)
	file := filepath.Join(t.TempDir(), "shop.jsonl")
	if _, stderr, err := run(t, "export", "--project", "shop", "--data", s.DataDir, "-o", file); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(bytes.TrimSpace(raw), []byte("\n"))
	if len(lines) != 8 {
		t.Fatalf("export of %d lines", len(lines))
	}
	join := func(ls ...[]byte) string { return string(bytes.Join(ls, nil)) }
	bad := []struct{ name, content, want string }{
		{"cut before the end line", join(lines[:5]...), "incomplete"},
		{"cut inside a line", join(lines[:7]...) + `{"end":{"rec`, "line 8"},
		{"a malformed record", join(lines[:3]...) + `{"table":"products","record":{"uid":"x"}}` + "\n" + join(lines[3:]...), "createdAt"},
		{"a record the end line does not count", join(lines[:7]...) + `{"table":"products","record":{"uid":"x","createdAt":"2026-01-01T00:00:00.000Z","name":"x","price":1}}` + "\n" + join(lines[7]), "counts 4 records but holds 5"},
		{"a uid twice", join(lines[:2]...) + join(lines[1:]...), "uid"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "bad.jsonl")
			writeFile(t, f, tc.content)
			_, stderr, err := run(t, "import", "--replace", "-f", f, "--data", s.DataDir)
			// What the data folder holds (a server that has the file open may still read
			// one that was deleted), and what the server answers.
			if _, kept, _ := export(t, "--data", s.DataDir); len(kept) != 6 {
				t.Fatalf("after a failed import (%v: %s) the data folder holds %d records, want 6", err, stderr, len(kept))
			}
			if got := list(t, s); !reflect.DeepEqual(got, want) {
				t.Fatalf("after a failed import (%v: %s) the API answers\n%v\nwant\n%v", err, stderr, got, want)
			}
			if err == nil || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "nothing was imported") {
				t.Fatalf("import --replace: %v\n%s", err, stderr)
			}
		})
	}

	// A record created since the export goes, and the exported ones are served at once.
	token := mintToken(t, s.DataDir, "shop", "carol")
	if st, out, err := s.graphql("shop", token, `mutation { createOrder(data: {total: 1}) { uid } }`, nil); err != nil || st != http.StatusOK || out["errors"] != nil {
		t.Fatalf("create: %d %v %v", st, out, err)
	}
	if _, stderr, err := run(t, "import", "--replace", "-f", file, "--data", s.DataDir); err != nil || !strings.Contains(stderr, "imported project shop: 6 records") {
		t.Fatalf("import --replace: %v\n%s", err, stderr)
	}
	if got := list(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("right after the import the API answers\n%v\nwant\n%v", got, want)
	}
	// The server writes into the tables the import put in place.
	if st, out, err := s.graphql("shop", token, `mutation { createOrder(data: {total: 2}) { uid total } }`, nil); err != nil || st != http.StatusOK || out["errors"] != nil {
		t.Fatalf("create after the import: %d %v %v", st, out, err)
	}
	if _, stderr, err := run(t, "import", "-f", file, "--data", s.DataDir); err == nil || !strings.Contains(stderr, "already holds") {
		t.Errorf("import without --replace over records: %v\n%s", err, stderr)
	}

	t.Run("mongo", func(t *testing.T) {
		uri, stop, err := store.StartFerretDB(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stop(context.Background()) })
		if _, stderr, err := run(t, "import", "-f", file, "--mongodb-uri", uri); err != nil {
			t.Fatalf("import into mongo: %v\n%s", err, stderr)
		}
		_, before, _ := export(t, "--mongodb-uri", uri)
		cut := filepath.Join(t.TempDir(), "cut.jsonl")
		writeFile(t, cut, join(lines[:5]...))
		if _, stderr, err := run(t, "import", "--replace", "-f", cut, "--mongodb-uri", uri); err == nil || !strings.Contains(stderr, "nothing was imported") {
			t.Fatalf("import --replace of a cut export into mongo: %v\n%s", err, stderr)
		}
		if _, after, _ := export(t, "--mongodb-uri", uri); len(after) != 6 || !reflect.DeepEqual(decoded(t, after), decoded(t, before)) {
			t.Errorf("records in mongo after a failed import: %d, want the 6 before", len(after))
		}
		if _, stderr, err := run(t, "import", "--replace", "-f", file, "--mongodb-uri", uri); err != nil {
			t.Fatalf("import --replace into mongo: %v\n%s", err, stderr)
		}
		if _, after, _ := export(t, "--mongodb-uri", uri); !reflect.DeepEqual(decoded(t, after), decoded(t, before)) {
			t.Errorf("records in mongo after import --replace differ")
		}
	})
}
