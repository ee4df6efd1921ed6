package tenant

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// resolverObserver returns what records the times of one kind of GraphQL root field
// (gql.Config.ObserveResolver), its histogram looked up once.
func (r *Registry) resolverObserver(op string) func(time.Duration) {
	o := r.resolvers.WithLabelValues(op)
	return func(took time.Duration) { o.Observe(took.Seconds()) }
}

// registerMetrics exposes the project cache: how full it is and how often projects are
// built. Builds of reason "load" at a steady high rate while the cache is at capacity mean
// the cache is too small for the projects in use (thrash).
func (r *Registry) registerMetrics(reg prometheus.Registerer) error {
	r.cache.builds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "platform_project_builds_total",
		Help: "Projects made ready to serve (schema generated, resolvers bound), by reason: load (not cached) or changed (a newer version found by a refresh).",
	}, []string{"reason"})
	r.resolvers = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "platform_graphql_resolver_duration_seconds",
		Help:    "Time a GraphQL root field took to resolve (its store call and the record conversion), by operation.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"operation"})
	if reg == nil {
		return nil
	}
	for _, c := range []prometheus.Collector{
		r.cache.builds,
		r.resolvers,
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
