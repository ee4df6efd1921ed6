package store

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Usage is what one project used in one period: an hour, or a UTC day. The counters add up
// (every replica adds what it counted); RecordsStored and BytesStored are the largest
// sample taken in the period.
type Usage struct {
	Project string
	// Start is the period's first instant, UTC: an hour's or a day's.
	Start time.Time

	Requests       int64 // HTTP requests to the project's API, of every kind
	Queries        int64 // GraphQL queries executed
	Mutations      int64 // GraphQL mutations executed
	Subscriptions  int64 // GraphQL subscriptions started
	Errors         int64 // requests answered with an error (status >= 400 or GraphQL errors)
	BytesOut       int64 // bytes of the answers' bodies
	StoreMicros    int64 // time spent in database calls
	RecordsRead    int64
	RecordsWritten int64
	ConnMillis     int64 // realtime (WebSocket and SSE) connection time, in milliseconds
	Events         int64 // record changes delivered to subscribers

	RecordsStored int64
	BytesStored   int64
}

// usageCounters and usageGauges name the columns (fields) of the store, in the order of
// Usage.counters and Usage.gauges.
var (
	usageCounters = []string{"requests", "queries", "mutations", "subscriptions", "errors", "bytesOut",
		"storeMicros", "recordsRead", "recordsWritten", "connMillis", "events"}
	usageGauges = []string{"recordsStored", "bytesStored"}
)

func (u *Usage) counters() []*int64 {
	return []*int64{&u.Requests, &u.Queries, &u.Mutations, &u.Subscriptions, &u.Errors, &u.BytesOut,
		&u.StoreMicros, &u.RecordsRead, &u.RecordsWritten, &u.ConnMillis, &u.Events}
}

func (u *Usage) gauges() []*int64 { return []*int64{&u.RecordsStored, &u.BytesStored} }

// Add adds v's counters to u and keeps the larger of the gauges.
func (u *Usage) Add(v *Usage) {
	for i, p := range v.counters() {
		*u.counters()[i] += *p
	}
	for i, p := range v.gauges() {
		g := u.gauges()[i]
		*g = max(*g, *p)
	}
}

// Zero reports whether u counts nothing.
func (u *Usage) Zero() bool {
	for _, p := range append(u.counters(), u.gauges()...) {
		if *p != 0 {
			return false
		}
	}
	return true
}

// span is the length of a period the usage store keeps: hours (kept a while, for today)
// and days (kept).
type span string

const (
	spanHour span = "h"
	spanDay  span = "d"
)

// usageBackend keeps usage in the control database, keyed by project, span and start.
type usageBackend interface {
	// add adds each row's counters to the row of its key (creating it) and keeps the
	// larger gauges: hours as hourly rows, days as daily ones, in one write (one
	// transaction on SQLite; one unordered bulk write on MongoDB).
	add(ctx context.Context, hours, days []Usage) error
	// rows answers the rows of project (every project when "") with from <= start < to,
	// ordered by project and start.
	rows(ctx context.Context, s span, project string, from, to time.Time) ([]Usage, error)
	// totals sums the rows of each project with from <= start < to (gauges: the largest).
	totals(ctx context.Context, s span, from, to time.Time) ([]Usage, error)
	// prune removes the rows that start before before.
	prune(ctx context.Context, s span, before time.Time) error
}

// UsageStore keeps every project's usage where replicas share it (the control database),
// so that it outlives restarts and replicas add up.
type UsageStore struct{ b usageBackend }

// Usage returns the usage store.
func (s *Stores) Usage() *UsageStore { return &UsageStore{b: s.db.usage()} }

// Add adds what was counted since the last call: each row is one project's delta for the
// hour its Start falls in, added to that hour and to its day.
func (u *UsageStore) Add(ctx context.Context, deltas []Usage) error {
	if len(deltas) == 0 {
		return nil
	}
	hours := make([]Usage, len(deltas))
	days := make([]Usage, len(deltas))
	for i, d := range deltas {
		d.Start = d.Start.UTC().Truncate(time.Hour)
		hours[i] = d
		d.Start = dayOf(d.Start)
		days[i] = d
	}
	if err := u.b.add(ctx, hours, days); err != nil {
		return fmt.Errorf("add usage: %w", err)
	}
	return nil
}

// Hours answers project's usage by hour, from <= start < to; only the hours since
// PruneHours' cut are kept.
func (u *UsageStore) Hours(ctx context.Context, project string, from, to time.Time) ([]Usage, error) {
	rows, err := u.b.rows(ctx, spanHour, project, from.UTC(), to.UTC())
	if err != nil {
		return nil, fmt.Errorf("usage of %q by hour: %w", project, err)
	}
	return rows, nil
}

// Days answers project's usage by UTC day, from <= start < to.
func (u *UsageStore) Days(ctx context.Context, project string, from, to time.Time) ([]Usage, error) {
	rows, err := u.b.rows(ctx, spanDay, project, from.UTC(), to.UTC())
	if err != nil {
		return nil, fmt.Errorf("usage of %q by day: %w", project, err)
	}
	return rows, nil
}

// Totals answers each project's usage summed over the days from <= start < to, ordered by
// project; Start is from.
func (u *UsageStore) Totals(ctx context.Context, from, to time.Time) ([]Usage, error) {
	rows, err := u.b.totals(ctx, spanDay, from.UTC(), to.UTC())
	if err != nil {
		return nil, fmt.Errorf("usage totals: %w", err)
	}
	for i := range rows {
		rows[i].Start = from.UTC()
	}
	return rows, nil
}

// PruneHours forgets the hourly rows that start before before (the days keep their sums).
func (u *UsageStore) PruneHours(ctx context.Context, before time.Time) error {
	if err := u.b.prune(ctx, spanHour, before.UTC()); err != nil {
		return fmt.Errorf("prune usage by hour: %w", err)
	}
	return nil
}

func dayOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// Activity counts the database work of a project's Records (see Records.CountInto): the
// records read and written and the time spent in database calls. A reader that wants what
// happened since it last looked swaps them with 0.
type Activity struct {
	RecordsRead, RecordsWritten atomic.Int64
	StoreNanos                  atomic.Int64
}
