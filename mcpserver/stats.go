package mcpserver

import (
	"sync"
	"time"
)

// stats are this replica's counters for service://system/health.
type stats struct {
	mu      sync.Mutex
	total   uint64
	errors  uint64
	seconds [60]second // ring of the last minute, by Unix second

	rateLimited        uint64
	concurrencyLimited uint64
	failClosed         uint64

	limiterErr   string
	limiterErrAt time.Time
	limiterUp    bool

	streams int64
}

type second struct {
	unix     int64
	requests uint64
	errors   uint64
}

func newStats() *stats { return &stats{limiterUp: true} }

func (st *stats) record(failed bool) {
	now := time.Now().Unix()
	st.mu.Lock()
	defer st.mu.Unlock()
	b := &st.seconds[now%int64(len(st.seconds))]
	if b.unix != now {
		*b = second{unix: now}
	}
	b.requests++
	st.total++
	if failed {
		b.errors++
		st.errors++
	}
}

// lastMinute sums the ring over the last 60 seconds.
func (st *stats) lastMinute() (requests, errors uint64) {
	now := time.Now().Unix()
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, b := range st.seconds {
		if now-b.unix < int64(len(st.seconds)) {
			requests += b.requests
			errors += b.errors
		}
	}
	return requests, errors
}

func (st *stats) reject(counter *uint64) {
	st.mu.Lock()
	*counter++
	st.mu.Unlock()
}

func (st *stats) limiterFailed(err error) {
	st.mu.Lock()
	st.limiterUp = false
	st.limiterErr = err.Error()
	st.limiterErrAt = time.Now()
	st.mu.Unlock()
}

func (st *stats) limiterOK() {
	st.mu.Lock()
	st.limiterUp = true
	st.mu.Unlock()
}

func (st *stats) streamOpened() {
	st.mu.Lock()
	st.streams++
	st.mu.Unlock()
}

func (st *stats) streamClosed() {
	st.mu.Lock()
	st.streams--
	st.mu.Unlock()
}
