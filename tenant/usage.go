package tenant

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// UsageOptions tune usage metering.
type UsageOptions struct {
	// Off turns metering off: nothing is counted or written (benchmarks compare with it).
	Off bool
	// Flush is how often each replica adds what it counted to the control database; what a
	// replica counted since its last flush is added when it shuts down. Default 5 s.
	Flush time.Duration
	// Sample is how often the records and bytes a served project stores are sampled.
	// Default 1 hour.
	Sample time.Duration
	// HoursKept is how long usage by hour is kept; usage by day is kept. Default 48 hours.
	HoursKept time.Duration
}

// Defaults of the zero UsageOptions values.
const (
	DefaultUsageFlush     = 5 * time.Second
	DefaultUsageSample    = time.Hour
	DefaultUsageHoursKept = 48 * time.Hour
)

// meter counts each project's usage in memory, with atomics a request adds to without a
// lookup (the Runtime holds its project's counters), and adds the deltas to the usage store
// every Flush: replicas add up there, and nothing depends on Redis persistence.
type meter struct {
	opts   UsageOptions
	usage  *store.UsageStore
	logger *slog.Logger

	mu       sync.Mutex
	projects map[string]*projectUsage
	// totals are what the replica counted since it started, by project, for the metrics.
	totals map[string]*store.Usage
	// pending are deltas a failed flush could not write, added to the next one.
	pending []store.Usage
	pruned  time.Time

	stop context.CancelFunc
	done chan struct{}
}

// projectUsage is one project's counts since the last flush.
type projectUsage struct {
	requests, queries, mutations, subscriptions atomic.Int64
	errors, bytesOut, events                    atomic.Int64
	store                                       store.Activity
	// records is the project's latest Records, for sampling what it stores.
	records atomic.Pointer[store.Records]

	mu sync.Mutex
	// open connections, and connNanos: the connection time of closed connections since the
	// last flush minus the start of those still open, in ns since epoch (see connected).
	epoch     time.Time
	open      int64
	connNanos int64
	sampledAt time.Time
	// sampleFailed is how many samples in a row failed, and sampleRetry when the next one is
	// due after them.
	sampleFailed int
	sampleRetry  time.Time
}

func newMeter(opts UsageOptions, usage *store.UsageStore, logger *slog.Logger) *meter {
	if opts.Flush <= 0 {
		opts.Flush = DefaultUsageFlush
	}
	if opts.Sample <= 0 {
		opts.Sample = DefaultUsageSample
	}
	if opts.HoursKept <= 0 {
		opts.HoursKept = DefaultUsageHoursKept
	}
	m := &meter{opts: opts, usage: usage, logger: logger, projects: map[string]*projectUsage{},
		totals: map[string]*store.Usage{}, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	if opts.Off {
		close(m.done)
		return m
	}
	go m.run(ctx)
	return m
}

// project returns id's counters, nil while metering is off.
func (m *meter) project(id string) *projectUsage {
	if m.opts.Off {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.projects[id]
	if u == nil {
		u = &projectUsage{epoch: time.Now()}
		m.projects[id] = u
	}
	return u
}

func (m *meter) run(ctx context.Context) {
	defer close(m.done)
	t := time.NewTicker(m.opts.Flush)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.flush(sampleTimeout)
		}
	}
}

// close stops the flushes and adds what was counted since the last one.
func (m *meter) close() {
	m.stop()
	<-m.done
	if !m.opts.Off {
		m.flush(shutdownSampleTimeout)
	}
}

// flushTimeout bounds one flush's write, so that a database that does not answer cannot
// hold a shutdown; what it could not write is kept for the next flush.
const flushTimeout = 10 * time.Second

// sampleTimeout bounds the samples of one flush, taken before its write and on their own
// time, so that a project too large to count in time never costs the write its deadline;
// shutdownSampleTimeout bounds them in the flush at shutdown, which a count must not hold up
// (a replica that served a project for less than a flush interval still reports what it
// stores).
// sampleRetry is the wait after a failed sample, doubled at each failure in a row up to
// UsageOptions.Sample, so that a count that cannot end in time is not started at every
// flush.
const (
	sampleTimeout         = 30 * time.Second
	shutdownSampleTimeout = 2 * time.Second
	sampleRetry           = time.Minute
)

// flush adds every project's counts since the last flush to the usage store, under the hour
// the flush runs in (so counts of the last seconds of an hour may fall into the next), with a
// sample of what the project stores when one is due, the samples taking at most
// sampleBudget. It runs on its own context: stopping the meter does not cut a write in the
// middle.
func (m *meter) flush(sampleBudget time.Duration) {
	now := time.Now()
	m.mu.Lock()
	ids := make([]string, 0, len(m.projects))
	us := make([]*projectUsage, 0, len(m.projects))
	for id, u := range m.projects {
		ids, us = append(ids, id), append(us, u)
	}
	deltas := m.pending
	m.pending = nil
	m.mu.Unlock()
	fresh := len(deltas)
	sampling, cancelSamples := context.WithTimeout(context.Background(), sampleBudget)
	defer cancelSamples()
	for i, u := range us {
		d := u.take(now)
		d.Project, d.Start = ids[i], now
		// Only a project served since the last flush is sampled: one deleted meanwhile is
		// not opened again.
		if recs := u.records.Load(); recs != nil && d.Requests > 0 {
			m.sample(sampling, ids[i], u, recs, &d, now)
		}
		if !d.Zero() {
			deltas = append(deltas, d)
		}
	}
	m.mu.Lock()
	for i := fresh; i < len(deltas); i++ {
		t := m.totals[deltas[i].Project]
		if t == nil {
			t = &store.Usage{Project: deltas[i].Project}
			m.totals[t.Project] = t
		}
		t.Add(&deltas[i])
		// The metrics show the latest sample, not the largest.
		if deltas[i].RecordsStored != 0 || deltas[i].BytesStored != 0 {
			t.RecordsStored, t.BytesStored = deltas[i].RecordsStored, deltas[i].BytesStored
		}
	}
	m.mu.Unlock()
	cancelSamples()
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if err := m.usage.Add(ctx, deltas); err != nil {
		m.logger.Warn("usage: flush (kept for the next one)", "projects", len(deltas), "err", err)
		m.keep(deltas)
		return
	}
	if now.Sub(m.pruned) >= time.Hour {
		if err := m.usage.PruneHours(ctx, now.Add(-m.opts.HoursKept)); err != nil {
			m.logger.Warn("usage: prune hours", "err", err)
		}
		m.pruned = now
	}
}

// sample puts in d what project id stores, when a sample is due: Sample after the last one,
// and after the back-off of the failed ones in a row. A sample the flush's samples left no
// time for is not a failure: it is due at the next flush. Called only by the flushing
// goroutine, which alone reads and sets u's sample fields.
func (m *meter) sample(ctx context.Context, id string, u *projectUsage, recs *store.Records, d *store.Usage, now time.Time) {
	if now.Sub(u.sampledAt) < m.opts.Sample || now.Before(u.sampleRetry) || ctx.Err() != nil {
		return
	}
	st, err := recs.StoredSample(ctx)
	if err != nil {
		wait := min(sampleRetry<<min(u.sampleFailed, 16), m.opts.Sample)
		u.sampleFailed++
		u.sampleRetry = now.Add(wait)
		m.logger.Warn("usage: sample what a project stores", "project", id, "retry_in", wait, "err", err)
		return
	}
	d.RecordsStored, d.BytesStored, u.sampledAt = st.Records, st.Bytes, now
	u.sampleFailed, u.sampleRetry = 0, time.Time{}
}

// keep holds deltas a flush could not write for the next one, one per project and hour, so
// that a database down for long holds no more than that.
func (m *meter) keep(deltas []store.Usage) {
	type key struct {
		project string
		hour    time.Time
	}
	at := map[key]int{}
	var out []store.Usage
	for _, d := range deltas {
		d.Start = d.Start.Truncate(time.Hour)
		k := key{d.Project, d.Start}
		if i, ok := at[k]; ok {
			out[i].Add(&d)
			continue
		}
		at[k] = len(out)
		out = append(out, d)
	}
	m.mu.Lock()
	m.pending = append(m.pending, out...)
	m.mu.Unlock()
}

// take returns the counts since the last take and starts counting again from zero.
func (u *projectUsage) take(now time.Time) store.Usage {
	d := store.Usage{
		Requests: u.requests.Swap(0), Queries: u.queries.Swap(0), Mutations: u.mutations.Swap(0),
		Subscriptions: u.subscriptions.Swap(0), Errors: u.errors.Swap(0), BytesOut: u.bytesOut.Swap(0),
		Events:      u.events.Swap(0),
		StoreMicros: u.store.StoreNanos.Swap(0) / 1e3, RecordsRead: u.store.RecordsRead.Swap(0),
		RecordsWritten: u.store.RecordsWritten.Swap(0),
	}
	u.mu.Lock()
	// The open connections count up to now, and from now on for the next flush. A
	// fraction of a millisecond is carried to the next flush, so nothing is rounded away.
	at := int64(now.Sub(u.epoch))
	total := u.connNanos + u.open*at
	d.ConnMillis = total / 1e6
	u.connNanos = total%1e6 - u.open*at
	u.mu.Unlock()
	return d
}

// connected counts a realtime connection open from now; the function counts it closed.
func (u *projectUsage) connected() func() {
	u.mu.Lock()
	u.open++
	u.connNanos -= int64(time.Since(u.epoch))
	u.mu.Unlock()
	return func() {
		u.mu.Lock()
		u.open--
		u.connNanos += int64(time.Since(u.epoch))
		u.mu.Unlock()
	}
}

// answered counts a query or mutation the project's API ran (gql.Config.Answered).
func (u *projectUsage) answered(mutation, failed bool) {
	if mutation {
		u.mutations.Add(1)
	} else {
		u.queries.Add(1)
	}
	if failed {
		u.errors.Add(1)
	}
}

// realtime wraps observe (the deployment's realtime metrics) to count the project's
// subscriptions started and events delivered too.
func (u *projectUsage) realtime(observe func(gql.Observation)) func(gql.Observation) {
	return func(o gql.Observation) {
		if observe != nil {
			observe(o)
		}
		switch {
		case o.Kind == "subscription" && o.Delta > 0:
			u.subscriptions.Add(1)
		case o.Kind == "delivered":
			u.events.Add(int64(o.Delta))
		}
	}
}

// metered counts a request to a project's API: its status (an error from 400 on) and the
// bytes of its answer.
func metered(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := RuntimeOf(c).usage
		if u == nil {
			return next(c)
		}
		err := next(c)
		res := c.Response()
		u.requests.Add(1)
		u.bytesOut.Add(res.Size)
		if res.Status >= 400 || err != nil {
			u.errors.Add(1)
		}
		return err
	}
}
