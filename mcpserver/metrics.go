package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the server's Prometheus series. Their labels take only values this package
// names (tools of the catalog, fixed outcomes), so a client cannot grow them.
type metrics struct {
	toolCalls   *prometheus.CounterVec
	toolSeconds *prometheus.HistogramVec
	limiter     *prometheus.CounterVec
}

// Label values of tool calls that do not name a tool of the catalog.
const unknownTool = "_unknown"

// newMetrics registers the series with reg (none when nil); the sessions gauge counts the
// live sessions in st when scraped, so it is the same on every replica.
func newMetrics(reg prometheus.Registerer, st *store) (*metrics, error) {
	m := &metrics{
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_mcp_tool_calls_total",
			Help: "MCP tools/call requests, by tool and outcome (ok, tool_error, invalid_params, timeout, cancelled, too_large, overloaded, rate_limited, internal, error).",
		}, []string{"tool", "outcome"}),
		toolSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "platform_mcp_tool_call_duration_seconds",
			Help:    "Time from a tools/call request's admission to its answer, by tool.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30},
		}, []string{"tool"}),
		limiter: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_mcp_limiter_decisions_total",
			Help: "Decisions of the per-client MCP limits, by limit (rate, concurrency) and decision (allowed, refused, unavailable: the limiter's Redis did not answer).",
		}, []string{"limit", "decision"}),
	}
	if reg == nil {
		return m, nil
	}
	sessions := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "platform_mcp_sessions",
		Help: "Live MCP sessions (all replicas: counted in Redis when scraped); NaN when Redis did not answer.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
		defer cancel()
		n, err := st.countSessions(ctx)
		if err != nil {
			return math.NaN()
		}
		return float64(n)
	})
	for _, c := range []prometheus.Collector{m.toolCalls, m.toolSeconds, m.limiter, sessions} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("mcpserver: register metrics: %w", err)
		}
	}
	return m, nil
}

// toolLabel is the catalog name of the tool a tools/call message names, or unknownTool.
func (s *Server) toolLabel(msg *message) string {
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(msg.Params, &p) != nil {
		return unknownTool
	}
	if _, ok := s.cat.Load().byName[p.Name]; !ok {
		return unknownTool
	}
	return p.Name
}

// outcome names how a call ended, for the tool calls' outcome label.
func outcome(result any, rerr *rpcError) string {
	if rerr == nil {
		if isToolError(result) {
			return "tool_error"
		}
		return "ok"
	}
	switch rerr.Code {
	case CodeInvalidParams:
		return "invalid_params"
	case CodeTimeout:
		return "timeout"
	case CodeRateLimited:
		return "rate_limited"
	case CodeInternalError:
		return "internal"
	case CodeServerError:
		switch rerr.Message {
		case msgTooLarge:
			return "too_large"
		case msgOverloaded:
			return "overloaded"
		}
		return "cancelled"
	}
	return "error"
}
