package console

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/labstack/echo/v4"
)

// healthView is the health page: the stores' checks and the figures the process's own
// metrics hold, each with a chart of the samples in the history, refreshed by htmx.
type healthView struct {
	Checks         []check
	CachedProjects int
	Metrics        bool // a metrics registry was given
	Figures        []figure
	Tools          []toolFigure
	// Unavailable counts the MCP requests refused because the limiter's Redis did not answer.
	Unavailable float64
	At          string
	// EveryMS is how often htmx polls the figures; Window how long the charts span.
	EveryMS int64
	Window  string
}

type check struct {
	Name, Status, Took string
	OK                 bool
	took               time.Duration
}

// figure is one live number with its chart.
type figure struct {
	Name, Value, Hint string
	Chart             spark
}

type toolFigure struct {
	Tool          string
	Calls, Failed float64
	// Mean is the mean time since the process started, Recent over the charts' window.
	Mean, Recent string
	Chart        spark
}

func (con *Console) health(c echo.Context) error {
	fragment := ""
	if c.QueryParam("figures") == "1" {
		fragment = "figures"
	}
	samples := con.sampleIfStale(c.Request().Context())
	return con.render(c, http.StatusOK, "health", fragment, view{Title: "Health", Data: con.figures(samples)})
}

// figures turns the samples, oldest first and at least one, into the page's figures.
func (con *Console) figures(samples []sample) *healthView {
	last := samples[len(samples)-1]
	h := &healthView{
		Checks: last.pings, CachedProjects: con.cfg.Registry.CachedProjects(), Metrics: con.cfg.Metrics != nil,
		At: last.at.UTC().Format(time.TimeOnly + " UTC"), EveryMS: con.cfg.SampleInterval.Milliseconds(),
		Window: (con.cfg.SampleInterval * historySize).String(), Unavailable: last.totals[seriesUnavailable],
	}
	for i, ck := range last.pings {
		ms := make([]float64, len(samples))
		for j, s := range samples {
			ms[j] = math.NaN()
			if i < len(s.pings) && s.pings[i].OK {
				ms[j] = float64(s.pings[i].took.Microseconds()) / 1000
			}
		}
		h.Figures = append(h.Figures, figure{Name: ck.Name + " ping", Value: ck.Took, Hint: ck.Status, Chart: sparkline(ms, millis)})
	}
	if !h.Metrics {
		return h
	}
	rate := func(name, series string) figure {
		rates := perMinute(samples, func(s sample) float64 { return s.totals[series] })
		return figure{Name: name, Value: latest(rates, perMin), Chart: sparkline(rates, perMin)}
	}
	refusals := func(name, series string) figure {
		f := rate(name, series)
		f.Hint = f.Value + " a minute now"
		f.Value = fmt.Sprintf("%.0f", last.totals[series])
		return f
	}
	sessions := make([]float64, len(samples))
	for i, s := range samples {
		sessions[i] = s.sessions
	}
	h.Figures = append(h.Figures,
		rate("HTTP requests/min", seriesHTTP),
		rate("MCP requests/min", seriesMCP),
		figure{Name: "MCP sessions", Value: latest(sessions, whole), Chart: sparkline(sessions, whole)},
		rate("MCP tool calls/min", seriesToolCalls),
		refusals("Rate-limit rejections", seriesRateRefused),
		refusals("Connection-limit rejections", seriesConnRefused),
	)

	first := samples[0]
	for _, name := range slices.Sorted(maps.Keys(last.tools)) {
		t := last.tools[name]
		f := toolFigure{Tool: name, Calls: t.calls, Failed: t.failed, Mean: meanTime(t.sum, t.count),
			Recent: meanTime(t.sum-first.tools[name].sum, t.count-first.tools[name].count)}
		means := make([]float64, 0, len(samples)-1)
		for i := 1; i < len(samples); i++ {
			a, b := samples[i-1].tools[name], samples[i].tools[name]
			m := math.NaN()
			if n := b.count - a.count; n > 0 {
				m = (b.sum - a.sum) / n * 1000
			}
			means = append(means, m)
		}
		f.Chart = sparkline(means, millis)
		h.Tools = append(h.Tools, f)
	}
	sort.SliceStable(h.Tools, func(i, j int) bool { return h.Tools[i].Calls > h.Tools[j].Calls })
	return h
}

// latest is the last value that is a number, formatted, or a dash when there is none.
func latest(values []float64, format func(float64) string) string {
	for i := len(values) - 1; i >= 0; i-- {
		if !math.IsNaN(values[i]) {
			return format(values[i])
		}
	}
	return "–"
}

func perMin(v float64) string { return fmt.Sprintf("%.1f", v) }
func whole(v float64) string  { return fmt.Sprintf("%.0f", v) }
func millis(v float64) string { return fmt.Sprintf("%.1f ms", v) }

// meanTime is sum seconds over n observations as a duration, a dash when there are none.
func meanTime(sum, n float64) string {
	if n <= 0 {
		return "–"
	}
	return time.Duration(sum / n * float64(time.Second)).Round(100 * time.Microsecond).String()
}
