package telemetry

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// StorePings samples the latency of the stores' pings: a ping costs the store nearly nothing
// and measures the network and the store's responsiveness as every request sees them.
type StorePings struct {
	checks  map[string]func(context.Context) error
	latency *prometheus.HistogramVec
	up      *prometheus.GaugeVec
}

// NewStorePings returns a sampler of checks, by store name ("database", "redis").
func NewStorePings(reg prometheus.Registerer, checks map[string]func(context.Context) error) (*StorePings, error) {
	p := &StorePings{
		checks: checks,
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "platform_store_ping_duration_seconds",
			Help:    "Round trip of a sampled ping to a store, failed pings included.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"store"}),
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "platform_store_up",
			Help: "1 when the store answered the last sampled ping, else 0.",
		}, []string{"store"}),
	}
	if err := register(reg, p.latency, p.up); err != nil {
		return nil, err
	}
	return p, nil
}

// Run pings every store now and then every interval until ctx ends; a ping may take at most
// timeout.
func (p *StorePings) Run(ctx context.Context, interval, timeout time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p.Sample(ctx, timeout)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sample pings every store once and records the result.
func (p *StorePings) Sample(ctx context.Context, timeout time.Duration) {
	for _, name := range slices.Sorted(maps.Keys(p.checks)) {
		pctx, cancel := context.WithTimeout(ctx, timeout)
		start := time.Now()
		err := p.checks[name](pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		p.latency.WithLabelValues(name).Observe(time.Since(start).Seconds())
		p.up.WithLabelValues(name).Set(boolFloat(err == nil))
	}
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
