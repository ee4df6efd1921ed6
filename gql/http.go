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
	"regexp"
	"strconv"
	"strings"

	gqlerrors "github.com/graph-gophers/graphql-go/errors"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/platform-dev/platform/telemetry"
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

// request is a GraphQL-over-HTTP request: the body of a POST, or the URL parameters of a GET.
type request struct {
	Query         *string         `json:"query"`
	OperationName *string         `json:"operationName"`
	Variables     json.RawMessage `json:"variables"`
	// Extensions may carry persistedQuery (persisted.go); DocumentID names a persisted
	// document as GraphQL over HTTP's persisted documents do.
	Extensions json.RawMessage `json:"extensions"`
	DocumentID *string         `json:"documentId"`
	// vars are the variables of a body read in one pass (readOnce), which leaves Variables
	// unset; decoded says so.
	vars    map[string]any
	decoded bool
	// uploads are the files a multipart request carried (upload.go).
	uploads []*Upload
}

// variables are the request's variables; a message saying what is wrong when they are not
// a JSON object of values graph-gophers can take.
func (req *request) variables() (map[string]any, string) {
	if req.decoded {
		return req.vars, ""
	}
	return variables(req.Variables)
}

// response is what the endpoint answers: data first, as clients print it.
type response struct {
	Data   json.RawMessage         `json:"data,omitempty"`
	Errors []*gqlerrors.QueryError `json:"errors,omitempty"`
	// body, when set, is the whole answer, already written around Data (the executor's).
	body []byte
	// mutation: a create, update or delete field ran.
	mutation bool
}

// dataMember begins an answer with data.
const dataMember = `{"data":`

// The media types of GraphQL over HTTP answers. With graphqlResponse the status says whether
// the request was executed (a request error is 400); with legacy JSON every GraphQL error is
// 200, as clients written before the spec expect.
const (
	mediaGraphQLResponse = "application/graphql-response+json"
	mediaJSON            = "application/json"
)

// contentType is the Content-Type header of an answer in media, one of the two above; the
// constants spare every answer building it.
func contentType(media string) string {
	if media == mediaGraphQLResponse {
		return mediaGraphQLResponse + "; charset=utf-8"
	}
	return mediaJSON + "; charset=utf-8"
}

// ServeHTTP answers /api/v1/graphql as GraphQL over HTTP says: POST with a JSON body, or GET
// with the parameters in the URL (queries only: a mutation over GET is 405). The answer is
// application/graphql-response+json or application/json, whichever Accept prefers (none:
// application/json; neither acceptable: 406). A request the endpoint cannot read is 400 (413
// when too large, 415 for a body that is not JSON); GraphQL errors are 200 in application/json
// and, in application/graphql-response+json, 400 when nothing was executed. The caller has
// settled who is asking and attached their Guard to the request's context.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.serve(r.Context(), w, r, nil)
}

// ServeAs is ServeHTTP for the caller g: the same as attaching g to the request's context,
// without the copy of the request that takes.
func (a *API) ServeAs(w http.ResponseWriter, r *http.Request, g Guard) {
	a.serve(r.Context(), w, r, g)
}

// serve is ServeHTTP with the request's context ctx, for the caller g (nil: ctx's).
func (a *API) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, g Guard) {
	// Every error answer carries the request's id, so a caller's report finds its log lines.
	reqID := telemetry.RequestID(ctx)
	if wantsExplorer(r) {
		serveExplorer(w)
		return
	}
	media, ok := negotiate(header(r, "Accept"))
	fail := func(status int, code, msg string) {
		writeError(w, media, status, code, msg, withRequestID(ctx, nil))
	}
	ctx = a.files.withBase(ctx, r)
	if !ok {
		fail(http.StatusNotAcceptable, CodeBadRequest, fmt.Sprintf("Accept %q: this endpoint answers %s or %s", header(r, "Accept"), mediaGraphQLResponse, mediaJSON))
		return
	}
	var req request
	switch r.Method {
	case http.MethodGet:
		var msg string
		if req, msg = urlRequest(r); msg != "" {
			fail(http.StatusBadRequest, CodeBadRequest, msg)
			return
		}
	case http.MethodPost:
		status, msg := a.bodyRequest(w, r, &req)
		defer req.removeUploads()
		if msg != "" {
			fail(status, CodeBadRequest, msg)
			return
		}
	default:
		w.Header().Set("Allow", "GET, POST")
		fail(http.StatusMethodNotAllowed, CodeBadRequest, "use POST with a JSON body {\"query\": ..., \"variables\": {...}}, or GET with ?query=... for a query")
		return
	}
	if status, code, msg := a.persisted(ctx, &req, media); code != "" {
		fail(status, code, msg)
		return
	}
	if req.Query == nil || *req.Query == "" {
		fail(http.StatusBadRequest, CodeBadRequest, "the request has no query")
		return
	}
	if ext := bytes.TrimSpace(req.Extensions); len(ext) > 0 && ext[0] != '{' && !bytes.Equal(ext, []byte("null")) {
		fail(http.StatusBadRequest, CodeBadRequest, "extensions must be a JSON object")
		return
	}
	vars, msg := req.variables()
	if msg != "" {
		fail(http.StatusBadRequest, CodeBadRequest, msg)
		return
	}
	var opName string
	if req.OperationName != nil {
		opName = *req.OperationName
	}

	var resp response
	doc := a.docs.prepare(*req.Query, opName, r.Method == http.MethodGet)
	switch op := doc.op; {
	case a.schema == nil:
		resp.Errors = []*gqlerrors.QueryError{{Message: "this project has no tables yet, so its API has no operations"}}
	case len(*req.Query) > a.cfg.MaxQueryBytes:
		// Checked here rather than by graph-gophers alone: the response keys added to
		// mutations lengthen the document it sees.
		resp.Errors = []*gqlerrors.QueryError{{Message: fmt.Sprintf("the query is %d bytes long, more than the limit of %d", len(*req.Query), a.cfg.MaxQueryBytes)}}
	case r.Method == http.MethodGet && op.kind == ast.Mutation:
		// Caches and prefetchers repeat GETs: a write must come by POST.
		w.Header().Set("Allow", http.MethodPost)
		fail(http.StatusMethodNotAllowed, CodeBadRequest, "a mutation must be sent with POST; GET runs queries only")
		return
	case op.kind == ast.Subscription && a.subscriptions != nil:
		resp.Errors = []*gqlerrors.QueryError{{Message: "a subscription runs over a WebSocket (graphql-transport-ws) or as a stream (POST with Accept: text/event-stream) at this address; GET and POST answer queries and mutations", Extensions: map[string]any{"code": CodeBadRequest}}}
	case !a.cfg.Introspection && op.introspects:
		resp.Errors = []*gqlerrors.QueryError{{Message: "introspection (__schema, __type) is turned off for this project"}}
	case doc.shape.cost > CheapCost && a.overloaded(doc, vars):
		w.Header().Set("Retry-After", "1")
		fail(http.StatusServiceUnavailable, CodeOverloaded, "the service is short of memory: this request is refused for now, while cheap ones (a fetch by uid, a list of up to 100 records) still run; retry in a second, or ask for fewer records")
		return
	case doc.shape.cost > a.cfg.MaxCost && a.costOf(doc.shape, vars) > a.cfg.MaxCost && len(a.schema.ValidateWithVariables(doc.exec, vars)) == 0:
		// A document that does not validate gets graph-gophers' errors, as any other.
		resp.Errors = []*gqlerrors.QueryError{a.tooComplex(a.costOf(doc.shape, vars))}
	default:
		resp = a.exec(ctx, g, doc, opName, vars)
		if doc.fill != nil {
			resp.Data, resp.body = doc.fill.apply(resp.Data), nil
		}
	}
	for _, e := range resp.Errors {
		readable(e)
		setCode(e)
		if reqID != "" {
			e.Extensions["requestId"] = reqID
		}
	}
	out, err := resp.encode()
	if err != nil {
		a.cfg.Logger.ErrorContext(ctx, "encode graphql response", "err", err)
		fail(http.StatusInternalServerError, CodeInternal, "internal error")
		return
	}
	status := http.StatusOK
	if media == mediaGraphQLResponse && len(resp.Data) == 0 {
		// Nothing was executed: the document did not parse or validate, or the variables
		// did not fit it.
		status = http.StatusBadRequest
	}
	if a.cfg.Answered != nil {
		a.cfg.Answered(resp.mutation, status == http.StatusOK && len(resp.Errors) > 0)
	}
	w.Header().Set("Content-Type", contentType(media))
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// exec runs the document, as prepared, under the request's time limit: on its execution
// plan, or, for introspection, on graph-gophers with the seed's response keys added.
// metaOnly operations (asking only for __schema, __type and __typename) run on the schema
// whose depth limit fits tools' introspection queries: their nesting walks the schema, not
// records.
func (a *API) exec(ctx context.Context, g Guard, doc *prepared, opName string, vars map[string]any) response {
	schema := a.schema
	if doc.op.metaOnly {
		schema = a.meta()
	}
	limited := withTimeLimit(ctx, a.cfg.Timeout, g)
	defer limited.stop()
	b := &limited.budget
	b.start(&a.cfg, doc.shape)
	ctx = limited
	var span trace.Span
	if a.cfg.Tracer != nil {
		ctx, span = a.cfg.Tracer.Start(ctx, "graphql.execute", trace.WithAttributes(attribute.String("graphql.operation.name", opName)))
	}
	var resp response
	planned := doc.plan != nil
	if planned {
		resp = doc.plan.run(ctx, a, doc.exec, vars)
	} else {
		res := schema.Exec(ctx, doc.exec, opName, vars)
		resp = response{Data: res.Data, Errors: res.Errors}
	}
	resp = b.settle(resp)
	resp.mutation = b.wrote.Load()
	if span != nil {
		span.SetAttributes(attribute.Int("graphql.errors", len(resp.Errors)), attribute.Bool("graphql.planned", planned))
		span.End()
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		for _, e := range resp.Errors {
			if _, ok := e.Extensions["code"]; !ok {
				e.Message = fmt.Sprintf("the request did not finish within %s", a.cfg.Timeout)
				e.Extensions = map[string]any{"code": CodeTimeout}
			}
		}
	}
	return resp
}

// overloaded reports whether doc, whose worst case is not cheap, is refused because the
// process is short of memory: its estimate for vars is above CheapCost and Config.Pressure
// says so.
func (a *API) overloaded(doc *prepared, vars map[string]any) bool {
	return a.cfg.Pressure != nil && a.cfg.Pressure() && a.costOf(doc.shape, vars) > CheapCost
}

// tooComplex is the error of a document refused for its estimate, cost.
func (a *API) tooComplex(cost int64) *gqlerrors.QueryError {
	return &gqlerrors.QueryError{
		Message:    fmt.Sprintf("the query may answer %d records, more than the limit of %d: give lists and relations a smaller limit (or first), or send fewer aliases", cost, a.cfg.MaxCost),
		Extensions: map[string]any{"code": CodeTooComplex, "cost": cost, "limit": a.cfg.MaxCost},
	}
}

// bodyRequest reads a POST's JSON body into req; a message and status when it cannot.
func (a *API) bodyRequest(w http.ResponseWriter, r *http.Request, req *request) (int, string) {
	ct := header(r, "Content-Type")
	if ct == "" {
		return http.StatusUnsupportedMediaType, "no Content-Type: send the body as application/json"
	}
	// What nearly every client sends is read without the parser's allocations.
	if ct != mediaJSON {
		mt, params, err := mime.ParseMediaType(ct)
		if err == nil && mt == "multipart/form-data" {
			return a.multipartRequest(w, r, req)
		}
		if err != nil || mt != mediaJSON {
			return http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: send the body as application/json", ct)
		}
		if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
			return http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: send the body in UTF-8", ct)
		}
	}
	body, err := readBody(w, r, a.cfg.MaxBodyBytes)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", a.cfg.MaxBodyBytes)
		}
		return http.StatusBadRequest, "read the body: " + err.Error()
	}
	if readOnce(body, req) {
		return 0, ""
	}
	if err := json.Unmarshal(body, req); err != nil {
		return http.StatusBadRequest, "the body is not a JSON object {\"query\": ..., \"variables\": {...}}: " + err.Error()
	}
	return 0, ""
}

// header is r.Header.Get(key) for a key written as the server writes the keys it reads
// (textproto.CanonicalMIMEHeaderKey): the map is read without canonicalizing the key
// again, which Get does on each of a request's lookups.
func header(r *http.Request, key string) string {
	if v := r.Header[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// readBody reads r's body, at most limit bytes (beyond, a *http.MaxBytesError). A body whose
// length the request announces within the limit is read into a buffer of that length: the
// server ends the body there, and io.ReadAll would start at 512 bytes and grow.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= limit {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
}

// urlRequest reads a GET's parameters: query and operationName as they are, variables and
// extensions as JSON.
func urlRequest(r *http.Request) (request, string) {
	params := r.URL.Query()
	var req request
	if params.Has("query") {
		q := params.Get("query")
		req.Query = &q
	}
	if params.Has("operationName") {
		n := params.Get("operationName")
		req.OperationName = &n
	}
	if v := params.Get("variables"); v != "" {
		if !json.Valid([]byte(v)) {
			return req, "the variables parameter is not JSON: send a URL-encoded JSON object"
		}
		req.Variables = json.RawMessage(v)
	}
	if params.Has("documentId") {
		id := params.Get("documentId")
		req.DocumentID = &id
	}
	if e := params.Get("extensions"); e != "" {
		if !json.Valid([]byte(e)) {
			return req, "the extensions parameter is not JSON: send a URL-encoded JSON object"
		}
		req.Extensions = json.RawMessage(e)
	}
	return req, ""
}

// variables decodes the variables of a request; a message saying what is wrong when they are
// not a JSON object of values graph-gophers can take.
func variables(raw json.RawMessage) (map[string]any, string) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, ""
	}
	var vars map[string]any
	err := json.Unmarshal(raw, &vars)
	if err == nil {
		return vars, ""
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && strings.HasPrefix(typeErr.Value, "number") {
		// encoding/json does not say where in a map the number is: find it.
		var numbers any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&numbers) == nil {
			if path, n := outOfRange(numbers, "variables"); path != "" {
				return nil, fmt.Sprintf("%s: the number %s is out of range: GraphQL numbers are 64-bit floats (at most about 1.8e308)", path, n)
			}
		}
	}
	if errors.As(err, &typeErr) && typeErr.Field == "" {
		return nil, fmt.Sprintf("variables must be a JSON object mapping names to values, got a JSON %s", typeErr.Value)
	}
	return nil, "variables: " + err.Error()
}

// outOfRange finds a number in v that a float64 cannot hold and returns its path.
func outOfRange(v any, path string) (string, json.Number) {
	switch v := v.(type) {
	case json.Number:
		if _, err := v.Float64(); err != nil {
			return path, v
		}
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if p, n := outOfRange(v[k], path+"."+k); p != "" {
				return p, n
			}
		}
	case []any:
		for i, e := range v {
			if p, n := outOfRange(e, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p, n
			}
		}
	}
	return "", ""
}

// negotiate picks the media type of the answer from an Accept header: the acceptable one with
// the highest q, graphql-response+json on a tie; application/json without Accept or for
// */*, as clients written before the spec expect. ok is false when neither is acceptable.
func negotiate(accept string) (media string, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return mediaJSON, true
	}
	best, bestQ := "", 0.0
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		var m string
		switch mt {
		case mediaGraphQLResponse:
			m = mediaGraphQLResponse
		case mediaJSON, "application/*", "*/*":
			m = mediaJSON
		default:
			continue
		}
		if q > bestQ || (q == bestQ && q > 0 && m == mediaGraphQLResponse) {
			best, bestQ = m, q
		}
	}
	if bestQ <= 0 {
		return mediaJSON, false
	}
	return best, true
}

// encode writes the response; data, which graph-gophers wrote as compact JSON, is copied
// as it is rather than scanned again by encoding/json.
func (r response) encode() ([]byte, error) {
	if r.body != nil && len(r.Errors) == 0 {
		return r.body, nil
	}
	out := make([]byte, 0, len(r.Data)+32)
	if len(r.Data) > 0 {
		out = append(out, dataMember...)
		out = append(out, r.Data...)
	} else {
		out = append(out, '{')
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

// wrongType matches graph-gophers' message for a variable value of the wrong type, which
// prints the value with %s ("found %!s(float64=1)") and Go's name of its type.
var wrongType = regexp.MustCompile(`^Variable "([^"]+)" has invalid type ([^\n]+)\.\nExpected type "([^"]+)", found `)

// goKinds names Go's types of decoded JSON as a caller wrote them.
var goKinds = map[string]string{
	"float64": "a number", "string": "a string", "bool": "a boolean",
	"[]interface {}": "a list", "map[string]interface {}": "an object",
}

// readable rewrites graph-gophers messages that speak Go rather than GraphQL.
func readable(e *gqlerrors.QueryError) {
	m := wrongType.FindStringSubmatch(e.Message)
	if m == nil {
		return
	}
	got, ok := goKinds[m[2]]
	if !ok {
		got = "a value of another type"
	}
	e.Message = fmt.Sprintf("variables: %q must be %s, got %s", m[1], withArticle(m[3]), got)
}

// setCode gives every error a code: resolvers set theirs; an error without a path was found
// before execution (syntax, validation, limits, unknown operation), one with a path is the
// executor's own (a value that does not fit the schema).
func setCode(e *gqlerrors.QueryError) {
	if _, ok := e.Extensions["code"]; ok {
		return
	}
	code := CodeValidation
	if e.Path != nil {
		code = CodeInternal
	}
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = code
}
