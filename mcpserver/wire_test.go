package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/mcpserver/mcptest"
	"github.com/platform-dev/platform/tools"
)

func TestErrorCodes(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		slow := newSlowTool()
		ts := newServer(t, rb.addr, uniquePrefix(), mcpserver.Config{RequestsPerWindow: 1000, RequestTimeout: time.Second}, allTools(slow), nil)
		call := func(name string, args any) string {
			return mcptest.Request("c1", "tools/call", map[string]any{"name": name, "arguments": args})
		}
		tests := []struct {
			name       string
			body       string
			wantStatus int
			wantCode   int
			wantID     any    // the id echoed in the error
			details    string // substring of error.data.details
		}{
			{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":`, 400, mcpserver.CodeParseError, nil, "not valid JSON"},
			{"empty body", ``, 400, mcpserver.CodeParseError, nil, "empty"},
			{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 400, mcpserver.CodeInvalidRequest, nil, "batch"},
			{"not an object", `"ping"`, 400, mcpserver.CodeInvalidRequest, nil, "object"},
			{"wrong jsonrpc", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, 400, mcpserver.CodeInvalidRequest, 7.0, `"jsonrpc"`},
			{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, 400, mcpserver.CodeInvalidRequest, nil, `"id"`},
			{"method not a string", `{"jsonrpc":"2.0","id":"x","method":5}`, 400, mcpserver.CodeInvalidRequest, "x", `"method"`},
			{"unknown method", mcptest.Request("u", "tools/destroy", nil), 200, mcpserver.CodeMethodNotFound, "u", "tools/destroy"},
			{"sampling", mcptest.Request("p", "sampling/createMessage", nil), 200, mcpserver.CodeMethodNotFound, "p", "not implemented"},
			{"unknown prompt", mcptest.Request("p", "prompts/get", map[string]any{"name": "nope"}), 200, mcpserver.CodeInvalidParams, "p", `unknown prompt "nope"`},
			{"sampling", mcptest.Request("s", "sampling/createMessage", nil), 200, mcpserver.CodeMethodNotFound, "s", "not implemented"},
			{"params not an object", `{"jsonrpc":"2.0","id":"q","method":"tools/list","params":[1]}`, 200, mcpserver.CodeInvalidParams, "q", `"params"`},
			{"unknown tool", call("nope", nil), 200, mcpserver.CodeInvalidParams, "c1", `unknown tool "nope"`},
			{"missing required", call("echo", map[string]any{}), 200, mcpserver.CodeInvalidParams, "c1", `argument "message" is required`},
			{"wrong type", call("echo", map[string]any{"message": 5}), 200, mcpserver.CodeInvalidParams, "c1", `argument "message"`},
			{"outside enum", call("echo", map[string]any{"message": "a", "mode": "loud"}), 200, mcpserver.CodeInvalidParams, "c1", `argument "mode"`},
			{"unknown argument", call("echo", map[string]any{"message": "a", "colour": "red"}), 200, mcpserver.CodeInvalidParams, "c1", `argument "colour"`},
			{"number as string", call("echo", map[string]any{"message": "a", "repeat": "3"}), 200, mcpserver.CodeInvalidParams, "c1", `argument "repeat"`},
			{"arguments not an object", call("echo", []int{1}), 200, mcpserver.CodeInvalidParams, "c1", `"arguments"`},
			{"name of wrong type", mcptest.Request(3, "tools/call", map[string]any{"name": 3}), 200, mcpserver.CodeInvalidParams, 3.0, `"name"`},
			{"tool argument error", call("fail", map[string]any{"how": "argument"}), 200, mcpserver.CodeInvalidParams, "c1", `argument "path": leaves the workspace root`},
			{"unknown resource", mcptest.Request(4, "resources/read", map[string]any{"uri": "service://nope"}), 200, mcpserver.CodeInvalidParams, 4.0, `argument "uri"`},
			{"bad log level", mcptest.Request(5, "logging/setLevel", map[string]any{"level": "loud"}), 200, mcpserver.CodeInvalidParams, 5.0, `argument "level"`},
			{"tool panic", call("fail", map[string]any{"how": "panic"}), 200, mcpserver.CodeInternalError, "c1", "reference"},
			{"timeout", call("slow", map[string]any{}), 200, mcpserver.CodeTimeout, "c1", "did not finish within 1s"},
			{"oversized", call("big", map[string]any{}), 200, mcpserver.CodeServerError, "c1", "narrow the call with big's arguments (depth, path)"},
			{"subscribe without session", mcptest.Request(6, "resources/subscribe", map[string]any{"uri": mcpserver.URICodeAnalysis}), 400, mcpserver.CodeInvalidRequest, 6.0, "needs a session"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				r := mcptest.Post(t, ts.url, tc.body)
				if r.Status != tc.wantStatus || r.ErrCode() != tc.wantCode {
					t.Fatalf("got HTTP %d code %d, want %d %d: %s", r.Status, r.ErrCode(), tc.wantStatus, tc.wantCode, r.Raw)
				}
				if r.Body["jsonrpc"] != "2.0" || r.Body["id"] != tc.wantID {
					t.Errorf("jsonrpc/id = %v/%v, want 2.0/%v", r.Body["jsonrpc"], r.Body["id"], tc.wantID)
				}
				if !strings.Contains(r.Details(), tc.details) {
					t.Errorf("details %q do not contain %q", r.Details(), tc.details)
				}
				if strings.Contains(string(r.Raw), "secret internal state") {
					t.Errorf("the panic value leaked to the client: %s", r.Raw)
				}
			})
		}

		t.Run("tool failure is isError", func(t *testing.T) {
			r := mcptest.Post(t, ts.url, call("fail", map[string]any{"how": "error"}))
			res := r.Result()
			if r.ErrCode() != 0 || res["isError"] != true {
				t.Fatalf("want isError result, got %s", r.Raw)
			}
			text := res["content"].([]any)[0].(map[string]any)["text"]
			if text != "backend unreachable" {
				t.Errorf("text = %v", text)
			}
		})
		t.Run("timeout cancels the tool", func(t *testing.T) {
			select {
			case <-slow.cancelled:
			case <-time.After(5 * time.Second):
				t.Fatal("the slow tool's context was not cancelled")
			}
		})
		t.Run("oversized is one whole JSON document", func(t *testing.T) {
			r := mcptest.Post(t, ts.url, call("big", nil))
			if !json.Valid(r.Raw) || len(r.Raw) > 10<<20 {
				t.Fatalf("oversized answer is %d bytes, valid JSON %v", len(r.Raw), json.Valid(r.Raw))
			}
		})
	})
}

func TestToolCallResult(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{}, allTools(newSlowTool()), nil)
	r := mcptest.Post(t, ts.url, mcptest.Request("a", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "ab", "mode": "shout", "repeat": 2}}))
	res := r.Result()
	if r.Status != 200 || res == nil {
		t.Fatalf("tools/call: %d %s", r.Status, r.Raw)
	}
	want := map[string]any{"message": "ABAB", "repeat": 2.0}
	sc, _ := res["structuredContent"].(map[string]any)
	if sc["message"] != want["message"] || sc["repeat"] != want["repeat"] || res["isError"] != false {
		t.Errorf("result = %s", r.Raw)
	}
	content := res["content"].([]any)[0].(map[string]any)
	var fromText map[string]any
	if content["type"] != "text" || json.Unmarshal([]byte(content["text"].(string)), &fromText) != nil || fromText["message"] != "ABAB" {
		t.Errorf("content = %v", content)
	}
	for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
		if r.Header.Get(h) == "" {
			t.Errorf("missing %s header", h)
		}
	}
}

func TestLists(t *testing.T) {
	doc := &docResource{uri: mcpserver.URICodeAnalysis, doc: map[string]any{"files": 3.0}}
	set := allTools(newSlowTool())
	set.Resources = []tools.Resource{doc}
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{}, set, nil)

	r := mcptest.Post(t, ts.url, mcptest.Request(1, "tools/list", nil))
	list := r.Result()["tools"].([]any)
	if len(list) != 4 {
		t.Fatalf("tools/list: %s", r.Raw)
	}
	echo := list[0].(map[string]any)
	if echo["name"] != "echo" || echo["title"] != "Echo" || echo["inputSchema"].(map[string]any)["required"].([]any)[0] != "message" ||
		echo["outputSchema"] == nil || echo["annotations"].(map[string]any)["readOnlyHint"] != true {
		t.Errorf("echo descriptor: %v", echo)
	}

	r = mcptest.Post(t, ts.url, mcptest.Request(2, "resources/list", nil))
	var got []string
	for _, res := range r.Result()["resources"].([]any) {
		m := res.(map[string]any)
		got = append(got, m["uri"].(string)+"|"+m["name"].(string)+"|"+m["mimeType"].(string))
	}
	want := []string{
		"service://code/analysis|Code Analysis|application/json",
		"service://infrastructure/cloud|Cloud Infrastructure|application/json",
		"service://system/health|System Health|application/json",
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("resources/list = %v", got)
	}

	read := func(uri string) map[string]any {
		r := mcptest.Post(t, ts.url, mcptest.Request(3, "resources/read", map[string]any{"uri": uri}))
		c := r.Result()["contents"].([]any)[0].(map[string]any)
		if c["uri"] != uri || c["mimeType"] != "application/json" {
			t.Errorf("contents of %s: %v", uri, c)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(c["text"].(string)), &m); err != nil {
			t.Fatalf("%s text: %v", uri, err)
		}
		return m
	}
	if m := read(mcpserver.URICodeAnalysis); m["files"] != 3.0 {
		t.Errorf("code analysis = %v", m)
	}
	if m := read(mcpserver.URICloud); m["status"] != "no analysis yet" || !strings.Contains(m["message"].(string), "analyze_cloud_resources") {
		t.Errorf("cloud before any analysis = %v", m)
	}
}

func TestInitializeAndVersions(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{}, allTools(newSlowTool()), nil)
	for _, tc := range []struct{ asked, want string }{
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2026-07-28", "2025-11-25"}, // 2026-07-28 has no initialize; it is reached by server/discover
		{"1999-01-01", "2025-11-25"},
	} {
		r := mcptest.Post(t, ts.url, mcptest.Request(1, "initialize", map[string]any{"protocolVersion": tc.asked, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}))
		res := r.Result()
		if res["protocolVersion"] != tc.want {
			t.Errorf("initialize %s: protocolVersion %v, want %s", tc.asked, res["protocolVersion"], tc.want)
		}
		if r.Header.Get("Mcp-Session-Id") == "" {
			t.Errorf("initialize %s: no session id", tc.asked)
		}
		info := res["serverInfo"].(map[string]any)
		if info["name"] != "service-mcp-server" || info["version"] != "1.0.0" || info["description"] == "" {
			t.Errorf("serverInfo = %v", info)
		}
		caps, _ := json.Marshal(res["capabilities"])
		if string(caps) != `{"completions":{},"logging":{"level":"info"},"prompts":{"listChanged":false},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}` {
			t.Errorf("capabilities = %s", caps)
		}
	}

	r := mcptest.Post(t, ts.url, mcptest.Request(1, "initialize", map[string]any{"capabilities": map[string]any{}}))
	if r.ErrCode() != mcpserver.CodeInvalidParams || !strings.Contains(r.Details(), "protocolVersion") {
		t.Errorf("initialize without version: %s", r.Raw)
	}

	ping := mcptest.Request(9, "ping", nil)
	for _, tc := range []struct {
		header     string
		wantStatus int
		wantCode   int
	}{
		{"", 200, 0},
		{"2025-03-26", 200, 0},
		{"2025-06-18", 200, 0},
		{"2025-11-25", 200, 0},
		{"2026-07-28", 200, 0},
		{"2024-01-01", 400, mcpserver.CodeInvalidRequest},
	} {
		r := mcptest.Post(t, ts.url, ping, "MCP-Protocol-Version", tc.header)
		if r.Status != tc.wantStatus || r.ErrCode() != tc.wantCode {
			t.Errorf("ping with MCP-Protocol-Version %q: %d %s", tc.header, r.Status, r.Raw)
		}
	}

	meta := func(v string) map[string]any {
		return map[string]any{"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    v,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}}
	}
	r = mcptest.Post(t, ts.url, mcptest.Request("d", "server/discover", meta("2026-07-28")), "MCP-Protocol-Version", "2026-07-28")
	res := r.Result()
	if r.Status != 200 || res["supportedVersions"].([]any)[0] != "2026-07-28" ||
		res["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"].(map[string]any)["name"] != "service-mcp-server" {
		t.Errorf("server/discover: %s", r.Raw)
	}
	if res["resultType"] != "complete" {
		t.Errorf("2026-07-28 result without resultType: %s", r.Raw)
	}
	r = mcptest.Post(t, ts.url, mcptest.Request("c", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "m"}, "_meta": meta("2026-07-28")["_meta"]}), "MCP-Protocol-Version", "2026-07-28")
	if res := r.Result(); res["resultType"] != "complete" || res["structuredContent"] == nil {
		t.Errorf("2026-07-28 tools/call: %s", r.Raw)
	}
	if r := mcptest.Post(t, ts.url, mcptest.Request("p", "ping", nil), "MCP-Protocol-Version", "2025-11-25"); r.Result()["resultType"] != nil {
		t.Errorf("2025-11-25 result with resultType: %s", r.Raw)
	}
	r = mcptest.Post(t, ts.url, mcptest.Request("d", "server/discover", meta("2027-01-01")), "MCP-Protocol-Version", "2027-01-01")
	if r.ErrCode() != mcpserver.CodeUnsupportedProtocolVersion || r.Body["error"].(map[string]any)["data"].(map[string]any)["supported"] == nil {
		t.Errorf("server/discover with a future version: %s", r.Raw)
	}
	r = mcptest.Post(t, ts.url, mcptest.Request("d", "tools/list", meta("2026-07-28")), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call")
	if r.Status != 400 || r.ErrCode() != mcpserver.CodeInvalidRequest || !strings.Contains(r.Details(), "Mcp-Method") {
		t.Errorf("Mcp-Method disagreeing with the body: %d %s", r.Status, r.Raw)
	}
	r = mcptest.Post(t, ts.url, mcptest.Request("d", "tools/list", meta("2026-07-28")), "MCP-Protocol-Version", "2025-11-25")
	if r.Status != 400 || r.ErrCode() != mcpserver.CodeInvalidRequest {
		t.Errorf("header disagreeing with _meta: %d %s", r.Status, r.Raw)
	}
}

func TestOrigin(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{AllowedOrigins: []string{"https://app.example.com"}}, allTools(newSlowTool()), nil)
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", 200},
		{"https://app.example.com", 200},
		{"https://evil.example.com", 403},
		{"null", 403},
		{strings.Replace(ts.url, "/mcp", "", 1), 200}, // a page of this loopback server itself
		{"http://127.0.0.1:1", 403},
	} {
		r := mcptest.Post(t, ts.url, mcptest.Request(1, "ping", nil), "Origin", tc.origin)
		if r.Status != tc.want {
			t.Errorf("Origin %q: HTTP %d, want %d", tc.origin, r.Status, tc.want)
		}
		if tc.want == 403 && r.ErrCode() != mcpserver.CodeInvalidRequest {
			t.Errorf("Origin %q: %s", tc.origin, r.Raw)
		}
	}
}

func TestSessionLifecycle(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		ts := newServer(t, rb.addr, uniquePrefix(), mcpserver.Config{}, allTools(newSlowTool()), nil)
		sid := mcptest.Initialize(t, ts.url, "2025-11-25")
		if r := mcptest.Post(t, ts.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid); r.Status != 202 || len(r.Raw) != 0 {
			t.Errorf("notification: %d %s", r.Status, r.Raw)
		}
		if r := mcptest.Post(t, ts.url, `{"jsonrpc":"2.0","id":99,"result":{}}`, "Mcp-Session-Id", sid); r.Status != 202 {
			t.Errorf("client response: %d %s", r.Status, r.Raw)
		}
		if r := mcptest.Post(t, ts.url, mcptest.Request(2, "tools/list", nil), "Mcp-Session-Id", sid); r.Status != 200 || r.ErrCode() != 0 {
			t.Fatalf("tools/list in session: %d %s", r.Status, r.Raw)
		}
		del := func() mcptest.Response {
			req, _ := http.NewRequest(http.MethodDelete, ts.url, nil)
			req.Header.Set("Mcp-Session-Id", sid)
			return mcptest.Do(t, req)
		}
		if r := del(); r.Status != 204 {
			t.Fatalf("DELETE: %d %s", r.Status, r.Raw)
		}
		if r := mcptest.Post(t, ts.url, mcptest.Request(3, "tools/list", nil), "Mcp-Session-Id", sid); r.Status != 404 || r.ErrCode() != mcpserver.CodeInvalidRequest || r.Body["id"] != 3.0 {
			t.Errorf("request after DELETE: %d %s", r.Status, r.Raw)
		}
		if r := del(); r.Status != 404 {
			t.Errorf("second DELETE: %d", r.Status)
		}
		req, _ := http.NewRequest(http.MethodPut, ts.url, nil)
		if r := mcptest.Do(t, req); r.Status != 405 || r.Header.Get("Allow") == "" {
			t.Errorf("PUT: %d", r.Status)
		}
		req, _ = http.NewRequest(http.MethodGet, ts.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		if r := mcptest.Do(t, req); r.Status != 400 {
			t.Errorf("GET without session: %d", r.Status)
		}
		if r := mcptest.Post(t, ts.url, mcptest.Request(1, "ping", nil), "Content-Type", "text/plain"); r.Status != 415 {
			t.Errorf("text/plain body: %d", r.Status)
		}
	})
}

// TestRequestBodyLimit sends bodies above the limit in every framing: each gets 413 with a
// JSON-RPC error that the client reads (no reset connection), and the connection serves the
// next request.
func TestRequestBodyLimit(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{MaxRequestBytes: 1 << 20}, allTools(newSlowTool()), nil)
	big := mcptest.Request(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": strings.Repeat("a", 20<<20)}})
	for _, framing := range []string{"content-length", "chunked"} {
		t.Run(framing, func(t *testing.T) {
			var body io.Reader = strings.NewReader(big)
			if framing == "chunked" {
				body = io.MultiReader(body) // hides the length: the client sends chunks
			}
			req, _ := http.NewRequest(http.MethodPost, ts.url, body)
			req.Header.Set("Content-Type", "application/json")
			r := mcptest.Do(t, req)
			if r.Status != http.StatusRequestEntityTooLarge || r.ErrCode() != mcpserver.CodeInvalidRequest || !strings.Contains(r.Details(), "exceeds 1048576 bytes") {
				t.Errorf("20 MB body: %d %s", r.Status, r.Raw)
			}
			if r := mcptest.Post(t, ts.url, mcptest.Request(2, "ping", nil)); r.ErrCode() != 0 {
				t.Errorf("next request: %s", r.Raw)
			}
		})
	}
}

// TestDisconnectIsInfo: a client that leaves during a call is logged at INFO, never as an
// error, and its slot is returned.
func TestDisconnectIsInfo(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	slow := newSlowTool()
	ts := newServerLogged(t, startMini(t), uniquePrefix(), mcpserver.Config{MaxConcurrent: 1}, allTools(slow), nil, &lockedWriter{w: &logs, mu: &mu})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := mcptest.NewPost(ts.url, mcptest.Request(1, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}}))
	go func() {
		<-slow.started
		cancel()
	}()
	if _, err := http.DefaultClient.Do(req.WithContext(ctx)); err == nil {
		t.Fatal("the request was answered")
	}
	<-slow.cancelled
	// The slot comes back: the one slot of this client is free again.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := mcptest.Post(t, ts.url, mcptest.Request(2, "ping", nil))
		if r.ErrCode() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot not returned: %s", r.Raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if text := logs.String(); !strings.Contains(text, "level=INFO msg=\"client disconnected before the answer\"") || strings.Contains(text, "level=ERROR") {
		t.Errorf("log:\n%s", text)
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestSessionExpiry(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		ts := newServer(t, rb.addr, uniquePrefix(), mcpserver.Config{SessionTTL: time.Second}, allTools(newSlowTool()), nil)
		sid := mcptest.Initialize(t, ts.url, "2025-11-25")
		rb.elapse(600 * time.Millisecond)
		if r := mcptest.Post(t, ts.url, mcptest.Request(1, "ping", nil), "Mcp-Session-Id", sid); r.Status != 200 {
			t.Fatalf("ping within the TTL: %d %s", r.Status, r.Raw)
		}
		// The ping renewed the session; it expires a TTL after the last use.
		rb.elapse(600 * time.Millisecond)
		if r := mcptest.Post(t, ts.url, mcptest.Request(2, "ping", nil), "Mcp-Session-Id", sid); r.Status != 200 {
			t.Fatalf("ping after renewal: %d %s", r.Status, r.Raw)
		}
		rb.elapse(1500 * time.Millisecond)
		if r := mcptest.Post(t, ts.url, mcptest.Request(3, "ping", nil), "Mcp-Session-Id", sid); r.Status != 404 || r.ErrCode() != mcpserver.CodeInvalidRequest {
			t.Errorf("ping after expiry: %d %s", r.Status, r.Raw)
		}
	})
}

// TestPromptsAndCompletions: every tool is a prompt whose arguments are the tool's, and the
// enumerated ones complete by prefix.
func TestPromptsAndCompletions(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{}, allTools(newSlowTool()), nil)
	r := mcptest.Post(t, ts.url, mcptest.Request(1, "prompts/list", nil))
	prompts, _ := r.Result()["prompts"].([]any)
	if len(prompts) != 4 {
		t.Fatalf("prompts/list: %s", r.Raw)
	}
	echo, _ := json.Marshal(prompts[0])
	if !strings.Contains(string(echo), `"arguments":[{"name":"message","required":true},{"name":"mode","required":false},{"name":"repeat","required":false}]`) {
		t.Errorf("echo prompt: %s", echo)
	}
	r = mcptest.Post(t, ts.url, mcptest.Request(2, "prompts/get", map[string]any{"name": "echo", "arguments": map[string]any{"message": "hi", "mode": "shout"}}))
	if text := fmt.Sprint(r.Result()["messages"]); !strings.Contains(text, `Call the echo tool with the arguments {"message":"hi","mode":"shout"}`) {
		t.Errorf("prompts/get: %s", r.Raw)
	}
	for _, c := range []struct {
		name    string
		ref     map[string]any
		arg     string
		value   string
		want    string
		wantErr int
	}{
		{"prefix", map[string]any{"type": "ref/prompt", "name": "echo"}, "mode", "sh", "[shout]", 0},
		{"any case", map[string]any{"type": "ref/prompt", "name": "fail"}, "how", "P", "[panic]", 0},
		{"empty value lists all", map[string]any{"type": "ref/prompt", "name": "fail"}, "how", "", "[error argument panic]", 0},
		{"free text argument", map[string]any{"type": "ref/prompt", "name": "echo"}, "message", "x", "[]", 0},
		{"resource", map[string]any{"type": "ref/resource", "uri": mcpserver.URISystemHealth}, "x", "", "[]", 0},
		{"unknown argument", map[string]any{"type": "ref/prompt", "name": "echo"}, "nope", "", "", mcpserver.CodeInvalidParams},
		{"unknown prompt", map[string]any{"type": "ref/prompt", "name": "nope"}, "mode", "", "", mcpserver.CodeInvalidParams},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mcptest.Post(t, ts.url, mcptest.Request(3, "completion/complete", map[string]any{"ref": c.ref, "argument": map[string]any{"name": c.arg, "value": c.value}}))
			if r.ErrCode() != c.wantErr {
				t.Fatalf("%s", r.Raw)
			}
			if c.wantErr == 0 {
				if got := fmt.Sprint(r.Result()["completion"].(map[string]any)["values"]); got != c.want {
					t.Errorf("values %s, want %s", got, c.want)
				}
			}
		})
	}
}

// TestIntegerArguments: a number given for an integer argument is rounded, then
// range-checked with a message that names the argument and the bound.
func TestIntegerArguments(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{}, tools.Set{Tools: []tools.Tool{stepTool{}}}, nil)
	for _, c := range []struct {
		steps   any
		want    float64
		details string
	}{
		{2.5, 3, ""},
		{2.4, 2, ""},
		{10.4, 10, ""},
		{3, 3, ""},
		{10.6, 0, `argument "steps": maximum: got 11, want 10`},
		{0.2, 0, `argument "steps": minimum: got 0, want 1`},
		{"3", 0, `argument "steps": got string, want integer`},
	} {
		r := mcptest.Post(t, ts.url, mcptest.Request(1, "tools/call", map[string]any{"name": "steps", "arguments": map[string]any{"steps": c.steps}}))
		if c.details != "" {
			if r.ErrCode() != mcpserver.CodeInvalidParams || r.Details() != c.details {
				t.Errorf("steps %v: %s", c.steps, r.Raw)
			}
			continue
		}
		if got := r.Result()["structuredContent"].(map[string]any)["steps"]; got != c.want {
			t.Errorf("steps %v: ran with %v, want %v", c.steps, got, c.want)
		}
	}
}

// leakTool fails with the texts that must not leave the server: a path below the workspace
// and a network address.
type leakTool struct{ root string }

func (leakTool) Spec() tools.Spec {
	return tools.Spec{Name: "leak", Description: "Fails verbosely.", InputSchema: json.RawMessage(`{"type":"object","properties":{"how":{"type":"string"}}}`)}
}

func (l leakTool) Call(_ context.Context, args json.RawMessage) (any, error) {
	var a struct{ How string }
	_ = json.Unmarshal(args, &a)
	switch a.How {
	case "argument":
		return nil, tools.InvalidArgument("path", "%s/src/../../etc leaves the workspace root %s", l.root, l.root)
	case "result":
		return map[string]any{"root": l.root, "file": l.root + "/src/a.go", "note": "read " + l.root + "/go.mod.",
			"sibling": l.root + "-old/b.go", "endpoint": "10.1.2.3:443"}, nil
	}
	return nil, fmt.Errorf("open %s/secret/x.go: permission denied; POST http://10.1.2.3:8080/v1: dial tcp 10.1.2.3:8080: connect: connection refused; [fd00::1]:6379 timed out", l.root)
}

func TestErrorTextsHideServerDetails(t *testing.T) {
	root := t.TempDir()
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{HiddenPaths: []string{root}}, tools.Set{Tools: []tools.Tool{leakTool{root: root}}}, nil)
	for _, c := range []struct{ how, want string }{
		{"error", "open secret/x.go: permission denied; POST http://(address hidden)/v1: dial tcp (address hidden): connect: connection refused; (address hidden) timed out"},
		{"argument", `argument "path": src/../../etc leaves the workspace root .`},
	} {
		r := mcptest.Post(t, ts.url, mcptest.Request(1, "tools/call", map[string]any{"name": "leak", "arguments": map[string]any{"how": c.how}}))
		text := r.Details()
		if content, ok := r.Result()["content"].([]any); ok {
			text = content[0].(map[string]any)["text"].(string)
		}
		if text != c.want || strings.Contains(string(r.Raw), root) {
			t.Errorf("%s: %q, want %q", c.how, text, c.want)
		}
	}
}

// TestResultsHideServerPaths: a tool's result shows paths below the workspace relative to
// it and the workspace itself as "."; a folder whose name only starts like the workspace's,
// and addresses (which analyses report), are left alone.
func TestResultsHideServerPaths(t *testing.T) {
	root := t.TempDir()
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{HiddenPaths: []string{root}}, tools.Set{Tools: []tools.Tool{leakTool{root: root}}}, nil)
	r := mcptest.Post(t, ts.url, mcptest.Request(1, "tools/call", map[string]any{"name": "leak", "arguments": map[string]any{"how": "result"}}))
	got, _ := json.Marshal(r.Result()["structuredContent"])
	want, _ := json.Marshal(map[string]any{"root": ".", "file": "src/a.go", "note": "read go.mod.", "sibling": root + "-old/b.go", "endpoint": "10.1.2.3:443"})
	if string(got) != string(want) {
		t.Errorf("structuredContent\n %s\nwant\n %s", got, want)
	}
	content, _ := r.Result()["content"].([]any)
	if len(content) != 1 || content[0].(map[string]any)["text"] != string(want) {
		t.Errorf("content %v", content)
	}
}

// TestConformanceFixtures: the suite's test_* tools exist only when asked for, and answer
// each content type, a tool error, and log messages and progress during the call.
func TestConformanceFixtures(t *testing.T) {
	addr := startMini(t)
	plain := newServer(t, addr, uniquePrefix(), mcpserver.Config{}, allTools(newSlowTool()), nil)
	if r := mcptest.Post(t, plain.url, mcptest.Request(1, "tools/list", nil)); strings.Contains(string(r.Raw), "test_") {
		t.Errorf("fixtures without ConformanceFixtures: %s", r.Raw)
	}
	ts := newServer(t, addr, uniquePrefix(), mcpserver.Config{ConformanceFixtures: true}, allTools(newSlowTool()), nil)
	call := func(name string, meta map[string]any) mcptest.Response {
		params := map[string]any{"name": name, "arguments": map[string]any{}}
		if meta != nil {
			params["_meta"] = meta
		}
		return mcptest.Post(t, ts.url, mcptest.Request(1, "tools/call", params))
	}
	for name, want := range map[string]string{
		"test_simple_text":            "[text]",
		"test_image_content":          "[image]",
		"test_audio_content":          "[audio]",
		"test_embedded_resource":      "[resource]",
		"test_multiple_content_types": "[text image resource]",
	} {
		r := call(name, nil)
		var types []string
		for _, c := range r.Result()["content"].([]any) {
			types = append(types, c.(map[string]any)["type"].(string))
		}
		if got := fmt.Sprint(types); got != want || r.Result()["isError"] != false {
			t.Errorf("%s: content types %s, want %s: %s", name, got, want, r.Raw)
		}
	}
	if r := call("test_error_handling", nil); r.Result()["isError"] != true {
		t.Errorf("test_error_handling: %s", r.Raw)
	}
	for name, method := range map[string]string{"test_tool_with_logging": "notifications/message", "test_tool_with_progress": "notifications/progress"} {
		r := call(name, map[string]any{"progressToken": 1})
		n := 0
		for _, ev := range r.Events {
			if strings.Contains(ev.Data, `"method":"`+method+`"`) {
				n++
			}
		}
		if n != 3 || r.ErrCode() != 0 || r.Result() == nil {
			t.Errorf("%s: %d %s, want 3 and a result:\n%s", name, n, method, r.Raw)
		}
	}
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"test_simple_prompt", nil, `"text":"This is a simple prompt for testing."`},
		{"test_prompt_with_arguments", map[string]any{"arg1": "v1", "arg2": "v2"}, `arg1='v1', arg2='v2'`},
		{"test_prompt_with_embedded_resource", map[string]any{"resourceUri": "test://x"}, `"resource":{"mimeType":"text/plain","text":"Embedded resource content for testing.","uri":"test://x"}`},
		{"test_prompt_with_image", nil, `"type":"image"`},
	} {
		r := mcptest.Post(t, ts.url, mcptest.Request(2, "prompts/get", map[string]any{"name": c.name, "arguments": c.args}))
		if !strings.Contains(string(r.Raw), c.want) {
			t.Errorf("prompts/get %s: %s", c.name, r.Raw)
		}
	}
	for uri, want := range map[string]string{
		"test://static-text":       `{"mimeType":"text/plain","text":"This is the content of the static text resource.","uri":"test://static-text"}`,
		"test://static-binary":     `{"blob":"iVBORw0KGgo`,
		"test://template/123/data": `"text":"{\"data\":\"Data for ID: 123\",\"id\":\"123\",\"templateTest\":true}"`,
		"test://template/1/2/data": `unknown resource`,
		"test://template/data":     `unknown resource`,
		"test://watched-resource":  `"text":"A resource to subscribe to."`,
	} {
		if r := mcptest.Post(t, ts.url, mcptest.Request(3, "resources/read", map[string]any{"uri": uri})); !strings.Contains(string(r.Raw), want) {
			t.Errorf("resources/read %s: %s", uri, r.Raw)
		}
	}
	if r := mcptest.Post(t, ts.url, mcptest.Request(4, "resources/templates/list", nil)); !strings.Contains(string(r.Raw), `"uriTemplate":"test://template/{id}/data"`) {
		t.Errorf("resources/templates/list: %s", r.Raw)
	}
	sid := mcptest.Initialize(t, ts.url, "2025-11-25")
	for _, m := range []string{"resources/subscribe", "resources/unsubscribe"} {
		if r := mcptest.Post(t, ts.url, mcptest.Request(5, m, map[string]any{"uri": "test://watched-resource"}), "Mcp-Session-Id", sid); r.ErrCode() != 0 {
			t.Errorf("%s: %s", m, r.Raw)
		}
	}
}

// TestStreamAccept: the GET stream opens for any Accept that admits an event stream, and
// only a header that excludes one gets 406.
func TestStreamAccept(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{}, allTools(newSlowTool()), nil)
	sid := mcptest.Initialize(t, ts.url, "2025-11-25")
	for _, c := range []struct {
		accept string
		want   int
	}{
		{"text/event-stream", 200},
		{"*/*", 200},
		{"text/*;q=0.9", 200},
		{"", 200},
		{"application/json", http.StatusNotAcceptable},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.url, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		if c.accept != "" {
			req.Header.Set("Accept", c.accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if resp.StatusCode != c.want {
			t.Errorf("Accept %q: %d, want %d", c.accept, resp.StatusCode, c.want)
		}
		cancel()
		resp.Body.Close()
	}
}
