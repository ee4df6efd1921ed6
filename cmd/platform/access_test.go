package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/tenant"
)

// createKey runs `platform keys create` against s and returns the key it printed.
func createKey(t *testing.T, s *server, name, scope string, extra ...string) string {
	t.Helper()
	stdout, stderr, err := run(t, append(append([]string{"keys", "create", "--name", name, "--scope", scope}, extra...), adminArgs(s)...)...)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if err != nil || len(lines) != 2 || !strings.HasPrefix(lines[0], "key "+name+" created (scope "+scope) || !strings.HasPrefix(lines[1], "pk_") {
		t.Fatalf("keys create %s: %v\n%s%s", name, err, stdout, stderr)
	}
	return lines[1]
}

// TestOperatorAccess goes through the binary: keys made, listed and revoked with the CLI,
// each scope let through or refused, and every change, made or refused, in the audit log
// as the API and `platform audit` show it.
func TestOperatorAccess(t *testing.T) {
	s := startServer(t, t.TempDir())
	shopAdmin := createKey(t, s, "shop-admin", "project:shop:admin", "--expires", "720h")
	support := createKey(t, s, "support", "operator:read")
	if _, stderr, err := run(t, append([]string{"keys", "create", "--name", "x", "--scope", "project:Shop:admin"}, adminArgs(s)...)...); err == nil || !strings.Contains(stderr, "400 Bad Request: scope \"project:Shop:admin\"") {
		t.Errorf("a key of a bad scope: %v %s", err, stderr)
	}
	if _, stderr, err := run(t, append([]string{"keys", "create", "--name", "support", "--scope", "operator"}, adminArgs(s)...)...); err == nil || !strings.Contains(stderr, "409 Conflict") {
		t.Errorf("a second key named support: %v %s", err, stderr)
	}
	changed := strings.Replace(productsDoc, `"author":{"type":"String"}`, `"author":{"type":"String"},"stock":{"type":"Int"}`, 1)
	steps := []struct {
		method, path, key, body string
		status                  int
	}{
		{"PUT", "/admin/v1/projects/shop", s.token, productsDoc, http.StatusCreated},
		{"PUT", "/admin/v1/projects/blog", shopAdmin, strings.Replace(productsDoc, `"shop"`, `"blog"`, 1), http.StatusForbidden},
		{"PUT", "/admin/v1/projects/shop", shopAdmin, `{"id":"shop","tables":{"products":{"fields":{"name":{"type":"Strin"}}}}}`, http.StatusBadRequest},
		{"PUT", "/admin/v1/projects/shop", shopAdmin, changed, http.StatusOK},
		{"GET", "/admin/v1/projects/shop", support, "", http.StatusOK},
		{"DELETE", "/admin/v1/projects/shop", shopAdmin, "", http.StatusForbidden},
		{"PUT", "/admin/v1/projects/shop", support, productsDoc, http.StatusForbidden},
		{"POST", "/admin/v1/projects/shop/rollback?to=1", shopAdmin, "", http.StatusOK},
		{"DELETE", "/admin/v1/projects/shop", s.token, "", http.StatusOK},
		{"POST", "/admin/v1/projects/shop/undelete", s.token, "", http.StatusOK},
		{"GET", "/admin/v1/audit", shopAdmin, "", http.StatusForbidden},
	}
	for _, st := range steps {
		if got, body := s.do(st.method, "localhost", st.path, st.key, []byte(st.body)); got != st.status {
			t.Fatalf("%s %s: %d %s, want %d", st.method, st.path, got, body, st.status)
		}
	}

	status, body := s.do("GET", "localhost", "/admin/v1/audit?project=shop", shopAdmin, nil)
	if status != http.StatusOK {
		t.Fatalf("audit: %d %s", status, body)
	}
	var got []tenant.AuditLine
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		var l tenant.AuditLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		got = append(got, l)
	}
	want := []struct{ key, scope, action, outcome, diff string }{
		{"bootstrap", "operator", "project.apply", "ok", "+ project shop"},
		{"shop-admin", "project:shop:admin", "project.apply", "failed 400: invalid project document", ""},
		{"shop-admin", "project:shop:admin", "project.apply", "ok", "+ field products.stock"},
		{"shop-admin", "project:shop:admin", "project.delete", "failed 403: the key's scope project:shop:admin does not allow DELETE", ""},
		{"support", "operator:read", "project.apply", "failed 403: the key's scope operator:read does not allow PUT", ""},
		{"shop-admin", "project:shop:admin", "project.rollback", "ok", "- field products.stock"},
		{"bootstrap", "operator", "project.delete", "ok", "- project shop"},
		{"bootstrap", "operator", "project.undelete", "ok", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("audit of shop: %d entries, want %d:\n%s", len(got), len(want), body)
	}
	for i, w := range want {
		g := got[i]
		if g.Key != w.key || g.Scope != w.scope || g.Action != w.action || !strings.HasPrefix(g.Outcome, w.outcome) ||
			g.Project != "shop" || g.Client != "admin API from 127.0.0.1" || g.At == "" ||
			w.diff != "" && !strings.Contains(strings.Join(g.Diff, "\n"), w.diff) {
			t.Errorf("audit entry %d = %+v\nwant %+v", i, g, w)
		}
	}

	stdout, stderr, err := run(t, append([]string{"audit", "--project", "shop", "--since", "1h"}, adminArgs(s)...)...)
	if err != nil || strings.Count(stdout, "  shop-admin (project:shop:admin)  admin API from 127.0.0.1  project.apply shop") != 2 || !strings.Contains(stdout, "\n  + field products.stock") {
		t.Errorf("platform audit: %v\n%s%s", err, stdout, stderr)
	}

	if stdout, stderr, err := run(t, append([]string{"keys", "revoke", "--name", "support"}, adminArgs(s)...)...); err != nil || stdout != "key support revoked (scope operator:read)\n" {
		t.Errorf("keys revoke: %v\n%s%s", err, stdout, stderr)
	}
	// A replica trusts a key it verified for half a second at most.
	revoked := time.Now()
	for {
		got, body := s.do("GET", "localhost", "/admin/v1/projects", support, nil)
		if got == http.StatusUnauthorized {
			break
		}
		if got != http.StatusOK || time.Since(revoked) > time.Second {
			t.Fatalf("a revoked key, %s after: %d %s, want 401 within a second", time.Since(revoked), got, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stdout, stderr, err = run(t, append([]string{"keys", "list"}, adminArgs(s)...)...)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if err != nil || len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME") || !strings.HasPrefix(lines[1], "shop-admin  project:shop:admin") || strings.Count(lines[1], "never") != 0 {
		t.Errorf("keys list (shop-admin expires and was used): %v\n%s%s", err, stdout, stderr)
	}
	stdout, _, _ = run(t, append([]string{"audit", "--jsonl"}, adminArgs(s)...)...)
	for _, w := range []string{`"action":"key.create","target":"shop-admin","diff":["+ key shop-admin (project:shop:admin, expires `,
		`"action":"key.create","target":"support","diff":["+ key support (operator)"],"outcome":"failed 409: a key named \"support\" exists`,
		`"action":"key.revoke","target":"support","diff":["- key support (operator:read)"],"outcome":"ok"`,
		`"action":"project.apply","project":"blog","diff":[],"outcome":"failed 403`} {
		if !strings.Contains(stdout, w) {
			t.Errorf("the whole audit log lacks %s:\n%s", w, stdout)
		}
	}

	// Records imported with direct access to the stores are in the log too, made or not.
	file := filepath.Join(t.TempDir(), "shop.jsonl")
	if _, stderr, err := run(t, "export", "--project", "shop", "--data", s.DataDir, "-o", file); err != nil {
		t.Fatalf("export: %v %s", err, stderr)
	}
	if _, stderr, err := run(t, "import", "-f", file, "--replace", "--data", s.DataDir); err != nil {
		t.Fatalf("import: %v %s", err, stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("not an export\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "import", "-f", bad, "--data", s.DataDir); err == nil {
		t.Fatal("an import of a file that is no export was not refused")
	}
	stdout, _, _ = run(t, append([]string{"audit", "--jsonl"}, adminArgs(s)...)...)
	for _, w := range []string{`"key":"local","scope":"direct database access","client":"platform import on `,
		`"action":"project.import","project":"shop","target":"` + file + `","diff":["~ records replaced by ` + file + `"],"outcome":"ok"}`,
		`"action":"project.import","target":"` + bad + `","diff":["+ records of ` + bad + `"],"outcome":"failed: `} {
		if !strings.Contains(stdout, w) {
			t.Errorf("the audit log of shop lacks %s:\n%s", w, stdout)
		}
	}
}

// TestTokenOnlyForRealProjects: `platform token` refuses, with the reason, a project that
// does not exist, one that is deleted, and one that trusts another issuer.
func TestTokenOnlyForRealProjects(t *testing.T) {
	s := startServer(t, t.TempDir())
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, []byte(productsDoc)); st != http.StatusCreated {
		t.Fatalf("PUT shop: %d %s", st, body)
	}
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/gone", s.token, []byte(strings.Replace(productsDoc, `"shop"`, `"gone"`, 1))); st != http.StatusCreated {
		t.Fatalf("PUT gone: %d %s", st, body)
	}
	if st, body := s.do("DELETE", "localhost", "/admin/v1/projects/gone", s.token, nil); st != http.StatusOK {
		t.Fatalf("DELETE gone: %d %s", st, body)
	}
	for _, c := range []struct{ project, want string }{
		{"nosuch", `project "nosuch" does not exist`},
		{"gone", `project "gone" is deleted`},
		{"shop", `project "shop" trusts the issuer none, not the development issuer urn:platform:dev-issuer`},
	} {
		stdout, stderr, err := run(t, "token", "--data", s.DataDir, "--project", c.project, "--sub", "alice")
		if err == nil || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("token for %s: %v %q %q, want it refused: %s", c.project, err, stdout, stderr, c.want)
		}
	}
	if stdout, stderr, err := run(t, "token", "--data", s.DataDir, "--project", "demo", "--sub", "alice"); err != nil || strings.Count(stdout, ".") != 2 {
		t.Errorf("token for demo: %v %q %q", err, stdout, stderr)
	}
}
