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
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/coord"
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
	rdb     redis.UniversalClient
	ownRDB  bool // rdb was made by New and is closed by Close
	redact  redactor
	st      *store
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
	pending   map[string]chan clientReply           // session NUL server request id -> call waiting here
}

type inflightCall struct{ cancel context.CancelFunc }

// New returns a server for set. rdb is shared by every replica; hub (may be nil) carries the
// analyses' "resource changed" signals. The server does not close rdb; for a *redis.Client
// it opens its own pool to the same server with StoreTimeout on every operation.
func New(cfg Config, rdb redis.UniversalClient, set tools.Set, hub *tools.Hub, logger *slog.Logger) (*Server, error) {
	if rdb == nil {
		return nil, errors.New("mcpserver: a Redis client is required")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cat, err := newCatalog(set, cfg.ConformanceFixtures)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rdb, own := boundedClient(rdb, cfg.StoreTimeout)
	st := &store{rdb: rdb, k: coord.MCP{Prefix: cfg.KeyPrefix}, ttl: cfg.SessionTTL, backlog: cfg.EventBacklog,
		maxSlotTTL: max(cfg.RequestTimeout+pollInterval, 3*pollInterval), slots: coord.NewSlots(rdb, logger)}
	m, err := newMetrics(cfg.Registerer, st)
	if err != nil {
		if own {
			_ = rdb.Close()
		}
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:       cfg,
		rdb:       rdb,
		ownRDB:    own,
		redact:    newRedactor(cfg.HiddenPaths),
		st:        st,
		log:       logger.With("component", "mcpserver"),
		stats:     newStats(),
		metrics:   m,
		started:   time.Now(),
		ctx:       ctx,
		cancel:    cancel,
		recvDone:  make(chan struct{}),
		listeners: map[string]map[chan struct{}]struct{}{},
		inflight:  map[string]*inflightCall{},
		pending:   map[string]chan clientReply{},
	}
	s.cat.Store(cat)
	s.pubsub = rdb.Subscribe(ctx, s.st.k.Wake(), s.st.k.Cancel(), s.st.k.Reply())
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
	if s.ownRDB {
		err = errors.Join(err, s.rdb.Close())
	}
	return err
}

// boundedClient returns a client to rdb's server whose every operation, dial included, ends
// within timeout and is not retried, so that a slow or unreachable Redis fails a request in
// well under a second instead of after go-redis's default retries (seconds). own is true when
// the returned client is new.
func boundedClient(rdb redis.UniversalClient, timeout time.Duration) (_ redis.UniversalClient, own bool) {
	c, ok := rdb.(*redis.Client)
	if !ok {
		return rdb, false
	}
	// Only the connection settings are copied: an initialised client's Options also hold
	// state of its own that a second client must not share.
	o := c.Options()
	return redis.NewClient(&redis.Options{
		Network: o.Network, Addr: o.Addr, Dialer: o.Dialer, OnConnect: o.OnConnect,
		Protocol: o.Protocol, Username: o.Username, Password: o.Password, DB: o.DB,
		CredentialsProvider: o.CredentialsProvider, CredentialsProviderContext: o.CredentialsProviderContext,
		TLSConfig: o.TLSConfig, PoolSize: o.PoolSize, ClientName: o.ClientName,
		ContextTimeoutEnabled: true, MaxRetries: -1,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, PoolTimeout: timeout,
	}), true
}

// Ready reports whether the server can serve: its Redis answers within StoreTimeout. It is
// what a readiness probe should ask.
func (s *Server) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis did not answer within %s: %w", s.cfg.StoreTimeout, err)
	}
	return nil
}

// Update replaces the served tools and resources, telling connected clients when either
// list changed.
func (s *Server) Update(set tools.Set) error {
	cat, err := newCatalog(set, s.cfg.ConformanceFixtures)
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
	var rerr *rpcError
	switch {
	case !s.originAllowed(r.Header.Get("Origin"), r.Host):
		rerr = newError(CodeInvalidRequest, "Forbidden",
			fmt.Sprintf("origin %q is not allowed to call this server", r.Header.Get("Origin"))).withStatus(http.StatusForbidden)
	case r.Method == http.MethodPost:
		s.handlePost(w, r)
		return
	case r.Method == http.MethodGet:
		rerr = s.handleGet(w, r)
	case r.Method == http.MethodDelete:
		rerr = s.handleDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		rerr = newError(CodeInvalidRequest, "Method not allowed",
			"use POST for messages, GET for the notification stream, DELETE to end a session").withStatus(http.StatusMethodNotAllowed)
	}
	if rerr != nil {
		s.refuse(w, nil, rerr)
	}
}

// refuse answers a request with an error and counts it; a client that has gone gets
// nothing and is logged at INFO.
func (s *Server) refuse(w http.ResponseWriter, id json.RawMessage, rerr *rpcError) {
	if rerr.Status == statusClientClosed {
		s.gone()
		w.WriteHeader(statusClientClosed)
		return
	}
	s.stats.record(true)
	stampRequestID(w, rerr)
	b, _ := responseJSON(id, nil, rerr) // an rpcError always encodes
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rerr.httpStatus())
	_, _ = w.Write(b)
}

// gone counts a request whose client left before its answer: that is the client's doing,
// so it is logged at INFO, not as a server error.
func (s *Server) gone() {
	s.stats.record(true)
	s.log.Info("client disconnected before the answer")
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

// clientOf identifies the caller for limits (Config.ClientIP).
func (s *Server) clientOf(r *http.Request) string { return s.cfg.ClientIP(r) }

// peerAddr is the TCP peer's address, IPv4-mapped addresses shown as IPv4.
func peerAddr(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return ap.Addr().Unmap().String()
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// stampRequestID gives an error the request id that the HTTP layer in front (Echo's
// RequestID middleware) put on the response.
func stampRequestID(w http.ResponseWriter, rerr *rpcError) {
	if rerr != nil {
		rerr.RequestID = w.Header().Get("X-Request-Id")
	}
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
	if c.msg.Method == "" {
		s.deliverReply(ctx, c)
		return
	}
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
	if err := s.rdb.Publish(ctx, s.st.k.Cancel(), key).Err(); err != nil {
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
		case s.st.k.Wake():
			s.mu.Lock()
			for ch := range s.listeners[m.Payload] {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
			s.mu.Unlock()
		case s.st.k.Cancel():
			s.mu.Lock()
			if ic := s.inflight[m.Payload]; ic != nil {
				ic.cancel()
			}
			s.mu.Unlock()
		case s.st.k.Reply():
			s.replyArrived(m.Payload)
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
	ids, err := s.rdb.SMembers(ctx, s.st.k.Subscribers(uri)).Result()
	if err != nil {
		s.log.Warn("list resource subscribers", "uri", uri, "err", err)
		return
	}
	payload := notificationJSON("notifications/resources/updated", map[string]any{"uri": uri})
	for _, id := range ids {
		n, err := s.rdb.Exists(ctx, s.st.k.Session(id)).Result()
		if err != nil {
			s.log.Warn("notify resource subscriber", "uri", uri, "err", err)
			return
		}
		if n == 0 {
			_ = s.rdb.SRem(ctx, s.st.k.Subscribers(uri), id).Err()
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
		h, err := s.rdb.HMGet(ctx, s.st.k.Session(id), "kind", flag).Result()
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
