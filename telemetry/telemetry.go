// Package telemetry is what operators see of a running service: the request id carried in
// every request's context and log record, Prometheus metrics of HTTP traffic with a bounded
// project label, store ping latencies, and the OpenTelemetry tracer provider.
//
// It sits at the HTTP edge of the data flow and imports none of the service's packages, so
// that gql can note what a request did without knowing who measures it.
package telemetry

import (
	"context"
	"log/slog"
	"sync"
)

// requestKey holds a request's *note in its context.
type requestKey struct{}

// note is what the HTTP middleware learns about a request from the packages that serve it.
type note struct {
	id      string
	mu      sync.Mutex
	op      string
	project string
}

// WithRequestID returns ctx carrying a request id, for code that serves requests outside
// the HTTP middleware (and for tests).
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestKey{}, &note{id: id})
}

// RequestID is the id of the request ctx belongs to, or "".
func RequestID(ctx context.Context) string {
	if n, ok := ctx.Value(requestKey{}).(*note); ok {
		return n.id
	}
	return ""
}

// NoteOperation tells the HTTP metrics what kind of work a request did ("list", "create",
// ...). Concurrent callers are safe; a request noting two different kinds is "mixed".
func NoteOperation(ctx context.Context, op string) {
	n, ok := ctx.Value(requestKey{}).(*note)
	if !ok {
		return
	}
	n.mu.Lock()
	switch n.op {
	case "":
		n.op = op
	case op:
	default:
		n.op = "mixed"
	}
	n.mu.Unlock()
}

// NoteProject tells the HTTP metrics which project a request was for; a request not noted
// is for none.
func NoteProject(ctx context.Context, project string) {
	n, ok := ctx.Value(requestKey{}).(*note)
	if !ok {
		return
	}
	n.mu.Lock()
	n.project = project
	n.mu.Unlock()
}

// noted returns what the packages serving the request noted: its kind of work and its project.
func (n *note) noted() (op, project string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.op, n.project
}

// NewLogHandler wraps h so that every record logged with a request's context carries the
// request's id as request_id. Code that logs for a request must use the *Context logging
// calls (InfoContext, ErrorContext, Log) for the id to appear.
func NewLogHandler(h slog.Handler) slog.Handler { return logHandler{h} }

type logHandler struct{ slog.Handler }

func (h logHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return logHandler{h.Handler.WithAttrs(attrs)}
}

func (h logHandler) WithGroup(name string) slog.Handler {
	return logHandler{h.Handler.WithGroup(name)}
}
