package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// BudgetConfig bounds the analyses one process runs at once and what each may take.
type BudgetConfig struct {
	// Workers is how many analyses may run at once. Default GOMAXPROCS.
	Workers int
	// Queue is how many analyses may wait for a worker; one more is refused at once with a
	// *BudgetError. A waiting analysis waits as long as its call's context allows. Default
	// 2 × Workers.
	Queue int
	// MaxMemory is the memory, in bytes, one analysis may take: the bytes it reads and
	// parses (Charge), or its share of the growth of the live heap while it runs when that
	// is more. One that passes it is stopped with a *BudgetError. 0: no ceiling.
	MaxMemory int64
	// Run runs an analysis on its worker; nil calls it as it is. serve --role all runs
	// analyses on threads of lower priority than the projects' requests with it.
	Run func(work func())
	// Registerer receives the budget's metrics; nil keeps them unregistered.
	Registerer prometheus.Registerer
}

// DefaultBudget holds the defaults of the flags that set a Budget (Workers and Queue are
// computed from GOMAXPROCS when they are 0).
var DefaultBudget = BudgetConfig{MaxMemory: 512 << 20}

// Budget runs the analyses of a Set within a BudgetConfig: a bounded pool of workers, a
// bounded queue in front of it, and a memory ceiling per analysis. The zero value is not
// usable; see NewBudget.
type Budget struct {
	cfg     BudgetConfig
	workers chan struct{}
	waiting atomic.Int64

	stops *prometheus.CounterVec // analyses refused or stopped, by limit

	mu   sync.Mutex
	runs map[*run]struct{}
	// sampling is closed to stop the heap sampler, which runs while any analysis does.
	sampling chan struct{}
}

// NewBudget checks config and returns the budget.
func NewBudget(config BudgetConfig) (*Budget, error) {
	if config.Workers == 0 {
		config.Workers = runtime.GOMAXPROCS(0)
	}
	if config.Queue == 0 {
		config.Queue = 2 * config.Workers
	}
	switch {
	case config.Workers < 0:
		return nil, fmt.Errorf("tools: analysis workers %d: want a positive number", config.Workers)
	case config.Queue < 0:
		return nil, fmt.Errorf("tools: analysis queue %d: want a positive number (0 takes the default)", config.Queue)
	case config.MaxMemory < 0:
		return nil, fmt.Errorf("tools: analysis memory %d: want a positive number of bytes (0: no ceiling)", config.MaxMemory)
	}
	b := &Budget{cfg: config, workers: make(chan struct{}, config.Workers), runs: map[*run]struct{}{},
		stops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_mcp_analyses_stopped_total",
			Help: "MCP analyses refused because the workers and their queue were full (limit=\"" + LimitWorkers + "\"), or stopped past their memory ceiling (limit=\"" + LimitMemory + "\").",
		}, []string{"limit"}),
	}
	if config.Registerer != nil {
		for _, c := range []prometheus.Collector{
			b.stops,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "platform_mcp_analyses_running",
				Help: "MCP analyses holding a worker (of --mcp-analyses).",
			}, func() float64 { return float64(len(b.workers)) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "platform_mcp_analyses_waiting",
				Help: "MCP analyses waiting for a worker (of --mcp-analysis-queue).",
			}, func() float64 { return float64(b.waiting.Load()) }),
		} {
			if err := config.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("tools: register analysis budget metrics: %w", err)
			}
		}
	}
	return b, nil
}

// Apply returns set with every tool run within the budget.
func (b *Budget) Apply(set Set) Set {
	out := Set{Resources: set.Resources}
	for _, t := range set.Tools {
		out.Tools = append(out.Tools, budgeted{Tool: t, b: b})
	}
	return out
}

// The limits a BudgetError names.
const (
	LimitWorkers = "analysis workers"
	LimitMemory  = "analysis memory"
)

// BudgetError is an analysis refused or stopped by its Budget; Error names the limit, so
// that the caller knows to retry later or to narrow the call.
type BudgetError struct {
	Limit string // LimitWorkers or LimitMemory
	// Max is the limit: workers (and Queue, the waiting places) or bytes.
	Max, Queue int64
	Used       int64 // bytes the analysis had taken when it was stopped
}

func (e *BudgetError) Error() string {
	if e.Limit == LimitWorkers {
		return fmt.Sprintf("analysis refused: the server runs at most %d analyses at once and %d are already waiting (the limit on %s); retry in a few seconds", e.Max, e.Queue, e.Limit)
	}
	return fmt.Sprintf("analysis stopped: it took %d MiB, past the limit on %s of %d MiB for one analysis; narrow the call (a sub-folder, one language)",
		e.Used>>20, e.Limit, e.Max>>20)
}

type budgeted struct {
	Tool
	b *Budget
}

func (t budgeted) Call(ctx context.Context, args json.RawMessage) (any, error) {
	return t.b.call(ctx, t.Tool, args)
}

// run is one analysis running.
type run struct {
	b         *Budget
	charged   atomic.Int64 // bytes read and parsed (Charge)
	heapStart int64        // the live heap when it started
	cancel    context.CancelCauseFunc
	stopped   atomic.Bool
}

type runKey struct{}

// Charge counts n bytes that the analysis running with ctx read or parsed towards its
// memory ceiling, and stops it (its context is cancelled) once it passes the ceiling.
// Outside a Budget it does nothing. Readers call it once per file, not per token.
func Charge(ctx context.Context, n int64) {
	r, ok := ctx.Value(runKey{}).(*run)
	if !ok {
		return
	}
	r.charged.Add(n)
	r.b.check(r, liveHeap(), r.b.active())
}

func (b *Budget) call(ctx context.Context, t Tool, args json.RawMessage) (any, error) {
	select {
	case b.workers <- struct{}{}:
	default:
		if b.waiting.Add(1) > int64(b.cfg.Queue) {
			b.waiting.Add(-1)
			b.stops.WithLabelValues(LimitWorkers).Inc()
			return nil, &BudgetError{Limit: LimitWorkers, Max: int64(b.cfg.Workers), Queue: int64(b.cfg.Queue)}
		}
		select {
		case b.workers <- struct{}{}:
			b.waiting.Add(-1)
		case <-ctx.Done():
			b.waiting.Add(-1)
			return nil, ctx.Err()
		}
	}
	rctx, cancel := context.WithCancelCause(ctx)
	r := &run{b: b, heapStart: liveHeap(), cancel: cancel}
	rctx = context.WithValue(rctx, runKey{}, r)
	b.start(r)
	type outcome struct {
		v        any
		err      error
		panicked *analysisPanic
	}
	done := make(chan outcome, 1)
	go func() {
		// The worker is held until the analysis returns, even when its answer was given
		// up: one that does not heed its context still takes a worker's CPU.
		defer func() { b.end(r); cancel(nil); <-b.workers }()
		var o outcome
		work := func() {
			// A panic is the caller's to recover (the server answers it as an internal
			// error), not this goroutine's to end the process with.
			defer func() {
				if p := recover(); p != nil {
					o.panicked = &analysisPanic{value: p, stack: debug.Stack()}
				}
			}()
			o.v, o.err = t.Call(rctx, args)
		}
		if b.cfg.Run != nil {
			b.cfg.Run(work)
		} else {
			work()
		}
		done <- o
	}()
	var o outcome
	select {
	case o = <-done:
	case <-rctx.Done():
		if be := stopCause(rctx); be != nil {
			return nil, be
		}
		o = <-done // the call's own context ended: the server answers with its timeout
	}
	if o.panicked != nil {
		panic(o.panicked)
	}
	if be := stopCause(rctx); be != nil {
		return nil, be
	}
	return o.v, o.err
}

// analysisPanic carries a panic of an analysis, with the stack of the goroutine it ran on,
// to the caller's goroutine.
type analysisPanic struct {
	value any
	stack []byte
}

func (p *analysisPanic) String() string {
	return fmt.Sprintf("%v\n\nthe analysis's goroutine:\n%s", p.value, p.stack)
}

// stopCause is the *BudgetError that stopped the analysis of ctx, if one did.
func stopCause(ctx context.Context) *BudgetError {
	var be *BudgetError
	if errors.As(context.Cause(ctx), &be) {
		return be
	}
	return nil
}

// start registers r and starts the heap sampler if it is the only analysis running.
func (b *Budget) start(r *run) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.runs[r] = struct{}{}
	if len(b.runs) == 1 && b.cfg.MaxMemory > 0 {
		b.sampling = make(chan struct{})
		go b.sample(b.sampling)
	}
}

func (b *Budget) end(r *run) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.runs, r)
	if len(b.runs) == 0 && b.sampling != nil {
		close(b.sampling)
		b.sampling = nil
	}
}

func (b *Budget) active() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.runs)
}

// sampleEvery is how often the live heap is read while analyses run: a run that builds
// gigabytes does so at a few GB/s at most, so it passes its ceiling by tens of MB at most.
const sampleEvery = 10 * time.Millisecond

// sample checks every running analysis against the ceiling until stop is closed.
func (b *Budget) sample(stop chan struct{}) {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		heap := liveHeap()
		b.mu.Lock()
		runs := make([]*run, 0, len(b.runs))
		for r := range b.runs {
			runs = append(runs, r)
		}
		b.mu.Unlock()
		for _, r := range runs {
			b.check(r, heap, len(runs))
		}
	}
}

// check stops r when what it took passes the ceiling: the larger of what it charged and
// the live heap's growth since it started, shared evenly among the analyses running (the
// heap does not say which goroutine holds what; an analysis alone is charged all of it).
// The larger, not the sum: the bytes an analysis keeps of what it read are in both.
func (b *Budget) check(r *run, heap int64, running int) {
	if b.cfg.MaxMemory <= 0 || r.stopped.Load() {
		return
	}
	used := max(r.charged.Load(), max(0, heap-r.heapStart)/int64(max(1, running)))
	if used > b.cfg.MaxMemory && r.stopped.CompareAndSwap(false, true) {
		b.stops.WithLabelValues(LimitMemory).Inc()
		r.cancel(&BudgetError{Limit: LimitMemory, Max: b.cfg.MaxMemory, Used: used})
	}
}

// liveHeap reads the heap's live bytes as the last collection marked them: the memory
// that stays held, which is what ends a process, not the garbage. A run that keeps
// building makes the collector run as the heap doubles, so the figure lags it by a
// collection at most.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
