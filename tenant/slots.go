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

// hold takes one of limit slots of key for ttl; ok is false when all are taken. With renew
// the slot is renewed every third of ttl until release, for connections that stay open.
func (s *slots) hold(ctx context.Context, key string, limit int64, ttl time.Duration, renew bool) (release func(), ok bool, err error) {
	token := s.replica + strconv.FormatUint(s.seq.Add(1), 36)
	now := time.Now()
	var held *redis.IntCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, key, "-inf", strconv.FormatInt(now.UnixMilli(), 10))
		p.ZAdd(ctx, key, redis.Z{Score: float64(now.Add(ttl).UnixMilli()), Member: token})
		p.PExpire(ctx, key, ttl)
		held = p.ZCard(ctx, key)
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("take a slot of %s: %w", key, err)
	}
	if held.Val() > limit {
		s.release(key, token)
		return nil, false, nil
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	if renew {
		go func() {
			defer close(done)
			t := time.NewTicker(ttl / 3)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					s.renew(key, token, ttl)
				}
			}
		}()
	} else {
		close(done)
	}
	return func() {
		close(stop)
		<-done
		s.release(key, token)
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

func (s *slots) renew(key, token string, ttl time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAddXX(ctx, key, redis.Z{Score: float64(time.Now().Add(ttl).UnixMilli()), Member: token})
		p.PExpire(ctx, key, ttl)
		return nil
	})
	if err != nil {
		// The slot expires unless a later renewal gets through: the holder then goes
		// uncounted, which can only let one more in.
		s.log.Warn("renew quota slot", "key", key, "err", err)
	}
}

// release gives a slot back; the request's context may be gone, the slot must still go.
func (s *slots) release(key, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := s.rdb.ZRem(ctx, key, token).Err(); err != nil {
		// It expires with its time to live instead, refusing others until then.
		s.log.Warn("release quota slot", "key", key, "err", err)
	}
}
