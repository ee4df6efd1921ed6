package mcpserver_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/tools"
)

// TestTypeScriptSDK runs the official MCP TypeScript SDK client (@modelcontextprotocol/sdk,
// pinned by testdata/npm/package-lock.json, installed by .ci/run) against the server:
// tools, invalid arguments, progress, cancellation, resources and subscriptions, prompts,
// completions, logging, sampling, elicitation and the end of the session
// (testdata/npm/client.mjs, one line per check).
func TestTypeScriptSDK(t *testing.T) {
	node := testenv.Need(t, "node")
	testenv.NeedFile(t, "testdata/npm/node_modules/@modelcontextprotocol/sdk/package.json", "npm ci --prefix mcpserver/testdata/npm")
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		slow := newSlowTool()
		set := allTools(slow)
		set.Tools = append(set.Tools, stepTool{})
		doc := &docResource{uri: mcpserver.URICodeAnalysis, doc: map[string]any{"files": 1.0}}
		set.Resources = []tools.Resource{doc}
		hub := &tools.Hub{}
		// One client making a few dozen requests and streams in a second or two: the limits
		// are other tests' business.
		cfg := mcpserver.Config{ConformanceFixtures: true, RequestsPerWindow: 1000}
		ts := newServer(t, rb.addr, uniquePrefix(), cfg, set, hub)

		// The subscription check waits for a change of the analysis document; keep making one.
		done := make(chan struct{})
		defer close(done)
		go func() {
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					doc.set(map[string]any{"files": 2.0})
					hub.Updated(mcpserver.URICodeAnalysis)
				}
			}
		}()

		cmd := exec.CommandContext(t.Context(), node, "client.mjs", ts.url)
		cmd.Dir = "testdata/npm"
		out, err := cmd.CombinedOutput()
		for line := range strings.Lines(string(out)) {
			if !strings.HasPrefix(line, "ok ") {
				t.Error(strings.TrimSpace(line))
			}
		}
		if err != nil {
			t.Fatalf("node client.mjs: %v", err)
		}
		if n := strings.Count(string(out), "ok "); n != 15 {
			t.Errorf("%d checks passed, want 15:\n%s", n, out)
		}
		select {
		case <-slow.cancelled:
		case <-time.After(10 * time.Second):
			t.Error("the aborted call's tool was not cancelled")
		}
	})
}
