package tenant

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/golang-jwt/jwt/v5"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform-dev/platform/gql"
)

// RealtimeLimits bound the subscriptions of every project: the connections counted here,
// the rest by each project's API (gql.Realtime). Zero values take the defaults.
type RealtimeLimits struct {
	// MaxConnsPerProject bounds the open WebSocket and SSE connections of one project on
	// one replica; MaxConnsPerIP those of one client address.
	MaxConnsPerProject int
	MaxConnsPerIP      int
	gql.Realtime
}

// Defaults of the zero RealtimeLimits values.
const (
	DefaultMaxConnsPerProject = 10_000
	DefaultMaxConnsPerIP      = 100
)

// realtime counts the open realtime connections and measures them.
type realtime struct {
	limits RealtimeLimits

	mu        sync.Mutex
	byProject map[string]int
	byIP      map[string]int

	conns, subs *prometheus.GaugeVec   // by transport
	events      *prometheus.CounterVec // by outcome
}

func newRealtime(limits RealtimeLimits, reg prometheus.Registerer) (*realtime, error) {
	if limits.MaxConnsPerProject <= 0 {
		limits.MaxConnsPerProject = DefaultMaxConnsPerProject
	}
	if limits.MaxConnsPerIP <= 0 {
		limits.MaxConnsPerIP = DefaultMaxConnsPerIP
	}
	l := &realtime{
		limits: limits, byProject: map[string]int{}, byIP: map[string]int{},
		conns: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "platform_realtime_connections",
			Help: "Open GraphQL subscription connections, by transport (websocket, sse).",
		}, []string{"transport"}),
		subs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "platform_realtime_subscriptions",
			Help: "Running GraphQL subscriptions, by transport (websocket, sse).",
		}, []string{"transport"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_realtime_events_total",
			Help: "Record changes sent to subscribers (delivered), and subscribers ended for falling behind (dropped).",
		}, []string{"outcome"}),
	}
	l.limits.Observe = l.observe
	if reg != nil {
		for _, c := range []prometheus.Collector{l.conns, l.subs, l.events} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("register realtime metrics: %w", err)
			}
		}
	}
	return l, nil
}

func (l *realtime) observe(o gql.Observation) {
	switch o.Kind {
	case "connection":
		l.conns.WithLabelValues(o.Transport).Add(float64(o.Delta))
	case "subscription":
		l.subs.WithLabelValues(o.Transport).Add(float64(o.Delta))
	default:
		l.events.WithLabelValues(o.Kind).Add(float64(o.Delta))
	}
}

// acquire counts a connection of project from ip; a message saying which limit it passes
// when it may not open, else the function that counts it closed. A project with a
// subscriptions quota is held to it across replicas instead of the per-replica cap.
func (l *realtime) acquire(project, ip string, quota bool) (func(), string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case !quota && l.byProject[project] >= l.limits.MaxConnsPerProject:
		return nil, fmt.Sprintf("project %q has %d subscription connections open on this server, the most it may", project, l.limits.MaxConnsPerProject)
	case l.byIP[ip] >= l.limits.MaxConnsPerIP:
		return nil, fmt.Sprintf("your address has %d subscription connections open, the most it may: close one first", l.limits.MaxConnsPerIP)
	}
	l.byProject[project]++
	l.byIP[ip]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.byProject[project]--; l.byProject[project] == 0 {
			delete(l.byProject, project)
		}
		if l.byIP[ip]--; l.byIP[ip] == 0 {
			delete(l.byIP, ip)
		}
	}, ""
}

// withRealtime serves subscriptions on /api/v1/graphql: a WebSocket upgrade (graphql-
// transport-ws) or a POST accepting text/event-stream (graphql-sse); anything else goes to
// next. A browser page may connect from the project's own host or an origin its cors
// settings list.
func (r *Registry) withRealtime(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		ws, sse := gql.IsWebSocket(req), gql.IsEventStream(req)
		if !ws && !sse {
			return next(c)
		}
		rt := RuntimeOf(c)
		if origin := req.Header.Get("Origin"); origin != "" && !sameHost(origin, req.Host) {
			if _, ok := rt.Project.CORS.allowsOrigin(origin); !ok {
				return WriteError(c, http.StatusForbidden, CodeForbidden, "origin "+quote(origin)+" may not subscribe to project "+quote(rt.Project.ID)+": add it to cors.origins in the project document")
			}
		}
		// The stream refuses every token it cannot verify with 401; a provider that cannot be
		// reached is answered as for a query, 503 with Retry-After. A token that passes here is
		// remembered, so the stream's own check costs a lookup.
		if sse {
			if _, _, err := rt.Verifier.authorization(req.Context(), req.Header.Get("Authorization")); errors.Is(err, ErrJWKSUnavailable) {
				writeAuthError(c.Response(), err)
				return nil
			}
		}
		release, msg := r.live.acquire(rt.Project.ID, clientOf(c), rt.Quotas.Subscriptions > 0)
		if msg != "" {
			c.Response().Header().Set("Retry-After", "10")
			return WriteError(c, http.StatusTooManyRequests, CodeRateLimited, msg)
		}
		defer release()
		if rt.usage != nil {
			defer rt.usage.connected()()
		}
		auth := authenticator(rt)
		if ws {
			rt.API.ServeWebSocket(c.Response(), req, auth)
		} else {
			rt.API.ServeSSE(c.Response(), req, auth)
		}
		return nil
	}
}

// sameHost reports whether a page of origin is served by host itself.
func sameHost(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, host)
}

// authenticator verifies a realtime client's token against the project's identity provider
// and gives its subscriptions the project's access rules for that caller, until the token's
// exp.
func authenticator(rt *Runtime) gql.Authenticator {
	return func(ctx context.Context, authz string) (context.Context, context.CancelFunc, error) {
		claims, _, err := rt.Verifier.authorization(ctx, authz)
		if err == nil && claims == nil && rt.Rules.NeedsToken() {
			err = fmt.Errorf("%w: send {\"Authorization\": \"Bearer <token>\"}", ErrNoToken)
		}
		if err != nil {
			return nil, nil, err
		}
		ctx = gql.WithGuard(ctx, rt.Rules.Guard(claims))
		if exp, err := jwt.MapClaims(claims).GetExpirationTime(); err == nil && exp != nil {
			ctx, cancel := context.WithDeadlineCause(ctx, exp.Time, gql.ErrTokenExpired)
			return ctx, cancel, nil
		}
		ctx, cancel := context.WithCancel(ctx)
		return ctx, cancel, nil
	}
}
