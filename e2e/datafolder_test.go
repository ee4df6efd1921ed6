package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/platform-dev/platform/cmd/platform/platformtest"
	"github.com/platform-dev/platform/internal/testenv"
)

// TestDataFolderInTheWorkspace: with the folders `make run` uses (the data folder ./data
// inside the workspace .), the MCP tools never read the live databases. They did: the code
// analysis opened and closed platform.db, which dropped the server's SQLite locks, so the
// next `platform token` (or any second process) took the database for unused, deleted its
// write-ahead log, and saw none of the projects applied after it.
func TestDataFolderInTheWorkspace(t *testing.T) {
	bin, err := platformtest.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
	srv := platformtest.StartIn(t, bin, dir, "PLATFORM_ADMIN_TOKEN="+attackAdminToken)
	site := &attackSite{srv: srv, bin: bin, devTokens: map[string]string{}, client: http.DefaultClient}
	dev := func() map[string]any {
		return map[string]any{"jwksURL": "http://" + srv.Addr + "/.well-known/jwks.json", "issuer": "urn:platform:dev-issuer"}
	}
	notes := map[string]any{"notes": map[string]any{
		"fields": map[string]any{"text": map[string]any{"type": "String"}},
		"access": map[string]any{"read": "public", "create": "authenticated", "update": "owner", "delete": "owner"},
	}}

	site.apply(t, "first", dev(), notes)
	res, rerr := callTool(t, "http://"+srv.Addr+"/mcp", "analyze_codebase", map[string]any{"path": dir})
	if rerr != nil || res["isError"] == true {
		t.Fatalf("analyze_codebase: %v %v", rerr, res)
	}
	if raw := codeText(res); strings.Contains(raw, "platform.db") || strings.Contains(raw, "admin-token") {
		t.Errorf("the analysis lists the data folder: %s", raw)
	}
	site.devToken(t, "first") // a second process opens and closes the live control database
	if _, err := os.Stat(filepath.Join(srv.DataDir, "platform.db-wal")); err != nil {
		t.Errorf("the live database's write-ahead log is gone after another process used it: %v", err)
	}
	site.apply(t, "second", dev(), notes)
	token := site.devToken(t, "second") // fails when the write-ahead log was lost
	out := site.mustGraphQL(t, "second", token, `mutation { c: createnote(data: {text: "kept"}) { text } }`, nil)
	if got := out["c"].(map[string]any)["text"]; got != "kept" {
		t.Fatalf("created %v", out)
	}
}

// codeText is a tool result's text content.
func codeText(res map[string]any) string {
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	return text
}
