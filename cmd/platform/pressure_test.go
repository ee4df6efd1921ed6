package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMemoryPressure: a server whose memory threshold lies below what it holds from the
// start (a fraction of 0.001 of 4 GiB) refuses new expensive requests with 503, Retry-After
// and a clear error, and still answers health, metrics and cheap reads.
func TestMemoryPressure(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data, "PLATFORM_MEMORY_LIMIT=4GiB", "PLATFORM_MEMORY_PRESSURE=0.001")
	alice := mintToken(t, data, "demo", "alice")
	if !strings.Contains(s.logText(), "msg=\"memory limit\" bytes=4294967296 source=flag") {
		t.Errorf("no memory limit line in the log:\n%s", s.logText())
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(s.logText(), "memory pressure: new expensive requests are refused") {
		if time.Now().After(deadline) {
			t.Fatalf("the watcher saw no pressure within 30 s:\n%s", s.logText())
		}
		time.Sleep(20 * time.Millisecond)
	}
	const (
		gqlError = "graphql"
		rpcError = "json-rpc"
	)
	mcpCall := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"analyze_codebase","arguments":{"path":"."}}}`
	cases := []struct {
		name, method, host, path, body string
		token                          string
		refused                        string // the error shape of a 503, "" when served
		want                           int
	}{
		{name: "healthz", method: "GET", host: "localhost", path: "/healthz", want: 200},
		{name: "readyz", method: "GET", host: "localhost", path: "/readyz", want: 200},
		{name: "admin list", method: "GET", host: "localhost", path: "/admin/v1/projects", token: s.token, want: 200},
		{name: "admin get", method: "GET", host: "localhost", path: "/admin/v1/projects/demo", token: s.token, want: 200},
		{name: "graphql read", method: "POST", host: "demo.localhost", path: "/api/v1/graphql", body: `{"query":"{__typename}"}`, token: alice, want: 200},
		{name: "mcp ping", method: "POST", host: "localhost", path: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, want: 200},
		{name: "mcp tools/list", method: "POST", host: "localhost", path: "/mcp", body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, want: 200},
		{name: "mcp tools/call", method: "POST", host: "localhost", path: "/mcp", body: mcpCall, want: 503, refused: rpcError},
		{name: "admin put", method: "PUT", host: "localhost", path: "/admin/v1/projects/shop", body: productsDoc, token: s.token, want: 503, refused: gqlError},
		{name: "console apply", method: "POST", host: "localhost", path: "/console/projects/apply", body: "document=x", want: 503, refused: gqlError},
		{name: "console check", method: "POST", host: "localhost", path: "/console/projects/check", body: "document=x", want: 503, refused: gqlError},
		{name: "console record", method: "POST", host: "localhost", path: "/console/projects/demo/tables/notes/records", body: "x=1", want: 503, refused: gqlError},
		{name: "console delete", method: "DELETE", host: "localhost", path: "/console/projects/demo/tables/notes/records/u1", want: 503, refused: gqlError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, "http://"+s.addr+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tc.host
			switch {
			case tc.path == "/mcp":
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
			case strings.HasPrefix(tc.path, "/console/"):
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			default:
				req.Header.Set("Content-Type", "application/json")
			}
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, raw)
			}
			if tc.refused == "" {
				return
			}
			if got := resp.Header.Get("Retry-After"); got != "5" {
				t.Errorf("Retry-After %q, want 5", got)
			}
			var body struct {
				Errors []struct {
					Message    string         `json:"message"`
					Extensions map[string]any `json:"extensions"`
				} `json:"errors"`
				ID    any `json:"id"`
				Error struct {
					Code int            `json:"code"`
					Data map[string]any `json:"data"`
				} `json:"error"`
			}
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("body %s: %v", raw, err)
			}
			var msg string
			switch tc.refused {
			case gqlError:
				if len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != "OVERLOADED" {
					t.Fatalf("body %s, want one error with code OVERLOADED", raw)
				}
				msg = body.Errors[0].Message
			case rpcError:
				details, _ := body.Error.Data["details"].(string)
				if body.Error.Code != -32000 || body.ID != float64(7) {
					t.Fatalf("body %s, want JSON-RPC error -32000 for id 7", raw)
				}
				msg = details
			}
			if !strings.Contains(msg, "memory limit") || !strings.Contains(msg, "retry in 5 s") {
				t.Errorf("message %q does not say why and when to retry", msg)
			}
		})
	}
	if s.MetricsAddr != "" {
		resp, err := http.Get("http://" + s.MetricsAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{`outcome="overloaded"`, "\nplatform_memory_pressure 1\n", "\nplatform_memory_pressure_threshold_bytes 4.294967e+06\n"} {
			if resp.StatusCode != 200 || !strings.Contains(string(raw), want) {
				t.Errorf("metrics: %d, want 200 with %q", resp.StatusCode, want)
			}
		}
	}
}

// TestMemoryLimitSources: without --memory-limit the process takes GOMEMLIMIT, and a limit
// or fraction it cannot read stops it at start with a message naming the setting.
func TestMemoryLimitSources(t *testing.T) {
	s := startServer(t, t.TempDir(), "GOMEMLIMIT=3GiB")
	if log := s.logText(); !strings.Contains(log, `msg="memory limit" bytes=3221225472 source=GOMEMLIMIT refuse_expensive_past_bytes=2738041651`) {
		t.Errorf("no GOMEMLIMIT line in the log:\n%s", log)
	}
	for _, tc := range []struct{ env, want string }{
		{"PLATFORM_MEMORY_LIMIT=lots", "--memory-limit or PLATFORM_MEMORY_LIMIT"},
		{"PLATFORM_MEMORY_PRESSURE=1.5", "--memory-pressure or PLATFORM_MEMORY_PRESSURE"},
	} {
		cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--metrics-addr", "")
		cmd.Env = append(os.Environ(), tc.env)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: %v, %s; want a failure naming %s", tc.env, err, out, tc.want)
		}
	}
}
