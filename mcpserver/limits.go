package mcpserver

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/go-redis/redis_rate/v10"
)

// admitRate applies the per-client request rate (GCRA in Redis, shared by replicas) and sets
// the RateLimit headers. When Redis cannot answer, tools/call fails closed (failClosed) and
// everything else passes, so that health and discovery stay readable.
func (s *Server) admitRate(ctx context.Context, w http.ResponseWriter, client string, failClosed bool) *rpcError {
	limit := redis_rate.Limit{Rate: s.cfg.RequestsPerWindow, Burst: s.cfg.RequestsPerWindow, Period: s.cfg.Window}
	res, err := s.limiter.Allow(ctx, s.st.k.rate(client), limit)
	if err != nil {
		s.stats.limiterFailed(err)
		s.metrics.limiter.WithLabelValues("rate", "unavailable").Inc()
		if !failClosed {
			return nil
		}
		s.stats.reject(&s.stats.failClosed)
		w.Header().Set("Retry-After", "1")
		return newError(CodeRateLimited, "Rate limit unavailable",
			"the limiter's store (Redis) is not answering, so tools/call is refused until it does; retry later")
	}
	s.stats.limiterOK()
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(s.cfg.RequestsPerWindow))
	h.Set("RateLimit-Remaining", strconv.Itoa(res.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(res.ResetAfter)))
	if res.Allowed > 0 {
		s.metrics.limiter.WithLabelValues("rate", "allowed").Inc()
		return nil
	}
	s.metrics.limiter.WithLabelValues("rate", "refused").Inc()
	s.stats.reject(&s.stats.rateLimited)
	retry := ceilSeconds(res.RetryAfter)
	h.Set("Retry-After", strconv.Itoa(retry))
	return newError(CodeRateLimited, "Rate limit exceeded",
		fmt.Sprintf("at most %d requests per %s per client; retry after %d s", s.cfg.RequestsPerWindow, per(s.cfg.Window), retry))
}

// per names a window for people: "minute", "10s".
func per(d time.Duration) string {
	switch {
	case d == time.Minute:
		return "minute"
	case d == time.Hour:
		return "hour"
	case d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}

func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}

// acquireSlot takes one of the client's concurrent-connection slots. It returns "" without an
// error when Redis is down and the request may pass anyway (not failClosed).
func (s *Server) acquireSlot(ctx context.Context, w http.ResponseWriter, client string, ttl time.Duration, failClosed bool) (string, *rpcError) {
	token, err := s.st.acquire(ctx, client, s.cfg.MaxConcurrent, ttl)
	if err != nil {
		s.stats.limiterFailed(err)
		s.metrics.limiter.WithLabelValues("concurrency", "unavailable").Inc()
		if !failClosed {
			return "", nil
		}
		s.stats.reject(&s.stats.failClosed)
		w.Header().Set("Retry-After", "1")
		return "", newError(CodeRateLimited, "Rate limit unavailable",
			"the limiter's store (Redis) is not answering, so this request is refused until it does; retry later")
	}
	if token == "" {
		s.metrics.limiter.WithLabelValues("concurrency", "refused").Inc()
		s.stats.reject(&s.stats.concurrencyLimited)
		w.Header().Set("Retry-After", "1")
		return "", newError(CodeRateLimited, "Too many concurrent connections",
			fmt.Sprintf("at most %d concurrent requests and open streams per client; finish or close one first", s.cfg.MaxConcurrent))
	}
	s.metrics.limiter.WithLabelValues("concurrency", "allowed").Inc()
	return token, nil
}

func (s *Server) releaseSlot(client, token string) {
	// The request's context may be gone; the slot must still be returned.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.st.release(ctx, client, token); err != nil {
		s.log.Warn("release concurrency slot", "err", err)
	}
}
