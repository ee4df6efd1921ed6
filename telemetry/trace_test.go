package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/platform-dev/platform/telemetry"
)

// TestTracing sends a request through the traced middleware and checks that the OTLP
// endpoint receives the spans when the provider is shut down.
func TestTracing(t *testing.T) {
	got := make(chan int, 10)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost && r.URL.Path == "/base/v1/traces" {
			got <- len(b)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()

	tp, err := telemetry.NewTracerProvider(context.Background(), collector.URL+"/base", "test")
	if err != nil {
		t.Fatal(err)
	}
	h, err := telemetry.NewHTTP(telemetry.HTTPConfig{Tracer: tp.Tracer("test")})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.Use(middleware.RequestID(), h.Middleware)
	e.GET("/healthz", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil))
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-got:
		if n == 0 {
			t.Error("the collector got an empty export")
		}
	default:
		t.Fatal("the collector got no POST to /base/v1/traces")
	}
}

func TestTracerProviderRefusesBadEndpoints(t *testing.T) {
	for _, endpoint := range []string{"collector:4318", "ftp://x", "http://", "::"} {
		if _, err := telemetry.NewTracerProvider(context.Background(), endpoint, "test"); err == nil {
			t.Errorf("endpoint %q accepted", endpoint)
		}
	}
}
