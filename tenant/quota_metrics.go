package tenant

import (
	"context"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// quotaMetrics expose what projects use of their quotas. The use ratio carries a project
// label, bounded as the HTTP metrics' is (--metrics-projects): a scrape measures the
// projects this replica holds ready that have a quota, and shows the most-used of them.
type quotaMetrics struct {
	r       *Registry
	max     int
	refused *prometheus.CounterVec
	ratio   *prometheus.Desc
}

// scrapeTimeout bounds the measurement of one scrape.
const scrapeTimeout = 5 * time.Second

func (m *quotaMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.ratio
	m.refused.Describe(ch)
}

func (m *quotaMetrics) Collect(ch chan<- prometheus.Metric) {
	m.refused.Collect(ch)
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	type measured struct {
		id    string
		ratio map[string]float64 // by quota
		peak  float64
	}
	var all []measured
	for _, rt := range m.r.cache.runtimes() {
		if !rt.hasUseQuota() {
			continue
		}
		used, err := m.r.quota.use(ctx, rt, rt.Quotas, false)
		if err != nil {
			m.r.opts.Logger.Warn("measure quota use", "project", rt.Project.ID, "err", err)
			continue
		}
		p := measured{id: rt.Project.ID, ratio: map[string]float64{}}
		for _, f := range quotaFields {
			if limit := *f.of(&rt.Quotas); f.use && limit > 0 {
				p.ratio[f.name] = float64(used[f.name]) / float64(limit)
				p.peak = max(p.peak, p.ratio[f.name])
			}
		}
		all = append(all, p)
	}
	slices.SortFunc(all, func(a, b measured) int {
		if a.peak != b.peak {
			if a.peak > b.peak {
				return -1
			}
			return 1
		}
		if a.id < b.id {
			return -1
		}
		return 1
	})
	for _, p := range all[:min(len(all), m.max)] {
		for quota, v := range p.ratio {
			ch <- prometheus.MustNewConstMetric(m.ratio, prometheus.GaugeValue, v, p.id, quota)
		}
	}
}

// hasUseQuota reports whether the runtime's project has a quota whose use can be measured.
func (rt *Runtime) hasUseQuota() bool {
	for _, f := range quotaFields {
		if f.use && *f.of(&rt.Quotas) > 0 {
			return true
		}
	}
	return false
}

// quotaRefused counts a request a quota refused.
func (r *Registry) quotaRefused(quota string) {
	r.quotaMetrics.refused.WithLabelValues(quota).Inc()
}

func (r *Registry) registerQuotaMetrics(reg prometheus.Registerer) error {
	r.quotaMetrics = &quotaMetrics{
		r: r, max: max(r.opts.MetricsProjects, 1),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "platform_quota_refused_total",
			Help: "Requests and realtime connections refused by a project's quota, by quota (requestsPerMinute, concurrentRequests, subscriptions).",
		}, []string{"quota"}),
		ratio: prometheus.NewDesc("platform_project_quota_use_ratio",
			"What a project uses of each of its quotas (1 = all of it; alert at 0.8 and 1), for the --metrics-projects most-used projects this replica holds ready.",
			[]string{"project", "quota"}, nil),
	}
	if reg == nil {
		return nil
	}
	return reg.Register(r.quotaMetrics)
}
