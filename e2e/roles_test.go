package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/platform-dev/platform/cmd/platform/platformtest"
	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/mcpserver/mcptest"
)

// TestRoles runs the split deployment: one `serve --role api` and one `serve --role mcp`
// sharing a real redis-server. Each serves its plane and refuses the other's requests with
// the error shape; the mcp replica opens no database and the api replica builds no tools.
func TestRoles(t *testing.T) {
	bin, err := platformtest.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	redisAddr, _ := testenv.RedisServer(t)
	shared := []string{"REDIS_URL=redis://" + redisAddr + "/0", "PLATFORM_ADMIN_TOKEN=" + attackAdminToken}
	api := platformtest.Start(t, bin, "", append(shared, "PLATFORM_ROLE=api")...)
	mcp := platformtest.Start(t, bin, "", append(shared, "PLATFORM_ROLE=mcp")...)
	site := &attackSite{srv: api, bin: bin, devTokens: map[string]string{}, client: http.DefaultClient}

	t.Run("the api replica serves a project's GraphQL", func(t *testing.T) {
		out := site.mustGraphQL(t, "demo", site.devToken(t, "demo"), `mutation { c: createproduct(data: {name: "tea", price: 2}) { name } }`, nil)
		if got := out["c"].(map[string]any)["name"]; got != "tea" {
			t.Fatalf("created %v", out)
		}
	})

	t.Run("the mcp replica serves an MCP session and a tool", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(mcp.Workspace, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		url := "http://" + mcp.Addr + "/mcp"
		sid := mcptest.Initialize(t, url, "2025-11-25")
		headers := []string{"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"}
		if r := mcptest.Post(t, url, mcptest.Notification("notifications/initialized", nil), headers...); r.Status != http.StatusAccepted {
			t.Fatalf("notifications/initialized: %d %s", r.Status, r.Raw)
		}
		r := mcptest.Post(t, url, mcptest.Request(2, "tools/call", map[string]any{
			"name": "analyze_codebase", "arguments": map[string]any{"path": mcp.Workspace},
		}), headers...)
		if r.ErrCode() != 0 || r.Result()["isError"] == true {
			t.Fatalf("analyze_codebase in the session: %d %s", r.Status, r.Raw)
		}
		if !strings.Contains(string(r.Raw), `\"Go\"`) {
			t.Errorf("analyze_codebase does not count the Go file: %s", r.Raw)
		}
	})

	// Each refusal is a 404 with the error shape, naming the role that serves the request.
	for _, c := range []struct {
		name       string
		srv        *platformtest.Server
		method     string
		host, path string
		body       string
		want       string
	}{
		{"the api replica answers 404 on /mcp", api, http.MethodPost, "localhost", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "--role mcp"},
		{"the mcp replica refuses a project host", mcp, http.MethodPost, "demo.localhost", "/api/v1/graphql", `{"query":"{ products { uid } }"}`, "--role api"},
		{"the mcp replica serves no admin API", mcp, http.MethodGet, "localhost", "/admin/v1/projects", "", ""},
		{"the mcp replica serves no console", mcp, http.MethodGet, "localhost", "/console/", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body []byte
			if c.body != "" {
				body = []byte(c.body)
			}
			status, raw, err := c.srv.Do(c.method, c.host, c.path, attackAdminToken, body)
			if err != nil {
				t.Fatal(err)
			}
			var shape struct {
				Errors []struct {
					Message    string
					Extensions struct{ Code string }
				}
			}
			if status != http.StatusNotFound || json.Unmarshal(raw, &shape) != nil || len(shape.Errors) != 1 ||
				shape.Errors[0].Extensions.Code != "NOT_FOUND" || !strings.Contains(shape.Errors[0].Message, c.want) {
				t.Errorf("%s %s on %s: %d %s, want 404 NOT_FOUND naming %q", c.method, c.path, c.host, status, raw, c.want)
			}
		})
	}

	t.Run("each replica reports ready on what it uses", func(t *testing.T) {
		for _, c := range []struct {
			srv  *platformtest.Server
			want map[string]string
		}{
			{api, map[string]string{"status": "ready", "database": "ok", "redis": "ok"}},
			{mcp, map[string]string{"status": "ready", "redis": "ok"}},
		} {
			status, raw, err := c.srv.Do(http.MethodGet, "demo.localhost", "/readyz", "", nil)
			var got map[string]string
			if err != nil || status != http.StatusOK || json.Unmarshal(raw, &got) != nil || len(got) != len(c.want) {
				t.Errorf("/readyz: %d %s %v, want %v", status, raw, err, c.want)
				continue
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("/readyz: %s, want %v", raw, c.want)
				}
			}
		}
	})

	t.Run("the mcp replica opens no database and the api replica builds no tools", func(t *testing.T) {
		entries, err := os.ReadDir(mcp.DataDir)
		if err != nil || len(entries) > 0 {
			t.Errorf("the mcp replica's data folder holds %v (%v), want nothing", entries, err)
		}
		if strings.Contains(api.Log(), "mcp tools ready") {
			t.Error("the api replica built the MCP tools")
		}
		if !strings.Contains(mcp.Log(), "mcp tools ready") {
			t.Error("the mcp replica did not build the MCP tools")
		}
	})
}
