package console

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/labstack/echo/v4"
	dto "github.com/prometheus/client_model/go"
)

// healthView is the health page: the stores' checks and the figures the process's own
// metrics hold, refreshed by htmx every few seconds.
type healthView struct {
	Checks         []check
	CachedProjects int
	Tools          []toolFigure
	Limits         []limitFigure
	HTTPRequests   float64
	Metrics        bool // a metrics registry was given
	At             string
}

type check struct {
	Name, Status, Took string
	OK                 bool
}

type toolFigure struct {
	Tool          string
	Calls, Failed float64
	Mean          string
}

type limitFigure struct {
	Limit, Decision string
	Count           float64
}

func (con *Console) health(c echo.Context) error {
	fragment := ""
	if c.QueryParam("figures") == "1" {
		fragment = "figures"
	}
	return con.render(c, http.StatusOK, "health", fragment, view{Title: "Health", Data: con.figures(c.Request().Context())})
}

func (con *Console) figures(ctx context.Context) *healthView {
	h := &healthView{CachedProjects: con.cfg.Registry.CachedProjects(), At: time.Now().UTC().Format(time.TimeOnly + " UTC")}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, ping := range []struct {
		name string
		fn   func(context.Context) error
	}{{"database (" + con.cfg.Stores.Backend + ")", con.cfg.Stores.PingDatabase}, {"redis", con.cfg.Stores.PingRedis}} {
		start := time.Now()
		err := ping.fn(ctx)
		ck := check{Name: ping.name, OK: err == nil, Status: "ok", Took: time.Since(start).Round(10 * time.Microsecond).String()}
		if err != nil {
			ck.Status = err.Error()
		}
		h.Checks = append(h.Checks, ck)
	}
	if con.cfg.Metrics == nil {
		return h
	}
	h.Metrics = true
	mfs, err := con.cfg.Metrics.Gather()
	if err != nil {
		con.cfg.Logger.WarnContext(ctx, "console: gather metrics", "err", err)
	}
	tools := map[string]*toolFigure{}
	tool := func(name string) *toolFigure {
		if tools[name] == nil {
			tools[name] = &toolFigure{Tool: name, Mean: "–"}
		}
		return tools[name]
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			l := labels(m)
			switch mf.GetName() {
			case "platform_mcp_tool_calls_total":
				t := tool(l["tool"])
				t.Calls += m.GetCounter().GetValue()
				if l["outcome"] != "ok" {
					t.Failed += m.GetCounter().GetValue()
				}
			case "platform_mcp_tool_call_duration_seconds":
				if hs := m.GetHistogram(); hs.GetSampleCount() > 0 {
					mean := time.Duration(hs.GetSampleSum() / float64(hs.GetSampleCount()) * float64(time.Second))
					tool(l["tool"]).Mean = mean.Round(100 * time.Microsecond).String()
				}
			case "platform_mcp_limiter_decisions_total":
				h.Limits = append(h.Limits, limitFigure{Limit: l["limit"], Decision: l["decision"], Count: m.GetCounter().GetValue()})
			case "platform_http_requests_total":
				h.HTTPRequests += m.GetCounter().GetValue()
			}
		}
	}
	for _, t := range tools {
		h.Tools = append(h.Tools, *t)
	}
	sort.Slice(h.Tools, func(i, j int) bool { return h.Tools[i].Tool < h.Tools[j].Tool })
	sort.Slice(h.Limits, func(i, j int) bool {
		return fmt.Sprint(h.Limits[i].Limit, h.Limits[i].Decision) < fmt.Sprint(h.Limits[j].Limit, h.Limits[j].Decision)
	})
	return h
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}
