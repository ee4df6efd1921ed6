package tenant_test

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/platform-dev/platform/tenant"
)

// BenchmarkSubscriptions measures what docs/performance.md reports of subscriptions on one
// replica with the embedded Redis: the time from sending a create to its event reaching a
// WebSocket subscriber (create-to-event, p50 and p99), and the fan-out of one create to 1,000
// subscribers on 1,000 connections (time until the last has it, and the growth of the
// process's resident memory from opening them; clients and server share the process).
//
//	go test -run '^$' -bench BenchmarkSubscriptions -benchtime 200x ./tenant
func BenchmarkSubscriptions(b *testing.B) {
	d := newLiveDeployment(b, "")
	r := d.replica(tenant.RealtimeLimits{MaxConnsPerIP: 2000})
	d.project(r, "shop", "authenticated")
	token := d.token("shop", "alice", time.Hour)

	b.Run("create-to-event", func(b *testing.B) {
		ws := r.connect(b, "shop", token)
		ws.subscribe("1", productSub, nil)
		waitRunning(b, r, token, ws)
		took := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			r.create(b, "shop", token, "tea", 5)
			ws.event("1")
			took = append(took, time.Since(start))
		}
		reportPercentiles(b, took)
	})

	b.Run("fanout-1000", func(b *testing.B) {
		const n = 1000
		runtime.GC()
		rssBefore := rss(b)
		clients := make([]*wsClient, n)
		for i := range clients {
			clients[i] = r.connect(b, "shop", token)
			clients[i].subscribe("1", productSub, nil)
		}
		// Probes are created until one reached every subscription, as waitRunning does for
		// one: a subscription that was not running yet misses a probe for good.
		running := make([]bool, n)
		for attempt := 0; !allTrue(running); attempt++ {
			if attempt == 20 {
				b.Fatal("some subscriptions saw none of 20 writes")
			}
			r.create(b, "shop", token, "probe", 1)
			deadline := time.Now().Add(2 * time.Second)
			for i, c := range clients {
				wait := time.Until(deadline)
				if running[i] {
					wait = 10 * time.Second
				}
				if _, ok := c.within(max(wait, 0)); ok {
					running[i] = true
				}
			}
		}
		runtime.GC()
		growth := float64(rss(b)-rssBefore) / (1 << 20)
		took := make([]time.Duration, 0, b.N)
		for b.Loop() {
			start := time.Now()
			r.create(b, "shop", token, "tea", 5)
			for _, c := range clients {
				<-c.in
			}
			took = append(took, time.Since(start))
		}
		reportPercentiles(b, took)
		b.ReportMetric(growth, "MB-rss-growth")
		for _, c := range clients {
			_ = c.c.Close(websocket.StatusNormalClosure, "")
		}
		settle(b)
	})
}

func reportPercentiles(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	at := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(p*float64(len(took))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "ms-p50")
	b.ReportMetric(at(0.99), "ms-p99")
}

// rss is the process's resident memory in bytes: Linux only, elsewhere the benchmark (which
// CI never runs) is skipped.
func rss(b *testing.B) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status: resident memory is read on Linux only")
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	b.Skip("VmRSS not found")
	return 0
}

func allTrue(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return false
		}
	}
	return true
}
