package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

var metricsAddr = regexp.MustCompile(`msg="metrics serving" addr=(\S+)`)

// send makes one request and returns the response with its body read.
func (s *server) send(method, host, path string, header map[string]string, body string) (*http.Response, []byte) {
	s.t.Helper()
	req, err := http.NewRequest(method, "http://"+s.addr+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Host = host
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s%s: %v", method, host, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

func (s *server) mcp(body string) (*http.Response, []byte) {
	return s.send("POST", "localhost", "/mcp", map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
	}, body)
}

func (s *server) scrape() string {
	s.t.Helper()
	m := metricsAddr.FindStringSubmatch(s.logText())
	if m == nil {
		s.t.Fatalf("no metrics listener in the log:\n%s", s.logText())
	}
	resp, err := http.Get("http://" + m[1] + "/metrics")
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("GET /metrics: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// TestMetrics drives GraphQL and MCP traffic through the binary and reads the series it
// caused on the metrics listener, which the public listener does not serve.
func TestMetrics(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data, "PLATFORM_METRICS_ADDR=127.0.0.1:0", "PLATFORM_METRICS_PROJECTS=3",
		"MCP_REQUESTS_PER_WINDOW=8", "PLATFORM_LOG_LEVEL=debug")
	token := mintToken(t, data, "demo", "alice")
	const create = `mutation { createProduct(data: {name: "pen", price: 2}) { uid } }`
	for _, q := range []string{create, `{ products { uid } }`, `{ productsCount }`, `{ products { uid } productsCount }`} {
		if st, out, err := s.graphql("demo", token, q, nil); st != http.StatusOK || out["errors"] != nil || err != nil {
			t.Fatalf("%s: %d %v %v", q, st, out, err)
		}
	}
	// More projects than labels: the first ones keep theirs, the rest are counted as _other.
	for i := range 6 {
		id := fmt.Sprintf("p%d", i)
		doc := strings.Replace(productsDoc, `"shop"`, `"`+id+`"`, 1)
		if st, body := s.do("PUT", "localhost", "/admin/v1/projects/"+id, s.token, []byte(doc)); st != http.StatusCreated {
			t.Fatalf("PUT %s: %d %s", id, st, body)
		}
		s.graphql(id, "", `{ productsCount }`, nil)
	}

	// MCP: a session, a tool that runs, an unknown tool, then calls past the rate limit (8 per
	// window).
	if resp, body := s.mcp(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"metrics-test","version":"1"}}}`); resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	s.mcp(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"analyze_codebase","arguments":{"path":"."}}}`)
	s.mcp(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"no_such_tool"}}`)
	for i := range 6 {
		s.mcp(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"consult_expert","arguments":{"question":"How do I size Redis?"}}}`, 10+i))
	}

	if resp, _ := s.send("GET", "localhost", "/metrics", nil, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the public listener answers /metrics with %d, want 404", resp.StatusCode)
	}
	text := s.scrape()
	for _, want := range []string{
		`platform_http_requests_total{operation="create",project="demo",status="200"} 1`,
		`platform_http_requests_total{operation="list",project="demo",status="200"} 1`,
		`platform_http_requests_total{operation="count",project="demo",status="200"} 1`,
		`platform_http_requests_total{operation="mixed",project="demo",status="200"} 1`,
		`platform_http_requests_total{operation="admin",project="_none",status="201"} 6`,
		`platform_http_request_duration_seconds_count{operation="list",project="demo",status="200"} 1`,
		`platform_mcp_tool_calls_total{outcome="invalid_params",tool="_unknown"} 1`,
		`platform_mcp_tool_calls_total{outcome="rate_limited",tool="consult_expert"} 1`,
		`platform_mcp_limiter_decisions_total{decision="allowed",limit="rate"} 8`,
		`platform_mcp_limiter_decisions_total{decision="refused",limit="rate"} 1`,
		`platform_mcp_tool_call_duration_seconds_count{tool="consult_expert"} 5`,
		`platform_mcp_sessions 1`,
		`platform_mcp_analyses_running 0`,
		`platform_mcp_analyses_waiting 0`,
		`platform_store_up{store="database"} 1`,
		`platform_store_up{store="redis"} 1`,
		`platform_store_ping_duration_seconds_count{store="database"}`,
		`platform_graphql_resolver_duration_seconds_count{operation="list"} 2`,
		`platform_graphql_resolver_duration_seconds_count{operation="create"} 1`,
		`platform_project_cache_capacity 1000`,
		`platform_project_cache_entries 7`,
		`platform_project_builds_total{reason="load"} 7`,
		`go_goroutines `,
	} {
		if !strings.Contains(text, "\n"+want) {
			t.Errorf("no %s in the scrape", want)
		}
	}
	if !regexp.MustCompile(`\nplatform_mcp_tool_calls_total\{outcome="(ok|tool_error)",tool="analyze_codebase"\} 1`).MatchString(text) {
		t.Errorf("no analyze_codebase call in the scrape")
	}
	var projects []string
	for _, m := range regexp.MustCompile(`\nplatform_http_requests_total\{[^}]*project="([^"]+)"`).FindAllStringSubmatch(text, -1) {
		if !slices.Contains(projects, m[1]) {
			projects = append(projects, m[1])
		}
	}
	slices.Sort(projects)
	// demo, p0 and p1 took the three seats; p2..p5 share _other.
	if got := strings.Join(projects, " "); got != "_none _other demo p0 p1" {
		t.Errorf("project labels %q, want %q", got, "_none _other demo p0 p1")
	}
}

// TestRequestIDs checks that an error body carries the response's X-Request-Id, a caller's
// own id is kept, and the log lines of the request carry the same id.
func TestRequestIDs(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data, "PLATFORM_METRICS_ADDR=", "PLATFORM_LOG_LEVEL=debug")
	token := mintToken(t, data, "demo", "alice")
	gqlHeader := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + token}
	cases := []struct {
		name, host, path, sent, body string
		header                       map[string]string
		mcp                          bool
	}{
		{name: "graphql bad body", host: "demo.localhost", path: "/api/v1/graphql", body: `{"query":`, header: gqlHeader},
		{name: "graphql caller's id", host: "demo.localhost", path: "/api/v1/graphql", sent: "lb-7f3c.42", body: `{"query":`, header: gqlHeader},
		{name: "graphql validation", host: "demo.localhost", path: "/api/v1/graphql", body: `{"query":"{ products { nope } }"}`, header: gqlHeader},
		{name: "graphql bad token", host: "demo.localhost", path: "/api/v1/graphql", body: `{"query":"{ productsCount }"}`,
			header: map[string]string{"Content-Type": "application/json", "Authorization": "Bearer nope"}},
		{name: "file route", host: "demo.localhost", path: "/files/products/x/name", header: gqlHeader},
		{name: "file route, caller's id", host: "demo.localhost", path: "/files/products/x/name", sent: "lb-9a1e.7", header: gqlHeader},
		{name: "unknown project", host: "ghost.localhost", path: "/api/v1/graphql", body: `{}`, header: gqlHeader},
		{name: "admin without token", host: "localhost", path: "/admin/v1/projects", header: map[string]string{}},
		{name: "mcp unknown tool", host: "localhost", path: "/mcp", mcp: true,
			body:   `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`,
			header: map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}},
		{name: "mcp bad json", host: "localhost", path: "/mcp", mcp: true, body: `{`,
			header: map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.sent != "" {
				c.header["X-Request-Id"] = c.sent
				defer delete(c.header, "X-Request-Id")
			}
			method := "POST"
			if c.body == "" {
				method = "GET"
			}
			resp, body := s.send(method, c.host, c.path, c.header, c.body)
			id := resp.Header.Get("X-Request-Id")
			if id == "" || (c.sent != "" && id != c.sent) {
				t.Fatalf("X-Request-Id %q (sent %q)", id, c.sent)
			}
			var got string
			if c.mcp {
				var out struct {
					Error struct {
						Data map[string]any `json:"data"`
					} `json:"error"`
				}
				if err := json.Unmarshal(body, &out); err != nil || out.Error.Data["details"] == nil {
					t.Fatalf("not a JSON-RPC error with details: %s", body)
				}
				got, _ = out.Error.Data["requestId"].(string)
			} else {
				var out struct {
					Errors []struct {
						Extensions map[string]any `json:"extensions"`
					} `json:"errors"`
				}
				if err := json.Unmarshal(body, &out); err != nil || len(out.Errors) == 0 {
					t.Fatalf("no errors in %d %s", resp.StatusCode, body)
				}
				got, _ = out.Errors[0].Extensions["requestId"].(string)
			}
			if got != id {
				t.Errorf("error body has requestId %q, response X-Request-Id %q: %s", got, id, body)
			}
			line := regexp.MustCompile(`(?m)^.* msg=request .* request_id=` + regexp.QuoteMeta(id) + `$`)
			waitFor(t, 5*time.Second, "the request's log line", func() bool { return line.MatchString(s.logText()) })
		})
	}
	// A caller's id that does not look like one is replaced, never logged.
	resp, _ := s.send("GET", "localhost", "/healthz", map[string]string{"X-Request-Id": "two words"}, "")
	if id := resp.Header.Get("X-Request-Id"); id == "" || id == "two words" {
		t.Errorf("X-Request-Id %q for an id with a space", id)
	}
}

// TestTracing points the binary at an OTLP/HTTP collector and checks that the spans of an
// HTTP request, its GraphQL execution and an MCP tool call arrive by the time it stops.
func TestTracing(t *testing.T) {
	var (
		mu    sync.Mutex
		spans []string
	)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || len(b) == 0 || proto.Unmarshal(b, &req) != nil {
			http.Error(w, "want a POST of an OTLP protobuf to /v1/traces", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					spans = append(spans, sp.Name)
				}
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()

	data := t.TempDir()
	s := startServer(t, data, "PLATFORM_METRICS_ADDR=", "OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL)
	token := mintToken(t, data, "demo", "alice")
	if st, out, err := s.graphql("demo", token, `{ productsCount }`, nil); st != http.StatusOK || err != nil {
		t.Fatalf("graphql: %d %v %v", st, out, err)
	}
	s.mcp(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"consult_expert","arguments":{"question":"How do I size Redis?"}}}`)
	s.stop()

	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"POST /api/v1/graphql", "graphql.execute", "POST /mcp", "mcp tools/call consult_expert"} {
		if !slices.Contains(spans, want) {
			t.Errorf("no span %q among %q", want, spans)
		}
	}
}
