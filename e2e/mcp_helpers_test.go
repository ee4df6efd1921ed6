package e2e

import (
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/mcpserver/mcptest"
	"github.com/platform-dev/platform/tools"
)

// startMCP serves set at <url> (ending in /mcp) on an httptest server backed by an
// in-process Redis (miniredis). Limits are generous so that tests are not rate limited;
// everything is shut down when the test ends.
func startMCP(t *testing.T, set tools.Set, hub *tools.Hub) (url string) {
	t.Helper()
	return mcptest.Serve(t, miniredis.RunT(t).Addr(), mcpserver.Config{
		RequestsPerWindow: 100000,
		Window:            time.Minute,
		MaxConcurrent:     1000,
		RequestTimeout:    time.Minute,
		Version:           "e2e",
	}, set, hub, nil).URL
}

var rpcIDs atomic.Int64

// rpc sends one JSON-RPC request (stateless, protocol 2025-11-25) and returns the decoded
// result or error object.
func rpc(t *testing.T, url, method string, params any) (result map[string]any, rpcErr map[string]any) {
	t.Helper()
	r := mcptest.Post(t, url, mcptest.Request(rpcIDs.Add(1), method, params), "MCP-Protocol-Version", "2025-11-25")
	if r.Body == nil {
		t.Fatalf("%s: HTTP %d, body is not JSON-RPC: %s", method, r.Status, r.Raw)
	}
	return r.Result(), r.Error()
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
