package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

// eventIDPattern is the shape of a Redis stream id, which is the SSE event id.
var eventIDPattern = regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,20}$`)

// handleGet opens the session's notification stream. Events are read from the session's
// Redis stream, so a client may resume on any replica with Last-Event-ID; a newer GET for
// the same session takes delivery over from an older one. It returns the error to answer,
// nil once the stream ran.
func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) *rpcError {
	if !acceptsEventStream(r.Header.Get("Accept")) {
		return newError(CodeInvalidRequest, "Not acceptable",
			"GET opens a notification stream; send Accept: text/event-stream").withStatus(http.StatusNotAcceptable)
	}
	sid := r.Header.Get(headerSession)
	if sid == "" {
		return newError(CodeInvalidRequest, "Invalid request",
			"GET needs the Mcp-Session-Id header from initialize; without a session use subscriptions/listen")
	}
	if v := r.Header.Get(headerProtocol); v != "" && !slices.Contains(supportedVersions, v) {
		return newError(CodeInvalidRequest, "Unsupported protocol version",
			fmt.Sprintf("%s %q is not supported; supported: %s", headerProtocol, v, strings.Join(supportedVersions, ", ")))
	}
	last := r.Header.Get(headerLastEventID)
	if last != "" && last != "0" && !eventIDPattern.MatchString(last) {
		return newError(CodeInvalidRequest, "Invalid request",
			fmt.Sprintf("Last-Event-ID %q is not an event id of this server", last))
	}
	client := s.clientOf(r)
	adm, rerr := s.admit(r.Context(), w, client, sid, slotTake, 3*pollInterval)
	if rerr != nil {
		return rerr
	}
	defer func() { s.releaseSlot(client, adm.slot) }()
	if adm.sess.listen {
		return newError(CodeInvalidRequest, "Session not found",
			"the session expired or was deleted; send initialize to start a new one").withStatus(http.StatusNotFound)
	}
	after := cmp.Or(last, adm.sess.cursor, "0")
	owner := newID()
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.StoreTimeout)
	err := s.st.takeOwnership(ctx, sid, owner)
	cancel()
	if err != nil {
		return s.unavailable(ctx, w, err)
	}
	s.stats.record(false)
	startSSE(w)
	if adm.sess.version >= Version20251125 {
		// A priming event gives the client an id to resume from before any notification.
		fmt.Fprintf(w, "id: %s\ndata: \n\n", after)
	}
	flush(w)
	s.pump(r.Context(), w, pumpOptions{session: sid, after: after, owner: owner, client: client, slot: &adm.slot, saveCursor: true})
	return nil
}

func startSSE(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}

func flush(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
}

type pumpOptions struct {
	session    string
	after      string // last delivered event id
	owner      string // ownership token of a GET stream; "" for listen streams
	client     string
	slot       *string // the concurrency slot held; replaced if it expired
	saveCursor bool
	// transform rewrites each stored notification before it is sent.
	transform func([]byte) []byte
}

// pump delivers a session's events until the client leaves, the server closes, the session
// ends or another stream takes delivery over.
func (s *Server) pump(ctx context.Context, w http.ResponseWriter, o pumpOptions) {
	wake := make(chan struct{}, 1)
	s.mu.Lock()
	if s.listeners[o.session] == nil {
		s.listeners[o.session] = map[chan struct{}]struct{}{}
	}
	s.listeners[o.session][wake] = struct{}{}
	s.mu.Unlock()
	s.stats.streamOpened()
	defer func() {
		s.mu.Lock()
		delete(s.listeners[o.session], wake)
		if len(s.listeners[o.session]) == 0 {
			delete(s.listeners, o.session)
		}
		s.mu.Unlock()
		s.stats.streamClosed()
	}()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		events, err := s.st.eventsAfter(ctx, o.session, o.after)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("read session events", "err", err)
			}
			return
		}
		for _, ev := range events {
			data, _ := ev.Values["m"].(string)
			payload := []byte(data)
			if o.transform != nil {
				payload = o.transform(payload)
			}
			if _, err := fmt.Fprintf(w, "id: %s\nevent: message\ndata: %s\n\n", ev.ID, payload); err != nil {
				return
			}
			o.after = ev.ID
		}
		if len(events) > 0 {
			flush(w)
			if o.saveCursor {
				if err := s.st.setField(ctx, o.session, "cur", o.after); err != nil && ctx.Err() == nil {
					s.log.Warn("save stream cursor", "err", err)
				}
			}
			if len(events) == 100 {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.ctx.Done():
			return
		case <-wake:
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flush(w)
			if ok, err := s.st.refresh(ctx, o.client, *o.slot, 3*pollInterval); err == nil && !ok {
				// The slot expired (Redis lost it); take it again or end the stream.
				tok, err := s.st.acquire(ctx, o.client, s.cfg.MaxConcurrent, 3*pollInterval)
				if err != nil || tok == "" {
					return
				}
				*o.slot = tok
			}
			if err := s.st.touchSession(ctx, o.session); err != nil && ctx.Err() == nil {
				s.log.Warn("refresh session", "err", err)
			}
		}
		alive, err := s.st.streamAlive(ctx, o.session, o.owner)
		if err != nil || !alive {
			return
		}
	}
}

// listen serves subscriptions/listen (2026-07-28): a POST whose response is a stream of the
// notifications the client opted into, acknowledged first, each tagged with the request id.
func (s *Server) listen(c *call, slot *string) {
	var p struct {
		Notifications *struct {
			ToolsListChanged      bool     `json:"toolsListChanged"`
			PromptsListChanged    bool     `json:"promptsListChanged"`
			ResourcesListChanged  bool     `json:"resourcesListChanged"`
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	}
	if rerr := decodeParams(c.msg.Params, &p); rerr != nil {
		s.refuse(c.w, c.msg.ID, rerr)
		return
	}
	if p.Notifications == nil {
		s.refuse(c.w, c.msg.ID, invalidParams(`argument "notifications" is required`))
		return
	}
	cat := s.cat.Load()
	for _, uri := range p.Notifications.ResourceSubscriptions {
		if !cat.knownResource(uri) {
			s.refuse(c.w, c.msg.ID, invalidParams(fmt.Sprintf("argument \"notifications.resourceSubscriptions\": unknown resource %q", uri)))
			return
		}
	}
	ctx := c.r.Context()
	flags := map[string]any{"tl": boolFlag(p.Notifications.ToolsListChanged), "rl": boolFlag(p.Notifications.ResourcesListChanged)}
	id, err := s.st.createSession(ctx, kindListen, c.version, flags)
	if err != nil {
		s.refuse(c.w, c.msg.ID, s.unavailable(ctx, c.w, err))
		return
	}
	defer func() {
		cleanup, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if _, err := s.st.deleteSession(cleanup, id); err != nil {
			s.log.Warn("end listen stream", "err", err)
		}
	}()
	for _, uri := range p.Notifications.ResourceSubscriptions {
		if err := s.st.subscribe(ctx, id, uri); err != nil {
			s.refuse(c.w, c.msg.ID, s.unavailable(ctx, c.w, err))
			return
		}
	}
	s.stats.record(false)
	subscriptionMeta := map[string]any{metaSubscription: c.msg.ID}
	agreed := map[string]any{
		"toolsListChanged":     p.Notifications.ToolsListChanged,
		"resourcesListChanged": p.Notifications.ResourcesListChanged,
	}
	if len(p.Notifications.ResourceSubscriptions) > 0 {
		agreed["resourceSubscriptions"] = p.Notifications.ResourceSubscriptions
	}
	startSSE(c.w)
	ack := notificationJSON("notifications/subscriptions/acknowledged", map[string]any{"notifications": agreed, "_meta": subscriptionMeta})
	fmt.Fprintf(c.w, "event: message\ndata: %s\n\n", ack)
	flush(c.w)
	s.pump(ctx, c.w, pumpOptions{session: id, after: "0", client: c.client, slot: slot, transform: func(b []byte) []byte {
		return withMeta(b, metaSubscription, c.msg.ID)
	}})
	if s.ctx.Err() != nil && ctx.Err() == nil {
		// Graceful end (server shutdown): the listen request gets its result.
		b, _ := responseJSON(c.msg.ID, map[string]any{"_meta": subscriptionMeta}, nil)
		fmt.Fprintf(c.w, "event: message\ndata: %s\n\n", b)
		flush(c.w)
	}
}

func boolFlag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// withMeta sets params._meta[key] of a notification.
func withMeta(notification []byte, key string, value json.RawMessage) []byte {
	var n map[string]json.RawMessage
	if json.Unmarshal(notification, &n) != nil {
		return notification
	}
	params := map[string]json.RawMessage{}
	if n["params"] != nil {
		_ = json.Unmarshal(n["params"], &params)
	}
	meta := map[string]json.RawMessage{}
	if params["_meta"] != nil {
		_ = json.Unmarshal(params["_meta"], &meta)
	}
	meta[key] = value
	params["_meta"], _ = json.Marshal(meta)
	n["params"], _ = json.Marshal(params)
	out, err := json.Marshal(n)
	if err != nil {
		return notification
	}
	return out
}

// handleDelete ends a session. It returns the error to answer, nil once it answered.
func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) *rpcError {
	sid := r.Header.Get(headerSession)
	if sid == "" {
		return newError(CodeInvalidRequest, "Invalid request",
			"DELETE needs the Mcp-Session-Id header of the session to end")
	}
	if _, rerr := s.admit(r.Context(), w, s.clientOf(r), sid, slotCheck, 0); rerr != nil {
		return rerr
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.StoreTimeout)
	defer cancel()
	if _, err := s.st.deleteSession(ctx, sid); err != nil {
		return s.unavailable(ctx, w, err)
	}
	s.stats.record(false)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
