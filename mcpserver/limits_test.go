package mcpserver_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/tools"
)

// asClient sends a request that a trusted proxy forwards for ip.
func asClient(ip string) []string { return []string{"X-Forwarded-For", ip} }

func TestRateLimit(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		cfg := mcpserver.Config{RequestsPerWindow: 60, Window: time.Hour, TrustedProxies: []string{"127.0.0.1/32", "::1"}}
		ts := newServer(t, rb.addr, uniquePrefix(), cfg, allTools(newSlowTool()), nil)
		call := func(i int, headers ...string) wireResponse {
			return post(t, ts.url, request(fmt.Sprintf("r%d", i), "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "x"}}), headers...)
		}
		for i := 1; i <= 60; i++ {
			if r := call(i, asClient("203.0.113.7")...); r.status != 200 || r.errCode() != 0 {
				t.Fatalf("request %d: %d %s", i, r.status, r.raw)
			}
		}
		r := call(61, asClient("203.0.113.7")...)
		if r.status != http.StatusTooManyRequests || r.errCode() != mcpserver.CodeRateLimited || r.body["id"] != "r61" {
			t.Fatalf("61st request: %d %s", r.status, r.raw)
		}
		retry, err := strconv.Atoi(r.header.Get("Retry-After"))
		if err != nil || retry < 1 || retry > 3600 {
			t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
		}
		if r.header.Get("RateLimit-Limit") != "60" || r.header.Get("RateLimit-Remaining") != "0" || r.header.Get("RateLimit-Reset") == "" {
			t.Errorf("RateLimit headers %v", r.header)
		}
		// Another client is still served, and so is one spoofing X-Forwarded-For behind the
		// limited client's proxy chain only when the proxy is trusted.
		if r := call(62, asClient("198.51.100.1")...); r.status != 200 || r.errCode() != 0 {
			t.Errorf("other client: %d %s", r.status, r.raw)
		}
		if r := call(63, asClient("198.51.100.2, 203.0.113.7")...); r.errCode() != mcpserver.CodeRateLimited {
			t.Errorf("the nearest untrusted hop is the client: %s", r.raw)
		}
	})
}

func TestMalformedRequestsAreLimited(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{RequestsPerWindow: 3, Window: time.Hour}, allTools(newSlowTool()), nil)
	for i := range 3 {
		if r := post(t, ts.url, `{"jsonrpc":`); r.errCode() != mcpserver.CodeParseError {
			t.Fatalf("malformed request %d: %s", i, r.raw)
		}
	}
	if r := post(t, ts.url, `{"jsonrpc":`); r.errCode() != mcpserver.CodeRateLimited || r.status != http.StatusTooManyRequests {
		t.Errorf("4th malformed request: %d %s", r.status, r.raw)
	}
}

func TestUntrustedForwardedFor(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{RequestsPerWindow: 2, Window: time.Hour}, allTools(newSlowTool()), nil)
	for i := range 3 {
		r := post(t, ts.url, request(i, "ping", nil), asClient(fmt.Sprintf("192.0.2.%d", i))...)
		if want := i < 2; (r.errCode() == 0) != want {
			t.Errorf("request %d from an untrusted peer with a fresh X-Forwarded-For: %s", i, r.raw)
		}
	}
}

// TestRateWindow uses a short window: once Retry-After has passed the client is served again.
func TestRateWindow(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{RequestsPerWindow: 2, Window: 2 * time.Second}, allTools(newSlowTool()), nil)
	for i := range 2 {
		if r := post(t, ts.url, request(i, "ping", nil)); r.errCode() != 0 {
			t.Fatalf("request %d: %s", i, r.raw)
		}
	}
	r := post(t, ts.url, request(3, "ping", nil))
	if r.errCode() != mcpserver.CodeRateLimited {
		t.Fatalf("third request: %s", r.raw)
	}
	retry, _ := strconv.Atoi(r.header.Get("Retry-After"))
	time.Sleep(time.Duration(retry) * time.Second)
	if r := post(t, ts.url, request(4, "ping", nil)); r.errCode() != 0 {
		t.Errorf("after Retry-After: %s", r.raw)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		slow := newSlowTool()
		cfg := mcpserver.Config{MaxConcurrent: 10, RequestsPerWindow: 1000}
		ts := newServer(t, rb.addr, uniquePrefix(), cfg, allTools(slow), nil)
		sid := initialize(t, ts.url, "2025-11-25")
		openStream(t, ts.url, sid, "") // an open stream takes one of the ten slots

		var wg sync.WaitGroup
		results := make(chan wireResponse, 9)
		for i := range 9 {
			wg.Go(func() {
				results <- post(t, ts.url, request(i, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}}))
			})
		}
		for range 9 {
			select {
			case <-slow.started:
			case <-time.After(20 * time.Second):
				t.Fatal("slow calls did not start")
			}
		}
		r := post(t, ts.url, request("eleventh", "ping", nil))
		if r.status != http.StatusTooManyRequests || r.errCode() != mcpserver.CodeRateLimited || r.body["id"] != "eleventh" || r.header.Get("Retry-After") == "" {
			t.Errorf("11th concurrent connection: %d %s", r.status, r.raw)
		}
		close(slow.release)
		wg.Wait()
		close(results)
		for r := range results {
			if r.errCode() != 0 {
				t.Errorf("held call: %s", r.raw)
			}
		}
		if r := post(t, ts.url, request("after", "ping", nil)); r.errCode() != 0 {
			t.Errorf("after the calls finished: %s", r.raw)
		}
	})
}

// TestReplicasShareLimits runs two servers on one Redis: together they allow one client only
// the configured number of requests, and a session started on one is served by the other.
func TestReplicasShareLimits(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		prefix := uniquePrefix()
		cfg := mcpserver.Config{RequestsPerWindow: 10, Window: time.Hour}
		a := newServer(t, rb.addr, prefix, cfg, allTools(newSlowTool()), nil)
		b := newServer(t, rb.addr, prefix, cfg, allTools(newSlowTool()), nil)
		allowed := 0
		for i := range 20 {
			url := a.url
			if i%2 == 1 {
				url = b.url
			}
			if r := post(t, url, request(i, "ping", nil)); r.errCode() == 0 {
				allowed++
			} else if r.errCode() != mcpserver.CodeRateLimited {
				t.Fatalf("request %d: %s", i, r.raw)
			}
		}
		if allowed != 10 {
			t.Errorf("two replicas allowed %d requests, want 10", allowed)
		}
	})
}

func TestReplicasShareSessions(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		prefix := uniquePrefix()
		hubA := &tools.Hub{}
		doc := &docResource{uri: mcpserver.URICodeAnalysis, doc: map[string]any{}}
		set := allTools(newSlowTool())
		set.Resources = []tools.Resource{doc}
		a := newServer(t, rb.addr, prefix, mcpserver.Config{}, set, hubA)
		b := newServer(t, rb.addr, prefix, mcpserver.Config{}, set, &tools.Hub{})

		sid := initialize(t, a.url, "2025-11-25")
		if r := post(t, b.url, request(2, "resources/subscribe", map[string]any{"uri": mcpserver.URICodeAnalysis}), "Mcp-Session-Id", sid); r.errCode() != 0 {
			t.Fatalf("subscribe on the other replica: %s", r.raw)
		}
		stream := openStream(t, b.url, sid, "")
		// The analysis finishes on replica A; the subscriber's stream is on replica B.
		hubA.Updated(mcpserver.URICodeAnalysis)
		first, msg := stream.next(t, "notifications/resources/updated")
		if msg["params"].(map[string]any)["uri"] != mcpserver.URICodeAnalysis || first.id == "" {
			t.Fatalf("notification %v id %q", msg, first.id)
		}
		hubA.Updated(mcpserver.URICodeAnalysis)
		second, _ := stream.next(t, "notifications/resources/updated")

		// Resuming on replica A after the first event replays the second.
		resumed := openStream(t, a.url, sid, first.id)
		again, _ := resumed.next(t, "notifications/resources/updated")
		if again.id != second.id {
			t.Errorf("resumed at %q, want %q", again.id, second.id)
		}
		// The newer stream took delivery over; the older one is ended, so each
		// notification goes out on one stream only.
		stream.waitClosed(t)

		if r := post(t, b.url, request(3, "resources/unsubscribe", map[string]any{"uri": mcpserver.URICodeAnalysis}), "Mcp-Session-Id", sid); r.errCode() != 0 {
			t.Fatalf("unsubscribe: %s", r.raw)
		}
		req, _ := http.NewRequest(http.MethodDelete, a.url, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		if r := do(t, req); r.status != 204 {
			t.Fatalf("DELETE: %d", r.status)
		}
		if r := post(t, b.url, request(4, "ping", nil), "Mcp-Session-Id", sid); r.status != 404 {
			t.Errorf("deleted session on the other replica: %d", r.status)
		}
	})
}

func TestRedisDownFailsClosed(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		ts := newServer(t, rb.addr, uniquePrefix(), mcpserver.Config{}, allTools(newSlowTool()), nil)
		if r := post(t, ts.url, request(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "x"}})); r.errCode() != 0 {
			t.Fatalf("with Redis: %s", r.raw)
		}
		sid := initialize(t, ts.url, "2025-11-25")
		rb.stop()
		// A store failure is -32004 with a reference, never the store's own message.
		if r := post(t, ts.url, request(6, "ping", nil), "Mcp-Session-Id", sid); r.status != http.StatusServiceUnavailable ||
			r.errCode() != mcpserver.CodeInternalError || strings.Contains(string(r.raw), "refused") {
			t.Errorf("session request without Redis: %d %s", r.status, r.raw)
		}
		r := post(t, ts.url, request(2, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "x"}}))
		if r.errCode() != mcpserver.CodeRateLimited || r.header.Get("Retry-After") == "" {
			t.Errorf("tools/call without Redis: %d %s", r.status, r.raw)
		}
		if r := post(t, ts.url, request(3, "tools/list", nil)); r.errCode() != 0 {
			t.Errorf("tools/list without Redis: %s", r.raw)
		}
		// initialize still answers, without a session: the client continues statelessly.
		r = post(t, ts.url, request(5, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}}))
		if r.errCode() != 0 || r.header.Get("Mcp-Session-Id") != "" {
			t.Errorf("initialize without Redis: %v %s", r.header, r.raw)
		}
		r = post(t, ts.url, request(4, "resources/read", map[string]any{"uri": mcpserver.URISystemHealth}))
		health := decodeContent(t, r)
		limiter := health["limiter"].(map[string]any)
		if health["status"] != "degraded" || limiter["available"] != false || health["stores"].(map[string]any)["redis"].(map[string]any)["ok"] != false {
			t.Errorf("health without Redis: %v", health)
		}
		if recs := fmt.Sprint(health["recommendations"]); !containsAll(recs, "fails closed", "redis is not answering") {
			t.Errorf("recommendations %s", recs)
		}
	})
}
