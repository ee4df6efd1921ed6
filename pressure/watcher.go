package pressure

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// WatcherConfig configures NewWatcher.
type WatcherConfig struct {
	// Limit is the memory the process may use, in bytes (see DetectLimit). 0: the watcher
	// never reports pressure.
	Limit int64
	// Fraction of Limit past which the process is under pressure. Default 0.85.
	Fraction float64
	// Interval between samples. Default 100 ms.
	Interval time.Duration
	// Logger gets a line when pressure starts and when it ends. Default slog.Default().
	Logger *slog.Logger
	// Registerer receives the watcher's gauges (held bytes, threshold, pressure); nil keeps
	// them unregistered.
	Registerer prometheus.Registerer
}

// DefaultWatcherConfig holds the defaults that a zero field of WatcherConfig takes.
var DefaultWatcherConfig = WatcherConfig{Fraction: 0.85, Interval: 100 * time.Millisecond}

// Watcher samples the memory the process holds and reports pressure when it passes a
// fraction of the limit. Reading the flag costs one atomic load, so every request may ask.
type Watcher struct {
	threshold uint64
	// clear is the memory held below which pressure ends: a twentieth of the limit under
	// the threshold, so that a process hovering at the threshold does not flip (and log)
	// at every collection.
	clear    uint64
	interval time.Duration
	log      *slog.Logger
	samples  []metrics.Sample
	pressure atomic.Bool
	used     atomic.Uint64
}

// The memory a sample counts: what the last collection found live on the heap (garbage
// not yet collected is not held: the collector frees it before the process runs out),
// and goroutine stacks.
var sampled = []string{"/gc/heap/live:bytes", "/memory/classes/heap/stacks:bytes"}

// NewWatcher returns a watcher of cfg.Limit; Run samples.
func NewWatcher(cfg WatcherConfig) (*Watcher, error) {
	if cfg.Fraction == 0 {
		cfg.Fraction = DefaultWatcherConfig.Fraction
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultWatcherConfig.Interval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	switch {
	case cfg.Limit < 0:
		return nil, fmt.Errorf("pressure: limit %d: want a positive number of bytes", cfg.Limit)
	case cfg.Fraction <= 0 || cfg.Fraction > 1:
		return nil, fmt.Errorf("pressure: fraction %v: want more than 0 and at most 1", cfg.Fraction)
	case cfg.Interval < 0:
		return nil, fmt.Errorf("pressure: interval %v: want a positive duration", cfg.Interval)
	}
	threshold := uint64(float64(cfg.Limit) * cfg.Fraction)
	w := &Watcher{
		threshold: threshold,
		clear:     threshold - min(threshold, uint64(cfg.Limit)/20),
		interval:  cfg.Interval,
		log:       cfg.Logger,
		samples:   make([]metrics.Sample, len(sampled)),
	}
	for i, name := range sampled {
		w.samples[i].Name = name
	}
	if cfg.Registerer != nil {
		gauges := []prometheus.Collector{
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "platform_memory_held_bytes",
				Help: "Memory the process held at the last sample: the live heap and goroutine stacks.",
			}, func() float64 { return float64(w.Used()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "platform_memory_pressure_threshold_bytes",
				Help: "Memory held past which new expensive requests are refused (0: no memory limit known).",
			}, func() float64 { return float64(w.threshold) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "platform_memory_pressure",
				Help: "1 while the process refuses new expensive requests for memory, else 0.",
			}, func() float64 {
				if w.UnderPressure() {
					return 1
				}
				return 0
			}),
		}
		for _, g := range gauges {
			if err := cfg.Registerer.Register(g); err != nil {
				return nil, fmt.Errorf("pressure: register metrics: %w", err)
			}
		}
	}
	return w, nil
}

// UnderPressure reports whether the memory held passed the threshold, and has not yet
// dropped a twentieth of the limit below it, at the last sample.
func (w *Watcher) UnderPressure() bool { return w.pressure.Load() }

// Used is the memory held at the last sample, in bytes.
func (w *Watcher) Used() uint64 { return w.used.Load() }

// Threshold is the memory held past which the watcher reports pressure, 0 for none.
func (w *Watcher) Threshold() uint64 { return w.threshold }

// Run samples every Interval until ctx ends. Without a limit it returns at once.
func (w *Watcher) Run(ctx context.Context) {
	if w.threshold == 0 {
		return
	}
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		w.sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (w *Watcher) sample(ctx context.Context) {
	metrics.Read(w.samples)
	var used uint64
	for _, s := range w.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			used += s.Value.Uint64()
		}
	}
	w.used.Store(used)
	was := w.pressure.Load()
	now := used > w.threshold || was && used >= w.clear
	if was == now {
		return
	}
	w.pressure.Store(now)
	if now {
		w.log.WarnContext(ctx, "memory pressure: new expensive requests are refused with 503", "held_bytes", used, "threshold_bytes", w.threshold)
	} else {
		w.log.InfoContext(ctx, "memory pressure over: expensive requests are served again", "held_bytes", used, "threshold_bytes", w.threshold)
	}
}
