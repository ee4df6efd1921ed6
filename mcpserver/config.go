package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/platform-dev/platform/coord"
)

// Config holds every limit and policy of the server. A zero field takes the default shown in
// its comment, so Config{} is the seed's public configuration.
type Config struct {
	// RequestsPerWindow and Window bound how many HTTP requests of one client are accepted
	// in any window of that length (an exact sliding log in Redis, shared by every replica;
	// refused requests are not counted). Defaults: 60 per minute.
	RequestsPerWindow int
	Window            time.Duration
	// MaxConcurrent bounds a client's open connections: tools/call requests in flight plus
	// open SSE streams each hold one; any request is refused while all are held. Default 10.
	MaxConcurrent int
	// StoreTimeout bounds each Redis round trip of a request. When Redis is slow or down
	// every request is refused after at most this long (fail closed) with -32000 and 503,
	// and served again as soon as Redis answers. Default 500 ms.
	StoreTimeout time.Duration
	// RequestTimeout bounds one request; the tool's context is cancelled when it passes.
	// Default 30 s.
	RequestTimeout time.Duration
	// MaxResponseBytes bounds one JSON-RPC response. Default 10 MB (10 << 20).
	MaxResponseBytes int
	// MaxRequestBytes bounds one POST body. Default 1 MB.
	MaxRequestBytes int64
	// ClientIP names the client of a request for the limits: platform serve gives the
	// extractor of its --trusted-proxies (tenant.ClientIP), shared with the rest of the
	// server. Nil takes the TCP peer and never believes X-Forwarded-For.
	ClientIP func(*http.Request) string
	// HiddenPaths are folders (the workspace roots) whose absolute paths never appear in an
	// answer: a path below one is shown relative to it.
	HiddenPaths []string
	// ConformanceFixtures adds the tools the official MCP conformance suite calls
	// (test_simple_text, test_image_content, ...). Never on a public deployment: they exist
	// to prove the protocol handling.
	ConformanceFixtures bool
	// AllowedOrigins lists the browser origins ("https://app.example.com") that may call the
	// server; "*" allows any. A request with any other Origin header gets 403. Requests
	// without an Origin header (non-browser clients) are always allowed.
	AllowedOrigins []string
	// SessionTTL is how long an idle session (and its subscriptions and undelivered
	// notifications) lives in Redis. Default 1 h.
	SessionTTL time.Duration
	// EventBacklog bounds the notifications kept per session for Last-Event-ID resumption.
	// Default 1000.
	EventBacklog int64
	// KeyPrefix prefixes every Redis key and channel the server uses. Default "mcp:".
	KeyPrefix string
	// Checks are the store pings reported by service://system/health, by name
	// ("mongo", "redis"). When no "redis" check is given the server pings its own client.
	Checks map[string]func(context.Context) error
	// Version is the build version of the deployment, shown in service://system/health.
	Version string
	// Registerer receives the server's metrics (tool calls, limiter decisions); nil keeps
	// them unregistered.
	Registerer prometheus.Registerer
	// Tracer, when set, gets a span for each tools/call; nil costs nothing.
	Tracer trace.Tracer
	// Pressure, when set, reports that the process is near its memory limit
	// (pressure.Watcher.UnderPressure). While it does, a tools/call is refused before its
	// tool runs, with -32000, 503 and Retry-After; the other methods are cheap and answer.
	Pressure func() bool
}

// withDefaults fills zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.RequestsPerWindow == 0 {
		c.RequestsPerWindow = 60
	}
	if c.Window == 0 {
		c.Window = time.Minute
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = 10
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = 10 << 20
	}
	if c.StoreTimeout == 0 {
		c.StoreTimeout = 500 * time.Millisecond
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = 1 << 20
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = time.Hour
	}
	if c.EventBacklog == 0 {
		c.EventBacklog = 1000
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = coord.MCPPrefix
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	switch {
	case c.RequestsPerWindow < 0, c.Window < 0, c.MaxConcurrent < 0, c.RequestTimeout < 0,
		c.MaxResponseBytes < 0, c.MaxRequestBytes < 0, c.StoreTimeout < 0, c.SessionTTL < 0, c.EventBacklog < 0:
		return c, fmt.Errorf("mcpserver config: limits must not be negative")
	}
	if c.ClientIP == nil {
		c.ClientIP = peerAddr
	}
	return c, nil
}
