package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/platform-dev/platform/telemetry"
)

// Store pings are sampled this often, each bounded by storePingTimeout.
const (
	storePingInterval = 15 * time.Second
	storePingTimeout  = 2 * time.Second
)

// serveMetrics is the metrics side of serve: the registry every package registers with, the
// listener that exposes it, the store ping sampler and the tracer provider.
type serveMetrics struct {
	reg  *prometheus.Registry
	stop []func()
}

func (m *serveMetrics) close() {
	for i := len(m.stop) - 1; i >= 0; i-- {
		m.stop[i]()
	}
}

// startTelemetry serves metrics on ln (none when ln is nil), starts sampling the stores'
// checks, and starts exporting traces when cfg.OTelEndpoint is set; the tracer is nil
// otherwise. The metrics listener is never the public one: /metrics names every project in use, which
// strangers need not learn.
func startTelemetry(ctx context.Context, cfg serveConfig, ln net.Listener, checks map[string]func(context.Context) error, logger *slog.Logger) (*serveMetrics, trace.Tracer, error) {
	if cfg.MetricsProjects < 1 {
		return nil, nil, fmt.Errorf("--metrics-projects %d: want at least 1", cfg.MetricsProjects)
	}
	m := &serveMetrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ok := false
	defer func() {
		if !ok {
			m.close()
		}
	}()

	var tracer trace.Tracer
	if cfg.OTelEndpoint != "" {
		tp, err := telemetry.NewTracerProvider(ctx, cfg.OTelEndpoint, version)
		if err != nil {
			return nil, nil, err
		}
		m.stop = append(m.stop, func() {
			// Flushes the spans of the last requests.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := tp.Shutdown(sctx); err != nil {
				logger.Warn("flush traces", "err", err)
			}
		})
		tracer = tp.Tracer("github.com/platform-dev/platform")
		logger.Info("tracing on: spans exported over OTLP/HTTP", "endpoint", cfg.OTelEndpoint)
	}

	pings, err := telemetry.NewStorePings(m.reg, checks)
	if err != nil {
		return nil, nil, err
	}
	pctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { pings.Run(pctx, storePingInterval, storePingTimeout) })
	m.stop = append(m.stop, func() { cancel(); wg.Wait() })

	if ln != nil {
		m.serve(ln, logger)
	}
	ok = true
	return m, tracer, nil
}

// serve exposes the registry at http://<ln>/metrics; it closes ln when m closes.
func (m *serveMetrics) serve(ln net.Listener, logger *slog.Logger) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics listener stopped", "err", err)
		}
	}()
	m.stop = append(m.stop, func() { _ = srv.Close() })
	logger.Info("metrics serving", "addr", ln.Addr().String(), "path", "/metrics")
}
