package coord

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Slots counts what is held at once across replicas: a sorted set per key of slot tokens
// scored by their expiry. A taker adds itself and then counts, and leaves again when the
// count is above the limit, so the set never holds more live slots than the limit, even
// with takers racing on several replicas; races can only refuse early. A slot of a replica
// that died expires. Plain commands rather than a script, because the embedded Redis
// interprets Lua slowly, and a pipeline works on Redis Cluster when keys share a hash tag.
type Slots struct {
	rdb     redis.UniversalClient
	log     *slog.Logger
	replica string // prefix of this replica's tokens
	seq     atomic.Uint64
}

// NewSlots returns the slot sets of rdb; log receives the renewals and releases that fail
// (they are not returned: the slots then expire).
func NewSlots(rdb redis.UniversalClient, log *slog.Logger) *Slots {
	if log == nil {
		log = slog.Default()
	}
	return &Slots{rdb: rdb, log: log, replica: rand.Text()[:8] + "-"}
}

// Token names one slot (or one request): unique across replicas and cheaper than a random
// id each.
func (s *Slots) Token() string { return s.replica + strconv.FormatUint(s.seq.Add(1), 36) }

// storeTimeout bounds the Redis calls made after a request's context may have ended.
const storeTimeout = 2 * time.Second

// Add queues, on p, the taking of tokens in key for ttl (the key itself lives keyTTL, or
// ttl when 0) after dropping the expired slots; the answer counts the live slots, the new
// ones included. The caller compares it with its limit and releases the tokens when above.
func (s *Slots) Add(ctx context.Context, p redis.Pipeliner, key string, now time.Time, ttl, keyTTL time.Duration, tokens ...string) *redis.IntCmd {
	expiry := float64(now.Add(ttl).UnixMilli())
	members := make([]redis.Z, len(tokens))
	for i, t := range tokens {
		members[i] = redis.Z{Score: expiry, Member: t}
	}
	if keyTTL == 0 {
		keyTTL = ttl
	}
	p.ZRemRangeByScore(ctx, key, "-inf", strconv.FormatInt(now.UnixMilli(), 10))
	p.ZAdd(ctx, key, members...)
	p.PExpire(ctx, key, keyTTL)
	return p.ZCard(ctx, key)
}

// Count queues, on p, the count of key's live slots.
func (s *Slots) Count(ctx context.Context, p redis.Cmdable, key string, now time.Time) *redis.IntCmd {
	return p.ZCount(ctx, key, "("+strconv.FormatInt(now.UnixMilli(), 10), "+inf")
}

// Take takes n of limit slots of key for ttl in one round trip, as n tokens; ok is false
// when fewer than n are free (then it takes none).
func (s *Slots) Take(ctx context.Context, key string, limit int64, ttl time.Duration, n int) (tokens []string, ok bool, err error) {
	tokens = make([]string, n)
	for i := range tokens {
		tokens[i] = s.Token()
	}
	var held *redis.IntCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		held = s.Add(ctx, p, key, time.Now(), ttl, 0, tokens...)
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("take %d slots of %s: %w", n, key, err)
	}
	if held.Val() > limit {
		s.Release(key, tokens...)
		return nil, false, nil
	}
	return tokens, true, nil
}

// Hold takes one of limit slots of key for ttl, renewed every third of ttl until release,
// for connections that stay open; ok is false when all are taken.
func (s *Slots) Hold(ctx context.Context, key string, limit int64, ttl time.Duration) (release func(), ok bool, err error) {
	tokens, ok, err := s.Take(ctx, key, limit, ttl, 1)
	if !ok || err != nil {
		return nil, ok, err
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				s.Renew(key, tokens, ttl)
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		s.Release(key, tokens...)
	}, true, nil
}

// Held counts the live slots of key.
func (s *Slots) Held(ctx context.Context, key string) (int64, error) {
	n, err := s.Count(ctx, s.rdb, key, time.Now()).Result()
	if err != nil {
		return 0, fmt.Errorf("count the slots of %s: %w", key, err)
	}
	return n, nil
}

// Extend extends held slots of key to ttl from now (the key to keyTTL, or ttl when 0). A
// slot that expired meanwhile is not taken again: lapsed are the tokens no longer held.
func (s *Slots) Extend(ctx context.Context, key string, ttl, keyTTL time.Duration, tokens ...string) (lapsed []string, err error) {
	expiry := float64(time.Now().Add(ttl).UnixMilli())
	members := make([]redis.Z, len(tokens))
	for i, t := range tokens {
		members[i] = redis.Z{Score: expiry, Member: t}
	}
	if keyTTL == 0 {
		keyTTL = ttl
	}
	var scores *redis.FloatSliceCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		// An expired slot not yet dropped must not come back.
		p.ZRemRangeByScore(ctx, key, "-inf", strconv.FormatInt(time.Now().UnixMilli(), 10))
		p.ZAddXX(ctx, key, members...)
		p.PExpire(ctx, key, keyTTL)
		scores = p.ZMScore(ctx, key, tokens...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("extend %d slots of %s: %w", len(tokens), key, err)
	}
	for i, sc := range scores.Val() {
		if sc < expiry {
			lapsed = append(lapsed, tokens[i])
		}
	}
	return lapsed, nil
}

// Renew extends held slots of key to ttl from now, after their request's context may have
// ended; it answers the tokens no longer held. A failure is logged: the slots expire unless a
// later renewal gets through, and their holders then go uncounted, which can let as many
// more in.
func (s *Slots) Renew(key string, tokens []string, ttl time.Duration) (lapsed []string) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	lapsed, err := s.Extend(ctx, key, ttl, 0, tokens...)
	if err != nil {
		s.log.Warn("renew slots", "key", key, "err", err)
	}
	return lapsed
}

// Release gives slots back; the request's context may be gone, the slots must still go.
func (s *Slots) Release(key string, tokens ...string) {
	if len(tokens) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	members := make([]any, len(tokens))
	for i, t := range tokens {
		members[i] = t
	}
	if err := s.rdb.ZRem(ctx, key, members...).Err(); err != nil {
		// They expire with their time to live instead, refusing others until then.
		s.log.Warn("release slots", "key", key, "err", err)
	}
}
