package coord

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Pool leases slots of slot sets to this replica, so that requests of a key whose slots
// the replica already holds are admitted without a round trip to Redis. The leased slots
// are members of the key's set like any other (Slots), renewed while held: the set never
// holds more than the limit, so whatever the replicas lease, no more than the limit are in
// use at once. A replica keeps a few slots no request uses (spare) and gives them back
// once no request started for leaseIdle; a replica that finds the set full asks the others
// (channel SlotsWanted) to give back their unused slots at once and tries again, so an
// idle lease elsewhere never refuses a request.
type Pool struct {
	slots *Slots
	rdb   redis.UniversalClient
	log   *slog.Logger
	sub   *redis.PubSub
	stop  chan struct{}
	wg    sync.WaitGroup

	mu     sync.Mutex
	leases map[string]*lease
	asks   map[string]chan int // key -> answers to this replica's request for slots
}

// lease is what this replica holds of one key.
type lease struct {
	take sync.Mutex // held by the one request that asks Redis for more slots

	mu      sync.Mutex
	ttl     time.Duration
	tokens  []string // the slots held; the first used are in use
	used    int
	last    time.Time // when a request last started
	keeping bool      // a goroutine renews the slots and gives them back when idle
}

const (
	// leaseIdle is how long a replica keeps slots no request uses.
	leaseIdle = time.Second
	// askWait bounds how long a replica short of slots waits for the others' answers.
	askWait = 100 * time.Millisecond
)

// takeSize is how many slots a replica takes at once for a limit: a 64th of it, 1 to 32.
func takeSize(limit int64) int { return int(min(max(limit/64, 1), 32)) }

// spareSize is how many slots no request uses a replica keeps for a limit: an eighth of
// it, 1 to 32. More are taken when requests come faster than they end.
func spareSize(limit int64) int { return int(min(max(limit/8, 1), 32)) }

// NewPool returns the pool of this replica's leases of slots; it listens to the other
// replicas' requests for slots until Close.
func NewPool(ctx context.Context, rdb redis.UniversalClient, slots *Slots, log *slog.Logger) (*Pool, error) {
	if log == nil {
		log = slog.Default()
	}
	sub := rdb.Subscribe(ctx, SlotsWanted)
	if _, err := sub.Receive(ctx); err != nil {
		_ = sub.Close()
		return nil, fmt.Errorf("subscribe to requests for slots: %w", err)
	}
	p := &Pool{slots: slots, rdb: rdb, log: log, sub: sub, stop: make(chan struct{}),
		leases: map[string]*lease{}, asks: map[string]chan int{}}
	p.wg.Go(p.listen)
	return p, nil
}

// Close gives back every slot the replica holds and stops listening.
func (p *Pool) Close() {
	close(p.stop)
	_ = p.sub.Close()
	p.wg.Wait()
}

func (p *Pool) lease(key string) *lease {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.leases[key]
	if !ok {
		l = &lease{}
		p.leases[key] = l
	}
	return l
}

// Acquire takes one of limit slots of key, each living ttl unless renewed, for a request,
// which Release gives back; ok is false when all are in use.
func (p *Pool) Acquire(ctx context.Context, key string, limit int64, ttl time.Duration) (ok bool, err error) {
	l := p.lease(key)
	if l.admit() {
		return true, nil
	}
	// One request asks Redis at a time; the others wait for its slots rather than ask too.
	l.take.Lock()
	defer l.take.Unlock()
	if l.admit() {
		return true, nil
	}
	n := takeSize(limit)
	tokens, ok, err := p.slots.Take(ctx, key, limit, ttl, n)
	if err == nil && !ok && n > 1 {
		// Near the limit a whole lease is refused; one slot may still be free.
		tokens, ok, err = p.slots.Take(ctx, key, limit, ttl, 1)
	}
	if err == nil && !ok {
		var given int
		if given, err = p.ask(ctx, key); err == nil && given > 0 {
			tokens, ok, err = p.slots.Take(ctx, key, limit, ttl, 1)
		}
	}
	if !ok || err != nil {
		return false, err
	}
	l.mu.Lock()
	l.tokens = append(l.tokens, tokens...)
	l.used++
	l.last = time.Now()
	l.ttl = ttl
	keep := !l.keeping
	l.keeping = true
	l.mu.Unlock()
	if keep {
		p.wg.Go(func() { p.keep(key, l) })
	}
	return true, nil
}

// admit takes a held slot no request uses, if there is one.
func (l *lease) admit() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.used >= len(l.tokens) {
		return false
	}
	l.used++
	l.last = time.Now()
	return true
}

// Release ends a request of key: its slot stays with the replica unless that leaves more
// than the spare slots of limit unused.
func (p *Pool) Release(key string, limit int64) {
	l := p.lease(key)
	l.mu.Lock()
	l.used--
	keep := l.used + spareSize(limit)
	var spare []string
	if len(l.tokens) > keep {
		spare = slices.Clone(l.tokens[keep:])
		l.tokens = l.tokens[:keep]
	}
	l.mu.Unlock()
	p.slots.Release(key, spare...)
}

// takeUnused removes the tokens no request uses from the lease and answers them; l.mu is
// held. Tokens that lapsed may leave fewer tokens than requests in use.
func (l *lease) takeUnused() []string {
	in := min(l.used, len(l.tokens))
	spare := slices.Clone(l.tokens[in:])
	l.tokens = l.tokens[:in]
	return spare
}

// unused gives back the slots of l no request uses.
func (p *Pool) unused(key string, l *lease) int {
	l.mu.Lock()
	spare := l.takeUnused()
	l.mu.Unlock()
	p.slots.Release(key, spare...)
	return len(spare)
}

// keep renews the lease's slots while the replica holds them, and gives back those unused
// once no request started for leaseIdle; it ends when the replica holds none, or stops.
func (p *Pool) keep(key string, l *lease) {
	t := time.NewTicker(leaseIdle / 2)
	defer t.Stop()
	renewed := time.Now()
	for {
		stopping := false
		select {
		case <-p.stop:
			stopping = true
		case <-t.C:
		}
		l.mu.Lock()
		var spare []string
		if stopping {
			// The replica stops: what it holds goes back now rather than expire.
			spare, l.tokens = l.tokens, nil
		} else if time.Since(l.last) >= leaseIdle {
			spare = l.takeUnused()
		}
		held, ttl := slices.Clone(l.tokens), l.ttl
		l.keeping = len(held) > 0
		l.mu.Unlock()
		p.slots.Release(key, spare...)
		if len(held) == 0 {
			return
		}
		if time.Since(renewed) >= ttl/3 {
			if lapsed := p.slots.Renew(key, held, ttl); len(lapsed) > 0 {
				// Slots that expired (Redis did not answer the renewals) may be someone
				// else's now: the lease admits against those it still holds.
				l.mu.Lock()
				l.tokens = slices.DeleteFunc(l.tokens, func(t string) bool { return slices.Contains(lapsed, t) })
				l.mu.Unlock()
			}
			renewed = time.Now()
		}
	}
}

// ask asks the other replicas to give back their unused slots of key, and answers how
// many they gave back within askWait.
func (p *Pool) ask(ctx context.Context, key string) (given int, err error) {
	answers := make(chan int, 16)
	p.mu.Lock()
	p.asks[key] = answers
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.asks, key)
		p.mu.Unlock()
	}()
	receivers, err := p.rdb.Publish(ctx, SlotsWanted, "w "+p.slots.replica+" "+key).Result()
	if err != nil {
		return 0, fmt.Errorf("ask for slots of %s: %w", key, err)
	}
	wait := time.NewTimer(askWait)
	defer wait.Stop()
	// Every replica answers, this one (which ignores its own request) included.
	for range receivers - 1 {
		select {
		case n := <-answers:
			given += n
		case <-wait.C:
			return given, nil
		case <-ctx.Done():
			return given, ctx.Err()
		}
	}
	return given, nil
}

// listen answers the other replicas' requests for slots: "w <replica> <key>" asks for the
// unused slots of key, "g <replica> <n> <key>" answers the asker that n were given back.
func (p *Pool) listen() {
	for m := range p.sub.Channel() {
		kind, rest, _ := strings.Cut(m.Payload, " ")
		replica, rest, _ := strings.Cut(rest, " ")
		switch kind {
		case "w":
			if replica == p.slots.replica {
				continue
			}
			key := rest
			p.mu.Lock()
			l := p.leases[key]
			p.mu.Unlock()
			n := 0
			if l != nil {
				n = p.unused(key, l)
			}
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			if err := p.rdb.Publish(ctx, SlotsWanted, "g "+replica+" "+strconv.Itoa(n)+" "+key).Err(); err != nil {
				p.log.Warn("answer a request for slots", "key", key, "err", err)
			}
			cancel()
		case "g":
			if replica != p.slots.replica {
				continue
			}
			count, key, _ := strings.Cut(rest, " ")
			n, _ := strconv.Atoi(count)
			p.mu.Lock()
			if answers, ok := p.asks[key]; ok {
				select {
				case answers <- n:
				default:
				}
			}
			p.mu.Unlock()
		}
	}
}
