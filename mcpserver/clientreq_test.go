//lint:file-ignore SA1019 sampling is deprecated in 2026-07-28 but 2025 clients use it, and the conformance suite tests it.

package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/mcpserver/mcptest"
	"github.com/platform-dev/platform/tools"
)

// initializeWith starts a session whose client announces capabilities.
func initializeWith(t *testing.T, url string, capabilities map[string]any) string {
	t.Helper()
	r := mcptest.Post(t, url, mcptest.Request(1, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": map[string]any{"name": "test", "version": "0"},
	}))
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", r.Status, r.Raw)
	}
	return sid
}

// TestClientRequests: a tool's request to the client goes out on the tools/call's event
// stream, the client POSTs its answer to another replica, and the call gets it there. The
// client holds a single concurrency slot (taken by the call), which its answer must not
// need.
func TestClientRequests(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		prefix := uniquePrefix()
		cfg := mcpserver.Config{ConformanceFixtures: true, MaxConcurrent: 1}
		a := newServer(t, rb.addr, prefix, cfg, tools.Set{}, nil)
		b := newServer(t, rb.addr, prefix, cfg, tools.Set{}, nil)
		sid := initializeWith(t, a.url, map[string]any{"sampling": map[string]any{}, "elicitation": map[string]any{}})
		h := []string{"Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25"}

		for _, tc := range []struct {
			name, tool string
			args       map[string]any
			method     string
			answer     string // result or error member of the client's response
			want       string // the tool's text
			isError    bool
		}{
			{"sampling", "test_sampling", map[string]any{"prompt": "2+2?"}, "sampling/createMessage",
				`"result":{"role":"assistant","content":{"type":"text","text":"4"},"model":"m"}`, "LLM response: 4", false},
			{"elicitation", "test_elicitation", map[string]any{"message": "Who are you?"}, "elicitation/create",
				`"result":{"action":"accept","content":{"username":"ann","email":"a@b.c"}}`,
				`User response: action=accept, content={"username":"ann","email":"a@b.c"}`, false},
			{"declined", "test_elicitation_sep1034_defaults", map[string]any{}, "elicitation/create",
				`"result":{"action":"decline"}`, "Elicitation completed: action=decline, content={}", false},
			{"client error", "test_sampling", map[string]any{"prompt": "x"}, "sampling/createMessage",
				`"error":{"code":-1,"message":"User rejected sampling request"}`,
				"the client answered sampling/createMessage with error -1: User rejected sampling request", true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				req, _ := mcptest.NewPost(a.url, mcptest.Request(7, "tools/call", map[string]any{"name": tc.tool, "arguments": tc.args}), h...)
				stream := mcptest.Open(t, req)
				_, ask := stream.Next(t, tc.method)
				params, _ := ask["params"].(map[string]any)
				if tc.method == "sampling/createMessage" {
					msgs, _ := params["messages"].([]any)
					if len(msgs) != 1 || params["maxTokens"] != 100.0 || !strings.Contains(string(mustJSON(msgs)), tc.args["prompt"].(string)) {
						t.Errorf("sampling params %v", params)
					}
				} else if _, ok := params["requestedSchema"].(map[string]any); !ok {
					t.Errorf("elicitation params %v", params)
				}
				answer := `{"jsonrpc":"2.0","id":` + string(mustJSON(ask["id"])) + `,` + tc.answer + `}`
				if r := mcptest.Post(t, b.url, answer, h...); r.Status != 202 {
					t.Fatalf("answer: %d %s", r.Status, r.Raw)
				}
				_, resp := stream.Next(t, "")
				result, _ := resp["result"].(map[string]any)
				content, _ := result["content"].([]any)
				if resp["id"] != 7.0 || len(content) != 1 || result["isError"] != tc.isError {
					t.Fatalf("response %v", resp)
				}
				if text := content[0].(map[string]any)["text"]; text != tc.want {
					t.Errorf("text %q, want %q", text, tc.want)
				}
			})
		}
	})
}

// TestClientRequestRefused: a tool cannot ask a client that did not announce the capability,
// that accepts no event stream, or that has no session; the call fails with the reason.
func TestClientRequestRefused(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{ConformanceFixtures: true}, tools.Set{}, nil)
	noCaps := initializeWith(t, ts.url, map[string]any{"sampling": map[string]any{}})
	withCaps := initializeWith(t, ts.url, map[string]any{"elicitation": map[string]any{}})
	call := mcptest.Request(2, "tools/call", map[string]any{"name": "test_elicitation", "arguments": map[string]any{"message": "hi"}})
	for _, tc := range []struct {
		name    string
		headers []string
		want    string
	}{
		{"capability missing", []string{"Mcp-Session-Id", noCaps}, `the client did not announce the "elicitation" capability`},
		{"no event stream", []string{"Mcp-Session-Id", withCaps, "Accept", "application/json"}, "needs the tools/call to accept text/event-stream"},
		{"no session", nil, "elicitation/create needs a session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mcptest.Post(t, ts.url, call, tc.headers...)
			res := r.Result()
			content, _ := res["content"].([]any)
			if r.Status != 200 || res["isError"] != true || len(content) != 1 ||
				!strings.Contains(content[0].(map[string]any)["text"].(string), tc.want) {
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
		})
	}
}

// TestClientRequestTimeout: a client that never answers holds the call until its deadline;
// then the server tells the client to stop (notifications/cancelled) and the call times out.
func TestClientRequestTimeout(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{ConformanceFixtures: true, RequestTimeout: 500 * time.Millisecond}, tools.Set{}, nil)
	sid := initializeWith(t, ts.url, map[string]any{"sampling": map[string]any{}})
	req, _ := mcptest.NewPost(ts.url, mcptest.Request(3, "tools/call", map[string]any{"name": "test_sampling", "arguments": map[string]any{"prompt": "x"}}),
		"Mcp-Session-Id", sid)
	stream := mcptest.Open(t, req)
	_, ask := stream.Next(t, "sampling/createMessage")
	_, cancelled := stream.Next(t, "notifications/cancelled")
	if p, _ := cancelled["params"].(map[string]any); p["requestId"] != ask["id"] {
		t.Errorf("cancelled %v, asked %v", cancelled, ask["id"])
	}
	_, resp := stream.Next(t, "")
	if e, _ := resp["error"].(map[string]any); e["code"] != float64(mcpserver.CodeTimeout) {
		t.Errorf("response %v", resp)
	}
}

// TestSDKClientRequests: the official Go SDK client answers the server's sampling and
// elicitation requests through its handlers.
func TestSDKClientRequests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{ConformanceFixtures: true}, tools.Set{}, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-test", Version: "1.0.0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			text := req.Params.Messages[0].Content.(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{Role: "assistant", Model: "echo", Content: &mcp.TextContent{Text: "echo " + text}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "sdk", "email": "sdk@example.com"}}, nil
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.url, MaxRetries: 1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"test_sampling", map[string]any{"prompt": "hello"}, "LLM response: echo hello"},
		{"test_elicitation", map[string]any{"message": "who?"}, `User response: action=accept, content={"email":"sdk@example.com","username":"sdk"}`},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		if text, ok := res.Content[0].(*mcp.TextContent); res.IsError || !ok || text.Text != tc.want {
			t.Errorf("%s: %+v", tc.tool, res.Content[0])
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
