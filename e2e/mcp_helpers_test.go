package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/tools"
)

// startMCP serves set at <url> (ending in /mcp) on an httptest server backed by an
// in-process Redis (miniredis). Limits are generous so that tests are not rate limited;
// everything is shut down when the test ends.
func startMCP(t *testing.T, set tools.Set, hub *tools.Hub) (url string) {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	srv, err := mcpserver.New(mcpserver.Config{
		RequestsPerWindow: 100000,
		Window:            time.Minute,
		MaxConcurrent:     1000,
		RequestTimeout:    time.Minute,
		Version:           "e2e",
	}, rdb, set, hub, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("start MCP server: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	ts := httptest.NewServer(mux)
	t.Cleanup(func() {
		ts.Close()
		_ = srv.Close()
	})
	return ts.URL + "/mcp"
}

var rpcIDs atomic.Int64

// rpc sends one JSON-RPC request (stateless, protocol 2025-11-25) and returns the decoded
// result or error object.
func rpc(t *testing.T, url, method string, params any) (result map[string]any, rpcErr map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rpcIDs.Add(1), "method": method, "params": params})
	if err != nil {
		t.Fatalf("encode %s: %v", method, err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s response: %v", method, err)
	}
	var out struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: HTTP %d, body is not JSON-RPC: %v\n%s", method, resp.StatusCode, err, raw)
	}
	return out.Result, out.Error
}

// callTool calls a tool over the MCP wire protocol. result is the tools/call result
// (content, structuredContent, isError); rpcErr the JSON-RPC error (code, message,
// data.details). Exactly one is non-nil.
func callTool(t *testing.T, url, name string, args any) (result map[string]any, rpcErr map[string]any) {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	return rpc(t, url, "tools/call", map[string]any{"name": name, "arguments": args})
}

// readResource reads a resource and decodes its JSON text.
func readResource(t *testing.T, url, uri string) map[string]any {
	t.Helper()
	res, rerr := rpc(t, url, "resources/read", map[string]any{"uri": uri})
	if rerr != nil {
		t.Fatalf("resources/read %s: %v", uri, rerr)
	}
	contents, _ := res["contents"].([]any)
	if len(contents) != 1 {
		t.Fatalf("resources/read %s: want one content, got %v", uri, res)
	}
	text, _ := contents[0].(map[string]any)["text"].(string)
	var doc map[string]any
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("resources/read %s: text is not JSON: %v", uri, err)
	}
	return doc
}
