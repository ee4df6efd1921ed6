package gql

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	gqlerrors "github.com/graph-gophers/graphql-go/errors"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/platform-dev/platform/telemetry"
)

// The error codes answered in errors[].extensions.code.
const (
	codeBadRequest   = "BAD_REQUEST"
	codeValidation   = "GRAPHQL_VALIDATION_FAILED"
	codeBadUserInput = "BAD_USER_INPUT"
	codeForbidden    = "FORBIDDEN"
	codeNotFound     = "NOT_FOUND"
	codeConflict     = "CONFLICT"
	codeTooLarge     = "RESULT_TOO_LARGE"
	codeInternal     = "INTERNAL"
)

// Error is an error a resolver answers to the caller, with its code.
type Error struct {
	Code    string
	Message string
	// Extra goes into extensions beside the code (CONFLICT's fields, for one).
	Extra map[string]any
}

func userError(code, msg string) *Error { return &Error{Code: code, Message: msg} }

func (e *Error) Error() string { return e.Message }

// Extensions puts the code into the GraphQL error; graph-gophers calls it.
func (e *Error) Extensions() map[string]any {
	ext := map[string]any{"code": e.Code}
	for k, v := range e.Extra {
		ext[k] = v
	}
	return ext
}

// request is the body of POST /api/v1/graphql.
type request struct {
	Query         *string         `json:"query"`
	OperationName *string         `json:"operationName"`
	Variables     json.RawMessage `json:"variables"`
}

// response is what the endpoint answers: data first, as clients print it.
type response struct {
	Data   json.RawMessage         `json:"data,omitempty"`
	Errors []*gqlerrors.QueryError `json:"errors,omitempty"`
}

// ServeHTTP answers POST /api/v1/graphql: 405 for other methods, 400 (413 when too large)
// with code BAD_REQUEST for a body that is not a GraphQL request, and 200 with the result
// otherwise, errors of validation and execution included. The caller has settled who is
// asking and attached their Guard to the request's context.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every error answer carries the request's id, so a caller's report finds its log lines.
	reqID := telemetry.RequestID(r.Context())
	fail := func(status int, code, msg string) { writeError(w, status, code, msg, reqID) }
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		fail(http.StatusMethodNotAllowed, codeBadRequest, "use POST with a JSON body {\"query\": ..., \"variables\": {...}}")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			fail(http.StatusBadRequest, codeBadRequest, fmt.Sprintf("Content-Type %q: send application/json", ct))
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.cfg.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			fail(http.StatusRequestEntityTooLarge, codeBadRequest, fmt.Sprintf("the body is larger than %d bytes", a.cfg.MaxBodyBytes))
			return
		}
		fail(http.StatusBadRequest, codeBadRequest, "read the body: "+err.Error())
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		fail(http.StatusBadRequest, codeBadRequest, "the body is not a JSON object {\"query\": ..., \"variables\": {...}}: "+err.Error())
		return
	}
	if req.Query == nil || *req.Query == "" {
		fail(http.StatusBadRequest, codeBadRequest, "the body has no query")
		return
	}
	var vars map[string]any
	if len(req.Variables) > 0 && !bytes.Equal(req.Variables, []byte("null")) {
		if err := json.Unmarshal(req.Variables, &vars); err != nil {
			fail(http.StatusBadRequest, codeBadRequest, "variables must be a JSON object")
			return
		}
	}
	var opName string
	if req.OperationName != nil {
		opName = *req.OperationName
	}

	var resp response
	switch {
	case a.schema == nil:
		resp.Errors = []*gqlerrors.QueryError{{Message: "this project has no tables yet, so its API has no operations"}}
	case len(*req.Query) > a.cfg.MaxQueryBytes:
		// Checked here rather than by graph-gophers alone: the response keys added to
		// mutations lengthen the document it sees.
		resp.Errors = []*gqlerrors.QueryError{{Message: fmt.Sprintf("the query is %d bytes long, more than the limit of %d", len(*req.Query), a.cfg.MaxQueryBytes)}}
	case !a.cfg.Introspection && introspects(*req.Query, a.cfg.MaxQueryBytes):
		resp.Errors = []*gqlerrors.QueryError{{Message: "introspection (__schema, __type) is turned off for this project"}}
	default:
		ctx, cancel := context.WithTimeout(r.Context(), a.cfg.Timeout)
		var span trace.Span
		if a.cfg.Tracer != nil {
			ctx, span = a.cfg.Tracer.Start(ctx, "graphql.execute", trace.WithAttributes(attribute.String("graphql.operation.name", opName)))
		}
		res := a.schema.Exec(ctx, a.keys.rewrite(*req.Query), opName, vars)
		timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
		if span != nil {
			span.SetAttributes(attribute.Int("graphql.errors", len(res.Errors)))
			span.End()
		}
		cancel()
		resp.Data, resp.Errors = res.Data, res.Errors
		if timedOut {
			for _, e := range resp.Errors {
				if _, ok := e.Extensions["code"]; !ok {
					e.Message = fmt.Sprintf("the request did not finish within %s", a.cfg.Timeout)
					e.Extensions = map[string]any{"code": codeInternal}
				}
			}
		}
	}
	for _, e := range resp.Errors {
		setCode(e)
		if reqID != "" {
			e.Extensions["requestId"] = reqID
		}
	}
	out, err := resp.encode()
	if err != nil {
		a.cfg.Logger.ErrorContext(r.Context(), "encode graphql response", "err", err)
		fail(http.StatusInternalServerError, codeInternal, "internal error")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// encode writes the response; data, which graph-gophers wrote as compact JSON, is copied
// as it is rather than scanned again by encoding/json.
func (r response) encode() ([]byte, error) {
	out := make([]byte, 0, len(r.Data)+32)
	out = append(out, '{')
	if len(r.Data) > 0 {
		out = append(out, `"data":`...)
		out = append(out, r.Data...)
	}
	if len(r.Errors) > 0 {
		errs, err := json.Marshal(r.Errors)
		if err != nil {
			return nil, err
		}
		if len(r.Data) > 0 {
			out = append(out, ',')
		}
		out = append(out, `"errors":`...)
		out = append(out, errs...)
	}
	return append(out, '}'), nil
}

// setCode gives every error a code: resolvers set theirs; an error without a path was found
// before execution (syntax, validation, limits, unknown operation), one with a path is the
// executor's own (a value that does not fit the schema).
func setCode(e *gqlerrors.QueryError) {
	if _, ok := e.Extensions["code"]; ok {
		return
	}
	code := codeValidation
	if e.Path != nil {
		code = codeInternal
	}
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = code
}

func writeError(w http.ResponseWriter, status int, code, msg, reqID string) {
	ext := map[string]any{"code": code}
	if reqID != "" {
		ext["requestId"] = reqID
	}
	out, _ := json.Marshal(response{Errors: []*gqlerrors.QueryError{{Message: msg, Extensions: ext}}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}
