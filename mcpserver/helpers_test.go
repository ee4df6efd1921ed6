package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/mcpserver/mcptest"
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

// stepTool reports progress at each of its steps.
type stepTool struct{}

func (stepTool) Spec() tools.Spec {
	return tools.Spec{Name: "steps", Description: "Reports progress.", InputSchema: json.RawMessage(`{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":10}}}`)}
}

func (stepTool) Call(ctx context.Context, args json.RawMessage) (any, error) {
	var a struct{ Steps int }
	_ = json.Unmarshal(args, &a)
	for i := range a.Steps {
		tools.ReportProgress(ctx, float64(i+1), float64(a.Steps), fmt.Sprintf("step %d of %d", i+1, a.Steps))
		tools.ReportProgress(ctx, float64(i+1), float64(a.Steps), "a repeated value is dropped")
	}
	return map[string]any{"steps": a.Steps}, nil
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
// when one is installed (always under CI=true, see testenv.Use).
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
	if testenv.Use("redis-server") {
		out = append(out, func(t testing.TB) redisBackend {
			addr, stop := testenv.RedisServer(t)
			return redisBackend{name: "redis-server", addr: addr, stop: stop, elapse: time.Sleep}
		})
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

type testServer struct {
	srv *mcpserver.Server
	url string
	rdb *redis.Client
}

// newServer starts a server on addr's Redis with a fresh key prefix per test, so that
// servers of one test share state and tests do not.
func newServer(t testing.TB, addr, prefix string, cfg mcpserver.Config, set tools.Set, hub *tools.Hub) testServer {
	t.Helper()
	return newServerLogged(t, addr, prefix, cfg, set, hub, io.Discard)
}

// newServerLogged is newServer with the server's log written to log.
func newServerLogged(t testing.TB, addr, prefix string, cfg mcpserver.Config, set tools.Set, hub *tools.Hub, log io.Writer) testServer {
	t.Helper()
	cfg.KeyPrefix = prefix
	if cfg.Version == "" {
		cfg.Version = "test"
	}
	s := mcptest.Serve(t, addr, cfg, set, hub, slog.New(slog.NewTextHandler(log, nil)))
	return testServer{srv: s.Server, url: s.URL, rdb: s.Redis}
}

var prefixes atomic.Int64

func uniquePrefix() string { return fmt.Sprintf("t%d:", prefixes.Add(1)) }

func allTools(slow *slowTool) tools.Set {
	return tools.Set{Tools: []tools.Tool{echoTool{}, slow, bigTool{}, failTool{}}}
}

func startMini(t *testing.T) string {
	t.Helper()
	return miniredis.RunT(t).Addr()
}
