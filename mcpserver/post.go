package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/platform-dev/platform/pressure"
	"github.com/platform-dev/platform/tools"
)

// statusClientClosed is the status logged for a request whose client left before the
// answer (nginx's 499): nobody reads it, and it is not a server error.
const statusClientClosed = 499

// clientGone marks a request whose client disconnected: it gets no answer.
func clientGone() *rpcError {
	return newError(CodeServerError, "Client disconnected", "the client closed the connection").withStatus(statusClientClosed)
}

// call is one POSTed message being served.
type call struct {
	w       http.ResponseWriter
	r       *http.Request
	msg     *message // nil until parsed
	sess    *session // nil when stateless
	version string
	client  string
	start   time.Time
	// tool is the metrics label of a tools/call, "" for other methods.
	tool string
	// ran is set once the method ran (not refused by a transport step).
	ran bool
	// answered is set when a step wrote the answer itself (202, a listen stream).
	answered bool
	// stream, for a tools/call from a client that accepts event streams, turns the answer
	// into one when the tool sends a notification (progress, a log message).
	stream *callStream
}

func (c *call) id() json.RawMessage {
	if c.msg == nil {
		return nil
	}
	return c.msg.ID
}

// handlePost serves one message: serve runs the steps, finish writes whatever they ended
// with, in one place.
func (s *Server) handlePost(w http.ResponseWriter, r *http.Request) {
	c := &call{w: w, r: r, client: s.clientOf(r), start: time.Now()}
	result, rerr := s.serve(c)
	s.finish(c, result, rerr)
}

// serve runs the steps of a POST: read, parse, admit (limits and session in one Redis round
// trip), negotiate the version, then answer a notification, open a listen stream or run the
// method. The first step that fails ends it.
func (s *Server) serve(c *call) (any, *rpcError) {
	body, rerr := s.readBody(c.w, c.r)
	if rerr != nil {
		return nil, rerr
	}
	msg, id, perr := parseMessage(body)
	if perr != nil {
		c.msg = &message{ID: id} // the error echoes the id when it could be read
		// Malformed messages count against the client's rate too.
		if _, rerr := s.admit(c.r.Context(), c.w, c.client, "", slotCheck, 0); rerr != nil {
			return nil, rerr
		}
		return nil, perr
	}
	c.msg = msg
	if hm := c.r.Header.Get(headerMethod); hm != "" && hm != msg.Method {
		// 2026-07-28 clients repeat the method in a header for proxies; they must agree.
		return nil, newError(CodeInvalidRequest, "Invalid request",
			fmt.Sprintf("the %s header (%q) does not match the body's method (%q)", headerMethod, hm, msg.Method))
	}
	if msg.Method == "tools/call" {
		c.tool = s.toolLabel(msg)
		// Refused before the limits count it: the client did nothing wrong.
		if s.cfg.Pressure != nil && s.cfg.Pressure() {
			return nil, overloaded(c.w)
		}
	}
	listen := msg.Method == "subscriptions/listen"
	mode, slotTTL := slotCheck, time.Duration(0)
	switch {
	case msg.Method == "":
		mode = slotIgnore // a response, which a call holding a slot waits for
	case listen:
		mode, slotTTL = slotTake, 3*pollInterval
	case c.tool != "":
		mode, slotTTL = slotTake, s.cfg.RequestTimeout+pollInterval
	}
	sid := c.r.Header.Get(headerSession)
	if msg.Method == "initialize" {
		sid = ""
	}
	adm, rerr := s.admit(c.r.Context(), c.w, c.client, sid, mode, slotTTL)
	if rerr != nil {
		return nil, rerr
	}
	// A long stream may trade its slot for a fresh one; release whichever it holds last.
	defer func() { s.releaseSlot(c.client, adm.slot) }()
	c.sess = adm.sess
	if c.version, rerr = s.protocolVersion(c.r, msg, c.sess); rerr != nil {
		return nil, rerr
	}
	switch {
	case !msg.isRequest():
		s.notification(c.r.Context(), c)
		c.answered = true
		s.stats.record(false)
		c.w.WriteHeader(http.StatusAccepted)
		return nil, nil
	case listen:
		c.answered = true
		s.listen(c, &adm.slot)
		return nil, nil
	}
	return s.run(c)
}

// msgOverloaded is the message of a tools/call refused under memory pressure.
const msgOverloaded = "Server overloaded"

// overloaded is the answer to a tools/call that arrives while the process is near its
// memory limit.
func overloaded(w http.ResponseWriter) *rpcError {
	retry := pressure.DefaultAdmitConfig.RetryAfter
	w.Header().Set("Retry-After", strconv.Itoa(pressure.RetrySeconds(retry)))
	return newError(CodeServerError, msgOverloaded, pressure.Message(retry)).withStatus(http.StatusServiceUnavailable)
}

// readBody reads a POST body of at most MaxRequestBytes, whatever its framing. A larger
// body is read to its end (up to a bound) before the 413, so that the client, still
// sending, reads the answer instead of a reset connection.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *rpcError) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return nil, newError(CodeInvalidRequest, "Invalid request", "Content-Type must be application/json").
				withStatus(http.StatusUnsupportedMediaType)
		}
	}
	limit := s.cfg.MaxRequestBytes
	var body []byte
	if r.ContentLength <= limit {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			if r.Context().Err() != nil {
				return nil, clientGone()
			}
			return nil, newError(CodeParseError, "Parse error", "the request body could not be read").withStatus(http.StatusBadRequest)
		}
		if int64(len(body)) <= limit {
			return body, nil
		}
	}
	drainBody(w, r)
	return nil, newError(CodeInvalidRequest, "Request too large",
		fmt.Sprintf("the request body exceeds %d bytes; send one JSON-RPC message of at most that size", limit)).
		withStatus(http.StatusRequestEntityTooLarge)
}

// Bounds of reading an oversized body to its end; past them the connection is closed.
const (
	drainBytes = 64 << 20
	drainTime  = 10 * time.Second
)

func drainBody(w http.ResponseWriter, r *http.Request) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(drainTime))
	n, _ := io.CopyN(io.Discard, r.Body, drainBytes)
	if n == drainBytes {
		w.Header().Set("Connection", "close")
	}
}

// run runs the method of a request within the request timeout, tracked so that
// notifications/cancelled reaches it, with a span for tool calls.
func (s *Server) run(c *call) (any, *rpcError) {
	c.ran = true
	ctx, cancel := context.WithTimeout(c.r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	defer s.track(c, cancel)()
	if c.tool != "" {
		if s.cfg.Tracer != nil {
			var span trace.Span
			ctx, span = s.cfg.Tracer.Start(ctx, "mcp tools/call "+c.tool, trace.WithAttributes(attribute.String("mcp.tool", c.tool)))
			defer span.End()
		}
		ctx = context.WithValue(ctx, askerKey{}, &asker{s: s, c: c})
		if acceptsEventStream(c.r.Header.Get("Accept")) {
			c.stream = &callStream{w: c.w}
			ctx = context.WithValue(ctx, streamKey{}, c.stream)
			if token := progressToken(c.msg); token != nil {
				ctx = tools.WithProgress(ctx, c.stream.progress(token))
			}
		}
	}
	result, rerr := s.dispatch(ctx, c)
	if rerr != nil && c.tool != "" {
		trace.SpanFromContext(ctx).SetStatus(codes.Error, rerr.Message)
	}
	if rerr == nil && c.version >= Version20260728 {
		result = completeResult(result)
	}
	if rerr != nil && c.r.Context().Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The client left (or cancelled): there is nobody to answer.
		return nil, clientGone()
	}
	return result, rerr
}

// finish writes the answer of a POST, counts it and reports it to metrics and the session's
// log stream.
func (s *Server) finish(c *call, result any, rerr *rpcError) {
	if c.tool != "" {
		s.metrics.toolCalls.WithLabelValues(c.tool, outcome(result, rerr)).Inc()
		if c.ran {
			s.metrics.toolSeconds.WithLabelValues(c.tool).Observe(time.Since(c.start).Seconds())
		}
	}
	if c.answered {
		return
	}
	streaming := c.stream != nil && c.stream.close()
	if rerr != nil && rerr.Status == statusClientClosed {
		if streaming {
			s.gone()
			return
		}
		s.refuse(c.w, c.id(), rerr)
		return
	}
	b, rerr := s.encode(c, result, rerr)
	failed := rerr != nil || isToolError(result)
	s.stats.record(failed)
	if c.ran {
		s.logCall(c, time.Since(c.start), rerr, isToolError(result))
	}
	if streaming {
		fmt.Fprintf(c.w, "event: message\ndata: %s\n\n", b)
		flush(c.w)
		return
	}
	status := http.StatusOK
	if rerr != nil {
		status = rerr.httpStatus()
	}
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(status)
	_, _ = c.w.Write(b)
}

// encode renders the response, replacing a result above MaxResponseBytes (never cut) or one
// that cannot be encoded by an error; it returns the error that went out.
func (s *Server) encode(c *call, result any, rerr *rpcError) ([]byte, *rpcError) {
	enc := func(result any, rerr *rpcError) ([]byte, error) {
		stampRequestID(c.w, rerr)
		return responseJSON(c.id(), result, rerr)
	}
	b, err := enc(result, rerr)
	if err != nil {
		rerr = s.internal(c.r.Context(), "encode response", err)
		b, _ = enc(nil, rerr)
	}
	if len(b) > s.cfg.MaxResponseBytes {
		rerr = s.tooLarge(c, len(b))
		b, _ = enc(nil, rerr)
	}
	return b, rerr
}

// progressToken is params._meta.progressToken of a request, nil when absent.
func progressToken(msg *message) json.RawMessage {
	var p struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if msg.Params == nil || json.Unmarshal(msg.Params, &p) != nil {
		return nil
	}
	if t := p.Meta.ProgressToken; len(t) > 0 && (t[0] == '"' || t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) {
		return t
	}
	return nil
}

// acceptsEventStream reports whether an Accept header admits text/event-stream (a missing
// header or a wildcard does).
func acceptsEventStream(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && (mt == "text/event-stream" || mt == "text/*" || mt == "*/*") {
			return true
		}
	}
	return false
}

// callStream sends notifications ahead of a tools/call's response: the answer becomes an
// event stream at the first one, and stays plain JSON when there is none. Tools may send from
// any goroutine, even after the call ended (then nothing is sent).
type callStream struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	started bool
	closed  bool
}

type streamKey struct{}

// notify sends one notification on the call's answer; it reports false when the call has
// ended.
func (cs *callStream) notify(payload []byte) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.send(payload)
}

func (cs *callStream) send(payload []byte) bool {
	if cs.closed {
		return false
	}
	if !cs.started {
		startSSE(cs.w)
		cs.started = true
	}
	fmt.Fprintf(cs.w, "event: message\ndata: %s\n\n", payload)
	flush(cs.w)
	return true
}

// progress returns the tools.Progress of a call whose client sent token. The protocol wants
// progress to increase with every notification, so a value not above the last is dropped.
func (cs *callStream) progress(token json.RawMessage) tools.Progress {
	var last float64
	sent := false
	return func(progress, total float64, message string) {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		if sent && progress <= last {
			return
		}
		params := map[string]any{"progressToken": token, "progress": progress}
		if total > 0 {
			params["total"] = total
		}
		if message != "" {
			params["message"] = message
		}
		if cs.send(notificationJSON("notifications/progress", params)) {
			last, sent = progress, true
		}
	}
}

// close ends the stream for notifications; it reports whether the answer became an event
// stream.
func (cs *callStream) close() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.closed = true
	return cs.started
}
