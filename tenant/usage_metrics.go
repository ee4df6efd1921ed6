package tenant

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/telemetry"
)

// usageMetric is one Prometheus family of the per-project usage: its description and how
// it reads a Usage.
type usageMetric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(*store.Usage) float64
}

// usageCollector exposes what this replica counted for each project since it started, as
// Prometheus metrics with a bounded project label: the top projects by requests have their
// own, the rest are summed under telemetry.ProjectOther. With 10,000 projects a family has
// at most top+1 series. The figures move at each flush.
type usageCollector struct {
	m       *meter
	top     int
	metrics []usageMetric
}

func newUsageCollector(m *meter, top int) *usageCollector {
	d := func(name, help string, kind prometheus.ValueType, value func(*store.Usage) float64) usageMetric {
		return usageMetric{prometheus.NewDesc(name, help+" By project: the most requested ones on this replica (--metrics-projects), the rest as _other.", []string{"project"}, nil), kind, value}
	}
	return &usageCollector{m: m, top: top, metrics: []usageMetric{
		d("platform_project_requests_total", "Requests to a project's API.", prometheus.CounterValue, func(u *store.Usage) float64 { return float64(u.Requests) }),
		d("platform_project_queries_total", "GraphQL queries a project's API ran.", prometheus.CounterValue, func(u *store.Usage) float64 { return float64(u.Queries) }),
		d("platform_project_mutations_total", "GraphQL mutations a project's API ran.", prometheus.CounterValue, func(u *store.Usage) float64 { return float64(u.Mutations) }),
		d("platform_project_subscriptions_total", "GraphQL subscriptions started.", prometheus.CounterValue, func(u *store.Usage) float64 { return float64(u.Subscriptions) }),
		d("platform_project_errors_total", "Requests answered with an error status or GraphQL errors.", prometheus.CounterValue, func(u *store.Usage) float64 { return float64(u.Errors) }),
		d("platform_project_response_bytes_total", "Bytes of the answers' bodies.", prometheus.CounterValue, func(u *store.Usage) float64 { return float64(u.BytesOut) }),
		d("platform_project_store_seconds_total", "Time spent in database calls.", prometheus.CounterValue, func(u *store.Usage) float64 { return float64(u.StoreMicros) / 1e6 }),
		d("platform_project_records_read_total", "Records read from the database.", prometheus.CounterValue, func(u *store.Usage) float64 { return float64(u.RecordsRead) }),
		d("platform_project_records_written_total", "Records created, updated or deleted.", prometheus.CounterValue, func(u *store.Usage) float64 { return float64(u.RecordsWritten) }),
		d("platform_project_realtime_connection_seconds_total", "Time realtime (WebSocket, SSE) connections were open.", prometheus.CounterValue, func(u *store.Usage) float64 { return float64(u.ConnMillis) / 1e3 }),
		d("platform_project_events_delivered_total", "Record changes sent to subscribers.", prometheus.CounterValue, func(u *store.Usage) float64 { return float64(u.Events) }),
		d("platform_project_records_stored", "Records the project stores, at the latest sample.", prometheus.GaugeValue, func(u *store.Usage) float64 { return float64(u.RecordsStored) }),
		d("platform_project_stored_bytes", "Bytes the project's database takes, at the latest sample.", prometheus.GaugeValue, func(u *store.Usage) float64 { return float64(u.BytesStored) }),
	}}
}

func (c *usageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.metrics {
		ch <- m.desc
	}
}

func (c *usageCollector) Collect(ch chan<- prometheus.Metric) {
	for _, u := range c.m.ranked(c.top) {
		for _, m := range c.metrics {
			ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(&u), u.Project)
		}
	}
}

// ranked answers the top projects by requests since the replica started (ties by id), and
// the rest summed as telemetry.ProjectOther (with the largest stored sample).
func (m *meter) ranked(top int) []store.Usage {
	m.mu.Lock()
	all := make([]store.Usage, 0, len(m.totals))
	for _, u := range m.totals {
		all = append(all, *u)
	}
	m.mu.Unlock()
	slices.SortFunc(all, func(a, b store.Usage) int {
		return cmp.Or(cmp.Compare(b.Requests, a.Requests), cmp.Compare(a.Project, b.Project))
	})
	if len(all) <= top {
		return all
	}
	other := store.Usage{Project: telemetry.ProjectOther}
	for i := top; i < len(all); i++ {
		other.Add(&all[i])
	}
	return append(all[:top], other)
}

// register registers the per-project usage metrics with reg, top projects labelled.
func (m *meter) register(reg prometheus.Registerer, top int) error {
	if reg == nil || m.opts.Off {
		return nil
	}
	if err := reg.Register(newUsageCollector(m, top)); err != nil {
		return fmt.Errorf("register usage metrics: %w", err)
	}
	return nil
}
