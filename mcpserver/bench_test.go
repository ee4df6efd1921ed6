package mcpserver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/mcpserver/mcptest"
)

// BenchmarkToolCall measures one tools/call round trip over HTTP: parse, rate limit and
// concurrency slot in Redis, schema validation, the tool, encoding.
func BenchmarkToolCall(b *testing.B) {
	for _, start := range backends(b) {
		rb := start(b)
		b.Run(rb.name, func(b *testing.B) {
			cfg := mcpserver.Config{RequestsPerWindow: 1 << 30, Window: time.Hour, MaxConcurrent: 1 << 20}
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
