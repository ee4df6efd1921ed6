package tenant

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// registerMetrics exposes the project cache: how full it is and how often projects are
// built. Builds of reason "load" at a steady high rate while the cache is at capacity mean
// the cache is too small for the projects in use (thrash).
func (r *Registry) registerMetrics(reg prometheus.Registerer) error {
	r.cache.builds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "platform_project_builds_total",
		Help: "Projects made ready to serve (schema generated, resolvers bound), by reason: load (not cached) or changed (a newer version found by a refresh).",
	}, []string{"reason"})
	if reg == nil {
		return nil
	}
	for _, c := range []prometheus.Collector{
		r.cache.builds,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "platform_project_cache_entries",
			Help: "Projects held in the cache (ready runtimes and remembered unknown ids).",
		}, func() float64 { return float64(r.CachedProjects()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "platform_project_cache_capacity",
			Help: "Most projects the cache holds (--project-cache-size).",
		}, func() float64 { return float64(r.opts.CacheSize) }),
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register project cache metrics: %w", err)
		}
	}
	return nil
}
