package mcpserver

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// The seed's error codes. They replace the JSON-RPC 2.0 defaults (-32700, -32600, ...) on
// this server's wire.
const (
	CodeServerError    = -32000
	CodeInvalidRequest = -32001
	CodeMethodNotFound = -32002
	CodeInvalidParams  = -32003
	CodeInternalError  = -32004
	CodeParseError     = -32005
	CodeTimeout        = -32006
	CodeRateLimited    = -32007
	// CodeUnsupportedProtocolVersion is fixed by MCP 2026-07-28 (SEP-2575) for a
	// server/discover or request whose _meta protocol version the server does not speak; its
	// data lists the supported versions so a client can renegotiate.
	CodeUnsupportedProtocolVersion = -32022
)

// rpcError is a JSON-RPC error object. Details goes out as error.data.details.
type rpcError struct {
	Code    int
	Message string
	Details string
	// Extra holds further data members (e.g. "supported" for -32022).
	Extra map[string]any
	// RequestID is the HTTP request's X-Request-Id; it goes out as error.data.requestId, so
	// a client's report leads to the server's log lines.
	RequestID string
	// Status, when set, is the HTTP status that carries the error instead of the one its code
	// implies (404 for an unknown session, 413 for a body too large, 503 for a store down).
	Status int
}

func (e *rpcError) MarshalJSON() ([]byte, error) {
	data := map[string]any{"details": e.Details}
	for k, v := range e.Extra {
		data[k] = v
	}
	if e.RequestID != "" {
		data["requestId"] = e.RequestID
	}
	return json.Marshal(struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	}{e.Code, e.Message, data})
}

func newError(code int, message, details string) *rpcError {
	return &rpcError{Code: code, Message: message, Details: details}
}

// withStatus sets the HTTP status that carries e.
func (e *rpcError) withStatus(status int) *rpcError {
	e.Status = status
	return e
}

func invalidParams(details string) *rpcError {
	return newError(CodeInvalidParams, "Invalid params", details)
}

// httpStatus is the HTTP status that carries e: transport-level refusals get a 4xx so that
// proxies and plain HTTP clients see them; everything the method itself decided is 200.
func (e *rpcError) httpStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	switch e.Code {
	case CodeParseError, CodeInvalidRequest:
		return http.StatusBadRequest
	case CodeRateLimited:
		return http.StatusTooManyRequests
	case CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// message is one parsed client message: a request (ID set), a notification (no ID) or a
// response to a server request (Method empty).
type message struct {
	ID     json.RawMessage // nil for notifications; never JSON null for requests
	Method string
	Params json.RawMessage
	// Result and Error are those of a response.
	Result, Error json.RawMessage
}

func (m *message) isRequest() bool { return m.ID != nil && m.Method != "" }

// parseMessage decodes one JSON-RPC message. On failure the returned id is the request's id
// when it could be read, so the error can still echo it.
func parseMessage(body []byte) (*message, json.RawMessage, *rpcError) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, nil, newError(CodeParseError, "Parse error", "the request body is empty; send one JSON-RPC 2.0 message")
	}
	if !json.Valid(body) {
		return nil, nil, newError(CodeParseError, "Parse error", "the request body is not valid JSON")
	}
	if body[0] == '[' {
		return nil, nil, newError(CodeInvalidRequest, "Invalid request", "batch arrays are not supported; send one JSON-RPC message per POST")
	}
	if body[0] != '{' {
		return nil, nil, newError(CodeInvalidRequest, "Invalid request", "a JSON-RPC message must be a JSON object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, nil, newError(CodeParseError, "Parse error", err.Error())
	}
	var id json.RawMessage
	if v, ok := raw["id"]; ok {
		switch {
		case len(v) > 0 && v[0] == '"':
			id = v
		case len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')):
			id = v
		default:
			return nil, nil, newError(CodeInvalidRequest, "Invalid request", `"id" must be a string or a number`)
		}
	}
	invalid := func(details string) (*message, json.RawMessage, *rpcError) {
		return nil, id, newError(CodeInvalidRequest, "Invalid request", details)
	}
	var version string
	if err := json.Unmarshal(raw["jsonrpc"], &version); err != nil || version != "2.0" {
		return invalid(`"jsonrpc" must be "2.0"`)
	}
	m := &message{ID: id}
	if v, ok := raw["method"]; ok {
		if err := json.Unmarshal(v, &m.Method); err != nil || m.Method == "" {
			return invalid(`"method" must be a non-empty string`)
		}
		if p, ok := raw["params"]; ok && !bytes.Equal(p, []byte("null")) {
			if p[0] != '{' {
				return nil, id, invalidParams(`"params" must be an object`)
			}
			m.Params = p
		}
		return m, id, nil
	}
	result, hasResult := raw["result"]
	rpcErr, hasError := raw["error"]
	if id == nil || hasResult == hasError {
		return invalid(`a message needs "method" (request or notification) or exactly one of "result" and "error" (response)`)
	}
	m.Result, m.Error = result, rpcErr
	return m, id, nil
}

// nullID is the id of an error answering a message whose id could not be read.
var nullID = json.RawMessage("null")

func responseJSON(id json.RawMessage, result any, rerr *rpcError) ([]byte, error) {
	if id == nil {
		id = nullID
	}
	if rerr != nil {
		return json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *rpcError       `json:"error"`
		}{"2.0", id, rerr})
	}
	if raw, ok := result.(json.RawMessage); ok && json.Valid(id) {
		// Encoded once (tools/list, resources/list) and compact: json.Marshal would copy and
		// re-compact it on every request.
		b := make([]byte, 0, len(raw)+len(id)+40)
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, id...)
		b = append(b, `,"result":`...)
		b = append(b, raw...)
		return append(b, '}'), nil
	}
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
}

func notificationJSON(method string, params any) []byte {
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{"2.0", method, params})
	if err != nil {
		// Every caller passes maps of plain values; failing here is a programming error.
		panic("mcpserver: marshal notification: " + err.Error())
	}
	return b
}
