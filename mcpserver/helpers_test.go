package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/tools"
)

// echoTool has the schema shapes the analyses use: a required string, an enum and a number
// with a default.
type echoTool struct{}

func (echoTool) Spec() tools.Spec {
	return tools.Spec{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns its arguments.",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"message": {"type": "string"},
				"mode": {"type": "string", "enum": ["plain", "shout"]},
				"repeat": {"type": "number", "default": 1}
			},
			"required": ["message"],
			"additionalProperties": false
		}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"},"repeat":{"type":"number"}}}`),
	}
}

func (echoTool) Call(_ context.Context, args json.RawMessage) (any, error) {
	a := struct {
		Message string  `json:"message"`
		Mode    string  `json:"mode"`
		Repeat  float64 `json:"repeat"`
	}{Repeat: 1}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	msg := strings.Repeat(a.Message, int(a.Repeat))
	if a.Mode == "shout" {
		msg = strings.ToUpper(msg)
	}
	return map[string]any{"message": msg, "repeat": a.Repeat}, nil
}

// slowTool waits for its context, or for release when it is set, and reports whether it saw
// the cancellation.
type slowTool struct {
	started   chan struct{}
	release   chan struct{}
	cancelled chan struct{}
}

func newSlowTool() *slowTool {
	return &slowTool{started: make(chan struct{}, 100), release: make(chan struct{}), cancelled: make(chan struct{}, 100)}
}

func (*slowTool) Spec() tools.Spec {
	return tools.Spec{Name: "slow", Description: "Waits.", InputSchema: json.RawMessage(`{"type":"object","properties":{"depth":{"type":"number"}}}`)}
}

func (t *slowTool) Call(ctx context.Context, _ json.RawMessage) (any, error) {
	t.started <- struct{}{}
	select {
	case <-ctx.Done():
		t.cancelled <- struct{}{}
		return nil, ctx.Err()
	case <-t.release:
		return map[string]any{"done": true}, nil
	}
}

// bigTool returns a result above the 10 MB default response limit.
type bigTool struct{}

func (bigTool) Spec() tools.Spec {
	return tools.Spec{Name: "big", Description: "Returns 11 MB.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"depth":{"type":"number"}}}`)}
}

func (bigTool) Call(context.Context, json.RawMessage) (any, error) {
	return map[string]any{"blob": strings.Repeat("x", 11<<20)}, nil
}

// failTool fails in the three ways a tool can.
type failTool struct{}

func (failTool) Spec() tools.Spec {
	return tools.Spec{Name: "fail", Description: "Fails.", InputSchema: json.RawMessage(`{"type":"object","properties":{"how":{"type":"string","enum":["error","argument","panic"]}},"required":["how"]}`)}
}

func (failTool) Call(_ context.Context, args json.RawMessage) (any, error) {
	var a struct{ How string }
	_ = json.Unmarshal(args, &a)
	switch a.How {
	case "argument":
		return nil, tools.InvalidArgument("path", "leaves the workspace root")
	case "panic":
		panic("secret internal state")
	}
	return nil, errors.New("backend unreachable")
}

// docResource is an analysis document whose content the test changes.
type docResource struct {
	uri string
	mu  sync.Mutex
	doc map[string]any
}

func (r *docResource) Info() tools.ResourceInfo {
	return tools.ResourceInfo{URI: r.uri, Name: "Code Analysis", Description: "test analysis", MIMEType: "application/json"}
}

func (r *docResource) Read(context.Context) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.doc, nil
}

func (r *docResource) set(doc map[string]any) {
	r.mu.Lock()
	r.doc = doc
	r.mu.Unlock()
}

// redisBackend is a Redis server for the tests: miniredis always, and a real redis-server
// when one is installed.
type redisBackend struct {
	name string
	addr string
	// stop makes the server unreachable (to test failing closed).
	stop func()
	// elapse lets d pass for the server's key expiry (miniredis expires keys only when told).
	elapse func(d time.Duration)
}

func backends(t testing.TB) []func(t testing.TB) redisBackend {
	t.Helper()
	out := []func(t testing.TB) redisBackend{func(t testing.TB) redisBackend {
		mr := miniredis.RunT(t)
		return redisBackend{name: "miniredis", addr: mr.Addr(), stop: mr.Close, elapse: mr.FastForward}
	}}
	if path, err := exec.LookPath("redis-server"); err == nil {
		out = append(out, func(t testing.TB) redisBackend { return startRedisServer(t, path) })
	}
	return out
}

// forEachRedis runs fn once per available Redis server.
func forEachRedis(t *testing.T, fn func(t *testing.T, rb redisBackend)) {
	for _, start := range backends(t) {
		rb := start(t)
		t.Run(rb.name, func(t *testing.T) { fn(t, rb) })
	}
}

func startRedisServer(t testing.TB, path string) redisBackend {
	addr, stop := mcpserver.StartRedisServer(t, path)
	return redisBackend{name: "redis-server", addr: addr, stop: stop, elapse: time.Sleep}
}

type testServer struct {
	srv *mcpserver.Server
	url string
	rdb *redis.Client
}

// newServer starts a server on addr's Redis with a fresh key prefix per test, so that
// servers of one test share state and tests do not.
func newServer(t testing.TB, addr, prefix string, cfg mcpserver.Config, set tools.Set, hub *tools.Hub) testServer {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond, DialerRetries: 1})
	cfg.KeyPrefix = prefix
	if cfg.Version == "" {
		cfg.Version = "test"
	}
	srv, err := mcpserver.New(cfg, rdb, set, hub, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	ts := httptest.NewServer(mux)
	t.Cleanup(func() {
		ts.Close()
		_ = srv.Close()
		_ = rdb.Close()
	})
	return testServer{srv: srv, url: ts.URL + "/mcp", rdb: rdb}
}

var prefixes atomic.Int64

func uniquePrefix() string { return fmt.Sprintf("t%d:", prefixes.Add(1)) }

func allTools(slow *slowTool) tools.Set {
	return tools.Set{Tools: []tools.Tool{echoTool{}, slow, bigTool{}, failTool{}}}
}

// wireResponse is a raw HTTP answer and its decoded JSON-RPC body.
type wireResponse struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r wireResponse) errCode() int {
	e, _ := r.body["error"].(map[string]any)
	if e == nil {
		return 0
	}
	return int(e["code"].(float64))
}

func (r wireResponse) details() string {
	e, _ := r.body["error"].(map[string]any)
	if e == nil {
		return ""
	}
	d, _ := e["data"].(map[string]any)
	s, _ := d["details"].(string)
	return s
}

func (r wireResponse) result() map[string]any {
	m, _ := r.body["result"].(map[string]any)
	return m
}

// post sends one raw body with the given headers (Content-Type and Accept are set unless
// given).
func post(t *testing.T, url, body string, headers ...string) wireResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) wireResponse {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := wireResponse{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			t.Fatalf("%s: body is not JSON (%v): %.200s", req.Method, err, raw)
		}
	}
	return out
}

func request(id any, method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return string(b)
}

// initialize starts a session and returns its id.
func initialize(t *testing.T, url, version string) string {
	t.Helper()
	r := post(t, url, request(1, "initialize", map[string]any{
		"protocolVersion": version, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "0"},
	}))
	if r.status != 200 || r.errCode() != 0 {
		t.Fatalf("initialize: %d %s", r.status, r.raw)
	}
	sid := r.header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	return sid
}

// sseStream reads JSON-RPC messages from an open event stream.
type sseStream struct {
	resp   *http.Response
	events chan sseEvent
}

type sseEvent struct {
	id   string
	data string
}

func openStream(t *testing.T, url, sid, lastEventID string) *sseStream {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		cancel()
		t.Fatalf("GET stream: %v", err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		cancel()
		t.Fatalf("GET stream: %d %s", resp.StatusCode, b)
	}
	s := readSSE(resp)
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
	})
	return s
}

func readSSE(resp *http.Response) *sseStream {
	s := &sseStream{resp: resp, events: make(chan sseEvent, 100)}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.data != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return s
}

// next waits for the next message whose method is method.
func (s *sseStream) next(t *testing.T, method string) (sseEvent, map[string]any) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("stream ended while waiting for %s", method)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
				t.Fatalf("event data is not JSON: %q", ev.data)
			}
			if m["method"] == method {
				return ev, m
			}
		case <-timeout:
			t.Fatalf("no %s within 20 s", method)
		}
	}
}

func startMini(t *testing.T) string {
	t.Helper()
	return miniredis.RunT(t).Addr()
}

// waitClosed waits for the server to end the stream.
func (s *sseStream) waitClosed(t *testing.T) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("the stream was not ended")
		}
	}
}
