package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/platform-dev/platform/tools"
)

// capabilities are the seed's table, plus completions of the prompts' arguments.
var capabilities = map[string]any{
	"resources":   map[string]any{"subscribe": true, "listChanged": true},
	"tools":       map[string]any{"listChanged": true},
	"prompts":     map[string]any{"listChanged": false},
	"logging":     map[string]any{"level": defaultLogLevel},
	"completions": map[string]any{},
}

var serverInfo = map[string]any{"name": ServerName, "version": ServerVersion, "description": serverDescription}

// Log levels of notifications/message, in RFC 5424 order.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

const defaultLogLevel = "info"

var methods = []string{
	"initialize", "ping", "server/discover", "subscriptions/listen", "logging/setLevel",
	"resources/list", "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
	"tools/list", "tools/call", "prompts/list", "prompts/get", "completion/complete",
}

// dispatch runs one request. A panic becomes -32004, logged with a reference.
func (s *Server) dispatch(ctx context.Context, c *call) (result any, rerr *rpcError) {
	defer func() {
		if p := recover(); p != nil {
			result, rerr = nil, s.internal(ctx, c.msg.Method, fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
		}
	}()
	switch m := c.msg.Method; m {
	case "initialize":
		return s.initialize(ctx, c)
	case "ping":
		return struct{}{}, nil
	case "server/discover":
		return map[string]any{
			"supportedVersions": supportedVersions,
			"capabilities":      capabilities,
			"instructions":      instructions,
			"_meta":             map[string]any{metaServerInfo: serverInfo},
		}, nil
	case "logging/setLevel":
		return s.setLevel(ctx, c)
	case "resources/list":
		return s.cat.Load().resourcesJSON, nil
	case "resources/templates/list":
		return map[string]any{"resourceTemplates": listTemplates(s.cat.Load())}, nil
	case "resources/read":
		return s.readResource(ctx, c)
	case "resources/subscribe", "resources/unsubscribe":
		return s.subscription(ctx, c)
	case "tools/list":
		return s.cat.Load().toolsJSON, nil
	case "tools/call":
		return s.callTool(ctx, c)
	case "prompts/list":
		return map[string]any{"prompts": listPrompts(s.cat.Load())}, nil
	case "prompts/get":
		return s.getPrompt(c)
	case "completion/complete":
		return s.complete(c)
	default:
		details := fmt.Sprintf("method %q is not available; this server implements %s", m, strings.Join(methods, ", "))
		if strings.HasPrefix(m, "sampling/") {
			details = fmt.Sprintf("method %q is not available: sampling is not implemented by this server", m)
		}
		return nil, newError(CodeMethodNotFound, "Method not found", details)
	}
}

// decodeParams reads params into v, naming the offending member on a type mismatch.
func decodeParams(raw json.RawMessage, v any) *rpcError {
	if raw == nil {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return invalidParams(fmt.Sprintf("argument %q must be a %s, not %s", te.Field, jsonType(te.Type.Kind().String()), te.Value))
		}
		return invalidParams("params: " + err.Error())
	}
	return nil
}

func jsonType(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "map", "struct":
		return "object"
	case "slice":
		return "array"
	case "bool":
		return "boolean"
	}
	return "value of another type"
}

func (s *Server) initialize(ctx context.Context, c *call) (any, *rpcError) {
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
		Capabilities    json.RawMessage `json:"capabilities"`
	}
	if rerr := decodeParams(c.msg.Params, &p); rerr != nil {
		return nil, rerr
	}
	if p.ProtocolVersion == "" {
		return nil, invalidParams(`argument "protocolVersion" is required`)
	}
	// Echo the client's revision when it is one that initialize negotiates; otherwise offer
	// the newest of those (2026-07-28 has no initialize: clients reach it via server/discover).
	version := sessionVersions[0]
	if slices.Contains(sessionVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	fields := map[string]any{}
	if len(p.ClientInfo) > 0 && len(p.ClientInfo) < 4096 {
		fields["client"] = string(p.ClientInfo)
	}
	if caps := capabilityNames(p.Capabilities); caps != "" {
		fields["caps"] = caps
	}
	id, err := s.st.createSession(ctx, kindSession, version, fields)
	if err != nil {
		// Without Redis there is no session, but the client can still work statelessly.
		s.log.WarnContext(ctx, "initialize without a session", "err", err)
	} else {
		c.w.Header().Set(headerSession, id)
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    capabilities,
		"serverInfo":      serverInfo,
		"instructions":    instructions,
	}, nil
}

// capabilityNames lists the client capabilities the server may use ("elicitation,sampling"),
// from initialize's capabilities object.
func capabilityNames(raw json.RawMessage) string {
	var caps map[string]json.RawMessage
	if json.Unmarshal(raw, &caps) != nil {
		return ""
	}
	var names []string
	for _, name := range clientCapability {
		if v, ok := caps[name]; ok && string(v) != "null" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

func (s *Server) setLevel(ctx context.Context, c *call) (any, *rpcError) {
	var p struct {
		Level string `json:"level"`
	}
	if rerr := decodeParams(c.msg.Params, &p); rerr != nil {
		return nil, rerr
	}
	if !slices.Contains(logLevels, p.Level) {
		return nil, invalidParams(fmt.Sprintf("argument \"level\" must be one of %s", strings.Join(logLevels, ", ")))
	}
	if c.sess != nil {
		if err := s.st.setField(ctx, c.sess.id, "lvl", p.Level); err != nil {
			return nil, s.internal(ctx, "logging/setLevel", err)
		}
	}
	return struct{}{}, nil
}

func (s *Server) readResource(ctx context.Context, c *call) (any, *rpcError) {
	var p struct {
		URI string `json:"uri"`
	}
	if rerr := decodeParams(c.msg.Params, &p); rerr != nil {
		return nil, rerr
	}
	cat := s.cat.Load()
	if p.URI == "" {
		return nil, invalidParams(`argument "uri" is required`)
	}
	if !cat.knownResource(p.URI) {
		return nil, invalidParams(fmt.Sprintf("argument \"uri\": unknown resource %q; resources/list names the readable ones", p.URI))
	}
	var doc any
	var err error
	switch r, ok := cat.resources[p.URI]; {
	case p.URI == URISystemHealth:
		doc = s.health(ctx)
	case ok:
		doc, err = r.Read(ctx)
	case cat.template(p.URI) != nil:
		doc = cat.template(p.URI).read(p.URI)
	default:
		doc = noAnalysis(p.URI)
	}
	if err != nil {
		return nil, s.callError(ctx, "resources/read "+p.URI, err)
	}
	if rc, ok := doc.(resourceContent); ok {
		return map[string]any{"contents": []any{rc.wire(p.URI)}}, nil
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, s.internal(ctx, "encode resource "+p.URI, err)
	}
	b = []byte(s.redact.paths(string(b)))
	mimeType := resourceMIMEType
	for _, info := range cat.infos {
		if info.URI == p.URI {
			mimeType = info.MIMEType
		}
	}
	return map[string]any{"contents": []any{map[string]any{"uri": p.URI, "mimeType": mimeType, "text": string(b)}}}, nil
}

// noAnalysis is the document of an analysis resource before any analysis produced it.
func noAnalysis(uri string) map[string]any {
	tool := "analyze_codebase"
	if uri == URICloud {
		tool = "analyze_cloud_resources"
	}
	return map[string]any{
		"uri":     uri,
		"status":  "no analysis yet",
		"message": fmt.Sprintf("No analysis has produced this document yet. Call the %s tool; subscribers are notified when it is ready.", tool),
	}
}

func (s *Server) subscription(ctx context.Context, c *call) (any, *rpcError) {
	var p struct {
		URI string `json:"uri"`
	}
	if rerr := decodeParams(c.msg.Params, &p); rerr != nil {
		return nil, rerr
	}
	if p.URI == "" {
		return nil, invalidParams(`argument "uri" is required`)
	}
	if !s.cat.Load().knownResource(p.URI) {
		return nil, invalidParams(fmt.Sprintf("argument \"uri\": unknown resource %q", p.URI))
	}
	if c.sess == nil || c.sess.listen {
		return nil, newError(CodeInvalidRequest, "Invalid request",
			c.msg.Method+" needs a session: send initialize first and repeat its Mcp-Session-Id header, or use subscriptions/listen")
	}
	var err error
	if c.msg.Method == "resources/subscribe" {
		err = s.st.subscribe(ctx, c.sess.id, p.URI)
	} else {
		err = s.st.unsubscribe(ctx, c.sess.id, p.URI)
	}
	if err != nil {
		return nil, s.internal(ctx, c.msg.Method, err)
	}
	return struct{}{}, nil
}

type toolOutcome struct {
	value any
	err   error
}

func (s *Server) callTool(ctx context.Context, c *call) (any, *rpcError) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if rerr := decodeParams(c.msg.Params, &p); rerr != nil {
		return nil, rerr
	}
	cat := s.cat.Load()
	if p.Name == "" {
		return nil, invalidParams(`argument "name" is required`)
	}
	e, ok := cat.byName[p.Name]
	if !ok {
		names := make([]string, 0, len(cat.tools))
		for _, t := range cat.tools {
			names = append(names, t.spec.Name)
		}
		return nil, invalidParams(fmt.Sprintf("argument \"name\": unknown tool %q; tools: %s", p.Name, strings.Join(names, ", ")))
	}
	args := p.Arguments
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	}
	if args[0] != '{' {
		return nil, invalidParams(`argument "arguments" must be an object`)
	}
	args = e.roundIntegers(args)
	if details := e.validate(args); details != "" {
		return nil, invalidParams(details)
	}

	done := make(chan toolOutcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- toolOutcome{err: &toolPanic{value: p, stack: debug.Stack()}}
			}
		}()
		v, err := e.tool.Call(ctx, args)
		done <- toolOutcome{value: v, err: err}
	}()
	var out toolOutcome
	select {
	case out = <-done:
	case <-ctx.Done():
		// A tool that heeds its context returns at once, and what it sends on its way out
		// (notifications/cancelled for its own request to the client) must reach the stream
		// before the answer closes it; one that ignores its context is waited for no longer
		// than toolGrace. Either way its result is dropped.
		select {
		case <-done:
		case <-time.After(toolGrace):
		}
		out = toolOutcome{err: ctx.Err()}
	}
	if out.err != nil {
		var tp *toolPanic
		if errors.As(out.err, &tp) {
			return nil, s.internal(ctx, "tools/call "+p.Name, fmt.Errorf("panic: %v\n%s", tp.value, tp.stack))
		}
		if ae, ok := tools.IsArgumentError(out.err); ok {
			return nil, invalidParams(s.redact.text(ae.Error()))
		}
		if ctx.Err() != nil && (errors.Is(out.err, context.DeadlineExceeded) || errors.Is(out.err, context.Canceled)) {
			return nil, s.ctxError(ctx, "tools/call "+p.Name, e)
		}
		return toolResult{text: s.redact.text(out.err.Error()), isError: true}, nil
	}
	if blocks, ok := out.value.(contentBlocks); ok {
		return toolResult{blocks: blocks}, nil
	}
	b, err := json.Marshal(out.value)
	if err != nil {
		return nil, s.internal(ctx, "encode result of "+p.Name, err)
	}
	text := s.redact.paths(string(b))
	return toolResult{text: text, structured: json.RawMessage(text)}, nil
}

type toolPanic struct {
	value any
	stack []byte
}

func (p *toolPanic) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// toolResult is a tools/call result: the JSON as text and, when it is an object, as
// structuredContent.
type toolResult struct {
	text       string
	structured json.RawMessage
	isError    bool
	blocks     contentBlocks // content given as is, instead of text
}

func (r toolResult) MarshalJSON() ([]byte, error) {
	var content any = []any{map[string]any{"type": "text", "text": r.text}}
	if r.blocks != nil {
		content = r.blocks
	}
	out := map[string]any{"content": content, "isError": r.isError}
	if len(r.structured) > 0 && r.structured[0] == '{' {
		out["structuredContent"] = r.structured
	}
	return json.Marshal(out)
}

func isToolError(result any) bool {
	r, ok := result.(toolResult)
	return ok && r.isError
}

// callError maps an error from a resource or tool to the wire.
func (s *Server) callError(ctx context.Context, what string, err error) *rpcError {
	if ae, ok := tools.IsArgumentError(err); ok {
		return invalidParams(s.redact.text(ae.Error()))
	}
	if ctx.Err() != nil {
		return s.ctxError(ctx, what, nil)
	}
	return s.internal(ctx, what, err)
}

// toolGrace is how long a tool call past its deadline or cancelled is given to return.
const toolGrace = 200 * time.Millisecond

func (s *Server) ctxError(ctx context.Context, what string, e *toolEntry) *rpcError {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		details := fmt.Sprintf("%s did not finish within %s and was cancelled", what, s.cfg.RequestTimeout)
		if e != nil && len(e.args) > 0 {
			details += "; narrow the call with its arguments (" + strings.Join(e.args, ", ") + ")"
		}
		return newError(CodeTimeout, "Request timeout", details)
	}
	return newError(CodeServerError, "Request cancelled", what+" was cancelled by the client")
}

// msgTooLarge is the message of a response refused for its size.
const msgTooLarge = "Response too large"

// tooLarge replaces a response above the size limit; the client learns how to ask for less.
func (s *Server) tooLarge(c *call, size int) *rpcError {
	hint := "request less data"
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(c.msg.Params, &p)
	if e, ok := s.cat.Load().byName[p.Name]; ok && c.msg.Method == "tools/call" && len(e.args) > 0 {
		hint = fmt.Sprintf("narrow the call with %s's arguments (%s): a smaller path or scope, a lower depth, a filter", e.spec.Name, strings.Join(e.args, ", "))
	}
	return newError(CodeServerError, msgTooLarge,
		fmt.Sprintf("the response would be %d bytes, above the limit of %d bytes; %s", size, s.cfg.MaxResponseBytes, hint))
}

// internal logs err with a reference and returns a -32004 that carries only the reference.
func (s *Server) internal(ctx context.Context, what string, err error) *rpcError {
	ref := newID()[:12]
	s.log.ErrorContext(ctx, "internal error", "ref", ref, "op", what, "err", err)
	return newError(CodeInternalError, "Internal error", "the server failed to complete the request (reference "+ref+")")
}

// logCall sends the client a notifications/message about its request when the session's
// level admits it.
func (s *Server) logCall(c *call, took time.Duration, rerr *rpcError, toolFailed bool) {
	if c.sess == nil || c.sess.listen {
		return
	}
	level, text := "debug", c.msg.Method+" served"
	switch {
	case rerr != nil:
		level, text = "error", fmt.Sprintf("%s failed: %s", c.msg.Method, rerr.Message)
	case toolFailed:
		level, text = "warning", c.msg.Method+" ran but the tool reported a failure"
	case c.msg.Method == "tools/call":
		level, text = "info", c.msg.Method+" finished"
	}
	if slices.Index(logLevels, level) < slices.Index(logLevels, c.sess.level) {
		return
	}
	data := map[string]any{"message": text, "method": c.msg.Method, "durationMs": took.Milliseconds()}
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(c.msg.Params, &p) == nil && p.Name != "" {
		data["tool"] = p.Name
	}
	if rerr != nil {
		data["code"] = rerr.Code
	}
	payload := notificationJSON("notifications/message", map[string]any{"level": level, "logger": ServerName, "data": data})
	id := c.sess.id
	s.background(func(ctx context.Context) {
		if err := s.st.emit(ctx, id, payload); err != nil {
			s.log.Warn("emit log message", "err", err)
		}
	})
}
