package gql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	gqlerrors "github.com/graph-gophers/graphql-go/errors"
)

// sseHeartbeat is how often an idle event stream gets a comment line, so that proxies do
// not take it for a dead connection.
const sseHeartbeat = 15 * time.Second

// IsEventStream reports whether r asks for a subscription over Server-Sent Events: a POST
// that accepts text/event-stream (graphql-sse's distinct connections mode).
func IsEventStream(r *http.Request) bool {
	accept := header(r, "Accept")
	if r.Method != http.MethodPost || !strings.Contains(accept, mediaEventStream) {
		return false
	}
	// Clients such as urql list the stream after the JSON media types in every request's
	// Accept: the stream is asked for when it is preferred (by q, then by order).
	best, bestQ := "", -1.0
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || (mt != mediaEventStream && mt != mediaJSON && mt != mediaGraphQLResponse) {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		if q > bestQ {
			best, bestQ = mt, q
		}
	}
	return best == mediaEventStream
}

// mediaEventStream is the media type of a subscription stream (graphql-sse).
const mediaEventStream = "text/event-stream"

// ServeSSE runs one subscription over Server-Sent Events as graphql-sse's distinct
// connections mode says: the request is the subscription, each change a "next" event whose
// data is the execution result, and a "complete" event ends the stream. A request that
// cannot run answers 4xx with the errors as JSON; an error after the stream started (Redis
// lost, a subscriber too slow, the token expired) is a "next" event with errors, then
// "complete". The token comes in the Authorization header.
func (a *API) ServeSSE(w http.ResponseWriter, r *http.Request, auth Authenticator) {
	lim := a.cfg.Realtime
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, mediaJSON, http.StatusInternalServerError, CodeInternal, "this server cannot stream", nil)
		return
	}
	var req request
	if status, msg := a.bodyRequest(w, r, &req); msg != "" {
		writeError(w, mediaJSON, status, CodeBadRequest, msg, nil)
		return
	}
	if req.Query == nil || *req.Query == "" {
		writeError(w, mediaJSON, http.StatusBadRequest, CodeBadRequest, "the request has no query", nil)
		return
	}
	vars, msg := req.variables()
	if msg != "" {
		writeError(w, mediaJSON, http.StatusBadRequest, CodeBadRequest, msg, nil)
		return
	}
	// Every event's File.url starts where the stream was asked for, as a query's would.
	ctx, end, err := auth(a.files.withBase(r.Context(), r), r.Header.Get("Authorization"))
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeError(w, mediaJSON, http.StatusUnauthorized, CodeUnauthenticated, err.Error(), nil)
		return
	}
	defer end()
	var opName string
	if req.OperationName != nil {
		opName = *req.OperationName
	}
	sub, errs := a.newSubscription(ctx, *req.Query, opName, vars)
	if errs != nil {
		w.Header().Set("Content-Type", mediaJSON+"; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(response{Errors: errs})
		return
	}
	// Watching starts before the stream is answered, so a client that sees the answer's
	// headers misses no change made after.
	watch, err := sub.watch(ctx)
	if err != nil {
		writeError(w, mediaJSON, http.StatusServiceUnavailable, CodeInternal, err.Error(), nil)
		return
	}
	lim.observe("connection", "sse", 1)
	defer lim.observe("connection", "sse", -1)
	lim.observe("subscription", "sse", 1)
	defer lim.observe("subscription", "sse", -1)

	h := w.Header()
	h.Set("Content-Type", mediaEventStream)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()

	var mu sync.Mutex
	event := func(name string, data []byte) error {
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data); err != nil {
			return err
		}
		flusher.Flush()
		return nil
	}
	hctx, stopHeartbeat := context.WithCancel(ctx)
	var beat sync.WaitGroup
	beat.Go(func() {
		t := time.NewTicker(sseHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
				mu.Lock()
				_, _ = fmt.Fprint(w, ":\n\n")
				flusher.Flush()
				mu.Unlock()
			}
		}
	})
	err = sub.run(ctx, watch, func(resp response) error {
		body, err := resp.encode()
		if err != nil {
			return err
		}
		return event("next", body)
	})
	stopHeartbeat()
	beat.Wait()
	if r.Context().Err() != nil {
		return
	}
	if err == nil && errors.Is(context.Cause(ctx), ErrTokenExpired) {
		err = ErrTokenExpired
	}
	if err != nil {
		code := CodeInternal
		if errors.Is(err, ErrTokenExpired) {
			code = CodeUnauthenticated
		}
		body, _ := response{Errors: []*gqlerrors.QueryError{{Message: err.Error(), Extensions: map[string]any{"code": code}}}}.encode()
		_ = event("next", body)
	}
	_ = event("complete", nil)
}
