package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/trace"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/pressure"
	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/telemetry"
	"github.com/platform-dev/platform/tenant"
	"github.com/platform-dev/platform/tenant/console"
	"github.com/platform-dev/platform/tools"
)

// serveConfig is everything `platform serve` can be told.
type serveConfig struct {
	Addr, Domain, DataDir             string
	Role                              string
	MongoURI, RedisURL, AdminToken    string
	EmbeddedRedis                     string
	LogLevel, LogFormat               string
	ShutdownTimeout                   time.Duration
	CacheSize                         int
	CacheIdle, CacheRefresh           time.Duration
	GQLDefaultLimit, GQLMaxLimit      int
	GQLMaxBody, GQLMaxQuery, GQLDepth int
	GQLTimeout                        time.Duration
	SlowQuery                         time.Duration
	GQLMaxResult, GQLMaxRecords       int
	GQLMaxCost                        int
	GQLSlots, GQLQueue                int
	MCPRequests                       int
	MCPWindow                         time.Duration
	MCPConcurrent                     int
	MCPTimeout                        time.Duration
	MCPMaxResponse                    int
	MCPStoreTimeout                   time.Duration
	MCPAnalyses, MCPAnalysisQueue     int
	MCPAnalysisMemory                 string
	MCPConformanceFixtures            bool
	MCPTrustedProxies, MCPOrigins     string
	Workspace                         string
	ExpertURL, ExpertModel            string
	ExpertAPIKey                      string
	ExpertTimeout                     time.Duration
	DevIssuer                         string
	AuthLeeway, JWKSRetry             time.Duration
	MetricsAddr                       string
	MetricsProjects                   int
	OTelEndpoint                      string
	RealtimeSubs, RealtimeMessage     int
	RealtimeQueue                     int
	RealtimeProjectConns, RealtimeIPs int
	RealtimeInit                      time.Duration
	MemoryLimit                       string
	MemoryPressure                    float64
	Backup                            backupConfig
	AuditRetention                    time.Duration
	UsageOff                          bool
	UsageFlush                        time.Duration
	Quotas                            quotaConfig
	Persisted                         persistedConfig
	Files                             filesConfig
	Webhooks                          webhookConfig
}

func (c *serveConfig) settings() []setting {
	return append([]setting{
		stringSetting(&c.Addr, "addr", "PLATFORM_ADDR", ":8080", "address to listen on"),
		stringSetting(&c.Role, "role", "PLATFORM_ROLE", roleAll, "what this replica serves: api (projects, the console, the admin API), mcp (/mcp and its tools; opens no database) or all (both, one machine); api and mcp replicas share REDIS_URL"),
		stringSetting(&c.Domain, "domain", "PLATFORM_DOMAIN", "localhost", "apex domain: the admin API and /mcp live on it, project <id> on <id>.<domain>"),
		stringSetting(&c.DataDir, "data", "PLATFORM_DATA", "./data", "folder for the embedded stores' files and the generated admin token"),
		stringSetting(&c.MongoURI, "mongodb-uri", "MONGODB_URI", "", "MongoDB to keep records in; empty keeps them in SQLite files under the data folder"),
		stringSetting(&c.RedisURL, "redis-url", "REDIS_URL", "", "Redis to use; empty starts an in-process Redis"),
		stringSetting(&c.AdminToken, "admin-token", "PLATFORM_ADMIN_TOKEN", "", "bearer token of the admin API; empty: generated once and kept in <data>/admin-token"),
		stringSetting(&c.EmbeddedRedis, "embedded-redis-addr", "PLATFORM_EMBEDDED_REDIS_ADDR", "127.0.0.1:0", "loopback address of the embedded Redis"),
		stringSetting(&c.LogLevel, "log-level", "PLATFORM_LOG_LEVEL", "info", "debug, info, warn or error"),
		stringSetting(&c.LogFormat, "log-format", "PLATFORM_LOG_FORMAT", "text", "text or json"),
		durationSetting(&c.ShutdownTimeout, "shutdown-timeout", "PLATFORM_SHUTDOWN_TIMEOUT", 15*time.Second, "how long in-flight requests may finish after SIGTERM"),
		intSetting(&c.CacheSize, "project-cache-size", "PLATFORM_PROJECT_CACHE_SIZE", 1000, "projects held ready in memory (least recently used are dropped)"),
		durationSetting(&c.CacheIdle, "project-cache-idle", "PLATFORM_PROJECT_CACHE_IDLE", 10*time.Minute, "a project unused this long is dropped from memory"),
		durationSetting(&c.CacheRefresh, "project-cache-refresh", "PLATFORM_PROJECT_CACHE_REFRESH", 30*time.Second, "a cached project is rechecked in the background after this long"),
		intSetting(&c.GQLDefaultLimit, "graphql-default-limit", "PLATFORM_GRAPHQL_DEFAULT_LIMIT", 100, "records a list returns when it names no limit"),
		intSetting(&c.GQLMaxLimit, "graphql-max-limit", "PLATFORM_GRAPHQL_MAX_LIMIT", 1000, "largest limit a list may ask for"),
		intSetting(&c.GQLMaxBody, "graphql-max-body", "PLATFORM_GRAPHQL_MAX_BODY", 1<<20, "largest GraphQL request body, in bytes"),
		intSetting(&c.GQLMaxQuery, "graphql-max-query", "PLATFORM_GRAPHQL_MAX_QUERY", 64<<10, "longest GraphQL document, in bytes"),
		intSetting(&c.GQLDepth, "graphql-max-depth", "PLATFORM_GRAPHQL_MAX_DEPTH", 12, "deepest selection a GraphQL document may nest"),
		durationSetting(&c.GQLTimeout, "graphql-timeout", "PLATFORM_GRAPHQL_TIMEOUT", 10*time.Second, "time one GraphQL request may take; the database work stops with it"),
		durationSetting(&c.SlowQuery, "slow-query", "PLATFORM_SLOW_QUERY", store.DefaultSlowQuery, "a find or count that takes this long is kept, by shape, in its project's slow-query log, which the index advisor reads"),
		intSetting(&c.GQLMaxResult, "graphql-max-result", "PLATFORM_GRAPHQL_MAX_RESULT", gql.DefaultMaxResultBytes, "bytes one GraphQL request (or subscription event) may answer, across the whole answer: each record counts its stored size each time the answer holds it (RESULT_TOO_LARGE past it)"),
		intSetting(&c.GQLMaxRecords, "graphql-max-records", "PLATFORM_GRAPHQL_MAX_RECORDS", gql.DefaultMaxRecords, "records one GraphQL request (or subscription event) may read, across the whole answer (RESULT_TOO_LARGE past it)"),
		intSetting(&c.GQLMaxCost, "graphql-max-cost", "PLATFORM_GRAPHQL_MAX_COST", gql.DefaultMaxCost, "largest estimate of the records a GraphQL document may answer (lists by their limit times the records they hang from), checked before it runs (QUERY_TOO_COMPLEX past it)"),
		intSetting(&c.GQLSlots, "graphql-slots", "PLATFORM_GRAPHQL_SLOTS", 0, "GraphQL queries and mutations that may run at once across projects (0: 4 × the cores); while several projects are active, those of long projects (requests over 10 ms each, or 2 ms in flight together) share the cores less one of them, at lower thread priority"),
		intSetting(&c.GQLQueue, "graphql-queue", "PLATFORM_GRAPHQL_QUEUE", pressure.DefaultFairShareConfig.Queue, "GraphQL requests of one project that may wait for a slot (503 OVERLOADED past it, or past the GraphQL timeout of waiting)"),
		intSetting(&c.MCPRequests, "mcp-requests", "MCP_REQUESTS_PER_WINDOW", 60, "MCP requests one client may send per window"),
		durationSetting(&c.MCPWindow, "mcp-window", "MCP_RATE_WINDOW", time.Minute, "the MCP rate limit's window"),
		intSetting(&c.MCPConcurrent, "mcp-concurrent", "MCP_MAX_CONCURRENT", 10, "MCP requests and streams one client may have open at once"),
		durationSetting(&c.MCPTimeout, "mcp-timeout", "MCP_REQUEST_TIMEOUT", 30*time.Second, "time one MCP request may take"),
		intSetting(&c.MCPMaxResponse, "mcp-max-response", "MCP_MAX_RESPONSE_BYTES", 10<<20, "largest MCP response, in bytes"),
		durationSetting(&c.MCPStoreTimeout, "mcp-store-timeout", "MCP_STORE_TIMEOUT", 500*time.Millisecond, "longest wait for Redis on an MCP request; past it the request is refused with 503 (fail closed)"),
		intSetting(&c.MCPAnalyses, "mcp-analyses", "MCP_ANALYSES", 0, "MCP tool calls (analyses) that may run at once (0: GOMAXPROCS, or GOMAXPROCS - 1 with --role all, where they also run at lower thread priority than the projects' requests)"),
		intSetting(&c.MCPAnalysisQueue, "mcp-analysis-queue", "MCP_ANALYSIS_QUEUE", 0, "MCP tool calls that may wait for an analysis worker (0: twice the workers); past it a call is refused with a tool error naming the limit"),
		stringSetting(&c.MCPAnalysisMemory, "mcp-analysis-memory", "MCP_ANALYSIS_MEMORY", "512MiB", "memory one MCP analysis may take (bytes it reads, or its share of the live heap's growth when more); past it the analysis is stopped with a tool error naming the limit. 0: no ceiling"),
		boolSetting(&c.MCPConformanceFixtures, "conformance-fixtures", "MCP_CONFORMANCE_FIXTURES", false, "add the test_* tools the official MCP conformance suite calls; never on a public deployment"),
		stringSetting(&c.MCPTrustedProxies, "trusted-proxies", "PLATFORM_TRUSTED_PROXIES", "", "comma-separated CIDRs whose X-Forwarded-For names the client (and whose X-Forwarded-Host, -Proto and -Prefix start File URLs)"),
		stringSetting(&c.MCPOrigins, "mcp-allowed-origins", "MCP_ALLOWED_ORIGINS", "", "comma-separated browser origins allowed to call /mcp (* for any)"),
		stringSetting(&c.Workspace, "workspace", "MCP_WORKSPACE", ".", "comma-separated folders the MCP tools may read"),
		stringSetting(&c.ExpertURL, "expert-llm-url", "EXPERT_LLM_URL", "", "OpenAI-compatible endpoint consult_expert writes its answers with; empty: knowledge-base answers"),
		stringSetting(&c.ExpertModel, "expert-llm-model", "EXPERT_LLM_MODEL", "", "model name for the expert endpoint"),
		stringSetting(&c.ExpertAPIKey, "expert-llm-api-key", "EXPERT_LLM_API_KEY", "", "API key for the expert endpoint"),
		durationSetting(&c.ExpertTimeout, "expert-llm-timeout", "EXPERT_LLM_TIMEOUT", 20*time.Second, "time the model may take before the knowledge-base answer is used"),
		stringSetting(&c.DevIssuer, "dev-issuer", "PLATFORM_DEV_ISSUER", "auto", "development issuer and demo project: on, off, or auto (on unless MONGODB_URI is set)"),
		durationSetting(&c.AuthLeeway, "auth-leeway", "PLATFORM_AUTH_LEEWAY", 30*time.Second, "clock skew allowed on the exp, nbf and iat of project tokens"),
		durationSetting(&c.JWKSRetry, "jwks-retry-interval", "PLATFORM_JWKS_RETRY_INTERVAL", 30*time.Second, "after a failed fetch of a project's JWKS, time until a token may make it fetch again (the Retry-After of its 503 answers)"),
		stringSetting(&c.MetricsAddr, "metrics-addr", "PLATFORM_METRICS_ADDR", "127.0.0.1:9090", "address of the Prometheus /metrics listener, apart from the public one; empty: no metrics"),
		intSetting(&c.MetricsProjects, "metrics-projects", "PLATFORM_METRICS_PROJECTS", 100, "most active projects that get their own metrics label (HTTP metrics and per-project usage); the rest are counted as _other"),
		intSetting(&c.RealtimeSubs, "realtime-max-subscriptions", "PLATFORM_REALTIME_MAX_SUBSCRIPTIONS", gql.DefaultMaxSubscriptions, "GraphQL subscriptions one WebSocket connection may run at once"),
		intSetting(&c.RealtimeMessage, "realtime-max-message", "PLATFORM_REALTIME_MAX_MESSAGE", gql.DefaultMaxMessageBytes, "largest WebSocket message a subscription client may send, in bytes"),
		intSetting(&c.RealtimeQueue, "realtime-queue", "PLATFORM_REALTIME_QUEUE", gql.DefaultQueue, "record changes that may wait for one subscriber; one that falls further behind is ended with an error"),
		intSetting(&c.RealtimeProjectConns, "realtime-max-project-connections", "PLATFORM_REALTIME_MAX_PROJECT_CONNECTIONS", tenant.DefaultMaxConnsPerProject, "subscription connections (WebSocket and SSE) one project may have open on this replica"),
		intSetting(&c.RealtimeIPs, "realtime-max-ip-connections", "PLATFORM_REALTIME_MAX_IP_CONNECTIONS", tenant.DefaultMaxConnsPerIP, "subscription connections one client address may have open on this replica"),
		durationSetting(&c.RealtimeInit, "realtime-init-timeout", "PLATFORM_REALTIME_INIT_TIMEOUT", gql.DefaultInitTimeout, "time a WebSocket client has to send connection_init (closed with 4408 past it)"),
		stringSetting(&c.MemoryLimit, "memory-limit", "PLATFORM_MEMORY_LIMIT", "", "memory the process may use (900MiB, 2GiB); also the Go runtime's soft limit. Empty: GOMEMLIMIT, else 90% of the cgroup's memory.max, else none"),
		floatSetting(&c.MemoryPressure, "memory-pressure", "PLATFORM_MEMORY_PRESSURE", pressure.DefaultWatcherConfig.Fraction, "fraction of the memory limit past which new expensive requests are refused with 503 and Retry-After"),
		boolSetting(&c.UsageOff, "usage-off", "PLATFORM_USAGE_OFF", false, "count no usage (requests, records, bytes, connection time) per project; for measuring what metering costs"),
		durationSetting(&c.UsageFlush, "usage-flush", "PLATFORM_USAGE_FLUSH", tenant.DefaultUsageFlush, "how often each replica adds the usage it counted to the control database (and on shutdown)"),
		stringSetting(&c.OTelEndpoint, "otel-endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT", "", "OTLP/HTTP collector base URL (http://collector:4318) that receives traces; empty: no tracing"),
		durationSetting(&c.AuditRetention, "audit-retention", "PLATFORM_AUDIT_RETENTION", tenant.DefaultAuditRetention, "how long the audit log keeps an entry; older ones are pruned hourly"),
	}, slices.Concat(c.Backup.settings(), c.Quotas.settings(), c.Persisted.settings(), c.Files.settings(), c.Webhooks.settings())...)
}

func newServeCmd() *cobra.Command {
	var cfg serveConfig
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the service (embedded stores unless MONGODB_URI / REDIS_URL are set)",
		Args:  cobra.NoArgs,
	}
	envErr := bindAll(cmd.Flags(), cfg.settings())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if envErr != nil {
			return envErr
		}
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return serve(ctx, cfg)
	}
	return cmd
}

func newLogger(level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	// Whatever logs a request's address, a header or an error, no record shows a secret.
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: telemetry.RedactAttr}
	var h slog.Handler
	switch format {
	case "text":
		h = slog.NewTextHandler(os.Stderr, opts)
	case "json":
		h = slog.NewJSONHandler(os.Stderr, opts)
	default:
		return nil, fmt.Errorf("log format %q: want text or json", format)
	}
	return slog.New(telemetry.NewLogHandler(h)), nil
}

// Roles of `serve --role`: which planes one process serves.
const (
	roleAll = "all" // both, on one machine
	roleAPI = "api" // projects, the console and the admin API
	roleMCP = "mcp" // /mcp and its tools
)

func serve(ctx context.Context, cfg serveConfig) error {
	logger, err := newLogger(cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return err
	}
	if cfg.Role != roleAll && cfg.Role != roleAPI && cfg.Role != roleMCP {
		return fmt.Errorf("--role %q: want api (projects, console, admin API), mcp (/mcp and its tools) or all (both)", cfg.Role)
	}
	projects, analyses := cfg.Role != roleMCP, cfg.Role != roleAPI
	// The projects' long requests and, with --role all, the analyses run in the background
	// on threads of lower priority, which hold their P while they wait for a core: the
	// process gets a P more for each (see pressure.BackgroundProcs), and sizes its work by
	// the cores. This turns off the runtime's own updates of GOMAXPROCS to a new CPU limit.
	cores := runtime.GOMAXPROCS(0)
	if projects {
		runtime.GOMAXPROCS(pressure.BackgroundProcs(cores))
	}
	// The listeners are bound before anything else starts, so a busy port (a second `make
	// run`) fails at once with its own message instead of after the data folder is opened
	// and the tools have started. Connections that arrive meanwhile wait in the backlog.
	ln, err := listen("address", "--addr or PLATFORM_ADDR", cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	var metricsLn net.Listener
	if cfg.MetricsAddr != "" {
		if metricsLn, err = listen("metrics address", "--metrics-addr or PLATFORM_METRICS_ADDR", cfg.MetricsAddr); err != nil {
			// Metrics must not keep the service down (a second replica on one host with the
			// default address still serves): the scraper sees the target missing.
			logger.Error("metrics listener not started", "addr", cfg.MetricsAddr, "err", err)
		} else {
			defer metricsLn.Close()
		}
	}
	var dataDir string
	if projects {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return fmt.Errorf("create data folder: %w", err)
		}
		dataDir, _ = filepath.Abs(cfg.DataDir)
		if cfg.MongoURI == "" {
			if err := convertFerretDB(ctx, dataDir, logger); err != nil {
				return fmt.Errorf("convert the data folder of the previous embedded store (nothing was changed; %s is untouched): %w", filepath.Join(dataDir, ferretDBFolder), err)
			}
		}
	}

	// An mcp replica opens no database: the analyses read the workspace, and the limits
	// and sessions it shares with the other replicas are in Redis.
	stores, err := store.Open(ctx, store.Config{
		DataDir: dataDir, MongoURI: cfg.MongoURI, RedisURL: cfg.RedisURL,
		EmbeddedRedisAddr: cfg.EmbeddedRedis, RedisOnly: !projects,
		Logger: logger, SlowQuery: cfg.SlowQuery, FilesS3URL: cfg.Files.S3URL,
	})
	if err != nil {
		return fmt.Errorf("open stores: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		if err := stores.Close(cctx); err != nil {
			logger.Error("close stores", "err", err)
		}
		logger.Info("stopped")
	}()
	checks := map[string]func(context.Context) error{"redis": stores.PingRedis}
	switch stores.Backend {
	case "sqlite":
		logger.Info("database: embedded SQLite", "data", dataDir)
	case "mongo":
		logger.Info("database: MongoDB", "hosts", redactURI(cfg.MongoURI))
	default:
		logger.Info("database: none (--role mcp serves no project)")
	}
	if projects {
		checks["database"] = stores.PingDatabase
	}
	if stores.EmbeddedRedis {
		logger.Info("redis: embedded, in memory (rate limits and MCP sessions start empty after a restart)", "url", stores.RedisURL)
		if cfg.Role != roleAll {
			logger.Warn("redis: embedded, so this replica shares no limits or sessions with the others of its deployment; set REDIS_URL", "role", cfg.Role)
		}
	} else {
		logger.Info("redis: external", "url", redactURI(stores.RedisURL))
	}

	metrics, tracer, err := startTelemetry(ctx, cfg, metricsLn, checks, logger)
	if err != nil {
		return err
	}
	defer metrics.close()

	watcher, err := watchMemory(cfg, logger, metrics.reg)
	if err != nil {
		return err
	}
	watching, stopWatching := context.WithCancel(ctx)
	var watch sync.WaitGroup
	watch.Go(func() { watcher.Run(watching) })
	defer func() { stopWatching(); watch.Wait() }()

	proxies, err := tenant.ParseProxies(splitList(cfg.MCPTrustedProxies))
	if err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	clientIP := proxies.ClientIP()
	httpMetrics, err := telemetry.NewHTTP(telemetry.HTTPConfig{
		Registerer: metrics.reg, MaxProjects: cfg.MetricsProjects, Tracer: tracer,
	})
	if err != nil {
		return err
	}
	e := newEcho(logger, httpMetrics.Middleware)
	e.IPExtractor = clientIP
	plane := servePlane{cfg: cfg, cores: cores, logger: logger, stores: stores, e: e, reg: metrics.reg, tracer: tracer, watcher: watcher, clientIP: clientIP, proxies: proxies}

	var mcp *mcpserver.Server
	readyRedis := stores.PingRedis
	if analyses {
		var stop func()
		if mcp, stop, err = plane.mountMCP(ctx, checks); err != nil {
			return err
		}
		defer stop()
		// Redis is asked through the MCP server's client, whose timeouts are short, so that
		// /readyz answers within a second when Redis hangs.
		readyRedis = mcp.Ready
	} else {
		e.Any("/mcp", func(c echo.Context) error {
			return tenant.WriteError(c, http.StatusNotFound, tenant.CodeNotFound, "/mcp is not served by this replica (--role api): route it to the replicas of --role mcp or all")
		})
	}
	mountHealth(e, logger, checks["database"], readyRedis)
	var devIssuer *tenant.DevIssuer
	var reg *tenant.Registry
	if projects {
		var stop func()
		if reg, devIssuer, stop, err = plane.mountProjects(ctx, dataDir); err != nil {
			return err
		}
		defer stop()
	} else {
		e.Use(tenant.ApexHosts(tenant.HostOptions{Domain: cfg.Domain, Skip: []string{"/healthz", "/readyz"}}))
	}

	// No WriteTimeout: MCP notification streams stay open for as long as their clients listen.
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	if mcp != nil {
		// Shutdown waits for open connections; the MCP server's notification streams end
		// only when it closes, so close it as shutdown begins rather than after the timeout.
		srv.RegisterOnShutdown(func() { _ = mcp.Close() })
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	port := ln.Addr().(*net.TCPAddr).Port
	if devIssuer != nil {
		jwks := tenant.DevJWKSURL(ln.Addr())
		created, err := reg.EnsureDemo(ctx, devIssuer, jwks)
		if err != nil {
			return err
		}
		logger.Info("development issuer on: tokens from `platform token --project demo --sub alice`",
			"jwks", jwks, "demo", fmt.Sprintf("http://demo.%s:%d/api/v1/graphql", cfg.Domain, port), "demo_applied", created)
	}
	serving := []any{"addr", ln.Addr().String(), "role", cfg.Role}
	if projects {
		serving = append(serving,
			"admin", fmt.Sprintf("http://%s:%d/admin/v1/projects", cfg.Domain, port),
			"console", fmt.Sprintf("http://%s:%d/console/", cfg.Domain, port))
	}
	if analyses {
		serving = append(serving, "mcp", fmt.Sprintf("http://%s:%d/mcp", cfg.Domain, port))
	}
	if projects {
		serving = append(serving, "graphql", fmt.Sprintf("http://<project>.%s:%d/api/v1/graphql", cfg.Domain, port))
	}
	logger.Info("platform serving", append(serving, "version", version)...)

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing in-flight requests", "timeout", cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("in-flight requests cut at the shutdown timeout", "err", err)
	}
	return nil
}

// servePlane is what the two planes of serve share: the configuration, the stores, the
// public Echo they mount on, and the process's telemetry and memory watcher.
type servePlane struct {
	cfg      serveConfig
	cores    int // GOMAXPROCS before serve raised it
	logger   *slog.Logger
	stores   *store.Stores
	e        *echo.Echo
	reg      *prometheus.Registry
	tracer   trace.Tracer
	watcher  *pressure.Watcher
	clientIP echo.IPExtractor
	proxies  tenant.Proxies
}

// mountMCP builds the tools and the MCP server, and serves /mcp on the apex host. stop
// stops both.
func (p servePlane) mountMCP(ctx context.Context, checks map[string]func(context.Context) error) (_ *mcpserver.Server, stop func(), err error) {
	cfg := p.cfg
	hub := &tools.Hub{}
	set, closeTools, err := buildTools(ctx, cfg, p.cores, hub, p.reg, p.logger)
	if err != nil {
		return nil, nil, err
	}
	mcp, err := mcpserver.New(mcpserver.Config{
		RequestsPerWindow: cfg.MCPRequests, Window: cfg.MCPWindow, MaxConcurrent: cfg.MCPConcurrent,
		RequestTimeout: cfg.MCPTimeout, MaxResponseBytes: cfg.MCPMaxResponse, StoreTimeout: cfg.MCPStoreTimeout,
		ClientIP: p.clientIP, AllowedOrigins: splitList(cfg.MCPOrigins),
		HiddenPaths: splitList(cfg.Workspace), ConformanceFixtures: cfg.MCPConformanceFixtures,
		Checks:     checks,
		Version:    version,
		Registerer: p.reg, Tracer: p.tracer,
		Pressure: p.watcher.UnderPressure,
	}, p.stores.Redis, set, hub, p.logger)
	if err != nil {
		closeTools()
		return nil, nil, err
	}
	p.e.Any("/mcp", echo.WrapHandler(mcp), tenant.ApexOnly)
	return mcp, func() { _ = mcp.Close(); closeTools() }, nil
}

// mountProjects opens the registry of projects and serves their GraphQL APIs, the admin API
// and the console; the development issuer is returned when it is on. stop ends the
// background work (console sampling, backups, audit pruning) and closes the registry.
func (p servePlane) mountProjects(ctx context.Context, dataDir string) (_ *tenant.Registry, _ *tenant.DevIssuer, stop func(), err error) {
	cfg, logger, stores, e := p.cfg, p.logger, p.stores, p.e
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	adminToken, tokenFile, err := loadAdminToken(cfg.AdminToken, dataDir)
	if err != nil {
		return nil, nil, nil, err
	}
	if tokenFile != "" {
		logger.Info("admin token kept in file (mode 0600)", "file", tokenFile)
	}
	if cfg.AuditRetention <= 0 {
		return nil, nil, nil, fmt.Errorf("--audit-retention %s: want a positive duration (2160h is 90 days)", cfg.AuditRetention)
	}
	share, err := pressure.NewFairShare(pressure.FairShareConfig{
		Slots: cfg.GQLSlots, Cores: p.cores, Queue: cfg.GQLQueue, MaxWait: cfg.GQLTimeout, Registerer: p.reg,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--graphql-slots, --graphql-queue: %w", err)
	}
	backups, err := cfg.Backup.options(dataDir)
	if err != nil {
		return nil, nil, nil, err
	}
	quotas, err := cfg.Quotas.quotas()
	if err != nil {
		return nil, nil, nil, err
	}
	files, err := cfg.Files.options(dataDir)
	if err != nil {
		return nil, nil, nil, err
	}
	reg, err := tenant.NewRegistry(ctx, stores, tenant.Options{
		Files:           files,
		Backups:         backups,
		Usage:           tenant.UsageOptions{Off: cfg.UsageOff, Flush: cfg.UsageFlush},
		Quotas:          quotas,
		Persisted:       cfg.Persisted.options(),
		Webhooks:        cfg.Webhooks.options(),
		Proxies:         p.proxies,
		MetricsProjects: cfg.MetricsProjects,
		CacheSize:       cfg.CacheSize, IdleTTL: cfg.CacheIdle, Refresh: cfg.CacheRefresh, Logger: logger,
		Registerer: p.reg, Tracer: p.tracer, FairShare: share,
		// A zero Leeway takes VerifierConfig's default; here 0 means none.
		Auth: tenant.VerifierConfig{Leeway: cmp.Or(cfg.AuthLeeway, -1), RetryInterval: cfg.JWKSRetry, Logger: logger},
		GraphQL: tenant.GraphQLLimits{
			DefaultLimit: cfg.GQLDefaultLimit, MaxLimit: cfg.GQLMaxLimit,
			MaxBodyBytes: int64(cfg.GQLMaxBody), MaxQueryBytes: cfg.GQLMaxQuery,
			MaxDepth: cfg.GQLDepth, Timeout: cfg.GQLTimeout, MaxResultBytes: int64(cfg.GQLMaxResult),
			MaxRecords: int64(cfg.GQLMaxRecords), MaxCost: int64(cfg.GQLMaxCost),
			Pressure: p.watcher.UnderPressure,
		},
		Realtime: tenant.RealtimeLimits{
			MaxConnsPerProject: cfg.RealtimeProjectConns, MaxConnsPerIP: cfg.RealtimeIPs,
			Realtime: gql.Realtime{
				MaxSubscriptions: cfg.RealtimeSubs, MaxMessageBytes: int64(cfg.RealtimeMessage),
				Queue: cfg.RealtimeQueue, InitTimeout: cfg.RealtimeInit,
			},
		},
	})
	if err != nil {
		return nil, nil, nil, err
	}
	stops = append(stops, func() { reg.Close() })

	gate, err := tenant.NewAdminGate(tenant.AdminGateConfig{Token: adminToken, Redis: stores.Redis, ClientIP: p.clientIP, Keys: stores.Keys(), Logger: logger})
	if err != nil {
		return nil, nil, nil, err
	}
	e.Pre(tenant.ProjectPaths(cfg.Domain))
	e.Use(reg.Hosts(tenant.HostOptions{Domain: cfg.Domain, Skip: []string{"/healthz", "/readyz"}}))
	admit, err := pressure.AdmitConfig{
		Skipper:       func(c echo.Context) bool { return !expensive(c) },
		UnderPressure: p.watcher.UnderPressure,
		DenyHandler: func(c echo.Context, retry time.Duration) error {
			return tenant.WriteError(c, http.StatusServiceUnavailable, tenant.CodeOverloaded, pressure.Message(retry))
		},
	}.ToMiddleware()
	if err != nil {
		return nil, nil, nil, err
	}
	e.Use(admit)
	reg.MountAdmin(e, gate)
	reg.MountGraphQL(e)
	var devIssuer *tenant.DevIssuer
	switch {
	case cfg.DevIssuer == "on" || cfg.DevIssuer == "auto" && cfg.MongoURI == "":
		if devIssuer, err = tenant.OpenDevIssuer(dataDir); err != nil {
			return nil, nil, nil, err
		}
		e.GET(tenant.DevIssuerJWKSPath, echo.WrapHandler(devIssuer), tenant.ApexOnly)
	case cfg.DevIssuer != "off" && cfg.DevIssuer != "auto":
		return nil, nil, nil, fmt.Errorf("--dev-issuer %q: want on, off or auto", cfg.DevIssuer)
	}
	con, err := console.New(console.Config{Registry: reg, Stores: stores, Gate: gate, Metrics: p.reg, DevIssuer: devIssuer, Logger: logger})
	if err != nil {
		return nil, nil, nil, err
	}
	con.Mount(e)
	// The console samples its health figures in the background, so its charts cover the
	// last minutes when a page opens. It, the scheduled backups and the audit pruning end
	// before the stores close.
	background, stopBackground := context.WithCancel(ctx)
	var runs sync.WaitGroup
	runs.Go(func() { con.Run(background) })
	runs.Go(func() { reg.RunBackups(background) })
	runs.Go(func() { reg.RunFileSweeps(background) })
	runs.Go(func() { reg.RunAuditPruning(background, cfg.AuditRetention) })
	runs.Go(func() { reg.RunWebhooks(background) })
	stops = append(stops, func() { stopBackground(); runs.Wait() })
	return reg, devIssuer, stop, nil
}

// newEcho returns the public server's Echo. measure (telemetry.HTTP's middleware) runs right
// after the request id is set, so every log record of the request carries it (the logger's
// handler reads it from the request's context) and panics are measured as 500s.
func newEcho(logger *slog.Logger, measure echo.MiddlewareFunc) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Pre(telemetry.CheckRequestID)
	e.Use(middleware.RequestID())
	e.Use(measure)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
		logger.ErrorContext(c.Request().Context(), "panic", "err", err, "stack", string(stack))
		return err
	}}))
	e.Use(middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogStatus: true, LogURI: true, LogMethod: true, LogHost: true, LogLatency: true, LogError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			level := slog.LevelDebug
			if v.Status >= 500 {
				level = slog.LevelError
			}
			logger.Log(c.Request().Context(), level, "request", "method", v.Method, "host", v.Host, "uri", v.URI,
				"status", v.Status, "latency", v.Latency)
			return nil
		},
	}))
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		status, msg := http.StatusInternalServerError, "internal error"
		var he *echo.HTTPError
		if errors.As(err, &he) {
			status, msg = he.Code, fmt.Sprint(he.Message)
		}
		code := tenant.CodeInternal
		switch status {
		case http.StatusNotFound:
			code = tenant.CodeNotFound
		case http.StatusMethodNotAllowed, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			code = tenant.CodeBadRequest
		}
		if status >= 500 {
			logger.ErrorContext(c.Request().Context(), "request failed", "err", err)
		}
		_ = tenant.WriteError(c, status, code, msg)
	}
	return e
}

// watchMemory finds the memory limit (see pressure.DetectLimit) and returns the watcher
// that reports pressure past --memory-pressure of it.
func watchMemory(cfg serveConfig, logger *slog.Logger, reg prometheus.Registerer) (*pressure.Watcher, error) {
	configured, err := pressure.ParseBytes(cfg.MemoryLimit)
	if err != nil {
		return nil, fmt.Errorf("--memory-limit or PLATFORM_MEMORY_LIMIT: %w", err)
	}
	limit, err := pressure.DetectLimit(configured)
	if err != nil {
		return nil, err
	}
	watcher, err := pressure.NewWatcher(pressure.WatcherConfig{
		Limit: limit.Bytes, Fraction: cfg.MemoryPressure, Logger: logger, Registerer: reg,
	})
	if err != nil {
		return nil, fmt.Errorf("--memory-pressure or PLATFORM_MEMORY_PRESSURE: %w", err)
	}
	if limit.Bytes == 0 {
		logger.Warn("memory limit unknown: expensive requests are never refused for memory; set --memory-limit or GOMEMLIMIT")
	} else {
		logger.Info("memory limit", "bytes", limit.Bytes, "source", limit.Source, "refuse_expensive_past_bytes", watcher.Threshold())
	}
	return watcher, nil
}

// expensive names the requests, outside GraphQL and MCP, that memory pressure refuses: a
// project document applied through the admin API, and the console's writes. GraphQL
// refuses expensive documents itself (GraphQLLimits.Pressure), and MCP its tools/call.
func expensive(c echo.Context) bool {
	switch c.Request().Method + " " + c.Path() {
	case "PUT /admin/v1/projects/:id",
		"POST /console/projects/check", "POST /console/projects/apply", "DELETE /console/projects/:id",
		"POST /console/projects/:id/tables/:table/records",
		"PUT /console/projects/:id/tables/:table/records/:uid",
		"DELETE /console/projects/:id/tables/:table/records/:uid":
		return true
	}
	return false
}

// listen binds addr; an address in use is said plainly, with the setting that changes it.
func listen(what, setting, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s %s is already in use (another platform serve?): stop what listens there, or choose a free one with %s", what, addr, setting)
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s %s: %w", what, addr, err)
	}
	return ln, nil
}

// mountHealth serves /healthz and /readyz; database is nil on a replica that opens none.
func mountHealth(e *echo.Echo, logger *slog.Logger, database, redisReady func(context.Context) error) {
	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "alive"})
	})
	e.GET("/readyz", func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		body, status := map[string]string{"status": "ready", "redis": "ok"}, http.StatusOK
		if database != nil {
			body["database"] = "ok"
			if err := database(ctx); err != nil {
				body["database"], body["status"], status = err.Error(), "not ready", http.StatusServiceUnavailable
			}
		}
		if err := redisReady(ctx); err != nil {
			// The public answer names no address; the cause is in the log.
			logger.WarnContext(ctx, "readyz: redis", "err", err)
			body["redis"], body["status"], status = "not answering", "not ready", http.StatusServiceUnavailable
		}
		return c.JSON(status, body)
	})
}

// loadAdminToken returns the configured token, or the one kept in the data folder, creating
// it on first start. The file name is returned when the token came from the data folder.
func loadAdminToken(configured, dataDir string) (token, file string, err error) {
	return loadSecret(configured, filepath.Join(dataDir, "admin-token"), "admin token")
}

// loadSecret returns the configured secret, or the one kept in file, generated and kept
// there (mode 0600) on first use; file is "" when the secret was configured.
func loadSecret(configured, file, what string) (secret, from string, err error) {
	if configured != "" {
		return configured, "", nil
	}
	if b, err := os.ReadFile(file); err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, file, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", "", fmt.Errorf("read %s: %w", what, err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", "", fmt.Errorf("generate %s: %w", what, err)
	}
	secret = hex.EncodeToString(raw)
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("keep %s: %w", what, err)
	}
	return secret, file, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// redactURI drops the credentials of a store URI, so logs never show a password.
func redactURI(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return "(unparsed)"
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = "***@" + rest[at+1:]
	}
	if q := strings.IndexAny(rest, "?"); q >= 0 {
		rest = rest[:q]
	}
	return scheme + "://" + rest
}
