package e2e

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/mcpserver/mcptest"
)

// The analysis flood: the binary in its one-machine shape (--role all) serves project
// "quiet" while MCP clients call analyze_codebase on a copy of GOROOT's net/http as fast as
// they are answered. The MCP client limits are lifted so that only the analysis budget
// holds the flood back.

// startAnalysisSite starts the quiet site with env and copies net/http into its workspace.
func startAnalysisSite(tb testing.TB, env ...string) *attackSite {
	tb.Helper()
	s := startNoisySite(tb, 0, 0, append([]string{"MCP_REQUESTS_PER_WINDOW=1000000", "MCP_MAX_CONCURRENT=10000"}, env...)...)
	src := filepath.Join(testenv.GOROOT(tb), "src", "net", "http")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(s.srv.Workspace, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o600)
	})
	if err != nil {
		tb.Fatalf("copy %s into the workspace: %v", src, err)
	}
	return s
}

// analysisRun counts the answers an analysis flood got.
type analysisRun struct {
	served, refused, other atomic.Int64
	lastOther              atomic.Value // the last answer counted as other
}

// floodAnalyses sends analyze_codebase with conns clients at once, each sending again as
// soon as it is answered (a second after a refusal), until ctx ends.
func (s *attackSite) floodAnalyses(ctx context.Context, conns int, r *analysisRun) *sync.WaitGroup {
	url := "http://" + s.srv.Addr + "/mcp"
	body := mcptest.Request(1, "tools/call", map[string]any{"name": "analyze_codebase", "arguments": map[string]any{"path": s.srv.Workspace}})
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, err := mcptest.NewPost(url, body, "MCP-Protocol-Version", "2025-11-25")
				var resp mcptest.Response
				if err == nil {
					resp, err = mcptest.Send(s.client, req.WithContext(ctx))
				}
				res := resp.Result()
				switch {
				case err != nil && ctx.Err() != nil:
				case err == nil && resp.ErrCode() == 0 && res["isError"] == false:
					r.served.Add(1)
				case err == nil && res["isError"] == true && strings.Contains(string(resp.Raw), "analysis workers"):
					r.refused.Add(1)
					_ = sleep(ctx, time.Second)
				default:
					r.other.Add(1)
					r.lastOther.Store(fmt.Sprintf("%v %.300s", err, resp.Raw))
				}
			}
		})
	}
	return &wg
}

// analysisFloodRun measures the quiet project alone for d, then while conns clients flood the
// analyses, and returns both runs and the flood's answers.
func (s *attackSite) analysisFloodRun(ctx context.Context, conns int, d time.Duration) (alone, shared quietRun, flood *analysisRun) {
	alone = s.quietLoad(ctx, d, nil)
	fctx, stop := context.WithCancel(ctx)
	flood = &analysisRun{}
	sent := s.floodAnalyses(fctx, conns, flood)
	// The first analyses are cold (every file parsed); the flood is measured warm, as a
	// busy server runs it.
	_ = sleep(ctx, 3*time.Second)
	shared = s.quietLoad(ctx, d, nil)
	stop()
	sent.Wait()
	return alone, shared, flood
}

// TestProjectServedWhileAnalysesFlood floods the analyses with more clients than the budget
// runs and queues: the project is served throughout, the analyses progress, and the calls
// past the queue are refused with a tool error naming the limit.
func TestProjectServedWhileAnalysesFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("floods a server for seconds; not in -short")
	}
	s := startAnalysisSite(t, "MCP_ANALYSES=1", "MCP_ANALYSIS_QUEUE=2")
	alone, shared, flood := s.analysisFloodRun(context.Background(), 8, 3*time.Second)
	t.Logf("quiet alone: %d requests, p99 %v; beside the analyses: %d requests, p99 %v; analyses served %d, refused %d",
		alone.requests, alone.p99, shared.requests, shared.p99, flood.served.Load(), flood.refused.Load())
	if shared.p99 >= time.Hour || shared.requests == 0 {
		t.Error("a request of the project failed while the analyses flooded")
	}
	if flood.served.Load() == 0 {
		t.Error("no analysis was served")
	}
	if flood.refused.Load() == 0 {
		t.Error("8 clients at once on 1 worker and 2 waiting places were all admitted")
	}
	if n := flood.other.Load(); n > 0 {
		t.Errorf("%d answers to the analyses were neither served nor refused naming the limit; last: %v", n, flood.lastOther.Load())
	}
}

// BenchmarkAnalysisFlood: go test -run '^$' -bench AnalysisFlood -benchtime 1x -timeout 20m ./e2e
// reports the quiet project's p99 beside the flood over alone (issue 32: at most 2), with the
// budget's defaults and with more analyses at once than cores.
func BenchmarkAnalysisFlood(b *testing.B) {
	for _, workers := range []string{"default", "4"} {
		b.Run("workers="+workers, func(b *testing.B) {
			var env []string
			if workers != "default" {
				env = append(env, "MCP_ANALYSES="+workers)
			}
			s := startAnalysisSite(b, env...)
			var alone, shared quietRun
			var flood *analysisRun
			const d = 5 * time.Second
			for b.Loop() {
				alone, shared, flood = s.analysisFloodRun(context.Background(), 8, d)
			}
			ratio := float64(shared.p99) / float64(alone.p99)
			b.ReportMetric(ratio, "quiet-p99/alone")
			b.ReportMetric(float64(shared.requests)/float64(alone.requests), "quiet-kept")
			b.ReportMetric(float64(flood.served.Load())/(d+3*time.Second).Seconds(), "analyses/s")
			b.Logf("quiet alone %.0f req/s, p99 %v; beside 8 clients flooding analyze_codebase: %.0f req/s, p99 %v (%.2fx); analyses served %d, refused %d, other %d",
				float64(alone.requests)/d.Seconds(), alone.p99, float64(shared.requests)/d.Seconds(), shared.p99, ratio,
				flood.served.Load(), flood.refused.Load(), flood.other.Load())
			if flood.served.Load() == 0 || flood.other.Load() > 0 {
				b.Errorf("analyses served %d, other answers %d (last %v)", flood.served.Load(), flood.other.Load(), flood.lastOther.Load())
			}
			if shared.p99 >= time.Hour {
				b.Error("a request of the project failed while the analyses flooded")
			}
		})
	}
}

// TestAnalysisMemoryCeiling runs an analysis past a ceiling of 1 MiB (net/http is 2.5 MB):
// it is stopped with a tool error naming the limit, and the process serves on.
func TestAnalysisMemoryCeiling(t *testing.T) {
	s := startAnalysisSite(t, "MCP_ANALYSIS_MEMORY=1MiB")
	url := "http://" + s.srv.Addr + "/mcp"
	r := mcptest.Post(t, url, mcptest.Request(1, "tools/call", map[string]any{"name": "analyze_codebase", "arguments": map[string]any{"path": s.srv.Workspace}}),
		"MCP-Protocol-Version", "2025-11-25")
	if r.ErrCode() != 0 || r.Result()["isError"] != true || !strings.Contains(string(r.Raw), "past the limit on analysis memory of 1 MiB") {
		t.Fatalf("an analysis past the memory ceiling answered %d %.500s, want a tool error naming the limit", r.Status, r.Raw)
	}
	if r := mcptest.Post(t, url, mcptest.Request(2, "ping", nil), "MCP-Protocol-Version", "2025-11-25"); r.ErrCode() != 0 || r.Status != 200 {
		t.Errorf("ping after the stopped analysis: %d %s", r.Status, r.Raw)
	}
	if err := s.quietServes(context.Background()); err != nil {
		t.Errorf("the project after the stopped analysis: %v", err)
	}
}
