package tenant

import (
	"context"
	"slices"
	"sync"
	"time"
)

// slotLease is the concurrency slots of one project this replica took from Redis and
// admits its requests against, so that a busy project's requests do not wait for Redis:
// the replica takes leaseSize slots at once when all it holds are in use, and keeps at
// most leaseSize-1 of them unused (giving the rest back as its requests end), and none
// once no request started for leaseIdle. The slots are members of the project's sorted set
// like any other, renewed while held, so the quota holds across replicas up to the unused
// ones: another replica may refuse while up to leaseSize-1 slots per replica are idle.
// Below 128 the lease is one slot, given back as its request ends: exact.
type slotLease struct {
	take sync.Mutex // held by the one request that asks Redis for more slots

	mu      sync.Mutex
	tokens  []string // the slots held; the first used are in use
	used    int
	last    time.Time // when a request last started
	keeping bool      // a goroutine renews the slots and gives them back when idle
}

// leaseIdle is how long a replica keeps slots no request uses.
const leaseIdle = time.Second

// leaseSize is how many slots a replica takes at once for a quota of limit: a 64th of it,
// 1 to 32, so the slots a replica may leave unused are at most 1/64 of the quota.
func leaseSize(limit int64) int { return int(min(max(limit/64, 1), 32)) }

// acquire takes one of rt's project's concurrent requests, which giveBack gives back; ok
// is false when the quota has none free.
func (l *quotaLimiter) acquire(ctx context.Context, rt *Runtime) (ok bool, err error) {
	lease := rt.conc
	if lease.admit() {
		return true, nil
	}
	// One request asks Redis at a time; the others wait for its slots rather than ask too.
	lease.take.Lock()
	defer lease.take.Unlock()
	if lease.admit() {
		return true, nil
	}
	key, limit := concKey(rt.Project.ID), rt.Quotas.ConcurrentRequests
	n := leaseSize(limit)
	tokens, ok, err := l.slots.take(ctx, key, limit, l.requestTTL, n)
	if err == nil && !ok && n > 1 {
		// Near the limit a whole lease is refused; one slot may still be free.
		tokens, ok, err = l.slots.take(ctx, key, limit, l.requestTTL, 1)
	}
	if !ok || err != nil {
		return false, err
	}
	lease.mu.Lock()
	lease.tokens = append(lease.tokens, tokens...)
	lease.used++
	lease.last = time.Now()
	keep := !lease.keeping
	lease.keeping = true
	lease.mu.Unlock()
	if keep {
		l.keepers.Go(func() { l.keep(key, lease) })
	}
	return true, nil
}

// admit takes a held slot no request uses, if there is one.
func (s *slotLease) admit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used >= len(s.tokens) {
		return false
	}
	s.used++
	s.last = time.Now()
	return true
}

// giveBack ends a request: its slot stays with the replica unless that leaves more than
// leaseSize-1 unused.
func (l *quotaLimiter) giveBack(rt *Runtime) {
	lease := rt.conc
	lease.mu.Lock()
	lease.used--
	keep := lease.used + leaseSize(rt.Quotas.ConcurrentRequests) - 1
	var spare []string
	if len(lease.tokens) > keep {
		spare = slices.Clone(lease.tokens[keep:])
		lease.tokens = lease.tokens[:keep]
	}
	lease.mu.Unlock()
	if spare != nil {
		l.slots.release(concKey(rt.Project.ID), spare...)
	}
}

// keep renews the lease's slots while the replica holds them, and gives back those unused
// once no request started for leaseIdle; it ends when the replica holds none, or stops.
func (l *quotaLimiter) keep(key string, lease *slotLease) {
	t := time.NewTicker(leaseIdle / 2)
	defer t.Stop()
	renewed := time.Now()
	for {
		stopping := false
		select {
		case <-l.stop:
			stopping = true
		case <-t.C:
		}
		lease.mu.Lock()
		var spare []string
		if stopping {
			// The replica stops: what it holds goes back now rather than expire.
			spare, lease.tokens = lease.tokens, nil
		} else if time.Since(lease.last) >= leaseIdle {
			spare = slices.Clone(lease.tokens[lease.used:])
			lease.tokens = lease.tokens[:lease.used]
		}
		held := slices.Clone(lease.tokens)
		lease.keeping = len(held) > 0
		lease.mu.Unlock()
		l.slots.release(key, spare...)
		if len(held) == 0 {
			return
		}
		if time.Since(renewed) >= l.requestTTL/3 {
			l.slots.renew(key, held, l.requestTTL)
			renewed = time.Now()
		}
	}
}
