package telemetry_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/platform-dev/platform/telemetry"
)

func TestProjectLabels(t *testing.T) {
	var dropped []string
	p := telemetry.NewProjectLabels(2, 0, func(id string) { dropped = append(dropped, id) })
	for _, c := range []struct{ project, want string }{
		{"", telemetry.ProjectNone},
		{"a", "a"},
		{"b", "b"},
		{"c", telemetry.ProjectOther},
		{"a", "a"},
		{"c", telemetry.ProjectOther},
		{"c", telemetry.ProjectOther},
	} {
		if got := p.Label(c.project); got != c.want {
			t.Errorf("Label(%q) = %q, want %q", c.project, got, c.want)
		}
	}
	// In this window c (3 requests) and a (2) were busier than b (1): b loses its seat.
	p.Rerank()
	if fmt.Sprint(dropped) != "[b]" {
		t.Errorf("dropped %v, want [b]", dropped)
	}
	for _, c := range []struct{ project, want string }{{"c", "c"}, {"a", "a"}, {"b", telemetry.ProjectOther}} {
		if got := p.Label(c.project); got != c.want {
			t.Errorf("after rerank: Label(%q) = %q, want %q", c.project, got, c.want)
		}
	}
}

// newServer is an Echo server measured as serve measures it, with a logger writing to log.
func newServer(t testing.TB, reg prometheus.Registerer, maxProjects int, log io.Writer) (*echo.Echo, *telemetry.HTTP) {
	h, err := telemetry.NewHTTP(telemetry.HTTPConfig{
		Registerer: reg, MaxProjects: maxProjects,
	})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(telemetry.NewLogHandler(slog.NewTextHandler(log, nil)))
	e := echo.New()
	e.Use(middleware.RequestID(), h.Middleware)
	e.POST("/api/v1/graphql", func(c echo.Context) error {
		ctx := c.Request().Context()
		if p := c.QueryParam("project"); p != "" {
			telemetry.NoteProject(ctx, p)
		}
		// Root fields of a query resolve concurrently; each notes its kind.
		var wg sync.WaitGroup
		for _, op := range c.QueryParams()["op"] {
			wg.Go(func() { telemetry.NoteOperation(ctx, op) })
		}
		wg.Wait()
		logger.InfoContext(ctx, "served")
		return c.String(http.StatusOK, telemetry.RequestID(ctx))
	})
	e.GET("/admin/v1/projects", func(echo.Context) error { return echo.NewHTTPError(http.StatusForbidden, "no") })
	return e, h
}

func TestMiddleware(t *testing.T) {
	reg := prometheus.NewRegistry()
	var log bytes.Buffer
	e, h := newServer(t, reg, 2, &log)
	do := func(method, target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
		return rec
	}
	rec := do("POST", "/api/v1/graphql?project=a&op=list")
	id := rec.Header().Get(echo.HeaderXRequestID)
	if id == "" || rec.Body.String() != id {
		t.Fatalf("handler saw request id %q, response header says %q", rec.Body.String(), id)
	}
	if !strings.Contains(log.String(), "request_id="+id) {
		t.Errorf("log lacks request_id=%s:\n%s", id, log.String())
	}
	do("POST", "/api/v1/graphql?project=b&op=create")
	do("POST", "/api/v1/graphql?project=c&op=create")
	do("POST", "/api/v1/graphql?project=d")
	do("POST", "/api/v1/graphql?project=a&op=list&op=count&op=list")
	do("POST", "/api/v1/graphql?project=a&op=count&op=count")
	do("GET", "/admin/v1/projects")
	do("GET", "/nowhere")

	want := `
# HELP platform_http_requests_total HTTP requests served, by project (bounded: see docs/metrics.md), operation and status code.
# TYPE platform_http_requests_total counter
platform_http_requests_total{operation="admin",project="_none",status="403"} 1
platform_http_requests_total{operation="create",project="_other",status="200"} 1
platform_http_requests_total{operation="create",project="b",status="200"} 1
platform_http_requests_total{operation="graphql",project="_other",status="200"} 1
platform_http_requests_total{operation="count",project="a",status="200"} 1
platform_http_requests_total{operation="list",project="a",status="200"} 1
platform_http_requests_total{operation="mixed",project="a",status="200"} 1
platform_http_requests_total{operation="other",project="_none",status="404"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "platform_http_requests_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "platform_http_request_duration_seconds"); n != 8 {
		t.Errorf("%d latency series, want 8", n)
	}

	// A new window in which only c is busy: at the next rerank a and b lose their seats and
	// their series; c takes one.
	h.Projects().Rerank()
	do("POST", "/api/v1/graphql?project=c&op=list")
	h.Projects().Rerank()
	do("POST", "/api/v1/graphql?project=c&op=list")
	want = `
# HELP platform_http_requests_total HTTP requests served, by project (bounded: see docs/metrics.md), operation and status code.
# TYPE platform_http_requests_total counter
platform_http_requests_total{operation="admin",project="_none",status="403"} 1
platform_http_requests_total{operation="create",project="_other",status="200"} 1
platform_http_requests_total{operation="graphql",project="_other",status="200"} 1
platform_http_requests_total{operation="list",project="_other",status="200"} 1
platform_http_requests_total{operation="list",project="c",status="200"} 1
platform_http_requests_total{operation="other",project="_none",status="404"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "platform_http_requests_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "platform_http_request_duration_seconds"); n != 6 {
		t.Errorf("%d latency series after the rerank, want 6", n)
	}
}

func TestCheckRequestID(t *testing.T) {
	e := echo.New()
	e.Pre(telemetry.CheckRequestID)
	e.Use(middleware.RequestID())
	e.GET("/", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	for _, c := range []struct {
		sent string
		kept bool
	}{
		{"abc-123_X.y:z", true},
		{"7f3c9a2e-5b1d-4c8e-9f6a-0d2b4e6a8c1e", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"two words", false},
		{`quote"d`, false},
		{"é", false},
	} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set(echo.HeaderXRequestID, c.sent)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		got := rec.Header().Get(echo.HeaderXRequestID)
		if (got == c.sent) != c.kept || got == "" {
			t.Errorf("sent %q: answered %q, want kept=%v", c.sent, got, c.kept)
		}
	}
}
