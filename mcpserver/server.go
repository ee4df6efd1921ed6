// Package mcpserver serves the Model Context Protocol over Streamable HTTP at /mcp.
//
// It speaks protocol revisions 2025-03-26, 2025-06-18, 2025-11-25 (initialize, sessions,
// a GET notification stream) and 2026-07-28 (stateless requests, server/discover and
// subscriptions/listen). Everything replicas must agree on -- sessions, subscriptions,
// undelivered notifications, rate limits and concurrency slots -- lives in Redis, so any
// replica can serve any request. The tools and resources come from a tools.Set; the server
// knows nothing about what they compute.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/platform-dev/platform/tools"
)

// Protocol revisions, newest first. Initialize negotiates only the session-based ones;
// 2026-07-28 is reached through server/discover.
const (
	Version20260728 = "2026-07-28"
	Version20251125 = "2025-11-25"
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
)

var (
	supportedVersions = []string{Version20260728, Version20251125, Version20250618, Version20250326}
	sessionVersions   = []string{Version20251125, Version20250618, Version20250326}
)

// Header and _meta names of the transport.
const (
	headerSession     = "Mcp-Session-Id"
	headerProtocol    = "Mcp-Protocol-Version"
	headerLastEventID = "Last-Event-ID"
	headerMethod      = "Mcp-Method"
	metaProtocol      = "io.modelcontextprotocol/protocolVersion"
	metaServerInfo    = "io.modelcontextprotocol/serverInfo"
	metaSubscription  = "io.modelcontextprotocol/subscriptionId"
	metaLogLevel      = "io.modelcontextprotocol/logLevel"
)

// Server info announced to clients, fixed by the seed.
const (
	ServerName        = "service-mcp-server"
	ServerVersion     = "1.0.0"
	serverDescription = "Code analysis, cloud infrastructure analysis, security assessment, system health and expert consultation over MCP."
	instructions      = "Call tools/list for the analyses. Read service://system/health for the server's state; service://code/analysis and service://infrastructure/cloud hold the latest analyses and can be subscribed to."
)

// pollInterval is how often an open stream re-reads its events, refreshes its concurrency
// slot and sends a keep-alive comment; pub/sub wakes it sooner when events arrive.
const pollInterval = 5 * time.Second

// Server is the MCP endpoint. It is an http.Handler for the /mcp path.
type Server struct {
	cfg     Config
	proxies []netip.Prefix
	rdb     redis.UniversalClient
	st      *store
	limiter *redis_rate.Limiter
	log     *slog.Logger
	cat     atomic.Pointer[catalog]
	stats   *stats
	metrics *metrics
	started time.Time

	ctx      context.Context // cancelled by Close; ends open streams
	cancel   context.CancelFunc
	pubsub   *redis.PubSub
	recvDone chan struct{}
	wg       sync.WaitGroup // background notification work

	mu        sync.Mutex
	closed    bool
	listeners map[string]map[chan struct{}]struct{} // session id -> streams open here
	inflight  map[string]*inflightCall              // scope NUL request id -> call running here
}

type inflightCall struct{ cancel context.CancelFunc }

// New returns a server for set. rdb is shared by every replica; hub (may be nil) carries the
// analyses' "resource changed" signals. The server does not close rdb.
func New(cfg Config, rdb redis.UniversalClient, set tools.Set, hub *tools.Hub, logger *slog.Logger) (*Server, error) {
	if rdb == nil {
		return nil, errors.New("mcpserver: a Redis client is required")
	}
	cfg, proxies, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cat, err := newCatalog(set)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:       cfg,
		proxies:   proxies,
		rdb:       rdb,
		st:        &store{rdb: rdb, k: keyspace{cfg.KeyPrefix}, ttl: cfg.SessionTTL, backlog: cfg.EventBacklog},
		limiter:   redis_rate.NewLimiter(rdb),
		log:       logger.With("component", "mcpserver"),
		stats:     newStats(),
		metrics:   m,
		started:   time.Now(),
		ctx:       ctx,
		cancel:    cancel,
		recvDone:  make(chan struct{}),
		listeners: map[string]map[chan struct{}]struct{}{},
		inflight:  map[string]*inflightCall{},
	}
	s.cat.Store(cat)
	s.pubsub = rdb.Subscribe(ctx, s.st.k.wake(), s.st.k.cancel())
	// Wait (briefly) for the subscription so that notifications emitted right after New are
	// not missed; if Redis is down now, go-redis keeps trying and streams poll meanwhile.
	confirm, cancelConfirm := context.WithTimeout(ctx, 2*time.Second)
	_, _ = s.pubsub.Receive(confirm)
	cancelConfirm()
	go s.receive()
	if hub != nil {
		hub.Listen(s.resourceChanged)
	}
	return s, nil
}

// Close ends open streams and background work. It does not close the Redis client.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.wg.Wait()
	s.cancel()
	err := s.pubsub.Close()
	<-s.recvDone
	return err
}

// Update replaces the served tools and resources, telling connected clients when either
// list changed.
func (s *Server) Update(set tools.Set) error {
	cat, err := newCatalog(set)
	if err != nil {
		return fmt.Errorf("mcpserver: %w", err)
	}
	old := s.cat.Swap(cat)
	if !sameTools(old, cat) {
		s.background(func(ctx context.Context) { s.broadcast(ctx, "notifications/tools/list_changed", "tl") })
	}
	if !sameResources(old, cat) {
		s.background(func(ctx context.Context) { s.broadcast(ctx, "notifications/resources/list_changed", "rl") })
	}
	return nil
}

// ServeHTTP implements the Streamable HTTP transport.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.originAllowed(r.Header.Get("Origin"), r.Host) {
		s.stats.record(true)
		writeRPC(w, http.StatusForbidden, nil, nil, newError(CodeInvalidRequest, "Forbidden",
			fmt.Sprintf("origin %q is not allowed to call this server", r.Header.Get("Origin"))))
		return
	}
	switch r.Method {
	case http.MethodPost:
		s.handlePost(w, r)
	case http.MethodGet:
		s.handleGet(w, r)
	case http.MethodDelete:
		s.handleDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		s.stats.record(true)
		writeRPC(w, http.StatusMethodNotAllowed, nil, nil, newError(CodeInvalidRequest, "Method not allowed",
			"use POST for messages, GET for the notification stream, DELETE to end a session"))
	}
}

func (s *Server) originAllowed(origin, host string) bool {
	if origin == "" {
		return true
	}
	if u, err := url.Parse(origin); err == nil && u.Host == host && isLoopback(u.Hostname()) {
		// A page served by this very server on a loopback address: a DNS-rebinding attacker
		// cannot make a browser send a loopback Host, so this is same-origin and safe.
		return true
	}
	for _, o := range s.cfg.AllowedOrigins {
		if o == "*" || strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	return false
}

// clientOf identifies the caller for limits: the peer address, or the nearest untrusted
// address in X-Forwarded-For when the peer is a trusted proxy.
func (s *Server) clientOf(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	addr := ap.Addr().Unmap()
	if !s.trusted(addr) {
		return addr.String()
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		addr = a.Unmap()
		if !s.trusted(addr) {
			break
		}
	}
	return addr.String()
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

func (s *Server) trusted(a netip.Addr) bool {
	return slices.ContainsFunc(s.proxies, func(p netip.Prefix) bool { return p.Contains(a) })
}

func writeRPC(w http.ResponseWriter, status int, id json.RawMessage, result any, rerr *rpcError) {
	stampRequestID(w, rerr)
	b, err := responseJSON(id, result, rerr)
	if err != nil {
		b, _ = responseJSON(id, nil, newError(CodeInternalError, "Internal error", "the response could not be encoded"))
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// stampRequestID gives an error the request id that the HTTP layer in front (Echo's
// RequestID middleware) put on the response.
func stampRequestID(w http.ResponseWriter, rerr *rpcError) {
	if rerr != nil {
		rerr.RequestID = w.Header().Get("X-Request-Id")
	}
}

// call is one request being served.
type call struct {
	w       http.ResponseWriter
	r       *http.Request
	msg     *message
	sess    *session // nil when stateless
	version string
	client  string
}

func (s *Server) handlePost(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			s.stats.record(true)
			writeRPC(w, http.StatusUnsupportedMediaType, nil, nil, newError(CodeInvalidRequest, "Invalid request",
				"Content-Type must be application/json"))
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxRequestBytes))
	if err != nil {
		s.stats.record(true)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeRPC(w, http.StatusRequestEntityTooLarge, nil, nil, newError(CodeInvalidRequest, "Invalid request",
				fmt.Sprintf("the request body exceeds %d bytes", s.cfg.MaxRequestBytes)))
			return
		}
		writeRPC(w, http.StatusBadRequest, nil, nil, newError(CodeParseError, "Parse error", "the request body could not be read"))
		return
	}
	msg, id, perr := parseMessage(body)
	if perr != nil {
		// Malformed messages count against the client's rate too.
		if rerr := s.admitRate(r.Context(), w, s.clientOf(r), false); rerr != nil {
			perr = rerr
		}
		s.stats.record(true)
		writeRPC(w, perr.httpStatus(), id, nil, perr)
		return
	}
	if hm := r.Header.Get(headerMethod); hm != "" && hm != msg.Method {
		// 2026-07-28 clients repeat the method in a header for proxies; they must agree.
		s.stats.record(true)
		writeRPC(w, http.StatusBadRequest, msg.ID, nil, newError(CodeInvalidRequest, "Invalid request",
			fmt.Sprintf("the %s header (%q) does not match the body's method (%q)", headerMethod, hm, msg.Method)))
		return
	}
	c := &call{w: w, r: r, msg: msg, client: s.clientOf(r)}
	isToolCall := msg.Method == "tools/call"
	tool := ""
	if isToolCall {
		tool = s.toolLabel(msg)
	}
	if rerr := s.admitRate(r.Context(), w, c.client, isToolCall); rerr != nil {
		if isToolCall {
			s.metrics.toolCalls.WithLabelValues(tool, outcome(nil, rerr)).Inc()
		}
		s.stats.record(true)
		writeRPC(w, rerr.httpStatus(), msg.ID, nil, rerr)
		return
	}
	if sid := r.Header.Get(headerSession); sid != "" && msg.Method != "initialize" {
		sess, err := s.st.loadSession(r.Context(), sid)
		if errors.Is(err, errNoSession) {
			s.stats.record(true)
			writeRPC(w, http.StatusNotFound, msg.ID, nil, newError(CodeInvalidRequest, "Session not found",
				"the session expired or was deleted; send initialize to start a new one"))
			return
		}
		if err != nil {
			s.stats.record(true)
			writeRPC(w, http.StatusServiceUnavailable, msg.ID, nil, s.internal(r.Context(), "load session", err))
			return
		}
		c.sess = sess
	}
	version, verr := s.protocolVersion(r, msg, c.sess)
	if verr != nil {
		s.stats.record(true)
		writeRPC(w, verr.httpStatus(), msg.ID, nil, verr)
		return
	}
	c.version = version
	if !msg.isRequest() {
		s.notification(r.Context(), c)
		s.stats.record(false)
		w.WriteHeader(http.StatusAccepted)
		return
	}

	listen := msg.Method == "subscriptions/listen"
	slotTTL := s.cfg.RequestTimeout + pollInterval
	if listen {
		slotTTL = 3 * pollInterval
	}
	slot, rerr := s.acquireSlot(r.Context(), w, c.client, slotTTL, isToolCall || listen)
	if rerr != nil {
		if isToolCall {
			s.metrics.toolCalls.WithLabelValues(tool, outcome(nil, rerr)).Inc()
		}
		s.stats.record(true)
		writeRPC(w, rerr.httpStatus(), msg.ID, nil, rerr)
		return
	}
	if slot != "" {
		// A long stream may trade its slot for a fresh one; release whichever it holds last.
		defer func() { s.releaseSlot(c.client, slot) }()
	}
	if listen {
		s.listen(c, &slot)
		return
	}

	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	defer s.track(c, cancel)()
	start := time.Now()
	if isToolCall && s.cfg.Tracer != nil {
		var span trace.Span
		ctx, span = s.cfg.Tracer.Start(ctx, "mcp tools/call "+tool, trace.WithAttributes(attribute.String("mcp.tool", tool)))
		defer span.End()
	}
	result, rerr := s.dispatch(ctx, c)
	if rerr == nil && c.version >= Version20260728 {
		result = completeResult(result)
	}
	encode := func(result any, rerr *rpcError) ([]byte, error) {
		stampRequestID(w, rerr)
		return responseJSON(msg.ID, result, rerr)
	}
	b, err := encode(result, rerr)
	if err != nil {
		rerr = s.internal(ctx, "encode response", err)
		b, _ = encode(nil, rerr)
	}
	if len(b) > s.cfg.MaxResponseBytes {
		rerr = s.tooLarge(c, len(b))
		b, _ = encode(nil, rerr)
	}
	s.stats.record(rerr != nil || isToolError(result))
	s.logCall(c, time.Since(start), rerr, isToolError(result))
	if isToolCall {
		s.metrics.toolCalls.WithLabelValues(tool, outcome(result, rerr)).Inc()
		s.metrics.toolSeconds.WithLabelValues(tool).Observe(time.Since(start).Seconds())
		if rerr != nil {
			trace.SpanFromContext(ctx).SetStatus(codes.Error, rerr.Message)
		}
	}
	status := http.StatusOK
	if rerr != nil {
		status = rerr.httpStatus()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// completeResult stamps resultType "complete", which 2026-07-28 requires on every result
// (the other value, "input_required", belongs to multi-round-trip requests this server
// does not make).
func completeResult(result any) any {
	b, err := json.Marshal(result)
	if err != nil {
		return result
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return result
	}
	m["resultType"] = json.RawMessage(`"complete"`)
	return m
}

// protocolVersion decides the revision a request speaks: the 2026-07-28 _meta field (which the
// header must repeat), else the header, else the session's, else 2025-03-26 as the
// specification says for clients that send no header.
func (s *Server) protocolVersion(r *http.Request, msg *message, sess *session) (string, *rpcError) {
	header := r.Header.Get(headerProtocol)
	var meta struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if msg.Params != nil {
		_ = json.Unmarshal(msg.Params, &meta)
	}
	var metaVersion string
	if raw, ok := meta.Meta[metaProtocol]; ok && msg.isRequest() {
		_ = json.Unmarshal(raw, &metaVersion)
	}
	if metaVersion != "" {
		if !slices.Contains(supportedVersions, metaVersion) {
			return "", &rpcError{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version",
				Details: fmt.Sprintf("protocol version %q is not supported; supported: %s", metaVersion, strings.Join(supportedVersions, ", ")),
				Extra:   map[string]any{"supported": supportedVersions, "requested": metaVersion}}
		}
		if header != metaVersion {
			return "", newError(CodeInvalidRequest, "Invalid request",
				fmt.Sprintf("the %s header (%q) must repeat _meta %q (%q)", headerProtocol, header, metaProtocol, metaVersion))
		}
		return metaVersion, nil
	}
	if header != "" {
		if !slices.Contains(supportedVersions, header) {
			return "", newError(CodeInvalidRequest, "Unsupported protocol version",
				fmt.Sprintf("%s %q is not supported; supported: %s", headerProtocol, header, strings.Join(supportedVersions, ", ")))
		}
		return header, nil
	}
	if sess != nil && sess.version != "" {
		return sess.version, nil
	}
	return Version20250326, nil
}

// notification handles a client notification or response; neither gets an answer.
func (s *Server) notification(ctx context.Context, c *call) {
	if c.msg.Method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(c.msg.Params, &p) != nil || p.RequestID == nil {
		return
	}
	key := scopeOf(c) + "\x00" + canonicalID(p.RequestID)
	if err := s.rdb.Publish(ctx, s.st.k.cancel(), key).Err(); err != nil {
		s.log.Warn("publish cancellation", "err", err)
	}
}

// scopeOf is what a request id is unique within: the session, else the client address.
func scopeOf(c *call) string {
	if c.sess != nil {
		return c.sess.id
	}
	return c.client
}

func canonicalID(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// track registers a running request so that notifications/cancelled on any replica can
// cancel it; the returned func unregisters it.
func (s *Server) track(c *call, cancel context.CancelFunc) func() {
	key := scopeOf(c) + "\x00" + canonicalID(c.msg.ID)
	ic := &inflightCall{cancel: cancel}
	s.mu.Lock()
	s.inflight[key] = ic
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.inflight[key] == ic {
			delete(s.inflight, key)
		}
		s.mu.Unlock()
	}
}

// receive routes pub/sub messages to the streams and requests running on this replica.
func (s *Server) receive() {
	defer close(s.recvDone)
	for m := range s.pubsub.Channel() {
		switch m.Channel {
		case s.st.k.wake():
			s.mu.Lock()
			for ch := range s.listeners[m.Payload] {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
			s.mu.Unlock()
		case s.st.k.cancel():
			s.mu.Lock()
			if ic := s.inflight[m.Payload]; ic != nil {
				ic.cancel()
			}
			s.mu.Unlock()
		}
	}
}

// background runs fn unless the server is closing; Close waits for it.
func (s *Server) background(fn func(context.Context)) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		fn(ctx)
	}()
}

// resourceChanged is the tools.Hub listener.
func (s *Server) resourceChanged(uri string) {
	s.background(func(ctx context.Context) { s.notifyResource(ctx, uri) })
}

func (s *Server) notifyResource(ctx context.Context, uri string) {
	ids, err := s.rdb.SMembers(ctx, s.st.k.subscribers(uri)).Result()
	if err != nil {
		s.log.Warn("list resource subscribers", "uri", uri, "err", err)
		return
	}
	payload := notificationJSON("notifications/resources/updated", map[string]any{"uri": uri})
	for _, id := range ids {
		n, err := s.rdb.Exists(ctx, s.st.k.session(id)).Result()
		if err != nil {
			s.log.Warn("notify resource subscriber", "uri", uri, "err", err)
			return
		}
		if n == 0 {
			_ = s.rdb.SRem(ctx, s.st.k.subscribers(uri), id).Err()
			continue
		}
		if err := s.st.emit(ctx, id, payload); err != nil {
			s.log.Warn("notify resource subscriber", "uri", uri, "err", err)
		}
	}
}

// broadcast sends a list-changed notification to every live session; listen streams get it
// only when they asked for it (flag "tl" or "rl").
func (s *Server) broadcast(ctx context.Context, method, flag string) {
	ids, err := s.st.liveSessions(ctx)
	if err != nil {
		s.log.Warn("broadcast", "method", method, "err", err)
		return
	}
	payload := notificationJSON(method, nil)
	for _, id := range ids {
		h, err := s.rdb.HMGet(ctx, s.st.k.session(id), "kind", flag).Result()
		if err != nil {
			s.log.Warn("broadcast", "method", method, "err", err)
			return
		}
		if h[0] == nil || (h[0] == kindListen && h[1] != "1") {
			continue
		}
		if err := s.st.emit(ctx, id, payload); err != nil {
			s.log.Warn("broadcast", "method", method, "err", err)
		}
	}
}
