package coord

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Rates are token buckets shared by the replicas (GCRA, by redis_rate): n events per
// period with bursts of up to n.
type Rates struct{ l *redis_rate.Limiter }

// NewRates returns the rate limits kept in rdb.
func NewRates(rdb redis.UniversalClient) *Rates { return &Rates{l: redis_rate.NewLimiter(rdb)} }

// Rate is n events per period.
type Rate struct {
	N      int
	Period time.Duration
}

func (r Rate) limit() redis_rate.Limit {
	return redis_rate.Limit{Rate: r.N, Burst: r.N, Period: r.Period}
}

// Result is what a bucket answered: how many events it allowed, how many are left, and
// when the next one fits once none is.
type Result struct {
	Allowed, Remaining int
	RetryAfter         time.Duration
}

// Allow counts up to n events of key against rate: all n, or none when fewer fit. n = 0
// only reads the bucket.
func (r *Rates) Allow(ctx context.Context, key string, rate Rate, n int) (Result, error) {
	res, err := r.l.AllowN(ctx, key, rate.limit(), n)
	if err != nil {
		return Result{}, fmt.Errorf("count %d of %s: %w", n, key, err)
	}
	return Result{Allowed: res.Allowed, Remaining: res.Remaining, RetryAfter: res.RetryAfter}, nil
}
