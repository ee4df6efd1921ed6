package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/tools"
)

func TestErrorCodes(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		slow := newSlowTool()
		ts := newServer(t, rb.addr, uniquePrefix(), mcpserver.Config{RequestsPerWindow: 1000, RequestTimeout: 300 * time.Millisecond}, allTools(slow), nil)
		call := func(name string, args any) string {
			return request("c1", "tools/call", map[string]any{"name": name, "arguments": args})
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
			{"unknown method", request("u", "tools/destroy", nil), 200, mcpserver.CodeMethodNotFound, "u", "tools/destroy"},
			{"prompts", request("p", "prompts/list", nil), 200, mcpserver.CodeMethodNotFound, "p", "not implemented"},
			{"sampling", request("s", "sampling/createMessage", nil), 200, mcpserver.CodeMethodNotFound, "s", "not implemented"},
			{"params not an object", `{"jsonrpc":"2.0","id":"q","method":"tools/list","params":[1]}`, 200, mcpserver.CodeInvalidParams, "q", `"params"`},
			{"unknown tool", call("nope", nil), 200, mcpserver.CodeInvalidParams, "c1", `unknown tool "nope"`},
			{"missing required", call("echo", map[string]any{}), 200, mcpserver.CodeInvalidParams, "c1", `argument "message" is required`},
			{"wrong type", call("echo", map[string]any{"message": 5}), 200, mcpserver.CodeInvalidParams, "c1", `argument "message"`},
			{"outside enum", call("echo", map[string]any{"message": "a", "mode": "loud"}), 200, mcpserver.CodeInvalidParams, "c1", `argument "mode"`},
			{"unknown argument", call("echo", map[string]any{"message": "a", "colour": "red"}), 200, mcpserver.CodeInvalidParams, "c1", `argument "colour"`},
			{"number as string", call("echo", map[string]any{"message": "a", "repeat": "3"}), 200, mcpserver.CodeInvalidParams, "c1", `argument "repeat"`},
			{"arguments not an object", call("echo", []int{1}), 200, mcpserver.CodeInvalidParams, "c1", `"arguments"`},
			{"name of wrong type", request(3, "tools/call", map[string]any{"name": 3}), 200, mcpserver.CodeInvalidParams, 3.0, `"name"`},
			{"tool argument error", call("fail", map[string]any{"how": "argument"}), 200, mcpserver.CodeInvalidParams, "c1", `argument "path": leaves the workspace root`},
			{"unknown resource", request(4, "resources/read", map[string]any{"uri": "service://nope"}), 200, mcpserver.CodeInvalidParams, 4.0, `argument "uri"`},
			{"bad log level", request(5, "logging/setLevel", map[string]any{"level": "loud"}), 200, mcpserver.CodeInvalidParams, 5.0, `argument "level"`},
			{"tool panic", call("fail", map[string]any{"how": "panic"}), 200, mcpserver.CodeInternalError, "c1", "reference"},
			{"timeout", call("slow", map[string]any{}), 200, mcpserver.CodeTimeout, "c1", "did not finish within 300ms"},
			{"oversized", call("big", map[string]any{}), 200, mcpserver.CodeServerError, "c1", "narrow the call with big's arguments (depth, path)"},
			{"subscribe without session", request(6, "resources/subscribe", map[string]any{"uri": mcpserver.URICodeAnalysis}), 400, mcpserver.CodeInvalidRequest, 6.0, "needs a session"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				r := post(t, ts.url, tc.body)
				if r.status != tc.wantStatus || r.errCode() != tc.wantCode {
					t.Fatalf("got HTTP %d code %d, want %d %d: %s", r.status, r.errCode(), tc.wantStatus, tc.wantCode, r.raw)
				}
				if r.body["jsonrpc"] != "2.0" || r.body["id"] != tc.wantID {
					t.Errorf("jsonrpc/id = %v/%v, want 2.0/%v", r.body["jsonrpc"], r.body["id"], tc.wantID)
				}
				if !strings.Contains(r.details(), tc.details) {
					t.Errorf("details %q do not contain %q", r.details(), tc.details)
				}
				if strings.Contains(string(r.raw), "secret internal state") {
					t.Errorf("the panic value leaked to the client: %s", r.raw)
				}
			})
		}

		t.Run("tool failure is isError", func(t *testing.T) {
			r := post(t, ts.url, call("fail", map[string]any{"how": "error"}))
			res := r.result()
			if r.errCode() != 0 || res["isError"] != true {
				t.Fatalf("want isError result, got %s", r.raw)
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
			r := post(t, ts.url, call("big", nil))
			if !json.Valid(r.raw) || len(r.raw) > 10<<20 {
				t.Fatalf("oversized answer is %d bytes, valid JSON %v", len(r.raw), json.Valid(r.raw))
			}
		})
	})
}

func TestToolCallResult(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{}, allTools(newSlowTool()), nil)
	r := post(t, ts.url, request("a", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "ab", "mode": "shout", "repeat": 2}}))
	res := r.result()
	if r.status != 200 || res == nil {
		t.Fatalf("tools/call: %d %s", r.status, r.raw)
	}
	want := map[string]any{"message": "ABAB", "repeat": 2.0}
	sc, _ := res["structuredContent"].(map[string]any)
	if sc["message"] != want["message"] || sc["repeat"] != want["repeat"] || res["isError"] != false {
		t.Errorf("result = %s", r.raw)
	}
	content := res["content"].([]any)[0].(map[string]any)
	var fromText map[string]any
	if content["type"] != "text" || json.Unmarshal([]byte(content["text"].(string)), &fromText) != nil || fromText["message"] != "ABAB" {
		t.Errorf("content = %v", content)
	}
	for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
		if r.header.Get(h) == "" {
			t.Errorf("missing %s header", h)
		}
	}
}

func TestLists(t *testing.T) {
	doc := &docResource{uri: mcpserver.URICodeAnalysis, doc: map[string]any{"files": 3.0}}
	set := allTools(newSlowTool())
	set.Resources = []tools.Resource{doc}
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{}, set, nil)

	r := post(t, ts.url, request(1, "tools/list", nil))
	list := r.result()["tools"].([]any)
	if len(list) != 4 {
		t.Fatalf("tools/list: %s", r.raw)
	}
	echo := list[0].(map[string]any)
	if echo["name"] != "echo" || echo["title"] != "Echo" || echo["inputSchema"].(map[string]any)["required"].([]any)[0] != "message" ||
		echo["outputSchema"] == nil || echo["annotations"].(map[string]any)["readOnlyHint"] != true {
		t.Errorf("echo descriptor: %v", echo)
	}

	r = post(t, ts.url, request(2, "resources/list", nil))
	var got []string
	for _, res := range r.result()["resources"].([]any) {
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
		r := post(t, ts.url, request(3, "resources/read", map[string]any{"uri": uri}))
		c := r.result()["contents"].([]any)[0].(map[string]any)
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
		r := post(t, ts.url, request(1, "initialize", map[string]any{"protocolVersion": tc.asked, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}))
		res := r.result()
		if res["protocolVersion"] != tc.want {
			t.Errorf("initialize %s: protocolVersion %v, want %s", tc.asked, res["protocolVersion"], tc.want)
		}
		if r.header.Get("Mcp-Session-Id") == "" {
			t.Errorf("initialize %s: no session id", tc.asked)
		}
		info := res["serverInfo"].(map[string]any)
		if info["name"] != "service-mcp-server" || info["version"] != "1.0.0" || info["description"] == "" {
			t.Errorf("serverInfo = %v", info)
		}
		caps, _ := json.Marshal(res["capabilities"])
		if string(caps) != `{"logging":{"level":"info"},"prompts":{"listChanged":false},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}` {
			t.Errorf("capabilities = %s", caps)
		}
	}

	r := post(t, ts.url, request(1, "initialize", map[string]any{"capabilities": map[string]any{}}))
	if r.errCode() != mcpserver.CodeInvalidParams || !strings.Contains(r.details(), "protocolVersion") {
		t.Errorf("initialize without version: %s", r.raw)
	}

	ping := request(9, "ping", nil)
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
		r := post(t, ts.url, ping, "MCP-Protocol-Version", tc.header)
		if r.status != tc.wantStatus || r.errCode() != tc.wantCode {
			t.Errorf("ping with MCP-Protocol-Version %q: %d %s", tc.header, r.status, r.raw)
		}
	}

	meta := func(v string) map[string]any {
		return map[string]any{"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    v,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}}
	}
	r = post(t, ts.url, request("d", "server/discover", meta("2026-07-28")), "MCP-Protocol-Version", "2026-07-28")
	res := r.result()
	if r.status != 200 || res["supportedVersions"].([]any)[0] != "2026-07-28" ||
		res["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"].(map[string]any)["name"] != "service-mcp-server" {
		t.Errorf("server/discover: %s", r.raw)
	}
	if res["resultType"] != "complete" {
		t.Errorf("2026-07-28 result without resultType: %s", r.raw)
	}
	r = post(t, ts.url, request("c", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "m"}, "_meta": meta("2026-07-28")["_meta"]}), "MCP-Protocol-Version", "2026-07-28")
	if res := r.result(); res["resultType"] != "complete" || res["structuredContent"] == nil {
		t.Errorf("2026-07-28 tools/call: %s", r.raw)
	}
	if r := post(t, ts.url, request("p", "ping", nil), "MCP-Protocol-Version", "2025-11-25"); r.result()["resultType"] != nil {
		t.Errorf("2025-11-25 result with resultType: %s", r.raw)
	}
	r = post(t, ts.url, request("d", "server/discover", meta("2027-01-01")), "MCP-Protocol-Version", "2027-01-01")
	if r.errCode() != mcpserver.CodeUnsupportedProtocolVersion || r.body["error"].(map[string]any)["data"].(map[string]any)["supported"] == nil {
		t.Errorf("server/discover with a future version: %s", r.raw)
	}
	r = post(t, ts.url, request("d", "tools/list", meta("2026-07-28")), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call")
	if r.status != 400 || r.errCode() != mcpserver.CodeInvalidRequest || !strings.Contains(r.details(), "Mcp-Method") {
		t.Errorf("Mcp-Method disagreeing with the body: %d %s", r.status, r.raw)
	}
	r = post(t, ts.url, request("d", "tools/list", meta("2026-07-28")), "MCP-Protocol-Version", "2025-11-25")
	if r.status != 400 || r.errCode() != mcpserver.CodeInvalidRequest {
		t.Errorf("header disagreeing with _meta: %d %s", r.status, r.raw)
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
		r := post(t, ts.url, request(1, "ping", nil), "Origin", tc.origin)
		if r.status != tc.want {
			t.Errorf("Origin %q: HTTP %d, want %d", tc.origin, r.status, tc.want)
		}
		if tc.want == 403 && r.errCode() != mcpserver.CodeInvalidRequest {
			t.Errorf("Origin %q: %s", tc.origin, r.raw)
		}
	}
}

func TestSessionLifecycle(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		ts := newServer(t, rb.addr, uniquePrefix(), mcpserver.Config{}, allTools(newSlowTool()), nil)
		sid := initialize(t, ts.url, "2025-11-25")
		if r := post(t, ts.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid); r.status != 202 || len(r.raw) != 0 {
			t.Errorf("notification: %d %s", r.status, r.raw)
		}
		if r := post(t, ts.url, `{"jsonrpc":"2.0","id":99,"result":{}}`, "Mcp-Session-Id", sid); r.status != 202 {
			t.Errorf("client response: %d %s", r.status, r.raw)
		}
		if r := post(t, ts.url, request(2, "tools/list", nil), "Mcp-Session-Id", sid); r.status != 200 || r.errCode() != 0 {
			t.Fatalf("tools/list in session: %d %s", r.status, r.raw)
		}
		del := func() wireResponse {
			req, _ := http.NewRequest(http.MethodDelete, ts.url, nil)
			req.Header.Set("Mcp-Session-Id", sid)
			return do(t, req)
		}
		if r := del(); r.status != 204 {
			t.Fatalf("DELETE: %d %s", r.status, r.raw)
		}
		if r := post(t, ts.url, request(3, "tools/list", nil), "Mcp-Session-Id", sid); r.status != 404 || r.errCode() != mcpserver.CodeInvalidRequest || r.body["id"] != 3.0 {
			t.Errorf("request after DELETE: %d %s", r.status, r.raw)
		}
		if r := del(); r.status != 404 {
			t.Errorf("second DELETE: %d", r.status)
		}
		req, _ := http.NewRequest(http.MethodPut, ts.url, nil)
		if r := do(t, req); r.status != 405 || r.header.Get("Allow") == "" {
			t.Errorf("PUT: %d", r.status)
		}
		req, _ = http.NewRequest(http.MethodGet, ts.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		if r := do(t, req); r.status != 400 {
			t.Errorf("GET without session: %d", r.status)
		}
		if r := post(t, ts.url, request(1, "ping", nil), "Content-Type", "text/plain"); r.status != 415 {
			t.Errorf("text/plain body: %d", r.status)
		}
	})
}

func TestRequestBodyLimit(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{MaxRequestBytes: 1000}, allTools(newSlowTool()), nil)
	r := post(t, ts.url, request(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": strings.Repeat("a", 2000)}}))
	if r.status != http.StatusRequestEntityTooLarge || r.errCode() != mcpserver.CodeInvalidRequest {
		t.Errorf("oversized request: %d %s", r.status, r.raw)
	}
}

func TestSessionExpiry(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		ts := newServer(t, rb.addr, uniquePrefix(), mcpserver.Config{SessionTTL: time.Second}, allTools(newSlowTool()), nil)
		sid := initialize(t, ts.url, "2025-11-25")
		rb.elapse(600 * time.Millisecond)
		if r := post(t, ts.url, request(1, "ping", nil), "Mcp-Session-Id", sid); r.status != 200 {
			t.Fatalf("ping within the TTL: %d %s", r.status, r.raw)
		}
		// The ping renewed the session; it expires a TTL after the last use.
		rb.elapse(600 * time.Millisecond)
		if r := post(t, ts.url, request(2, "ping", nil), "Mcp-Session-Id", sid); r.status != 200 {
			t.Fatalf("ping after renewal: %d %s", r.status, r.raw)
		}
		rb.elapse(1500 * time.Millisecond)
		if r := post(t, ts.url, request(3, "ping", nil), "Mcp-Session-Id", sid); r.status != 404 || r.errCode() != mcpserver.CodeInvalidRequest {
			t.Errorf("ping after expiry: %d %s", r.status, r.raw)
		}
	})
}
