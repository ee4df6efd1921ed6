package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/mcpserver/mcptest"
	"github.com/platform-dev/platform/tools"
)

// analysis is a tool whose work the test chooses.
type analysis struct {
	name string
	work func(ctx context.Context) (any, error)
}

func (a analysis) Spec() tools.Spec {
	return tools.Spec{Name: a.name, Description: "test analysis", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (a analysis) Call(ctx context.Context, _ json.RawMessage) (any, error) { return a.work(ctx) }

// gauge reads a gauge of reg.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s", name)
	return 0
}

func quick(context.Context) (any, error) { return map[string]any{"ok": true}, nil }

// serveBudgeted serves the analyses within a budget of config over the MCP wire protocol.
func serveBudgeted(t *testing.T, config tools.BudgetConfig, as ...analysis) string {
	t.Helper()
	if config.Registerer == nil {
		config.Registerer = prometheus.NewRegistry()
	}
	b, err := tools.NewBudget(config)
	if err != nil {
		t.Fatal(err)
	}
	var set tools.Set
	for _, a := range as {
		set.Tools = append(set.Tools, a)
	}
	return mcptest.Serve(t, miniredis.RunT(t).Addr(), mcpserver.Config{
		RequestsPerWindow: 1000, Window: time.Minute, MaxConcurrent: 100, RequestTimeout: 20 * time.Second,
	}, b.Apply(set), &tools.Hub{}, nil).URL
}

// call sends tools/call and returns the result's isError and text.
func call(t *testing.T, url, name string) (isError bool, text string) {
	t.Helper()
	r := mcptest.Post(t, url, mcptest.Request(1, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}}),
		"MCP-Protocol-Version", "2025-11-25")
	if r.ErrCode() != 0 {
		t.Fatalf("tools/call %s: JSON-RPC error %s", name, r.Raw)
	}
	res := r.Result()
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("tools/call %s: %s", name, r.Raw)
	}
	text, _ = content[0].(map[string]any)["text"].(string)
	return res["isError"] == true, text
}

// TestBudgetWorkers fills a pool of one worker and one waiting place: the third analysis is
// refused at once with a tool error naming the limit, and the two admitted ones finish.
func TestBudgetWorkers(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	reg := prometheus.NewRegistry()
	url := serveBudgeted(t, tools.BudgetConfig{Workers: 1, Queue: 1, Registerer: reg},
		analysis{"slow", func(ctx context.Context) (any, error) {
			started <- struct{}{}
			select {
			case <-release:
				return map[string]any{"ok": true}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}})
	var admitted sync.WaitGroup
	results := make(chan string, 2)
	for range 2 {
		admitted.Go(func() {
			if isErr, text := call(t, url, "slow"); isErr {
				results <- text
			}
		})
	}
	<-started // the first runs; the second waits for its worker
	for gauge(t, reg, "platform_mcp_analyses_waiting") < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	if isErr, text := call(t, url, "slow"); !isErr || !strings.Contains(text, "analysis workers") || !strings.Contains(text, "at most 1 analyses at once") {
		t.Errorf("a third analysis beside a full pool and queue answered isError=%v %q, want refused naming the limit", isErr, text)
	}
	if got := gauge(t, reg, "platform_mcp_analyses_running"); got != 1 {
		t.Errorf("platform_mcp_analyses_running %v, want 1", got)
	}
	close(release)
	admitted.Wait()
	close(results)
	for text := range results {
		t.Errorf("an admitted analysis failed: %s", text)
	}
}

// TestBudgetMemory runs analyses past the memory ceiling, by what they hold and by what they
// read, and checks that each is stopped with a tool error naming the limit and that the
// process serves the next call.
func TestBudgetMemory(t *testing.T) {
	const ceiling = 32 << 20
	url := serveBudgeted(t, tools.BudgetConfig{Workers: 2, MaxMemory: ceiling},
		analysis{"hoard", func(ctx context.Context) (any, error) {
			// Holds 1 MiB after 1 MiB, up to 1 GiB, as a document expanding its aliases would.
			var held [][]byte
			for range 1024 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				held = append(held, make([]byte, 1<<20))
				for i := 0; i < len(held[len(held)-1]); i += 4096 {
					held[len(held)-1][i] = 1
				}
			}
			return map[string]any{"held": len(held)}, nil
		}},
		analysis{"reader", func(ctx context.Context) (any, error) {
			for range 1024 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				tools.Charge(ctx, 1<<20) // a file of 1 MiB read
			}
			return map[string]any{"read": "1 GiB"}, nil
		}},
		analysis{"quick", quick})
	for _, name := range []string{"hoard", "reader"} {
		t.Run(name, func(t *testing.T) {
			isErr, text := call(t, url, name)
			if !isErr || !strings.Contains(text, "analysis memory") || !strings.Contains(text, "32 MiB") {
				t.Fatalf("an analysis past the ceiling answered isError=%v %q, want stopped naming the limit", isErr, text)
			}
			if isErr, text := call(t, url, "quick"); isErr {
				t.Fatalf("the call after the stopped analysis: %s", text)
			}
		})
	}
}

// TestBudgetPanic: an analysis that panics on its worker is answered as an internal error,
// as without a budget, and the process and the worker serve the next call.
func TestBudgetPanic(t *testing.T) {
	url := serveBudgeted(t, tools.BudgetConfig{Workers: 1},
		analysis{"broken", func(context.Context) (any, error) { panic("a parser's bug") }},
		analysis{"quick", quick})
	r := mcptest.Post(t, url, mcptest.Request(1, "tools/call", map[string]any{"name": "broken", "arguments": map[string]any{}}),
		"MCP-Protocol-Version", "2025-11-25")
	if r.ErrCode() != -32004 {
		t.Errorf("a panicking analysis answered %s, want -32004", r.Raw)
	}
	if isErr, text := call(t, url, "quick"); isErr {
		t.Errorf("the call after the panic: %s", text)
	}
}
