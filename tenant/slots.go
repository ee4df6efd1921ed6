package tenant

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

// slots counts what is held at once across replicas, as the MCP server's concurrency limit
// does (mcpserver's conc:{client}): a sorted set per key of slot tokens scored by their
// expiry. A taker adds itself and then counts, and leaves again when the count is above
// the limit, so the set never holds more live slots than the limit, even with takers racing
// on several replicas; races can only refuse early. A slot of a replica that died expires.
type slots struct {
	rdb     *redis.Client
	log     *slog.Logger
	replica string // prefix of this replica's tokens
	seq     atomic.Uint64
}

func newSlots(rdb *redis.Client, log *slog.Logger) *slots {
	return &slots{rdb: rdb, log: log, replica: rand.Text()[:8] + "-"}
}

// take takes n of limit slots of key for ttl in one round trip, as n tokens; ok is false
// when fewer than n are free (then it takes none).
func (s *slots) take(ctx context.Context, key string, limit int64, ttl time.Duration, n int) (tokens []string, ok bool, err error) {
	now := time.Now()
	expiry := float64(now.Add(ttl).UnixMilli())
	members := make([]redis.Z, n)
	tokens = make([]string, n)
	for i := range members {
		tokens[i] = s.replica + strconv.FormatUint(s.seq.Add(1), 36)
		members[i] = redis.Z{Score: expiry, Member: tokens[i]}
	}
	var held *redis.IntCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, key, "-inf", strconv.FormatInt(now.UnixMilli(), 10))
		p.ZAdd(ctx, key, members...)
		p.PExpire(ctx, key, ttl)
		held = p.ZCard(ctx, key)
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("take %d slots of %s: %w", n, key, err)
	}
	if held.Val() > limit {
		s.release(key, tokens...)
		return nil, false, nil
	}
	return tokens, true, nil
}

// hold takes one of limit slots of key for ttl, renewed every third of ttl until release,
// for connections that stay open; ok is false when all are taken.
func (s *slots) hold(ctx context.Context, key string, limit int64, ttl time.Duration) (release func(), ok bool, err error) {
	tokens, ok, err := s.take(ctx, key, limit, ttl, 1)
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
				s.renew(key, tokens, ttl)
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		s.release(key, tokens...)
	}, true, nil
}

// held counts the live slots of key.
func (s *slots) held(ctx context.Context, key string) (int64, error) {
	n, err := s.rdb.ZCount(ctx, key, "("+strconv.FormatInt(time.Now().UnixMilli(), 10), "+inf").Result()
	if err != nil {
		return 0, fmt.Errorf("count the slots of %s: %w", key, err)
	}
	return n, nil
}

// storeTimeout bounds the Redis calls made after a request's context may have ended.
const storeTimeout = 2 * time.Second

func (s *slots) renew(key string, tokens []string, ttl time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	expiry := float64(time.Now().Add(ttl).UnixMilli())
	members := make([]redis.Z, len(tokens))
	for i, t := range tokens {
		members[i] = redis.Z{Score: expiry, Member: t}
	}
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAddXX(ctx, key, members...)
		p.PExpire(ctx, key, ttl)
		return nil
	})
	if err != nil {
		// The slots expire unless a later renewal gets through: their holders then go
		// uncounted, which can let as many more in.
		s.log.Warn("renew quota slot", "key", key, "err", err)
	}
}

// release gives slots back; the request's context may be gone, the slots must still go.
func (s *slots) release(key string, tokens ...string) {
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
		s.log.Warn("release quota slot", "key", key, "err", err)
	}
}
