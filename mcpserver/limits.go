package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// slotMode says what a request needs from the concurrency limit.
type slotMode int

const (
	// slotCheck refuses the request when the client already holds every slot, and takes
	// none: requests answered from memory (ping, tools/list, ...) end within microseconds.
	slotCheck slotMode = iota
	// slotTake holds a slot for the life of the request: tools/call and streams.
	slotTake
	// slotIgnore neither takes nor checks a slot: a client's answer to a server request,
	// which the tools/call waiting for it (holding a slot) needs to finish.
	slotIgnore
)

// admission is what the limiter decided for one request.
type admission struct {
	sess *session // the request's session, when it named one
	slot string   // the concurrency slot held, "" when none
}

// msgUnavailable is the message of a request refused because Redis does not answer.
const msgUnavailable = "Service unavailable"

// admit applies the client's limits and loads the request's session, in one pipelined Redis
// round trip (see store.admit), and sets the RateLimit headers. sid is the Mcp-Session-Id,
// "" for a stateless request. On refusal the error carries the request's HTTP status and
// Retry-After is set; when Redis does not answer within StoreTimeout every request is
// refused (fail closed), since neither the limits nor the session can be checked.
func (s *Server) admit(ctx context.Context, w http.ResponseWriter, client, sid string, mode slotMode, slotTTL time.Duration) (admission, *rpcError) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	g, err := s.st.admit(ctx, gateRequest{
		client: client, session: sid, slot: mode, slotTTL: slotTTL,
		limit: s.cfg.RequestsPerWindow, window: s.cfg.Window, maxConcurrent: s.cfg.MaxConcurrent,
	})
	if err != nil {
		return admission{}, s.unavailable(ctx, w, err)
	}
	s.stats.limiterOK()
	h := w.Header()
	remaining := max(s.cfg.RequestsPerWindow-int(g.count), 0)
	h.Set("RateLimit-Limit", strconv.Itoa(s.cfg.RequestsPerWindow))
	h.Set("RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(g.reset)))
	switch {
	case !g.rateOK:
		s.metrics.limiter.WithLabelValues("rate", "refused").Inc()
		s.stats.reject(&s.stats.rateLimited)
		retry := max(ceilSeconds(g.reset), 1)
		h.Set("Retry-After", strconv.Itoa(retry))
		return admission{}, newError(CodeRateLimited, "Rate limit exceeded",
			fmt.Sprintf("at most %d requests in any %s per client; retry after %d s", s.cfg.RequestsPerWindow, per(s.cfg.Window), retry))
	case !g.slotOK:
		s.metrics.limiter.WithLabelValues("rate", "allowed").Inc()
		s.metrics.limiter.WithLabelValues("concurrency", "refused").Inc()
		s.stats.reject(&s.stats.concurrencyLimited)
		h.Set("Retry-After", "1")
		return admission{}, newError(CodeRateLimited, "Too many concurrent connections",
			fmt.Sprintf("at most %d concurrent requests and open streams per client; finish or close one first", s.cfg.MaxConcurrent))
	}
	s.metrics.limiter.WithLabelValues("rate", "allowed").Inc()
	s.metrics.limiter.WithLabelValues("concurrency", "allowed").Inc()
	a := admission{slot: g.slot}
	if sid != "" {
		if g.sess == nil {
			s.releaseSlot(client, g.slot)
			return admission{}, newError(CodeInvalidRequest, "Session not found",
				"the session expired or was deleted; send initialize to start a new one").withStatus(http.StatusNotFound)
		}
		a.sess = g.sess
	}
	return a, nil
}

// unavailable is the answer to a request whose store call failed: 503 with -32000 and no
// internal detail, or nothing useful when the client itself has gone.
func (s *Server) unavailable(ctx context.Context, w http.ResponseWriter, err error) *rpcError {
	if errors.Is(ctx.Err(), context.Canceled) {
		return clientGone()
	}
	s.stats.limiterFailed(err)
	s.metrics.limiter.WithLabelValues("rate", "unavailable").Inc()
	s.stats.reject(&s.stats.failClosed)
	s.log.WarnContext(ctx, "redis did not answer; request refused", "err", err)
	w.Header().Set("Retry-After", "1")
	return newError(CodeServerError, msgUnavailable,
		fmt.Sprintf("the server's session and rate-limit store did not answer within %s, so the request was refused; retry in a few seconds (GET /readyz shows when the server is ready again)", s.cfg.StoreTimeout)).
		withStatus(http.StatusServiceUnavailable)
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

func (s *Server) releaseSlot(client, token string) {
	if token == "" {
		return
	}
	s.st.slots.Release(s.st.k.Concurrency(client), token)
}
