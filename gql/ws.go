package gql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	gqlerrors "github.com/graph-gophers/graphql-go/errors"
)

// wsSubprotocol is the protocol of the graphql-ws library that Apollo, urql and Relay use:
// https://github.com/enisdenjo/graphql-ws/blob/master/PROTOCOL.md
const wsSubprotocol = "graphql-transport-ws"

// The close codes of graphql-transport-ws.
const (
	closeBadRequest   websocket.StatusCode = 4400
	closeUnauthorized websocket.StatusCode = 4401
	closeForbidden    websocket.StatusCode = 4403
	closeSubprotocol  websocket.StatusCode = 4406
	closeInitTimeout  websocket.StatusCode = 4408
	closeDuplicate    websocket.StatusCode = 4409
	closeTooManyInits websocket.StatusCode = 4429
	// closeTryAgainLater (RFC 6455's 1013) closes a connection whose token could not be
	// checked now (the identity provider is unreachable): graphql-ws clients retry it.
	closeTryAgainLater websocket.StatusCode = 1013
)

// retryLater is an Authenticator's error that says the token could not be checked now, and
// when to try again.
type retryLater interface{ RetryAfter() time.Duration }

// wsMessage is one message of graphql-transport-ws, either way.
type wsMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// IsWebSocket reports whether r asks to become a WebSocket: a GET (RFC 6455 allows no other
// method) with Upgrade: websocket.
func IsWebSocket(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(header(r, "Upgrade"), "websocket")
}

// ServeWebSocket runs subscriptions over a WebSocket speaking graphql-transport-ws. The
// caller has checked the request's Origin; the client's token arrives in connection_init's
// payload ({"Authorization": "Bearer <token>"}) and auth turns it into the context every
// subscription of the connection runs in. A token that expires closes the connection with
// 4403.
func (a *API) ServeWebSocket(w http.ResponseWriter, r *http.Request, auth Authenticator) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{wsSubprotocol}, InsecureSkipVerify: true})
	if err != nil {
		// Accept has answered the request.
		return
	}
	lim := a.cfg.Realtime
	lim.observe("connection", "websocket", 1)
	defer lim.observe("connection", "websocket", -1)
	if c.Subprotocol() != wsSubprotocol {
		_ = c.Close(closeSubprotocol, "Subprotocol not acceptable: use "+wsSubprotocol)
		return
	}
	c.SetReadLimit(lim.MaxMessageBytes)
	// Every event's File.url starts where the connection was made, as a query's on it would.
	ctx, cancel := context.WithCancel(a.files.withBase(context.WithoutCancel(r.Context()), r))
	wc := &wsConn{api: a, c: c, auth: auth, subs: map[string]context.CancelFunc{}, ctx: ctx}
	defer func() {
		cancel()
		wc.wg.Wait()
		_ = c.CloseNow()
	}()
	wc.serve(ctx)
}

type wsConn struct {
	api  *API
	c    *websocket.Conn
	auth Authenticator
	ctx  context.Context // the connection's; ends when it closes
	wg   sync.WaitGroup  // the subscriptions' goroutines

	mu      sync.Mutex
	session context.Context // the authenticated context, nil before connection_ack
	subs    map[string]context.CancelFunc
}

// serve reads the client's messages until the connection ends.
func (wc *wsConn) serve(ctx context.Context) {
	lim := wc.api.cfg.Realtime
	initTimer := time.AfterFunc(lim.InitTimeout, func() {
		wc.mu.Lock()
		acked := wc.session != nil
		wc.mu.Unlock()
		if !acked {
			wc.close(closeInitTimeout, "Connection initialisation timeout")
		}
	})
	defer initTimer.Stop()
	initSeen := false
	for {
		typ, data, err := wc.c.Read(ctx)
		if err != nil {
			return
		}
		var m wsMessage
		if typ != websocket.MessageText || json.Unmarshal(data, &m) != nil || m.Type == "" {
			wc.close(closeBadRequest, "Invalid message received: want a JSON object with a type")
			return
		}
		switch m.Type {
		case "connection_init":
			if initSeen {
				wc.close(closeTooManyInits, "Too many initialisation requests")
				return
			}
			initSeen = true
			if !wc.init(ctx, m.Payload) {
				return
			}
		case "ping":
			wc.send(wsMessage{Type: "pong"})
		case "pong":
		case "subscribe":
			if !wc.subscribe(m) {
				return
			}
		case "complete":
			wc.mu.Lock()
			if stop, ok := wc.subs[m.ID]; ok {
				stop()
				delete(wc.subs, m.ID)
			}
			wc.mu.Unlock()
		default:
			wc.close(closeBadRequest, fmt.Sprintf("Invalid message received: unknown type %q", m.Type))
			return
		}
	}
}

// init authenticates connection_init's payload and acknowledges it; false when the
// connection was closed instead.
func (wc *wsConn) init(ctx context.Context, raw json.RawMessage) bool {
	var payload map[string]any
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &payload); err != nil {
			wc.close(closeBadRequest, "Invalid message received: connection_init's payload must be an object")
			return false
		}
	}
	authz, _ := payload["Authorization"].(string)
	if authz == "" {
		authz, _ = payload["authorization"].(string)
	}
	session, end, err := wc.auth(ctx, authz)
	var later retryLater
	if errors.As(err, &later) {
		wc.close(closeTryAgainLater, fmt.Sprintf("Try again in %.0f s: %v", math.Ceil(later.RetryAfter().Seconds()), err))
		return false
	}
	if err != nil {
		wc.close(closeForbidden, "Forbidden: "+err.Error())
		return false
	}
	wc.mu.Lock()
	wc.session = session
	wc.mu.Unlock()
	wc.wg.Add(1)
	go func() {
		defer wc.wg.Done()
		defer end()
		<-session.Done()
		if errors.Is(context.Cause(session), ErrTokenExpired) {
			wc.close(closeForbidden, "Forbidden: "+ErrTokenExpired.Error())
		}
	}()
	wc.send(wsMessage{Type: "connection_ack"})
	return true
}

// subscribePayload is the payload of subscribe: a GraphQL request.
type subscribePayload struct {
	Query         string          `json:"query"`
	OperationName string          `json:"operationName"`
	Variables     json.RawMessage `json:"variables"`
	Extensions    json.RawMessage `json:"extensions"`
}

// subscribe starts the subscription a subscribe message asks for; false when the
// connection was closed instead.
func (wc *wsConn) subscribe(m wsMessage) bool {
	lim := wc.api.cfg.Realtime
	var p subscribePayload
	if m.ID == "" || json.Unmarshal(m.Payload, &p) != nil || p.Query == "" {
		wc.close(closeBadRequest, "Invalid message received: subscribe needs an id and a payload with a query")
		return false
	}
	vars, msg := variables(p.Variables)
	wc.mu.Lock()
	defer wc.mu.Unlock()
	switch {
	case wc.session == nil:
		wc.close(closeUnauthorized, "Unauthorized: send connection_init first")
		return false
	case wc.subs[m.ID] != nil:
		wc.close(closeDuplicate, "Subscriber for "+m.ID+" already exists")
		return false
	case msg != "":
		wc.send(errorMessage(m.ID, CodeBadRequest, msg))
		return true
	case len(wc.subs) >= lim.MaxSubscriptions:
		wc.send(errorMessage(m.ID, CodeBadRequest, fmt.Sprintf("this connection runs %d subscriptions, the most it may: complete one first", len(wc.subs))))
		return true
	}
	ctx, stop := context.WithCancel(wc.session)
	wc.subs[m.ID] = stop
	wc.wg.Add(1)
	go func() {
		defer wc.wg.Done()
		defer stop()
		done, err := wc.run(ctx, m.ID, p, vars)
		wc.mu.Lock()
		defer wc.mu.Unlock()
		if !done || wc.subs[m.ID] == nil || ctx.Err() != nil {
			// Completed by the client, or the connection is ending.
			delete(wc.subs, m.ID)
			return
		}
		delete(wc.subs, m.ID)
		if err != nil {
			wc.send(errorMessage(m.ID, CodeInternal, err.Error()))
			return
		}
		wc.send(wsMessage{Type: "complete", ID: m.ID})
	}()
	return true
}

// run runs one subscription; done is false when it ended because its context did.
func (wc *wsConn) run(ctx context.Context, id string, p subscribePayload, vars map[string]any) (done bool, err error) {
	lim := wc.api.cfg.Realtime
	sub, errs := wc.api.newSubscription(ctx, p.Query, p.OperationName, vars)
	if errs != nil {
		wc.mu.Lock()
		if wc.subs[id] != nil {
			delete(wc.subs, id)
			wc.send(wsMessage{Type: "error", ID: id, Payload: mustJSON(errs)})
		}
		wc.mu.Unlock()
		return false, nil
	}
	w, err := sub.watch(ctx)
	if err != nil {
		return ctx.Err() == nil, err
	}
	lim.observe("subscription", "websocket", 1)
	defer lim.observe("subscription", "websocket", -1)
	err = sub.run(ctx, w, func(resp response) error {
		// Once the client completes the subscription, nothing more is sent for it: the
		// write below could still win its lock against the cancelled context.
		if err := ctx.Err(); err != nil {
			return err
		}
		body, err := resp.encode()
		if err != nil {
			return err
		}
		return wc.write(ctx, wsMessage{Type: "next", ID: id, Payload: body})
	})
	return ctx.Err() == nil, err
}

func errorMessage(id, code, msg string) wsMessage {
	return wsMessage{Type: "error", ID: id, Payload: mustJSON([]*gqlerrors.QueryError{{Message: msg, Extensions: map[string]any{"code": code}}})}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		// Only maps, strings and graph-gophers' errors are encoded here.
		panic(err)
	}
	return b
}

// send writes a message of the connection's own (ack, pong, error, complete); a failed
// write ends the connection, which its reader then sees.
func (wc *wsConn) send(m wsMessage) {
	_ = wc.write(wc.ctx, m)
}

func (wc *wsConn) write(ctx context.Context, m wsMessage) error {
	// Written by hand: encoding/json would scan the payload, already JSON, again.
	typ, err := json.Marshal(m.Type)
	if err != nil {
		return err
	}
	body := append([]byte(`{"type":`), typ...)
	if m.ID != "" {
		id, err := json.Marshal(m.ID)
		if err != nil {
			return err
		}
		body = append(append(body, `,"id":`...), id...)
	}
	if len(m.Payload) > 0 {
		body = append(append(body, `,"payload":`...), m.Payload...)
	}
	body = append(body, '}')
	ctx, cancel := context.WithTimeout(ctx, wc.api.cfg.Realtime.WriteTimeout)
	defer cancel()
	if err := wc.c.Write(ctx, websocket.MessageText, body); err != nil {
		return fmt.Errorf("write to the websocket: %w", err)
	}
	return nil
}

// close closes the connection with a graphql-transport-ws code; the reason is cut to the
// 123 bytes a close frame holds.
func (wc *wsConn) close(code websocket.StatusCode, reason string) {
	if len(reason) > 123 {
		reason = reason[:120] + "..."
	}
	_ = wc.c.Close(code, reason)
}
