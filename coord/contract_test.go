package coord_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/coord"
	"github.com/platform-dev/platform/coord/embedded"
	"github.com/platform-dev/platform/internal/testenv"
)

// TestContract runs the same behaviours against the embedded Redis and a real
// redis-server (which must exist under CI=true): what the replicas share must not depend on
// which Redis keeps it.
func TestContract(t *testing.T) {
	backends := []struct {
		name  string
		start func(t *testing.T) string // the address
	}{
		{"embedded", func(t *testing.T) string {
			srv, err := embedded.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Close)
			return srv.Addr()
		}},
		{"redis-server", func(t *testing.T) string {
			addr, _ := testenv.RedisServer(t)
			return addr
		}},
	}
	behaviours := []struct {
		name string
		run  func(t *testing.T, dial func() *redis.Client)
	}{
		{"slots are exact under concurrency", slotsExact},
		{"slots expire and renew", slotsExpire},
		{"pool: in flight never passes the limit across replicas", poolExact},
		{"pool: a replica short of slots borrows the idle ones", poolBorrows},
		{"pool: a lease forgets the slots that lapsed", poolLapsed},
		{"feed delivers a topic's messages to its watchers only, in order", feedDelivers},
		{"invalidations reach every replica", invalidationsReach},
		{"a lock is exclusive and renewed", lockExclusive},
		{"rate limits are exact under concurrency", ratesExact},
		{"sessions expire unless used", sessionsExpire},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			addr := b.start(t)
			for _, bh := range behaviours {
				t.Run(bh.name, func(t *testing.T) {
					t.Parallel()
					bh.run(t, func() *redis.Client {
						rdb := redis.NewClient(&redis.Options{Addr: addr})
						t.Cleanup(func() { _ = rdb.Close() })
						return rdb
					})
				})
			}
		})
	}
}

// key names a key of one test, so that parallel tests sharing a server do not meet.
func key(t *testing.T, name string) string { return t.Name() + ":" + name }

// slotsExact: takers racing on two replicas never hold more than the limit, and a
// replica's takes one after another fill it exactly.
func slotsExact(t *testing.T, dial func() *redis.Client) {
	ctx := t.Context()
	replicas := []*coord.Slots{coord.NewSlots(dial(), nil), coord.NewSlots(dial(), nil)}
	k := key(t, "set")
	const limit = 10
	var mu sync.Mutex
	var held []string
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			tokens, ok, err := replicas[i%2].Take(ctx, k, limit, time.Minute, 1)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				mu.Lock()
				held = append(held, tokens...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	n, err := replicas[0].Held(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(held) > limit || n != int64(len(held)) {
		t.Fatalf("%d takers hold slots, the set counts %d; the limit is %d", len(held), n, limit)
	}
	replicas[0].Release(k, held...)
	for i := range limit + 1 {
		_, ok, err := replicas[i%2].Take(ctx, k, limit, time.Minute, 1)
		if err != nil || ok != (i < limit) {
			t.Fatalf("take %d of %d one after another: ok %v, err %v", i+1, limit, ok, err)
		}
	}
}

// slotsExpire: a slot its holder stopped renewing expires; a held one is renewed; a slot
// extended after it expired is not taken again.
func slotsExpire(t *testing.T, dial func() *redis.Client) {
	ctx := t.Context()
	s := coord.NewSlots(dial(), nil)
	k := key(t, "set")
	// Long enough that a renewal every third of it lands under -race on a busy machine.
	const ttl = 1500 * time.Millisecond
	release, ok, err := s.Hold(ctx, k, 2, ttl)
	if err != nil || !ok {
		t.Fatalf("hold: ok %v, err %v", ok, err)
	}
	lapsed, ok, err := s.Take(ctx, k, 2, ttl, 1)
	if err != nil || !ok {
		t.Fatalf("take: ok %v, err %v", ok, err)
	}
	time.Sleep(3 * ttl)
	if n, err := s.Held(ctx, k); err != nil || n != 1 {
		t.Fatalf("after 3 TTLs the set counts %d (%v), want the held slot alone", n, err)
	}
	if gone, err := s.Extend(ctx, k, ttl, 0, lapsed...); err != nil || !slices.Equal(gone, lapsed) {
		t.Fatalf("extend an expired slot: %v lapsed (%v), want %v", gone, err, lapsed)
	}
	if n, err := s.Held(ctx, k); err != nil || n != 1 {
		t.Fatalf("the extended expired slot came back: %d held (%v)", n, err)
	}
	release()
	if n, err := s.Held(ctx, k); err != nil || n != 0 {
		t.Fatalf("after release the set counts %d (%v)", n, err)
	}
}

// poolExact: requests on two replicas, each leasing slots, never have more in flight
// together than the limit, and each admitted request was one of them.
func poolExact(t *testing.T, dial func() *redis.Client) {
	ctx := t.Context()
	k := key(t, "conc")
	pools := newPools(t, dial, 2)
	const limit = 4
	var inFlight, most, admitted atomic.Int64
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for range 20 {
				ok, err := pools[i%2].Acquire(ctx, k, limit, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					continue
				}
				admitted.Add(1)
				n := inFlight.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(time.Millisecond)
				inFlight.Add(-1)
				pools[i%2].Release(k, limit)
			}
		})
	}
	wg.Wait()
	if most.Load() > limit || admitted.Load() == 0 {
		t.Fatalf("at most %d in flight (limit %d), %d admitted", most.Load(), limit, admitted.Load())
	}
}

// poolBorrows: a replica keeps an idle slot after its request, and another replica that
// needs every slot gets it back at once rather than be refused.
func poolBorrows(t *testing.T, dial func() *redis.Client) {
	ctx := t.Context()
	k := key(t, "conc")
	pools := newPools(t, dial, 2)
	const limit = 3
	if ok, err := pools[0].Acquire(ctx, k, limit, time.Minute); err != nil || !ok {
		t.Fatalf("first replica: ok %v, err %v", ok, err)
	}
	pools[0].Release(k, limit)
	if n, err := coord.NewSlots(dial(), nil).Held(ctx, k); err != nil || n != 1 {
		t.Fatalf("the first replica keeps %d slots (%v), want its idle one", n, err)
	}
	for i := range limit {
		if ok, err := pools[1].Acquire(ctx, k, limit, time.Minute); err != nil || !ok {
			t.Fatalf("second replica, request %d of %d: ok %v, err %v", i+1, limit, ok, err)
		}
	}
	if ok, err := pools[1].Acquire(ctx, k, limit, time.Minute); err != nil || ok {
		t.Fatalf("a request past the limit: ok %v, err %v", ok, err)
	}
}

// poolLapsed: a slot a replica keeps that expired in Redis (its renewal came too late) is
// someone else's: the replica no longer admits against it.
func poolLapsed(t *testing.T, dial func() *redis.Client) {
	ctx := t.Context()
	k := key(t, "conc")
	pools := newPools(t, dial, 2)
	const ttl = 300 * time.Millisecond // less than the lease's renewal tick (500 ms)
	if ok, err := pools[0].Acquire(ctx, k, 1, ttl); err != nil || !ok {
		t.Fatalf("first replica: ok %v, err %v", ok, err)
	}
	pools[0].Release(k, 1)
	time.Sleep(700 * time.Millisecond) // expired, found lapsed at the tick, not idle yet
	if ok, err := pools[1].Acquire(ctx, k, 1, time.Minute); err != nil || !ok {
		t.Fatalf("second replica, once the slot expired: ok %v, err %v", ok, err)
	}
	if ok, err := pools[0].Acquire(ctx, k, 1, ttl); err != nil || ok {
		t.Fatalf("first replica on its lapsed slot: ok %v, err %v; want refused", ok, err)
	}
}

func newPools(t *testing.T, dial func() *redis.Client, n int) []*coord.Pool {
	pools := make([]*coord.Pool, n)
	for i := range pools {
		rdb := dial()
		p, err := coord.NewPool(t.Context(), rdb, coord.NewSlots(rdb, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		pools[i] = p
	}
	return pools
}

// feedDelivers: a message reaches the watchers of its topic on every replica, in order,
// numbered; a watcher that falls behind its queue ends with ErrSlowConsumer.
func feedDelivers(t *testing.T, dial func() *redis.Client) {
	ctx := t.Context()
	channel := func(topic string) string { return key(t, topic) }
	decode := func(b []byte, seq uint64) (string, error) { return fmt.Sprintf("%s#%d", b, seq), nil }
	a, b := coord.NewFeed(dial(), nil, channel, decode), coord.NewFeed(dial(), nil, channel, decode)
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	here, err := a.Watch(ctx, "shop", 10)
	if err != nil {
		t.Fatal(err)
	}
	there, err := b.Watch(ctx, "shop", 10)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := b.Watch(ctx, "shop", 1)
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.Watch(ctx, "other", 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Publish(ctx, "shop", []byte("x"), []byte("y"), []byte("z")); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*coord.Watch[string]{here, there} {
		var got []string
		for range 3 {
			select {
			case m := <-w.C():
				got = append(got, m)
			case <-time.After(5 * time.Second):
				t.Fatalf("got %v, then nothing", got)
			}
		}
		if want := []string{"x#1", "y#2", "z#3"}; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	}
	for range slow.C() {
	}
	if slow.Err() != coord.ErrSlowConsumer {
		t.Errorf("slow watcher ended with %v", slow.Err())
	}
	select {
	case m := <-other.C():
		t.Errorf("another topic's watcher got %q", m)
	default:
	}
	here.Close()
	if _, open := <-here.C(); open || here.Err() != nil {
		t.Errorf("closed watch: open %v, err %v", open, here.Err())
	}
}

// invalidationsReach: an announced id reaches every listening replica, its sender too.
func invalidationsReach(t *testing.T, dial func() *redis.Client) {
	ctx := t.Context()
	var listeners []<-chan string
	for range 2 {
		ids, stop, err := coord.NewInvalidations(dial()).Listen(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		listeners = append(listeners, ids)
	}
	id := key(t, "project")
	if err := coord.NewInvalidations(dial()).Announce(ctx, id); err != nil {
		t.Fatal(err)
	}
	for i, ids := range listeners {
		// Parallel tests announce on the same channel: wait for this one's id.
		for got := ""; got != id; {
			select {
			case got = <-ids:
			case <-time.After(5 * time.Second):
				t.Fatalf("listener %d: no notice of %q", i, id)
			}
		}
	}
}

// lockExclusive: one holder at a time; the holder's lock outlives its TTL while held; a
// released lock can be taken again.
func lockExclusive(t *testing.T, dial func() *redis.Client) {
	ctx := t.Context()
	k := key(t, "lock")
	const ttl = time.Second
	a, b := coord.NewLock(dial(), k, ttl), coord.NewLock(dial(), k, ttl)
	held, unlock, ok, err := a.TryLock(ctx)
	if err != nil || !ok {
		t.Fatalf("first: ok %v, err %v", ok, err)
	}
	var got atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, unlock, ok, err := b.TryLock(ctx); err != nil {
				t.Error(err)
			} else if ok {
				got.Add(1)
				unlock()
			}
		})
	}
	wg.Wait()
	time.Sleep(3 * ttl)
	if _, _, ok, err := b.TryLock(ctx); got.Load() != 0 || ok || err != nil {
		t.Fatalf("while held, %d others took it (and after 3 TTLs: %v, %v)", got.Load(), ok, err)
	}
	if held.Err() != nil {
		t.Fatalf("the holder's context ended: %v", context.Cause(held))
	}
	unlock()
	_, unlock, ok, err = b.TryLock(ctx)
	if err != nil || !ok {
		t.Fatalf("after release: ok %v, err %v", ok, err)
	}
	unlock()
}

// ratesExact: of requests racing on two replicas, exactly the rate's n are allowed.
func ratesExact(t *testing.T, dial func() *redis.Client) {
	ctx := t.Context()
	replicas := []*coord.Rates{coord.NewRates(dial()), coord.NewRates(dial())}
	k := key(t, "rate")
	rate := coord.Rate{N: 5, Period: time.Hour}
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			res, err := replicas[i%2].Allow(ctx, k, rate, 1)
			if err != nil {
				t.Error(err)
			}
			allowed.Add(int32(res.Allowed))
		})
	}
	wg.Wait()
	res, err := replicas[0].Allow(ctx, k, rate, 1)
	if err != nil {
		t.Fatal(err)
	}
	if allowed.Load() != 5 || res.Allowed != 0 || res.RetryAfter <= 0 {
		t.Fatalf("allowed %d of 30 (want 5); then %+v", allowed.Load(), res)
	}
}

// sessionsExpire: a session lives its TTL from its last use, and ends when deleted.
func sessionsExpire(t *testing.T, dial func() *redis.Client) {
	ctx := t.Context()
	const ttl = 2 * time.Second
	s := coord.NewSessions(dial(), func(id string) string { return key(t, id) }, ttl)
	for _, id := range []string{"used", "idle", "deleted"} {
		if err := s.Put(ctx, id, []byte(id)); err != nil {
			t.Fatal(err)
		}
	}
	use := func(id string) bool {
		t.Helper()
		v, ok, err := s.Use(ctx, id)
		if err != nil || ok && string(v) != id {
			t.Fatalf("use %s: %q, %v", id, v, err)
		}
		return ok
	}
	if err := s.Delete(ctx, "deleted"); err != nil {
		t.Fatal(err)
	}
	if use("deleted") {
		t.Fatal("a deleted session is still there")
	}
	time.Sleep(1200 * time.Millisecond)
	if !use("used") {
		t.Fatal("the session ended before its TTL")
	}
	time.Sleep(1200 * time.Millisecond)
	if !use("used") {
		t.Fatal("the session used within its TTL ended")
	}
	time.Sleep(ttl + 300*time.Millisecond)
	if use("used") || use("idle") {
		t.Fatal("sessions outlived their TTL unused")
	}
}
