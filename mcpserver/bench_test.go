package mcpserver_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/mcpserver/mcptest"
	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tools"
)

// BenchmarkToolCall measures one tools/call round trip over HTTP: parse, rate limit and
// concurrency slot in Redis, schema validation, the tool, encoding.
func BenchmarkToolCall(b *testing.B) {
	for _, start := range backends(b) {
		rb := start(b)
		b.Run(rb.name, func(b *testing.B) {
			// A 1 ms window keeps the rate log as short as a real client's (60 at most).
			cfg := mcpserver.Config{RequestsPerWindow: 1 << 30, Window: time.Millisecond, MaxConcurrent: 1 << 20}
			ts := newServer(b, rb.addr, uniquePrefix(), cfg, allTools(newSlowTool()), nil)
			body := mcptest.Request("b", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "bench", "mode": "shout"}})
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, ts.url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				if resp.StatusCode != 200 {
					b.Fatalf("HTTP %d", resp.StatusCode)
				}
				_ = resp.Body.Close()
			}
		})
	}
}

// BenchmarkVersusSDK serves the same three requests from this server and from a server built
// with the official Go SDK the way its examples build one (mcp.NewServer behind
// mcp.NewStreamableHTTPHandler, sessions in memory), in one run, with one client and one
// session each: tools/list, ping and resources/read of a small in-memory document. This
// server also keeps its limits and session in Redis (one pipelined round trip per request):
// miniredis as is, the store's embedded Redis (miniredis writing a pipeline's replies at
// once: what `make run` uses) and redis-server when installed.
func BenchmarkVersusSDK(b *testing.B) {
	servers := []struct {
		name string
		url  func(b *testing.B) string
	}{{"sdk", sdkServer}}
	for _, start := range append(backends(b), embeddedRedis) {
		servers = append(servers, struct {
			name string
			url  func(b *testing.B) string
		}{"platform-" + start(b).name, func(b *testing.B) string {
			rb := start(b)
			doc := &docResource{uri: mcpserver.URICodeAnalysis, doc: map[string]any{"info": "This is the hello example server."}}
			// The limiter does its production work; the window is short so that it holds a
			// handful of requests, as a real client's (at most 60) does, not the whole run.
			cfg := mcpserver.Config{RequestsPerWindow: 1 << 30, Window: time.Millisecond, MaxConcurrent: 1 << 20}
			set := allTools(newSlowTool())
			set.Resources = []tools.Resource{doc}
			return newServer(b, rb.addr, uniquePrefix(), cfg, set, nil).url
		}})
	}
	type target struct {
		name, url string
		headers   []string
	}
	var targets []target
	for _, srv := range servers {
		url := srv.url(b)
		sid := mcptest.Initialize(b, url, "2025-11-25")
		headers := []string{"Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25"}
		mcptest.Post(b, url, mcptest.Notification("notifications/initialized", nil), headers...)
		targets = append(targets, target{srv.name, url, headers})
	}
	// Method by method, each server in turn, so that the servers compared run close in time
	// on a machine whose load varies.
	for _, m := range []struct{ method, uri string }{{"tools/list", ""}, {"ping", ""}, {"resources/read", mcpserver.URICodeAnalysis}} {
		for _, tg := range targets {
			var params any
			uri := m.uri
			if tg.name == "sdk" && uri != "" {
				uri = "embedded:info"
			}
			if uri != "" {
				params = map[string]any{"uri": uri}
			}
			b.Run(m.method+"/"+tg.name, func(b *testing.B) {
				if r := mcptest.Post(b, tg.url, mcptest.Request(0, m.method, params), tg.headers...); r.Status != 200 || r.ErrCode() != 0 {
					b.Fatalf("%s: %d %s", m.method, r.Status, r.Raw)
				}
				var ids atomic.Int64 // a session's requests in flight need distinct ids
				b.ReportAllocs()
				defer reportCPU(b)()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						req, _ := mcptest.NewPost(tg.url, mcptest.Request(ids.Add(1), m.method, params), tg.headers...)
						resp, err := http.DefaultClient.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						_ = resp.Body.Close()
						if resp.StatusCode != 200 {
							b.Errorf("HTTP %d", resp.StatusCode)
							return
						}
					}
				})
			})
		}
	}
}

// reportCPU reports the process's CPU time (user and system) per operation from now to the
// call of the func it returns: on a machine shared with other work, wall time per request
// varies with the load, CPU time much less. It counts the client and, with the embedded
// Redis, Redis too (redis-server's own CPU time is not counted).
func reportCPU(b *testing.B) func() {
	start := cpuTime(b)
	return func() {
		b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sdkServer serves the official SDK's example shape: a tool, a text resource, Streamable
// HTTP with sessions.
func sdkServer(b *testing.B) string {
	server := mcp.NewServer(&mcp.Implementation{Name: "everything", Version: "v1"}, &mcp.ServerOptions{Instructions: "Use this server!"})
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "say hi"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Name string `json:"name"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hi " + in.Name}}}, nil, nil
	})
	server.AddResource(&mcp.Resource{Name: "info", MIMEType: "text/plain", URI: "embedded:info"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "This is the hello example server."}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	b.Cleanup(ts.Close)
	return ts.URL
}

// embeddedRedis is the store's embedded Redis, the one `platform serve` starts without
// REDIS_URL.
func embeddedRedis(b testing.TB) redisBackend {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close(ctx) })
	return redisBackend{name: "embedded", addr: strings.TrimPrefix(st.RedisURL, "redis://")}
}
