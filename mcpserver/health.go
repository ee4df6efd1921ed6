package mcpserver

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"time"
)

// Thresholds behind the health recommendations.
const (
	slowStore      = 50 * time.Millisecond
	highErrorRate  = 0.05
	manyGoroutines = 10000
	largeHeap      = 1 << 30
	checkTimeout   = 2 * time.Second
)

type checkResult struct {
	OK        bool    `json:"ok"`
	LatencyMs float64 `json:"latencyMs"`
	Error     string  `json:"error,omitempty"`
}

// health is the document of service://system/health.
func (s *Server) health(ctx context.Context) map[string]any {
	checks := maps.Clone(s.cfg.Checks)
	if checks == nil {
		checks = map[string]func(context.Context) error{}
	}
	if _, ok := checks["redis"]; !ok {
		checks["redis"] = func(ctx context.Context) error { return s.rdb.Ping(ctx).Err() }
	}
	results := map[string]checkResult{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, check := range checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			start := time.Now()
			err := check(cctx)
			r := checkResult{OK: err == nil, LatencyMs: float64(time.Since(start).Microseconds()) / 1000}
			if err != nil {
				r.Error = s.redact.text(err.Error())
			}
			mu.Lock()
			results[name] = r
			mu.Unlock()
		})
	}
	wg.Wait()

	sessions, sessErr := s.st.countSessions(ctx)
	requests, errs := s.stats.lastMinute()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	goroutines := runtime.NumGoroutine()

	s.stats.mu.Lock()
	limiter := map[string]any{
		"store":                 "redis",
		"available":             s.stats.limiterUp && results["redis"].OK,
		"requestsPerWindow":     s.cfg.RequestsPerWindow,
		"windowSeconds":         s.cfg.Window.Seconds(),
		"maxConcurrent":         s.cfg.MaxConcurrent,
		"requestTimeoutSeconds": s.cfg.RequestTimeout.Seconds(),
		"maxResponseBytes":      s.cfg.MaxResponseBytes,
		"rejected": map[string]uint64{
			"rateLimited":        s.stats.rateLimited,
			"concurrencyLimited": s.stats.concurrencyLimited,
			"failedClosed":       s.stats.failClosed,
		},
	}
	if s.stats.limiterErr != "" {
		limiter["lastError"] = s.redact.text(s.stats.limiterErr)
		limiter["lastErrorAt"] = s.stats.limiterErrAt.UTC().Format(time.RFC3339)
	}
	limiterUp := s.stats.limiterUp && results["redis"].OK
	total, totalErrs, streams, rateLimited := s.stats.total, s.stats.errors, s.stats.streams, s.stats.rateLimited
	s.stats.mu.Unlock()

	if !limiterUp {
		limiter["mode"] = "fail-closed: tools/call is refused until Redis answers"
	} else {
		limiter["mode"] = "enforcing"
	}

	var recs []string
	status := "ok"
	for _, name := range slices.Sorted(maps.Keys(results)) {
		r := results[name]
		switch {
		case !r.OK:
			status = "degraded"
			recs = append(recs, fmt.Sprintf("%s is not answering (%s); check the %s deployment and the connection settings", name, r.Error, name))
		case r.LatencyMs > float64(slowStore.Milliseconds()):
			recs = append(recs, fmt.Sprintf("%s latency above %d ms (%.1f ms); check its load and the network path to it", storeTitle(name), slowStore.Milliseconds(), r.LatencyMs))
		}
	}
	if !limiterUp {
		status = "degraded"
		recs = append(recs, "the rate limiter cannot reach Redis, so tools/call fails closed; restore Redis")
	}
	if requests >= 20 && float64(errs)/float64(requests) > highErrorRate {
		recs = append(recs, fmt.Sprintf("error rate above %.0f%% in the last minute (%d of %d requests); read the server log", highErrorRate*100, errs, requests))
	}
	if rateLimited > 0 {
		recs = append(recs, fmt.Sprintf("%d requests were rate limited since start; if they come from legitimate clients raise the limit", rateLimited))
	}
	if goroutines > manyGoroutines {
		recs = append(recs, fmt.Sprintf("%d goroutines; look for stuck streams or tools that ignore cancellation", goroutines))
	}
	if mem.HeapAlloc > largeHeap {
		recs = append(recs, fmt.Sprintf("heap above %d MB; lower the response size limit or narrow analyses", largeHeap>>20))
	}
	if recs == nil {
		recs = []string{}
	}

	sessionDoc := map[string]any{"open": sessions, "streamsOnThisReplica": streams}
	if sessErr != nil {
		sessionDoc["error"] = s.redact.text(sessErr.Error())
	}
	return map[string]any{
		"status":        status,
		"server":        serverInfo,
		"version":       s.cfg.Version,
		"startedAt":     s.started.UTC().Format(time.RFC3339),
		"uptimeSeconds": int64(time.Since(s.started).Seconds()),
		"stores":        results,
		"requests": map[string]any{
			"total":               total,
			"errors":              totalErrs,
			"lastMinute":          requests,
			"errorsLastMinute":    errs,
			"requestsPerSecond1m": float64(requests) / 60,
		},
		"sessions": sessionDoc,
		"limiter":  limiter,
		"memory": map[string]any{
			"heapAllocBytes": mem.HeapAlloc,
			"sysBytes":       mem.Sys,
			"numGC":          mem.NumGC,
		},
		"goroutines":      goroutines,
		"recommendations": recs,
	}
}

func storeTitle(name string) string {
	switch name {
	case "redis":
		return "Redis"
	case "mongo":
		return "MongoDB"
	case "database":
		return "The database"
	}
	return name
}
