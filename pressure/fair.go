package pressure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// FairShareConfig configures NewFairShare.
type FairShareConfig struct {
	// Slots is how many requests may execute at once, across all projects. Default
	// 4 × GOMAXPROCS: enough to keep the cores busy while some requests wait on the disk or
	// the database, few enough that the requests running cannot make each other wait long.
	Slots int
	// Cores is how many cores the requests share. Default GOMAXPROCS; a process that
	// raised GOMAXPROCS to BackgroundProcs(cores) passes cores.
	Cores int
	// Queue is how many requests of one project may wait for a slot; one more is refused
	// with ErrQueueFull. Default 64.
	Queue int
	// MaxWait is the longest a request waits for a slot before it is refused with
	// ErrWaitedTooLong. Default 10 s (the GraphQL timeout's default).
	MaxWait time.Duration
	// Registerer receives the scheduler's metrics; nil keeps them unregistered.
	Registerer prometheus.Registerer
}

// DefaultFairShareConfig holds the defaults a zero field of FairShareConfig takes (Slots is
// computed from GOMAXPROCS when it is 0).
var DefaultFairShareConfig = FairShareConfig{Queue: 64, MaxWait: 10 * time.Second}

// Errors of Do. Both mean the process is saturated and the request should be retried
// later; neither is the caller's fault.
var (
	ErrQueueFull     = errors.New("its queue for an execution slot is full")
	ErrWaitedTooLong = errors.New("the request waited for an execution slot past its time")
)

// linger is how long a project that had a request running still counts as active. The
// clients of a busy project send again within a round trip; without it the project would
// leave and re-enter the count between two requests, and a flooding project would get
// every core back each time.
const linger = time.Second

// longRequest is the mean duration past which a project's requests count as long. The Go
// scheduler lets a running goroutine keep its core for up to 10 ms before it switches to
// another; a request shorter than that gives its core back before it could starve anyone,
// while longer ones, if there are as many as cores, make every other request wait for a
// time slice.
const longRequest = 10 * time.Millisecond

// FairShare admits work per project so that a project with many expensive requests in
// flight cannot take the CPU from projects with few.
//
// At most Slots requests run at once. A project whose requests take longer than
// longRequest on average (measured) is a long project: its requests also need one of the
// cores' slots, GOMAXPROCS of them, or one fewer while a project of short requests is
// active, so that one core is always left to the short requests, which then start and end
// at once instead of waiting behind a time slice. A project alone may use every slot but
// GOMAXPROCS of them (see free), left for others that arrive; a project never served counts
// as long until its first request ends. A request that cannot start waits in its project's
// queue (FIFO); a freed slot goes to the waiting project that held the least slot time
// lately (measured, decaying), so the long projects share the cores' slots evenly between
// them. A project counts as active while it has a request running or waiting and for a
// second after. When a slot is free and the project's queue is empty a request starts at
// once, under one short lock.
type FairShare struct {
	slots, procs, queue int
	maxWait             time.Duration

	mu       sync.Mutex
	busy     int              // slots held
	longBusy int              // slots held by requests of long projects
	projects map[string]*flow // active projects
	long     int              // how many of them are long
	// means keeps the mean request time of projects no longer active, so one that comes
	// back with a flood is known as long from its first request rather than after its
	// first round of them ends. One entry per project ever served: callers pass ids of
	// projects that exist.
	means   map[string]time.Duration
	waiting []*flow // projects with requests waiting, in no order
	pruneAt time.Time

	waitingGauge, busyGauge prometheus.Gauge
	waitTime                prometheus.Histogram
	refused                 *prometheus.CounterVec
}

// flow is one active project's state.
type flow struct {
	running  int
	queue    []*waiter
	lastDone time.Time // when its last request ended; zero while one runs
	// used is the slot time the project held lately, in seconds, halved every second.
	used   float64
	usedAt time.Time
	// mean is the moving mean of its requests' durations; long is heavy's verdict.
	mean time.Duration
	long bool
}

// longBacklog is the time a project's requests in flight (running and waiting) take
// together past which the project counts as long though each request is short. A short
// request of another project waits behind that backlog, shared by the cores, before it
// runs: at 2 ms a fetch that takes half a millisecond alone waits about a millisecond, at
// 10 ms several.
const longBacklog = 2 * time.Millisecond

// heavy reports whether fl's requests count as long: each takes longRequest on average, or
// those running and waiting take longBacklog together. Many short requests at once press on
// the cores as a long one does (a scan an index made cheap, sent by 24 clients, took three
// quarters of quiet's pace while it counted as short: TestFairShare). A project long by its
// backlog stays long until the backlog is under a quarter of longBacklog, since the fewer
// slots it gets as long shrink its backlog without its clients sending less.
func (fl *flow) heavy() bool {
	if fl.mean >= longRequest {
		return true
	}
	backlog := fl.mean * time.Duration(fl.running+len(fl.queue))
	if fl.long {
		return backlog >= longBacklog/4
	}
	return backlog >= longBacklog
}

type waiter struct {
	ready    chan struct{}
	admitted bool // set under the lock when the waiter is given a slot
	long     bool // the slot it was given is one of a long project
	// background: it runs at lower priority (see Do)
	background bool
}

// NewFairShare checks config and returns the scheduler.
func NewFairShare(config FairShareConfig) (*FairShare, error) {
	procs := config.Cores
	if procs == 0 {
		procs = runtime.GOMAXPROCS(0)
	}
	if config.Slots == 0 {
		config.Slots = 4 * procs
	}
	if config.Queue == 0 {
		config.Queue = DefaultFairShareConfig.Queue
	}
	if config.MaxWait == 0 {
		config.MaxWait = DefaultFairShareConfig.MaxWait
	}
	switch {
	case procs < 0:
		return nil, fmt.Errorf("pressure: fair share cores %d: want a positive number", procs)
	case config.Slots < 0:
		return nil, fmt.Errorf("pressure: fair share slots %d: want a positive number", config.Slots)
	case config.Queue < 0:
		return nil, fmt.Errorf("pressure: fair share queue %d: want a positive number", config.Queue)
	case config.MaxWait < 0:
		return nil, fmt.Errorf("pressure: fair share wait %v: want a positive duration", config.MaxWait)
	}
	f := &FairShare{
		slots: config.Slots, procs: procs, queue: config.Queue, maxWait: config.MaxWait,
		projects: map[string]*flow{}, means: map[string]time.Duration{},
		waitingGauge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "platform_fair_share_waiting",
			Help: "GraphQL requests waiting for an execution slot, across projects.",
		}),
		busyGauge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "platform_fair_share_busy_slots",
			Help: "Execution slots held by running GraphQL requests (of --graphql-slots).",
		}),
		waitTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "platform_fair_share_wait_seconds",
			Help:    "Time a GraphQL request waited for an execution slot (0 for most: only requests of a project past its share wait).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_fair_share_refused_total",
			Help: "GraphQL requests refused with 503 because their project's queue was full or they waited past the limit, by reason.",
		}, []string{"reason"}),
	}
	if config.Registerer != nil {
		for _, c := range []prometheus.Collector{f.waitingGauge, f.busyGauge, f.waitTime, f.refused} {
			if err := config.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("pressure: register fair share metrics: %w", err)
			}
		}
	}
	return f, nil
}

// BackgroundProcs is the GOMAXPROCS for a process on cores cores that runs work in the
// background (InBackground) beside other requests: cores, and one P more for each of the
// max(1, cores-1) requests the fair share runs in the background beside short ones. A
// thread the kernel leaves waiting for its lower priority still holds its P, and the Go
// scheduler runs nothing else on that P meanwhile: without the extra Ps, the other
// projects' requests, the HTTP server's goroutines and the collector share the Ps left and
// wait behind one another for milliseconds (issue 27: quiet's p99 beside a flood fell from
// about 2x its alone p99 to 1.2 – 1.7x with them). The kernel still gives the normal
// threads the cores first, so the extra Ps add no CPU time to the background work.
func BackgroundProcs(cores int) int { return cores + max(1, cores-1) }

// RetryAfter is the Retry-After a request Do refuses should be told: slots free up within
// a request's time, and a refused client that waits longer only leaves them idle.
func (f *FairShare) RetryAfter() time.Duration { return time.Second }

// Do runs work once a slot is free for a request of project, and gives the slot back
// after. It fails, without running work, with ErrQueueFull, ErrWaitedTooLong, or ctx's
// error. A request of a long project runs, while other projects are active, on a thread
// of lower priority (see InBackground).
func (f *FairShare) Do(ctx context.Context, project string, work func()) error {
	s, err := f.acquire(ctx, project)
	if err != nil {
		return err
	}
	defer f.release(s)
	if s.background {
		InBackground(work)
	} else {
		work()
	}
	return nil
}

// slot is one held by a request.
type slot struct {
	fl               *flow
	long, background bool // held by a long project; the request runs in the background
	began            time.Time
}

// acquire waits for a slot for a request of project.
func (f *FairShare) acquire(ctx context.Context, project string) (slot, error) {
	f.mu.Lock()
	now := time.Now()
	fl := f.flow(project, now)
	if len(fl.queue) == 0 && f.free(fl) {
		long := f.start(fl)
		background := long && len(f.projects) > 1
		f.mu.Unlock()
		f.waitTime.Observe(0)
		return slot{fl: fl, long: long, background: background, began: now}, nil
	}
	if len(fl.queue) >= f.queue {
		f.mu.Unlock()
		f.refused.WithLabelValues("queue").Inc()
		return slot{}, fmt.Errorf("%w (%d waiting)", ErrQueueFull, f.queue)
	}
	w := &waiter{ready: make(chan struct{})}
	if len(fl.queue) == 0 {
		f.waiting = append(f.waiting, fl)
	}
	fl.queue = append(fl.queue, w)
	f.waitingGauge.Inc()
	f.mu.Unlock()

	timer := time.NewTimer(f.maxWait)
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
		f.waitTime.Observe(time.Since(now).Seconds())
		return slot{fl: fl, long: w.long, background: w.background, began: time.Now()}, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = fmt.Errorf("%w (%v)", ErrWaitedTooLong, f.maxWait)
		f.refused.WithLabelValues("wait").Inc()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if w.admitted {
		// The slot came as the wait ended: give it to the next request, charging nothing.
		now := time.Now()
		f.done(fl, w.long, now, now)
		return slot{}, err
	}
	for i, q := range fl.queue {
		if q == w {
			fl.queue = append(fl.queue[:i], fl.queue[i+1:]...)
			break
		}
	}
	f.waitingGauge.Dec()
	if len(fl.queue) == 0 {
		f.unwait(fl)
		if fl.running == 0 {
			fl.lastDone = time.Now()
		}
	}
	return slot{}, err
}

// flow returns project's state, making it active; the lock is held.
func (f *FairShare) flow(project string, now time.Time) *flow {
	if now.After(f.pruneAt) {
		f.prune(now)
	}
	fl := f.projects[project]
	if fl == nil {
		// A project never served is taken for long until its first request ends: a flood
		// from a new project then starts on the cores' slots, in the background.
		mean, known := f.means[project]
		if !known {
			mean = longRequest
		}
		fl = &flow{usedAt: now, mean: mean, long: mean >= longRequest}
		if fl.long {
			f.long++
		}
		f.projects[project] = fl
	}
	return fl
}

// prune forgets the projects idle for longer than linger, at most once per linger.
func (f *FairShare) prune(now time.Time) {
	for id, fl := range f.projects {
		if fl.running == 0 && len(fl.queue) == 0 && now.Sub(fl.lastDone) > linger {
			if fl.long {
				f.long--
			}
			f.means[id] = fl.mean
			delete(f.projects, id)
		}
	}
	f.pruneAt = now.Add(linger)
}

// free reports whether a request of fl may start now; the lock is held. One project never
// holds the last GOMAXPROCS slots (half of them, when there are fewer than twice as many): a
// project whose cheap requests turn expensive is known as long only when they end, and
// meanwhile the others' requests still find a slot.
func (f *FairShare) free(fl *flow) bool {
	return f.busy < f.slots && fl.running < max(1, f.slots-min(f.procs, f.slots/2)) &&
		(!fl.long || f.longBusy < f.coreSlots())
}

// coreSlots is how many requests of long projects may run at once; the lock is held.
func (f *FairShare) coreSlots() int {
	switch n := len(f.projects); {
	case n <= 1:
		return f.slots // alone: nobody to share with (but see free)
	case f.long < n:
		return max(1, f.procs-1) // a core is left to the short requests
	default:
		return f.procs
	}
}

// start gives fl a slot and reports whether it is one of a long project; the lock is held.
func (f *FairShare) start(fl *flow) bool {
	f.busy++
	fl.running++
	fl.lastDone = time.Time{}
	if fl.long {
		f.longBusy++
	}
	f.busyGauge.Inc()
	return fl.long
}

func (f *FairShare) release(s slot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done(s.fl, s.long, s.began, time.Now())
}

// done gives back fl's slot, measures the request, and hands free slots to the waiting
// projects; the lock is held.
func (f *FairShare) done(fl *flow, long bool, began, now time.Time) {
	f.busy--
	fl.running--
	if long {
		f.longBusy--
	}
	f.busyGauge.Dec()
	took := now.Sub(began)
	fl.used = fl.usage(now) + took.Seconds()
	fl.usedAt = now
	// A moving mean over about the last 8 requests: one slow answer does not make a
	// project long, a run of them does.
	fl.mean += (took - fl.mean) / 8
	if isLong := fl.heavy(); isLong != fl.long {
		fl.long = isLong
		if isLong {
			f.long++
		} else {
			f.long--
		}
	}
	if fl.running == 0 && len(fl.queue) == 0 {
		fl.lastDone = now
	}
	// A project that left frees its share even when no request arrives to notice it.
	if now.After(f.pruneAt) {
		f.prune(now)
	}
	f.dispatch(now)
}

// dispatch gives free slots to waiting projects, the one that held the least slot time
// lately first; the lock is held.
func (f *FairShare) dispatch(now time.Time) {
	for f.busy < f.slots {
		var next *flow
		for _, fl := range f.waiting {
			if !f.free(fl) {
				continue
			}
			if next == nil || fl.usage(now) < next.usage(now) {
				next = fl
			}
		}
		if next == nil {
			return
		}
		w := next.queue[0]
		next.queue[0] = nil
		next.queue = next.queue[1:]
		if len(next.queue) == 0 {
			f.unwait(next)
		}
		f.waitingGauge.Dec()
		w.long = f.start(next)
		w.background = w.long && len(f.projects) > 1
		w.admitted = true
		close(w.ready)
	}
}

func (f *FairShare) unwait(fl *flow) {
	for i, q := range f.waiting {
		if q == fl {
			f.waiting[i] = f.waiting[len(f.waiting)-1]
			f.waiting = f.waiting[:len(f.waiting)-1]
			return
		}
	}
}

// halfLife is how fast a project's past slot time is forgotten.
const halfLife = time.Second

// usage is fl's recent slot time, decayed to now.
func (fl *flow) usage(now time.Time) float64 {
	return fl.used * math.Exp2(-max(0, float64(now.Sub(fl.usedAt))/float64(halfLife)))
}
