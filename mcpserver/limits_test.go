package mcpserver_test

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/mcpserver/mcptest"
	"github.com/platform-dev/platform/tenant"
	"github.com/platform-dev/platform/tools"
)

// asClient sends a request that a trusted proxy forwards for ip.
func asClient(ip string) []string { return []string{"X-Forwarded-For", ip} }

func TestRateLimit(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		proxies, err := tenant.ParseProxies([]string{"127.0.0.1/32", "::1"})
		if err != nil {
			t.Fatal(err)
		}
		clientIP := proxies.ClientIP()
		cfg := mcpserver.Config{RequestsPerWindow: 60, Window: time.Hour, ClientIP: clientIP}
		ts := newServer(t, rb.addr, uniquePrefix(), cfg, allTools(newSlowTool()), nil)
		call := func(i int, headers ...string) mcptest.Response {
			return mcptest.Post(t, ts.url, mcptest.Request(fmt.Sprintf("r%d", i), "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "x"}}), headers...)
		}
		for i := 1; i <= 60; i++ {
			if r := call(i, asClient("203.0.113.7")...); r.Status != 200 || r.ErrCode() != 0 {
				t.Fatalf("request %d: %d %s", i, r.Status, r.Raw)
			}
		}
		r := call(61, asClient("203.0.113.7")...)
		if r.Status != http.StatusTooManyRequests || r.ErrCode() != mcpserver.CodeRateLimited || r.Body["id"] != "r61" {
			t.Fatalf("61st request: %d %s", r.Status, r.Raw)
		}
		retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || retry < 1 || retry > 3600 {
			t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
		}
		if r.Header.Get("RateLimit-Limit") != "60" || r.Header.Get("RateLimit-Remaining") != "0" || r.Header.Get("RateLimit-Reset") == "" {
			t.Errorf("RateLimit headers %v", r.Header)
		}
		// Another client is still served, and so is one spoofing X-Forwarded-For behind the
		// limited client's proxy chain only when the proxy is trusted.
		if r := call(62, asClient("198.51.100.1")...); r.Status != 200 || r.ErrCode() != 0 {
			t.Errorf("other client: %d %s", r.Status, r.Raw)
		}
		if r := call(63, asClient("198.51.100.2, 203.0.113.7")...); r.ErrCode() != mcpserver.CodeRateLimited {
			t.Errorf("the nearest untrusted hop is the client: %s", r.Raw)
		}
	})
}

func TestMalformedRequestsAreLimited(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{RequestsPerWindow: 3, Window: time.Hour}, allTools(newSlowTool()), nil)
	for i := range 3 {
		if r := mcptest.Post(t, ts.url, `{"jsonrpc":`); r.ErrCode() != mcpserver.CodeParseError {
			t.Fatalf("malformed request %d: %s", i, r.Raw)
		}
	}
	if r := mcptest.Post(t, ts.url, `{"jsonrpc":`); r.ErrCode() != mcpserver.CodeRateLimited || r.Status != http.StatusTooManyRequests {
		t.Errorf("4th malformed request: %d %s", r.Status, r.Raw)
	}
}

func TestUntrustedForwardedFor(t *testing.T) {
	ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{RequestsPerWindow: 2, Window: time.Hour}, allTools(newSlowTool()), nil)
	for i := range 3 {
		r := mcptest.Post(t, ts.url, mcptest.Request(i, "ping", nil), asClient(fmt.Sprintf("192.0.2.%d", i))...)
		if want := i < 2; (r.ErrCode() == 0) != want {
			t.Errorf("request %d from an untrusted peer with a fresh X-Forwarded-For: %s", i, r.Raw)
		}
	}
}

// TestRateWindow checks the window's edges: it slides (a request leaves it exactly one
// window after it was accepted, not at a fixed boundary, and there is no refill on top of a
// burst), Retry-After names when the oldest request leaves, and refused requests do not
// count.
func TestRateWindow(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		const window = 1500 * time.Millisecond
		ts := newServer(t, rb.addr, uniquePrefix(), mcpserver.Config{RequestsPerWindow: 2, Window: window}, allTools(newSlowTool()), nil)
		start := time.Now()
		at := func(d time.Duration) { time.Sleep(time.Until(start.Add(d))) }
		ping := func(i int) mcptest.Response { return mcptest.Post(t, ts.url, mcptest.Request(i, "ping", nil)) }
		want := func(i int, ok bool, r mcptest.Response) {
			t.Helper()
			if (r.ErrCode() == 0) != ok || (!ok && r.ErrCode() != mcpserver.CodeRateLimited) {
				t.Fatalf("request %d at %s: want accepted=%v, got %s", i, time.Since(start).Round(time.Millisecond), ok, r.Raw)
			}
		}
		want(1, true, ping(1)) // t=0: A
		at(800 * time.Millisecond)
		want(2, true, ping(2)) // t=0.8: B
		at(900 * time.Millisecond)
		r := ping(3) // t=0.9: A and B are in the window
		want(3, false, r)
		if r.Header.Get("Retry-After") != "1" || r.Header.Get("RateLimit-Remaining") != "0" {
			t.Errorf("Retry-After %q RateLimit-Remaining %q, want 1 and 0 (A leaves at 1.5 s)", r.Header.Get("Retry-After"), r.Header.Get("RateLimit-Remaining"))
		}
		for i := range 5 { // refused requests do not count
			want(4+i, false, ping(4+i))
		}
		at(window + 100*time.Millisecond)
		want(9, true, ping(9)) // t=1.6: A left, B is still in
		want(10, false, ping(10))
		at(800*time.Millisecond + window + 100*time.Millisecond)
		want(11, true, ping(11)) // t=2.4: B left
	})
}

// TestRateRace fires many requests at once through two replicas: no more than the limit is
// ever accepted, and exactly the limit once the race is over.
func TestRateRace(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		prefix := uniquePrefix()
		// A generous StoreTimeout: a request that times out after Redis logged it stays
		// counted (the limiter errs on the side of refusing), which would blur the count.
		cfg := mcpserver.Config{RequestsPerWindow: 20, Window: time.Hour, MaxConcurrent: 100, StoreTimeout: 10 * time.Second}
		a := newServer(t, rb.addr, prefix, cfg, allTools(newSlowTool()), nil)
		b := newServer(t, rb.addr, prefix, cfg, allTools(newSlowTool()), nil)
		var accepted atomic.Int64
		var wg sync.WaitGroup
		for i := range 60 {
			url := a.url
			if i%2 == 1 {
				url = b.url
			}
			wg.Go(func() {
				if r := mcptest.Post(t, url, mcptest.Request(i, "ping", nil)); r.ErrCode() == 0 {
					accepted.Add(1)
				}
			})
		}
		wg.Wait()
		if n := accepted.Load(); n > 20 {
			t.Fatalf("%d requests accepted at once, limit 20", n)
		}
		for i := 0; accepted.Load() < 20 && i < 40; i++ {
			if r := mcptest.Post(t, a.url, mcptest.Request(i, "ping", nil)); r.ErrCode() == 0 {
				accepted.Add(1)
			}
		}
		if r := mcptest.Post(t, b.url, mcptest.Request("last", "ping", nil)); accepted.Load() != 20 || r.ErrCode() != mcpserver.CodeRateLimited {
			t.Errorf("accepted %d, then %s", accepted.Load(), r.Raw)
		}
	})
}

func TestConcurrencyLimit(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		slow := newSlowTool()
		cfg := mcpserver.Config{MaxConcurrent: 10, RequestsPerWindow: 1000}
		ts := newServer(t, rb.addr, uniquePrefix(), cfg, allTools(slow), nil)
		sid := mcptest.Initialize(t, ts.url, "2025-11-25")
		mcptest.OpenStream(t, ts.url, sid, "") // an open stream takes one of the ten slots

		var wg sync.WaitGroup
		results := make(chan mcptest.Response, 9)
		for i := range 9 {
			wg.Go(func() {
				results <- mcptest.Post(t, ts.url, mcptest.Request(i, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}}))
			})
		}
		for range 9 {
			select {
			case <-slow.started:
			case <-time.After(20 * time.Second):
				t.Fatal("slow calls did not start")
			}
		}
		r := mcptest.Post(t, ts.url, mcptest.Request("eleventh", "ping", nil))
		if r.Status != http.StatusTooManyRequests || r.ErrCode() != mcpserver.CodeRateLimited || r.Body["id"] != "eleventh" || r.Header.Get("Retry-After") == "" {
			t.Errorf("11th concurrent connection: %d %s", r.Status, r.Raw)
		}
		close(slow.release)
		wg.Wait()
		close(results)
		for r := range results {
			if r.ErrCode() != 0 {
				t.Errorf("held call: %s", r.Raw)
			}
		}
		if r := mcptest.Post(t, ts.url, mcptest.Request("after", "ping", nil)); r.ErrCode() != 0 {
			t.Errorf("after the calls finished: %s", r.Raw)
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
			if r := mcptest.Post(t, url, mcptest.Request(i, "ping", nil)); r.ErrCode() == 0 {
				allowed++
			} else if r.ErrCode() != mcpserver.CodeRateLimited {
				t.Fatalf("request %d: %s", i, r.Raw)
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

		sid := mcptest.Initialize(t, a.url, "2025-11-25")
		if r := mcptest.Post(t, b.url, mcptest.Request(2, "resources/subscribe", map[string]any{"uri": mcpserver.URICodeAnalysis}), "Mcp-Session-Id", sid); r.ErrCode() != 0 {
			t.Fatalf("subscribe on the other replica: %s", r.Raw)
		}
		stream := mcptest.OpenStream(t, b.url, sid, "")
		// The analysis finishes on replica A; the subscriber's stream is on replica B.
		hubA.Updated(mcpserver.URICodeAnalysis)
		first, msg := stream.Next(t, "notifications/resources/updated")
		if msg["params"].(map[string]any)["uri"] != mcpserver.URICodeAnalysis || first.ID == "" {
			t.Fatalf("notification %v id %q", msg, first.ID)
		}
		hubA.Updated(mcpserver.URICodeAnalysis)
		second, _ := stream.Next(t, "notifications/resources/updated")

		// Resuming on replica A after the first event replays the second.
		resumed := mcptest.OpenStream(t, a.url, sid, first.ID)
		again, _ := resumed.Next(t, "notifications/resources/updated")
		if again.ID != second.ID {
			t.Errorf("resumed at %q, want %q", again.ID, second.ID)
		}
		// The newer stream took delivery over; the older one is ended, so each
		// notification goes out on one stream only.
		stream.WaitClosed(t)

		if r := mcptest.Post(t, b.url, mcptest.Request(3, "resources/unsubscribe", map[string]any{"uri": mcpserver.URICodeAnalysis}), "Mcp-Session-Id", sid); r.ErrCode() != 0 {
			t.Fatalf("unsubscribe: %s", r.Raw)
		}
		req, _ := http.NewRequest(http.MethodDelete, a.url, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		if r := mcptest.Do(t, req); r.Status != 204 {
			t.Fatalf("DELETE: %d", r.Status)
		}
		if r := mcptest.Post(t, b.url, mcptest.Request(4, "ping", nil), "Mcp-Session-Id", sid); r.Status != 404 {
			t.Errorf("deleted session on the other replica: %d", r.Status)
		}
	})
}

// TestRedisDownFailsClosed stops Redis under a running server: every request, session or
// not, is refused within StoreTimeout with -32000 and 503 that name no internal address,
// Ready says so, and the server serves again by itself once Redis is back.
func TestRedisDownFailsClosed(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		ts := newServer(t, rb.addr, uniquePrefix(), mcpserver.Config{StoreTimeout: 300 * time.Millisecond}, allTools(newSlowTool()), nil)
		echo := mcptest.Request(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "x"}})
		if r := mcptest.Post(t, ts.url, echo); r.ErrCode() != 0 {
			t.Fatalf("with Redis: %s", r.Raw)
		}
		sid := mcptest.Initialize(t, ts.url, "2025-11-25")
		rb.stop()
		for _, c := range []struct {
			name    string
			body    string
			headers []string
		}{
			{"session request", mcptest.Request(6, "ping", nil), []string{"Mcp-Session-Id", sid}},
			{"tools/call", echo, nil},
			{"tools/list", mcptest.Request(3, "tools/list", nil), nil},
			{"initialize", mcptest.Request(5, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}}), nil},
			{"health", mcptest.Request(4, "resources/read", map[string]any{"uri": mcpserver.URISystemHealth}), nil},
		} {
			start := time.Now()
			r := mcptest.Post(t, ts.url, c.body, c.headers...)
			if took := time.Since(start); took > time.Second {
				t.Errorf("%s without Redis took %s", c.name, took)
			}
			if r.Status != http.StatusServiceUnavailable || r.ErrCode() != mcpserver.CodeServerError || r.Header.Get("Retry-After") == "" ||
				r.Header.Get("Mcp-Session-Id") != "" || !strings.Contains(r.Details(), "retry") || strings.Contains(string(r.Raw), "127.0.0.1") {
				t.Errorf("%s without Redis: %d %v %s", c.name, r.Status, r.Header, r.Raw)
			}
		}
		if err := ts.srv.Ready(t.Context()); err == nil {
			t.Error("Ready without Redis: nil")
		}
	})
}

// TestRedisRecovers restarts Redis on the same address: the server serves again without
// being restarted.
func TestRedisRecovers(t *testing.T) {
	mr := miniredis.RunT(t)
	ts := newServer(t, mr.Addr(), uniquePrefix(), mcpserver.Config{StoreTimeout: 300 * time.Millisecond}, allTools(newSlowTool()), nil)
	mr.Close()
	if r := mcptest.Post(t, ts.url, mcptest.Request(1, "ping", nil)); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("without Redis: %d %s", r.Status, r.Raw)
	}
	if err := mr.Restart(); err != nil {
		t.Fatal(err)
	}
	if r := mcptest.Post(t, ts.url, mcptest.Request(2, "ping", nil)); r.Status != http.StatusOK || r.ErrCode() != 0 {
		t.Errorf("after Redis came back: %d %s", r.Status, r.Raw)
	}
	if err := ts.srv.Ready(t.Context()); err != nil {
		t.Errorf("Ready after Redis came back: %v", err)
	}
}

// TestRedisHangs serves a Redis that accepts connections and never answers: requests fail
// within a second.
func TestRedisHangs(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	ts := newServer(t, l.Addr().String(), uniquePrefix(), mcpserver.Config{}, allTools(newSlowTool()), nil)
	start := time.Now()
	r := mcptest.Post(t, ts.url, mcptest.Request(1, "tools/list", nil))
	if took := time.Since(start); took > time.Second || r.Status != http.StatusServiceUnavailable || r.ErrCode() != mcpserver.CodeServerError {
		t.Errorf("with a hung Redis: %s, %d %s", took, r.Status, r.Raw)
	}
}
