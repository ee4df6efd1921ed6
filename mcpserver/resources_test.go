package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/mcpserver/mcptest"
	"github.com/platform-dev/platform/tools"
)

func decodeContent(t *testing.T, r mcptest.Response) map[string]any {
	t.Helper()
	contents, _ := r.Result()["contents"].([]any)
	if len(contents) != 1 {
		t.Fatalf("resources/read: %s", r.Raw)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(contents[0].(map[string]any)["text"].(string)), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func TestHealth(t *testing.T) {
	slowMongo := func(ctx context.Context) error {
		select {
		case <-time.After(60 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	cfg := mcpserver.Config{Version: "v9.9.9", Checks: map[string]func(context.Context) error{
		"mongo": slowMongo,
		"redis": func(context.Context) error { return errors.New("connection refused") },
	}}
	ts := newServer(t, startMini(t), uniquePrefix(), cfg, allTools(newSlowTool()), nil)
	mcptest.Initialize(t, ts.url, "2025-11-25")
	mcptest.Post(t, ts.url, mcptest.Request(1, "nope", nil))
	doc := decodeContent(t, mcptest.Post(t, ts.url, mcptest.Request(2, "resources/read", map[string]any{"uri": mcpserver.URISystemHealth})))

	if doc["version"] != "v9.9.9" || doc["status"] != "degraded" || doc["uptimeSeconds"] == nil || doc["goroutines"].(float64) < 1 {
		t.Errorf("health %v", doc)
	}
	stores := doc["stores"].(map[string]any)
	if m := stores["mongo"].(map[string]any); m["ok"] != true || m["latencyMs"].(float64) < 50 {
		t.Errorf("mongo %v", m)
	}
	if r := stores["redis"].(map[string]any); r["ok"] != false || r["error"] != "connection refused" {
		t.Errorf("redis %v", r)
	}
	if s := doc["sessions"].(map[string]any); s["open"] != 1.0 {
		t.Errorf("sessions %v", s)
	}
	if req := doc["requests"].(map[string]any); req["lastMinute"].(float64) < 2 || req["errorsLastMinute"].(float64) < 1 {
		t.Errorf("requests %v", req)
	}
	if m := doc["memory"].(map[string]any); m["heapAllocBytes"].(float64) <= 0 {
		t.Errorf("memory %v", m)
	}
	if l := doc["limiter"].(map[string]any); l["requestsPerWindow"] != 60.0 || l["maxConcurrent"] != 10.0 || l["maxResponseBytes"] != float64(10<<20) {
		t.Errorf("limiter %v", l)
	}
	recs := strings.ToLower(strings.Join(toStrings(doc["recommendations"]), "\n"))
	if !containsAll(recs, "mongodb latency above 50 ms", "redis is not answering") {
		t.Errorf("recommendations %q", recs)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// TestListChanged: Update with a different set tells open sessions that the lists changed.
func TestListChanged(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{}, tools.Set{Tools: []tools.Tool{echoTool{}}}, nil)
	sid := mcptest.Initialize(t, ts.url, "2025-11-25")
	stream := mcptest.OpenStream(t, ts.url, sid, "")
	if err := ts.srv.Update(tools.Set{Tools: []tools.Tool{echoTool{}, failTool{}}}); err != nil {
		t.Fatal(err)
	}
	stream.Next(t, "notifications/tools/list_changed")
	if r := mcptest.Post(t, ts.url, mcptest.Request(1, "tools/list", nil), "Mcp-Session-Id", sid); len(r.Result()["tools"].([]any)) != 2 {
		t.Errorf("tools/list after Update: %s", r.Raw)
	}
	if err := ts.srv.Update(tools.Set{Tools: []tools.Tool{echoTool{}, echoTool{}}}); err == nil {
		t.Error("Update accepted a tool registered twice")
	}
}

// TestListen covers subscriptions/listen (2026-07-28) on the wire: acknowledgement first,
// then the opted-in notifications tagged with the listen request's id.
func TestListen(t *testing.T) {
	hub := &tools.Hub{}
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{}, tools.Set{Tools: []tools.Tool{echoTool{}}}, hub)
	body := mcptest.Request("L1", "subscriptions/listen", map[string]any{
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		},
		"notifications": map[string]any{"toolsListChanged": true, "resourceSubscriptions": []string{mcpserver.URICloud}},
	})
	req, _ := http.NewRequest(http.MethodPost, ts.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("listen: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	stream := mcptest.ReadSSE(resp.Body)
	_, ack := stream.Next(t, "notifications/subscriptions/acknowledged")
	if ack["params"].(map[string]any)["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"] != "L1" {
		t.Errorf("ack %v", ack)
	}
	hub.Updated(mcpserver.URICloud)
	_, upd := stream.Next(t, "notifications/resources/updated")
	params := upd["params"].(map[string]any)
	if params["uri"] != mcpserver.URICloud || params["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"] != "L1" {
		t.Errorf("update %v", upd)
	}
	if err := ts.srv.Update(tools.Set{Tools: []tools.Tool{echoTool{}, failTool{}}}); err != nil {
		t.Fatal(err)
	}
	stream.Next(t, "notifications/tools/list_changed")
}

// TestCancel: notifications/cancelled stops a running call, on whichever replica it runs.
func TestCancel(t *testing.T) {
	prefix := uniquePrefix()
	addr := startMini(t)
	slow := newSlowTool()
	a := newServer(t, addr, prefix, mcpserver.Config{}, allTools(slow), nil)
	b := newServer(t, addr, prefix, mcpserver.Config{}, allTools(slow), nil)
	sid := mcptest.Initialize(t, a.url, "2025-11-25")
	done := make(chan mcptest.Response, 1)
	go func() {
		done <- mcptest.Post(t, a.url, mcptest.Request("long", "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}}), "Mcp-Session-Id", sid)
	}()
	<-slow.started
	r := mcptest.Post(t, b.url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long","reason":"user"}}`, "Mcp-Session-Id", sid)
	if r.Status != 202 {
		t.Fatalf("cancel: %d", r.Status)
	}
	select {
	case <-slow.cancelled:
	case <-time.After(20 * time.Second):
		t.Fatal("the call was not cancelled")
	}
	if r := <-done; r.ErrCode() != mcpserver.CodeServerError || !strings.Contains(r.Details(), "cancelled") {
		t.Errorf("cancelled call answered %s", r.Raw)
	}
}
