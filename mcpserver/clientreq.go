package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// Requests from the server to the client (sampling/createMessage, elicitation/create) travel the way the Streamable HTTP transport allows: on the event stream that
// answers the client's tools/call, and the client POSTs its response to any replica. That
// replica publishes it on the reply channel; the replica whose call waits for it (registered
// under session and request id) hands it over. The call's deadline bounds the wait.

// clientCapability is the capability a client must have announced for each request the
// server may send it.
var clientCapability = map[string]string{
	"sampling/createMessage": "sampling",
	"elicitation/create":     "elicitation",
}

// clientReply is a client's response to a server request, as published between replicas.
type clientReply struct {
	Key    string          `json:"k"` // scope NUL canonical request id
	Result json.RawMessage `json:"r,omitempty"`
	Error  json.RawMessage `json:"e,omitempty"`
}

// clientError is the error a client answered a server request with.
type clientError struct {
	Method  string
	Code    int
	Message string
}

func (e *clientError) Error() string {
	return fmt.Sprintf("the client answered %s with error %d: %s", e.Method, e.Code, e.Message)
}

// asker sends requests to the client of one tools/call.
type asker struct {
	s *Server
	c *call
}

type askerKey struct{}

// askClient sends method to the client of the tools/call that ctx belongs to and returns the
// client's result. It fails when the call cannot carry a request (the client did not accept
// an event stream, has no session, or did not announce the capability the method needs),
// when the client answers with an error, and when ctx ends first.
func askClient(ctx context.Context, method string, params any) (json.RawMessage, error) {
	a, ok := ctx.Value(askerKey{}).(*asker)
	if !ok {
		return nil, fmt.Errorf("%s: this call cannot send requests to the client", method)
	}
	return a.ask(ctx, method, params)
}

func (a *asker) ask(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c := a.c
	switch {
	case c.stream == nil:
		return nil, fmt.Errorf("%s needs the tools/call to accept text/event-stream, which carries the request to the client", method)
	case c.sess == nil || c.sess.listen:
		return nil, fmt.Errorf("%s needs a session: the client announces its capabilities in initialize", method)
	case !slices.Contains(c.sess.caps, clientCapability[method]):
		return nil, fmt.Errorf("the client did not announce the %q capability, which %s needs", clientCapability[method], method)
	}
	id := "s-" + newID()
	idJSON, _ := json.Marshal(id)
	key := c.sess.id + "\x00" + string(idJSON)
	reply := make(chan clientReply, 1)
	a.s.mu.Lock()
	a.s.pending[key] = reply
	a.s.mu.Unlock()
	defer func() {
		a.s.mu.Lock()
		delete(a.s.pending, key)
		a.s.mu.Unlock()
	}()
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", method, err)
	}
	if !c.stream.notify(req) {
		return nil, fmt.Errorf("%s: the call has ended", method)
	}
	select {
	case r := <-reply:
		if r.Error != nil {
			var e struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			_ = json.Unmarshal(r.Error, &e)
			return nil, &clientError{Method: method, Code: e.Code, Message: e.Message}
		}
		return r.Result, nil
	case <-ctx.Done():
		// The client may still be working on it (a person deciding): tell it to stop.
		c.stream.notify(notificationJSON("notifications/cancelled", map[string]any{"requestId": id, "reason": "the tool call ended"}))
		return nil, fmt.Errorf("the client did not answer %s: %w", method, ctx.Err())
	}
}

// deliverReply routes a client's response to the replica whose call waits for it.
func (s *Server) deliverReply(ctx context.Context, c *call) {
	b, err := json.Marshal(clientReply{Key: scopeOf(c) + "\x00" + canonicalID(c.msg.ID), Result: c.msg.Result, Error: c.msg.Error})
	if err != nil {
		return
	}
	if err := s.rdb.Publish(ctx, s.st.k.Reply(), b).Err(); err != nil {
		s.log.Warn("publish client reply", "err", err)
	}
}

// replyArrived hands a published client response to the call waiting for it here, if any.
func (s *Server) replyArrived(payload string) {
	var r clientReply
	if err := json.Unmarshal([]byte(payload), &r); err != nil {
		s.log.Warn("read client reply", "err", err)
		return
	}
	s.mu.Lock()
	ch := s.pending[r.Key]
	delete(s.pending, r.Key) // a second answer to the same request is dropped
	s.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}
