package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestBackgroundProcs: a replica that serves projects runs with a P more than its cores for
// each request the fair share runs on a thread of lower priority (pressure.BackgroundProcs),
// so that such a thread, waiting for a core, holds no P the other requests need; an mcp
// replica runs nothing in the background and keeps GOMAXPROCS.
func TestBackgroundProcs(t *testing.T) {
	for _, tc := range []struct {
		role        string
		cores, want int
	}{
		{"api", 1, 2},
		{"api", 2, 3},
		{"all", 2, 3},
		{"all", 4, 7},
		{"mcp", 2, 2},
	} {
		t.Run(fmt.Sprintf("%s on %d cores", tc.role, tc.cores), func(t *testing.T) {
			s := startServer(t, t.TempDir(), fmt.Sprintf("GOMAXPROCS=%d", tc.cores), "PLATFORM_ROLE="+tc.role)
			resp, err := http.Get("http://" + s.MetricsAddr + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := fmt.Sprintf("\ngo_sched_gomaxprocs_threads %d\n", tc.want); !strings.Contains(string(raw), want) {
				t.Errorf("GOMAXPROCS=%d, role %s: metrics have no %q", tc.cores, tc.role, want)
			}
		})
	}
}
