package mcptest

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/tools"
)

// Server is an MCP server under test.
type Server struct {
	*mcpserver.Server
	// URL is its endpoint, ending in /mcp.
	URL string
	// Redis is the client it keeps its state with.
	Redis *redis.Client
}

// Serve starts a server of set and hub with cfg, its state in the Redis at redisAddr, behind
// an httptest server, and shuts everything down when the test ends. log nil discards the
// server's log. The Redis client gives up at once, so that tests of a server whose Redis is
// gone see it fail closed without retries.
func Serve(tb testing.TB, redisAddr string, cfg mcpserver.Config, set tools.Set, hub *tools.Hub, log *slog.Logger) Server {
	tb.Helper()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond, DialerRetries: 1})
	srv, err := mcpserver.New(cfg, rdb, set, hub, log)
	if err != nil {
		_ = rdb.Close()
		tb.Fatalf("start the MCP server: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	ts := httptest.NewServer(mux)
	tb.Cleanup(func() {
		ts.Close()
		_ = srv.Close()
		_ = rdb.Close()
	})
	return Server{Server: srv, URL: ts.URL + "/mcp", Redis: rdb}
}
