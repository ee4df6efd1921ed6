package telemetry_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform-dev/platform/telemetry"
)

// BenchmarkMiddleware measures what the request id, the metrics and the log handler add to a
// request, against the same Echo server without them. Compare with gql's
// BenchmarkGraphQLFetch for the cost of the work around it.
func BenchmarkMiddleware(b *testing.B) {
	for _, c := range []struct {
		name     string
		measured bool
	}{{"bare", false}, {"measured", true}} {
		b.Run(c.name, func(b *testing.B) {
			e := echo.New()
			e.Use(middleware.RequestID())
			if c.measured {
				h, err := telemetry.NewHTTP(telemetry.HTTPConfig{
					Registerer: prometheus.NewRegistry(),
				})
				if err != nil {
					b.Fatal(err)
				}
				e.Use(h.Middleware)
			}
			logger := slog.New(telemetry.NewLogHandler(slog.NewTextHandler(io.Discard, nil)))
			e.POST("/api/v1/graphql", func(c echo.Context) error {
				telemetry.NoteProject(c.Request().Context(), "p1")
				telemetry.NoteOperation(c.Request().Context(), "list")
				logger.DebugContext(c.Request().Context(), "not logged at info")
				return c.String(http.StatusOK, "")
			})
			body := []byte(`{"query":"{ products { uid } }"}`)
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, httptest.NewRequest("POST", "/api/v1/graphql", bytes.NewReader(body)))
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}
