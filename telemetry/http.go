package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// HTTPConfig configures NewHTTP.
type HTTPConfig struct {
	// Registerer receives the metrics; nil keeps them unregistered.
	Registerer prometheus.Registerer
	// MaxProjects bounds the project label (see ProjectLabels). Default 100.
	MaxProjects int
	// RankWindow is how often the labelled projects are re-ranked. Default 10 minutes.
	RankWindow time.Duration
	// Tracer, when set, gets a span per request; nil costs nothing.
	Tracer trace.Tracer
}

// HTTP measures the requests an Echo server serves.
type HTTP struct {
	cfg      HTTPConfig
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	projects *ProjectLabels
	prop     propagation.TextMapPropagator
}

// NewHTTP returns the request metrics, registered with cfg.Registerer.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	if cfg.MaxProjects == 0 {
		cfg.MaxProjects = 100
	}
	if cfg.MaxProjects < 0 {
		return nil, fmt.Errorf("telemetry: MaxProjects %d: want a positive number", cfg.MaxProjects)
	}
	if cfg.RankWindow <= 0 {
		cfg.RankWindow = 10 * time.Minute
	}
	labels := []string{"project", "operation", "status"}
	h := &HTTP{
		cfg: cfg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_http_requests_total",
			Help: "HTTP requests served, by project (bounded: see docs/metrics.md), operation and status code.",
		}, labels),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "platform_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by project, operation and status code.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, labels),
		prop: propagation.TraceContext{},
	}
	h.projects = NewProjectLabels(cfg.MaxProjects, cfg.RankWindow, func(project string) {
		h.requests.DeletePartialMatch(prometheus.Labels{"project": project})
		h.latency.DeletePartialMatch(prometheus.Labels{"project": project})
	})
	if err := register(cfg.Registerer, h.requests, h.latency); err != nil {
		return nil, err
	}
	return h, nil
}

func register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("telemetry: register metrics: %w", err)
		}
	}
	return nil
}

// Projects returns the project labels, so an operator tool or test can re-rank them now.
func (h *HTTP) Projects() *ProjectLabels { return h.projects }

// Middleware carries the request id (set by Echo's RequestID middleware, which must run
// first) in the request's context, serves the request, and records it. Handler errors are
// answered here (through Echo's error handler) so that the recorded status is the one sent.
func (h *HTTP) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		req := c.Request()
		n := &note{id: c.Response().Header().Get(echo.HeaderXRequestID)}
		ctx := context.WithValue(req.Context(), requestKey{}, n)
		var span trace.Span
		if h.cfg.Tracer != nil {
			ctx = h.prop.Extract(ctx, propagation.HeaderCarrier(req.Header))
			ctx, span = h.cfg.Tracer.Start(ctx, req.Method+" "+c.Path(), trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(
					attribute.String("http.request.method", req.Method),
					attribute.String("http.route", c.Path()),
					attribute.String("platform.request_id", n.id)))
		}
		c.SetRequest(req.WithContext(ctx))

		if err := next(c); err != nil {
			c.Error(err)
		}

		status := c.Response().Status
		noted, project := n.noted()
		op := operation(c.Path(), noted)
		project = h.projects.Label(project)
		code := strconv.Itoa(status)
		h.requests.WithLabelValues(project, op, code).Inc()
		h.latency.WithLabelValues(project, op, code).Observe(time.Since(start).Seconds())
		if span != nil {
			span.SetAttributes(attribute.Int("http.response.status_code", status),
				attribute.String("platform.project", project), attribute.String("platform.operation", op))
			if status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
			span.End()
		}
		return nil
	}
}

// operation names a route's kind of work; GraphQL requests name what the query did.
func operation(route, noted string) string {
	switch {
	case route == "/api/v1/graphql":
		if noted != "" {
			return noted
		}
		return "graphql"
	case route == "/mcp":
		return "mcp"
	case route == "/healthz" || route == "/readyz":
		return "health"
	case strings.HasPrefix(route, "/admin/"):
		return "admin"
	}
	return "other"
}

// maxRequestIDLen bounds a request id a caller (or its load balancer) sends.
const maxRequestIDLen = 128

// CheckRequestID drops a caller's X-Request-Id unless it looks like an id: 1 to 128 letters,
// digits and "-_.:" characters. Echo's RequestID middleware keeps a caller's id (so a load
// balancer's id follows the request) and generates one when there is none; this runs before
// it (Echo's Pre), so a stranger cannot put arbitrary text in logs and error bodies.
func CheckRequestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Request().Header
		if id := h.Get(echo.HeaderXRequestID); id != "" && !validRequestID(id) {
			h.Del(echo.HeaderXRequestID)
		}
		return next(c)
	}
}

func validRequestID(id string) bool {
	if len(id) > maxRequestIDLen {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("-_.:", r):
		default:
			return false
		}
	}
	return true
}
