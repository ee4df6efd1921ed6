// Package mcptest is a client of the MCP Streamable HTTP wire protocol for tests: it sends
// raw JSON-RPC messages and decodes the answers, JSON or event stream, so that tests see
// exactly what a client sees. Every test of the MCP server, in any package, speaks through it,
// and starts the server with Serve.
package mcptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Response is a raw HTTP answer and its decoded JSON-RPC message. For an event-stream answer
// Events holds every message and Body the response (the message with an id).
type Response struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
	Events []Event
}

// Error is the JSON-RPC error object, nil for a result.
func (r Response) Error() map[string]any {
	e, _ := r.Body["error"].(map[string]any)
	return e
}

// ErrCode is error.code, 0 for a result.
func (r Response) ErrCode() int {
	if e := r.Error(); e != nil {
		return int(e["code"].(float64))
	}
	return 0
}

// Details is error.data.details.
func (r Response) Details() string {
	d, _ := r.Error()["data"].(map[string]any)
	s, _ := d["details"].(string)
	return s
}

// Result is the JSON-RPC result object.
func (r Response) Result() map[string]any {
	m, _ := r.Body["result"].(map[string]any)
	return m
}

// Request encodes a JSON-RPC request; params nil sends none.
func Request(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// Notification encodes a JSON-RPC notification.
func Notification(method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// Post sends one raw body. Content-Type and Accept are those of an MCP client unless
// headers (name, value, ...) set them; a header set to "" is removed.
func Post(t testing.TB, url, body string, headers ...string) Response {
	t.Helper()
	req, err := NewPost(url, body, headers...)
	if err != nil {
		t.Fatal(err)
	}
	return Do(t, req)
}

// NewPost is the request Post sends.
func NewPost(url, body string, headers ...string) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	SetHeaders(req, headers...)
	return req, nil
}

// SetHeaders sets name, value pairs on req; an empty value removes the header.
func SetHeaders(req *http.Request, headers ...string) {
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
}

// Do sends req with the default client and decodes the answer.
func Do(t testing.TB, req *http.Request) Response {
	t.Helper()
	r, err := Send(http.DefaultClient, req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	return r
}

// Send sends req with client and decodes the answer; unlike Do it returns what went wrong.
func Send(client *http.Client, req *http.Request) (Response, error) {
	resp, err := client.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	out := Response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if err != nil {
		return out, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "text/event-stream":
		s := ReadSSE(io.NopCloser(bytes.NewReader(raw)))
		for ev := range s.events {
			out.Events = append(out.Events, ev)
			var m map[string]any
			if json.Unmarshal([]byte(ev.Data), &m) == nil && m["id"] != nil && m["method"] == nil {
				out.Body = m
			}
		}
	case len(bytes.TrimSpace(raw)) > 0 && ct == "application/json":
		if err := json.Unmarshal(raw, &out.Body); err != nil {
			return out, &decodeError{status: resp.StatusCode, raw: raw, err: err}
		}
	}
	return out, nil
}

type decodeError struct {
	status int
	raw    []byte
	err    error
}

func (e *decodeError) Error() string {
	return "HTTP " + http.StatusText(e.status) + ": body is not JSON (" + e.err.Error() + "): " + string(e.raw[:min(len(e.raw), 200)])
}

// Initialize starts a session at the given protocol revision and returns its id.
func Initialize(t testing.TB, url, version string, headers ...string) string {
	t.Helper()
	r := Post(t, url, Request(1, "initialize", map[string]any{
		"protocolVersion": version, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "0"},
	}), headers...)
	if r.Status != 200 || r.ErrCode() != 0 {
		t.Fatalf("initialize: %d %s", r.Status, r.Raw)
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	return sid
}

// Event is one server-sent event.
type Event struct {
	ID   string
	Data string
}

// Stream reads the messages of an open event stream.
type Stream struct {
	events chan Event
}

// OpenStream opens the GET notification stream of a session, resuming after lastEventID
// when it is set; the stream is closed when the test ends.
func OpenStream(t testing.TB, url, sid, lastEventID string) *Stream {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	return Open(t, req)
}

// Open sends req, which must answer with an event stream, and reads it until the test
// ends.
func Open(t testing.TB, req *http.Request) *Stream {
	t.Helper()
	ctx, cancel := context.WithCancel(req.Context())
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		cancel()
		t.Fatalf("%s stream: %v", req.Method, err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		cancel()
		t.Fatalf("%s stream: %d %s", req.Method, resp.StatusCode, b)
	}
	s := ReadSSE(resp.Body)
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
	})
	return s
}

// ReadSSE reads events from body until it ends.
func ReadSSE(body io.ReadCloser) *Stream {
	s := &Stream{events: make(chan Event, 100)}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		var ev Event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Data != "" {
					s.events <- ev
				}
				ev = Event{}
			case strings.HasPrefix(line, "id:"):
				ev.ID = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
			case strings.HasPrefix(line, "data:"):
				ev.Data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			}
		}
	}()
	return s
}

// Next waits up to 20 s for the next message whose method is method (or, for method "",
// the next message of any kind).
func (s *Stream) Next(t testing.TB, method string) (Event, map[string]any) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("stream ended while waiting for %q", method)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
				t.Fatalf("event data is not JSON: %q", ev.Data)
			}
			if method == "" || m["method"] == method {
				return ev, m
			}
		case <-timeout:
			t.Fatalf("no %q within 20 s", method)
		}
	}
}

// WaitClosed waits up to 20 s for the server to end the stream.
func (s *Stream) WaitClosed(t testing.TB) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("the stream was not ended")
		}
	}
}
