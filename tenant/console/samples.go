package console

import (
	"context"
	"math"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// historySize is how many samples the health page's charts span: 5 minutes at the default
// interval.
const historySize = 60

// sample is one reading of the stores' pings and of the process's metrics.
type sample struct {
	at    time.Time
	pings []check
	// Totals of the counters the page charts, by series (see the series* constants), and the
	// sessions gauge (NaN when absent or when Redis did not answer).
	totals   map[string]float64
	sessions float64
	tools    map[string]toolReading
}

// Series of sample.totals.
const (
	seriesHTTP        = "http"
	seriesMCP         = "mcp"
	seriesToolCalls   = "calls"
	seriesRateRefused = "rate_refused"
	seriesConnRefused = "concurrency_refused"
	seriesUnavailable = "unavailable"
)

// toolReading is one tool's counters: calls and failed calls, and its latency histogram's
// sum (seconds) and count.
type toolReading struct {
	calls, failed, sum, count float64
}

// history is the ring of the latest samples, oldest first. One sample is taken at a time, so
// two pages polling together cost one reading.
type history struct {
	sampling sync.Mutex // held while a sample is taken
	mu       sync.Mutex
	samples  []sample
}

func (h *history) latest() (sample, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.samples) == 0 {
		return sample{}, false
	}
	return h.samples[len(h.samples)-1], true
}

func (h *history) add(s sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.samples) == historySize {
		h.samples = append(h.samples[:0], h.samples[1:]...)
	}
	h.samples = append(h.samples, s)
}

func (h *history) all() []sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]sample(nil), h.samples...)
}

// Run samples the figures every Config.SampleInterval until ctx ends, so that the health
// page opens on the last minutes' charts. Without it the page samples when it is polled.
func (con *Console) Run(ctx context.Context) {
	t := time.NewTicker(con.cfg.SampleInterval)
	defer t.Stop()
	for {
		con.sampleIfStale(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sampleIfStale takes a sample unless the latest is younger than most of an interval, and
// returns the samples.
func (con *Console) sampleIfStale(ctx context.Context) []sample {
	h := &con.history
	h.sampling.Lock()
	defer h.sampling.Unlock()
	if last, ok := h.latest(); !ok || time.Since(last.at) >= con.cfg.SampleInterval*9/10 {
		// The sample is shared by every page: a request that goes away does not cut it short.
		h.add(con.sample(context.WithoutCancel(ctx)))
	}
	return h.all()
}

// sample pings the stores and reads the metrics registry.
func (con *Console) sample(ctx context.Context) sample {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	s := sample{totals: map[string]float64{}, sessions: math.NaN(), tools: map[string]toolReading{}}
	for _, ping := range []struct {
		name string
		fn   func(context.Context) error
	}{{"database (" + con.cfg.Stores.Backend + ")", con.cfg.Stores.PingDatabase}, {"redis", con.cfg.Stores.PingRedis}} {
		start := time.Now()
		err := ping.fn(ctx)
		took := time.Since(start)
		ck := check{Name: ping.name, OK: err == nil, Status: "ok", Took: took.Round(10 * time.Microsecond).String(), took: took}
		if err != nil {
			ck.Status = err.Error()
		}
		s.pings = append(s.pings, ck)
	}
	s.at = time.Now()
	if con.cfg.Metrics == nil {
		return s
	}
	mfs, err := con.cfg.Metrics.Gather()
	if err != nil {
		// Gather returns what it could read along with the error.
		con.cfg.Logger.WarnContext(ctx, "console: gather metrics", "err", err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			l := labels(m)
			switch mf.GetName() {
			case "platform_http_requests_total":
				s.totals[seriesHTTP] += m.GetCounter().GetValue()
				if l["operation"] == "mcp" {
					s.totals[seriesMCP] += m.GetCounter().GetValue()
				}
			case "platform_mcp_sessions":
				s.sessions = m.GetGauge().GetValue()
			case "platform_mcp_tool_calls_total":
				t := s.tools[l["tool"]]
				t.calls += m.GetCounter().GetValue()
				if l["outcome"] != "ok" {
					t.failed += m.GetCounter().GetValue()
				}
				s.tools[l["tool"]] = t
				s.totals[seriesToolCalls] += m.GetCounter().GetValue()
			case "platform_mcp_tool_call_duration_seconds":
				t := s.tools[l["tool"]]
				t.sum, t.count = m.GetHistogram().GetSampleSum(), float64(m.GetHistogram().GetSampleCount())
				s.tools[l["tool"]] = t
			case "platform_mcp_limiter_decisions_total":
				switch {
				case l["decision"] == "unavailable":
					s.totals[seriesUnavailable] += m.GetCounter().GetValue()
				case l["decision"] == "refused" && l["limit"] == "rate":
					s.totals[seriesRateRefused] += m.GetCounter().GetValue()
				case l["decision"] == "refused" && l["limit"] == "concurrency":
					s.totals[seriesConnRefused] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return s
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}

// perMinute turns a counter's totals into its rate per minute between consecutive samples
// (one value fewer than samples); a counter that went down was reset and counts from zero.
func perMinute(samples []sample, total func(sample) float64) []float64 {
	var out []float64
	for i := 1; i < len(samples); i++ {
		d := total(samples[i]) - total(samples[i-1])
		if d < 0 {
			d = total(samples[i])
		}
		out = append(out, d/samples[i].at.Sub(samples[i-1].at).Minutes())
	}
	return out
}
