package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	cfg := mcpserver.Config{MaxConcurrent: 2} // the session's requests: the call and one more
	a := newServer(t, addr, prefix, cfg, allTools(slow), nil)
	b := newServer(t, addr, prefix, cfg, allTools(slow), nil)
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
	// The cancelled call's slot is free: two calls may run at once again.
	close(slow.release)
	for i := range 2 {
		if r := mcptest.Post(t, b.url, mcptest.Request(i, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}}), "Mcp-Session-Id", sid); r.ErrCode() != 0 {
			t.Errorf("call %d after the cancellation: %s", i, r.Raw)
		}
	}
}

// TestProgress: a tools/call with a progressToken is answered as an event stream of
// increasing notifications/progress followed by the result; without one the answer is JSON.
func TestProgress(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{}, tools.Set{Tools: []tools.Tool{stepTool{}}}, nil)
	call := func(meta map[string]any, headers ...string) mcptest.Response {
		params := map[string]any{"name": "steps", "arguments": map[string]any{"steps": 3}}
		if meta != nil {
			params["_meta"] = meta
		}
		return mcptest.Post(t, ts.url, mcptest.Request(7, "tools/call", params), headers...)
	}
	r := call(map[string]any{"progressToken": "p1"})
	if ct := r.Header.Get("Content-Type"); ct != "text/event-stream" || len(r.Events) != 4 {
		t.Fatalf("with a progressToken: %s, %d events:\n%s", ct, len(r.Events), r.Raw)
	}
	for i, ev := range r.Events[:3] {
		var n struct {
			Method string
			Params struct {
				ProgressToken string
				Progress      float64
				Total         float64
				Message       string
			}
		}
		if err := json.Unmarshal([]byte(ev.Data), &n); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("step %d of 3", i+1)
		if n.Method != "notifications/progress" || n.Params.ProgressToken != "p1" || n.Params.Progress != float64(i+1) || n.Params.Total != 3 || n.Params.Message != want {
			t.Errorf("event %d: %s", i, ev.Data)
		}
	}
	if r.ErrCode() != 0 || r.Body["id"] != 7.0 || r.Result()["structuredContent"].(map[string]any)["steps"] != 3.0 {
		t.Errorf("result event: %v", r.Body)
	}
	if r := call(nil); r.Header.Get("Content-Type") != "application/json" || r.ErrCode() != 0 {
		t.Errorf("without a progressToken: %s %s", r.Header.Get("Content-Type"), r.Raw)
	}
	if r := call(map[string]any{"progressToken": 5}, "Accept", "application/json"); r.Header.Get("Content-Type") != "application/json" || r.ErrCode() != 0 {
		t.Errorf("a client that accepts only JSON: %s %s", r.Header.Get("Content-Type"), r.Raw)
	}
}
