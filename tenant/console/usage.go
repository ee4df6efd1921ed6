package console

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/tenant"
)

func (con *Console) mountUsage(g *echo.Group) {
	g.GET("/projects/:id/usage", con.usage)
}

// usageMeasure is what the usage page can chart, by the name its links use.
type usageMeasure struct {
	Name, Label string
	value       func(tenant.UsagePeriod) float64
}

var usageMeasures = []usageMeasure{
	{"requests", "Requests", func(p tenant.UsagePeriod) float64 { return float64(p.Requests) }},
	{"errors", "Errors", func(p tenant.UsagePeriod) float64 { return float64(p.Errors) }},
	{"bytesOut", "Bytes answered", func(p tenant.UsagePeriod) float64 { return float64(p.BytesOut) }},
	{"recordsRead", "Records read", func(p tenant.UsagePeriod) float64 { return float64(p.RecordsRead) }},
	{"recordsWritten", "Records written", func(p tenant.UsagePeriod) float64 { return float64(p.RecordsWritten) }},
	{"storeMs", "Store time (ms)", func(p tenant.UsagePeriod) float64 { return p.StoreMs }},
	{"connectionMinutes", "Connection-minutes", func(p tenant.UsagePeriod) float64 { return p.ConnectionMinutes }},
	{"eventsDelivered", "Events delivered", func(p tenant.UsagePeriod) float64 { return float64(p.EventsDelivered) }},
}

// usageView is a project's usage page: the chart of one measure by day (today by hour
// beside it) and the table of every measure.
type usageView struct {
	Project, From, To string
	Measure, Label    string
	Measures          []string
	Labels            map[string]string
	Usage             *tenant.ProjectUsage
	Days, Hours       barChart
	Error             string
}

func (con *Console) usage(c echo.Context) error {
	id := c.Param("id")
	v := &usageView{Project: id, Measure: c.QueryParam("measure"), Labels: map[string]string{}}
	for _, m := range usageMeasures {
		v.Measures = append(v.Measures, m.Name)
		v.Labels[m.Name] = m.Label
	}
	if v.Measure == "" {
		v.Measure = "requests"
	}
	at := slices.IndexFunc(usageMeasures, func(m usageMeasure) bool { return m.Name == v.Measure })
	render := func(status int) error {
		return con.render(c, status, "usage", "", view{Title: "Usage · " + id, Data: v})
	}
	if err := tenant.ValidateID(id); err != nil {
		v.Error = err.Error()
		return render(http.StatusBadRequest)
	}
	if at < 0 {
		v.Error = fmt.Sprintf("no measure %q", v.Measure)
		return render(http.StatusBadRequest)
	}
	v.Label = usageMeasures[at].Label
	now := time.Now()
	from, end, err := tenant.UsageRange(c.QueryParam("from"), c.QueryParam("to"), now)
	if err != nil {
		v.Error = err.Error()
		return render(http.StatusBadRequest)
	}
	u, err := con.cfg.Registry.Usage(c.Request().Context(), id, from, end, now)
	if err != nil {
		return con.fail(c, "read the usage of "+id, err)
	}
	v.Usage, v.From, v.To = u, u.From, u.To
	value := usageMeasures[at].value
	// Every day of the range has a bar, today's the sum of its hours.
	byDay := map[string]float64{}
	for _, d := range u.Days {
		byDay[d.Start.Format(time.DateOnly)] = value(d)
	}
	for _, h := range u.Hours {
		byDay[h.Start.Format(time.DateOnly)] += value(h)
	}
	var days []bar
	for d := from; d.Before(end); d = d.AddDate(0, 0, 1) {
		days = append(days, bar{Label: d.Format(time.DateOnly), Value: byDay[d.Format(time.DateOnly)]})
	}
	v.Days = bars(days)
	var hours []bar
	for _, h := range u.Hours {
		hours = append(hours, bar{Label: h.Start.Format("15:04"), Value: value(h)})
	}
	v.Hours = bars(hours)
	return render(http.StatusOK)
}

// Size of a bar chart's view box; the style sheet sets the size it is drawn at.
const barWidth, barHeight = 600.0, 120.0

// barChart is a bar chart drawn on the server as SVG rectangles, so the page needs no chart
// script and stays within the CSP (the style sheet colours it).
type barChart struct {
	Bars    []bar
	Highest float64
}

// bar is one bar: its label and value, and where it is drawn.
type bar struct {
	Label      string
	Value      float64
	X, Y, W, H string
}

// bars lays values out from left to right, 0 at the bottom and the largest at the top.
func bars(bs []bar) barChart {
	c := barChart{Bars: bs}
	for _, b := range bs {
		c.Highest = max(c.Highest, b.Value)
	}
	top := c.Highest
	if top == 0 {
		top = 1
	}
	w := barWidth / float64(max(len(bs), 1))
	for i := range bs {
		h := bs[i].Value / top * (barHeight - 1)
		bs[i].X, bs[i].W = num(float64(i)*w+w*0.1), num(w*0.8)
		bs[i].Y, bs[i].H = num(barHeight-h), num(h)
	}
	return c
}
