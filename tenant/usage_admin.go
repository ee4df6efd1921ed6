package tenant

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
)

// UsagePeriod is what a project used in one hour or UTC day, as the admin API answers it.
type UsagePeriod struct {
	// Project is set in listings of many projects.
	Project string    `json:"project,omitempty"`
	Start   time.Time `json:"start"`

	Requests      int64 `json:"requests"`
	Queries       int64 `json:"queries"`
	Mutations     int64 `json:"mutations"`
	Subscriptions int64 `json:"subscriptions"`
	Errors        int64 `json:"errors"`
	BytesOut      int64 `json:"bytesOut"`
	// StoreMs is the time spent in database calls, in milliseconds.
	StoreMs        float64 `json:"storeMs"`
	RecordsRead    int64   `json:"recordsRead"`
	RecordsWritten int64   `json:"recordsWritten"`
	// RecordsStored and BytesStored are the largest sample of the period (0: none taken).
	RecordsStored int64 `json:"recordsStored"`
	BytesStored   int64 `json:"bytesStored"`
	// ConnectionMinutes is the time realtime (WebSocket, SSE) connections were open.
	ConnectionMinutes float64 `json:"connectionMinutes"`
	EventsDelivered   int64   `json:"eventsDelivered"`
}

func usagePeriod(u store.Usage) UsagePeriod {
	return UsagePeriod{
		Project: u.Project, Start: u.Start,
		Requests: u.Requests, Queries: u.Queries, Mutations: u.Mutations, Subscriptions: u.Subscriptions,
		Errors: u.Errors, BytesOut: u.BytesOut, StoreMs: float64(u.StoreMicros) / 1e3,
		RecordsRead: u.RecordsRead, RecordsWritten: u.RecordsWritten,
		RecordsStored: u.RecordsStored, BytesStored: u.BytesStored,
		ConnectionMinutes: float64(u.ConnMillis) / 60e3, EventsDelivered: u.Events,
	}
}

// usageColumns are the CSV columns of a UsagePeriod after period and start, and the sort
// keys of the listing.
var usageColumns = []string{"requests", "queries", "mutations", "subscriptions", "errors", "bytesOut", "storeMs",
	"recordsRead", "recordsWritten", "recordsStored", "bytesStored", "connectionMinutes", "eventsDelivered"}

func (p UsagePeriod) values() []float64 {
	return []float64{float64(p.Requests), float64(p.Queries), float64(p.Mutations), float64(p.Subscriptions),
		float64(p.Errors), float64(p.BytesOut), p.StoreMs, float64(p.RecordsRead), float64(p.RecordsWritten),
		float64(p.RecordsStored), float64(p.BytesStored), p.ConnectionMinutes, float64(p.EventsDelivered)}
}

// ProjectUsage answers GET /admin/v1/projects/{id}/usage: the days from From to To (UTC,
// both included), today by hour, and their total.
type ProjectUsage struct {
	Project string        `json:"project"`
	From    string        `json:"from"`
	To      string        `json:"to"`
	Total   UsagePeriod   `json:"total"`
	Days    []UsagePeriod `json:"days"`
	Hours   []UsagePeriod `json:"hours"`
}

// UsageListing answers GET /admin/v1/usage: the projects that used most, by Sort.
type UsageListing struct {
	From     string        `json:"from"`
	To       string        `json:"to"`
	Sort     string        `json:"sort"`
	Projects []UsagePeriod `json:"projects"`
}

// Bounds of the usage API.
const (
	// MaxUsageDays is the longest range one usage request may ask for.
	MaxUsageDays = 366
	// MaxUsageList is the most projects one listing answers.
	MaxUsageList = 1000
	dayLayout    = "2006-01-02"
)

// UsageRange reads a usage request's from and to (UTC days, YYYY-MM-DD, both included; to
// defaults to today, from to 29 days before to) into the range [from, end). Its error is
// the caller's mistake, to show them.
func UsageRange(fromDay, toDay string, now time.Time) (from, end time.Time, err error) {
	to := now.UTC().Truncate(24 * time.Hour)
	for _, p := range []struct {
		name, value string
		into        *time.Time
	}{{"to", toDay, &to}, {"from", fromDay, &from}} {
		if p.value == "" {
			continue
		}
		t, err := time.Parse(dayLayout, p.value)
		if err != nil {
			return time.Time{}, time.Time{}, fmt.Errorf("%s=%q: give a day as YYYY-MM-DD (UTC)", p.name, p.value)
		}
		*p.into = t
	}
	if from.IsZero() {
		from = to.AddDate(0, 0, -29)
	}
	end = to.AddDate(0, 0, 1)
	switch days := int(end.Sub(from).Hours() / 24); {
	case days < 1:
		return time.Time{}, time.Time{}, fmt.Errorf("from (%s) is after to (%s)", from.Format(dayLayout), to.Format(dayLayout))
	case days > MaxUsageDays:
		return time.Time{}, time.Time{}, fmt.Errorf("the range is %d days, more than the %d one request may ask for: split it", days, MaxUsageDays)
	}
	return from, end, nil
}

func (r *Registry) projectUsage(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	now := time.Now()
	from, end, err := UsageRange(c.QueryParam("from"), c.QueryParam("to"), now)
	if err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	ctx := c.Request().Context()
	if _, err := r.projects.Lookup(ctx, id); errors.Is(err, store.ErrNotFound) {
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	} else if err != nil {
		return r.internal(c, "usage: look up project", err)
	}
	u, err := r.Usage(ctx, id, from, end, now)
	if err != nil {
		return r.internal(c, "usage of a project", err)
	}
	if wantsCSV(c) {
		return writeUsageCSV(c, u)
	}
	return c.JSON(http.StatusOK, u)
}

// Usage answers project id's usage over the days [from, end): the days before today, and
// today (when in range) by hour.
func (r *Registry) Usage(ctx context.Context, id string, from, end, now time.Time) (*ProjectUsage, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	days, err := r.stores.Usage().Days(ctx, id, from, end)
	if err != nil {
		return nil, err
	}
	out := &ProjectUsage{Project: id, From: from.Format(dayLayout), To: end.AddDate(0, 0, -1).Format(dayLayout),
		Days: []UsagePeriod{}, Hours: []UsagePeriod{}}
	var total store.Usage
	for _, d := range days {
		total.Add(&d)
		if d.Start.Before(today) {
			d.Project = ""
			out.Days = append(out.Days, usagePeriod(d))
		}
	}
	if !today.Before(from) && today.Before(end) {
		hours, err := r.stores.Usage().Hours(ctx, id, today, today.AddDate(0, 0, 1))
		if err != nil {
			return nil, err
		}
		for _, h := range hours {
			h.Project = ""
			out.Hours = append(out.Hours, usagePeriod(h))
		}
	}
	total.Project = ""
	out.Total = usagePeriod(total)
	out.Total.Start = from
	return out, nil
}

// wantsCSV: ?format=csv, or an Accept header that asks for text/csv.
func wantsCSV(c echo.Context) bool {
	return c.QueryParam("format") == "csv" || strings.Contains(c.Request().Header.Get(echo.HeaderAccept), "text/csv")
}

func writeUsageCSV(c echo.Context, u *ProjectUsage) error {
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	res.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fmt.Sprintf("usage-%s-%s-%s.csv", u.Project, u.From, u.To)))
	res.WriteHeader(http.StatusOK)
	w := csv.NewWriter(res)
	_ = w.Write(append([]string{"project", "period", "start"}, usageColumns...))
	row := func(period string, p UsagePeriod) {
		rec := []string{u.Project, period, p.Start.UTC().Format(time.RFC3339)}
		for _, v := range p.values() {
			rec = append(rec, strconv.FormatFloat(v, 'f', -1, 64))
		}
		_ = w.Write(rec)
	}
	for _, d := range u.Days {
		row("day", d)
	}
	for _, h := range u.Hours {
		row("hour", h)
	}
	w.Flush()
	return w.Error()
}

// sortKey is the index of a listing's sort key in usageColumns; "usage" sorts by requests.
func sortKey(s string) (int, bool) {
	if s == "" || s == "usage" {
		return 0, true
	}
	i := slices.Index(usageColumns, s)
	return i, i >= 0
}

func (r *Registry) listUsage(c echo.Context) error {
	now := time.Now()
	from, end, err := UsageRange(c.QueryParam("from"), c.QueryParam("to"), now)
	if err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	sort := cmp.Or(c.QueryParam("sort"), "usage")
	key, ok := sortKey(sort)
	if !ok {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("sort=%q: sort by usage (requests) or one of %s", sort, strings.Join(usageColumns, ", ")))
	}
	limit, err := limitParam(c, 20, MaxUsageList)
	if err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	totals, err := r.stores.Usage().Totals(c.Request().Context(), from, end)
	if err != nil {
		return r.internal(c, "usage totals", err)
	}
	type ranked struct {
		by float64
		p  UsagePeriod
	}
	rs := make([]ranked, len(totals))
	for i, t := range totals {
		p := usagePeriod(t)
		rs[i] = ranked{p.values()[key], p}
	}
	// Heaviest first; ties by id, so that pages do not depend on the database's order.
	slices.SortFunc(rs, func(a, b ranked) int { return cmp.Or(cmp.Compare(b.by, a.by), cmp.Compare(a.p.Project, b.p.Project)) })
	ps := make([]UsagePeriod, 0, min(limit, len(rs)))
	for _, r := range rs[:min(limit, len(rs))] {
		ps = append(ps, r.p)
	}
	return c.JSON(http.StatusOK, UsageListing{From: from.Format(dayLayout), To: end.AddDate(0, 0, -1).Format(dayLayout), Sort: sort, Projects: ps})
}
