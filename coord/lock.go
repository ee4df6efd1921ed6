package coord

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Renew and release a lock only while its holder holds it.
var (
	renewLock   = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)
	releaseLock = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)
)

// Lock is held by one replica at a time. Its holder renews it every third of its TTL while
// it works; one that dies lets it expire.
type Lock struct {
	rdb redis.UniversalClient
	key string
	ttl time.Duration
}

// NewLock returns the lock of key, living ttl unless renewed.
func NewLock(rdb redis.UniversalClient, key string, ttl time.Duration) *Lock {
	return &Lock{rdb: rdb, key: key, ttl: ttl}
}

// TryLock takes the lock if it is free. When it got it, the returned context (derived
// from ctx) lives while the lock is held: it ends when renewing finds the lock taken by
// another (or expired), and unlock (which must be called) ends it and frees the lock.
func (l *Lock) TryLock(ctx context.Context) (held context.Context, unlock func(), ok bool, err error) {
	token := rand.Text()
	ok, err = l.rdb.SetNX(ctx, l.key, token, l.ttl).Result()
	if err != nil {
		return nil, nil, false, fmt.Errorf("take lock %s: %w", l.key, err)
	}
	if !ok {
		return nil, nil, false, nil
	}
	work, cancel := context.WithCancelCause(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(l.ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-work.Done():
				return
			case <-t.C:
				// A renewal that fails to reach Redis is tried again at the next tick; the
				// lock outlives two of them.
				n, err := renewLock.Run(work, l.rdb, []string{l.key}, token, l.ttl.Milliseconds()).Int()
				if err == nil && n == 0 {
					cancel(fmt.Errorf("lost lock %s", l.key))
					return
				}
			}
		}
	}()
	return work, func() {
		cancel(nil)
		<-renewed
		_ = releaseLock.Run(context.WithoutCancel(ctx), l.rdb, []string{l.key}, token).Err()
	}, true, nil
}
