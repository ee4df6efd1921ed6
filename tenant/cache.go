package tenant

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// Runtime is everything needed to serve one version of one project. It is never changed
// after it is built: a new definition gets a new Runtime, swapped in whole, so a request sees
// the old definition or the new one, never half of each.
type Runtime struct {
	Project *Project
	API     *gql.API
	// Verifier says who the caller is; Rules what the caller may do.
	Verifier *Verifier
	Rules    *Rules
	// Records are the project's records; Quotas what the operator holds the project to.
	Records *store.Records
	Quotas  Quotas
	rate    *rateTokens // see quotaLimiter.allow
	// concKey is the slot set of the project's concurrentRequests, built once rather than
	// at each request.
	concKey string
	// usage counts what the project's requests do; nil while metering is off.
	usage *projectUsage
}

// Close releases what the runtime holds open.
func (rt *Runtime) Close() { rt.Verifier.Close() }

// entry is a cached lookup: a runtime, or the fact that the project does not exist.
type entry struct {
	rt       *Runtime // nil: not found
	loadedAt time.Time
	lastUsed atomic.Int64 // unix nanoseconds
	checking atomic.Bool  // a background refresh is running
}

// cache keeps the runtimes of the projects in use, bounded in count (least recently used go
// first) and in idleness.
type cache struct {
	opts    Options
	fetch   func(ctx context.Context, id string) (*Project, error)
	build   func(ctx context.Context, p *Project) (*Runtime, error)
	entries *lru.Cache[string, *entry]
	group   singleflight.Group
	gen     atomic.Int64 // bumped by every forget, so a load that raced a change is not kept
	builds  *prometheus.CounterVec
	// quotas answers the quotas a project is held to now; a refresh rebuilds a project
	// whose quotas changed, should a replica have missed the change's notice.
	quotas func(ctx context.Context, id string) (Quotas, error)
}

func newCache(opts Options, fetch func(context.Context, string) (*Project, error), build func(context.Context, *Project) (*Runtime, error)) *cache {
	c := &cache{opts: opts, fetch: fetch, build: build}
	c.entries, _ = lru.NewWithEvict(opts.CacheSize, func(_ string, e *entry) {
		if e.rt != nil {
			e.rt.Close()
		}
	})
	return c
}

func (c *cache) get(ctx context.Context, id string) (*Runtime, error) {
	now := time.Now()
	if e, ok := c.entries.Get(id); ok {
		e.lastUsed.Store(now.UnixNano())
		if e.rt == nil {
			if now.Sub(e.loadedAt) < c.opts.NotFoundTTL {
				return nil, ErrProjectNotFound
			}
		} else {
			if now.Sub(e.loadedAt) > c.opts.Refresh && e.checking.CompareAndSwap(false, true) {
				go c.refresh(id, e)
			}
			return e.rt, nil
		}
	}
	v, err, _ := c.group.Do(id, func() (any, error) { return c.fill(ctx, id) })
	if err != nil {
		return nil, err
	}
	return v.(*Runtime), nil
}

// fill loads a project and caches the result, including "not found".
func (c *cache) fill(ctx context.Context, id string) (*Runtime, error) {
	gen := c.gen.Load()
	var rt *Runtime
	p, err := c.fetch(ctx, id)
	if err == nil {
		if rt, err = c.build(ctx, p); err == nil {
			c.builds.WithLabelValues("load").Inc()
		}
	}
	if err != nil && !errors.Is(err, ErrProjectNotFound) {
		return nil, err
	}
	if c.gen.Load() == gen {
		e := &entry{rt: rt, loadedAt: time.Now()}
		e.lastUsed.Store(e.loadedAt.UnixNano())
		c.entries.Add(id, e)
	}
	if rt == nil {
		return nil, err
	}
	return rt, nil
}

// refresh checks a cached project against the control database off the request path, and
// rebuilds it only when its version or its quotas changed.
func (c *cache) refresh(id string, e *entry) {
	defer e.checking.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gen := c.gen.Load()
	p, err := c.fetch(ctx, id)
	switch {
	case errors.Is(err, ErrProjectNotFound):
		c.forget(id)
		return
	case err != nil:
		c.opts.Logger.Warn("refresh project", "project", id, "err", err)
		return
	}
	stale := p.Version != e.rt.Project.Version
	if !stale && c.quotas != nil {
		q, err := c.quotas(ctx, id)
		if err != nil {
			c.opts.Logger.Warn("refresh project quotas", "project", id, "err", err)
			return
		}
		stale = q != e.rt.Quotas
	}
	rt := e.rt
	if stale {
		if rt, err = c.build(ctx, p); err != nil {
			c.opts.Logger.Warn("rebuild project", "project", id, "err", err)
			return
		}
		c.builds.WithLabelValues("changed").Inc()
	}
	if c.gen.Load() != gen {
		return
	}
	ne := &entry{rt: rt, loadedAt: time.Now()}
	ne.lastUsed.Store(e.lastUsed.Load())
	c.entries.Add(id, ne)
}

// forget drops a project, so the next request loads its current definition.
func (c *cache) forget(id string) {
	c.gen.Add(1)
	c.group.Forget(id)
	c.entries.Remove(id)
}

// evictIdle drops the projects nobody asked for within IdleTTL.
func (c *cache) evictIdle() {
	cutoff := time.Now().Add(-c.opts.IdleTTL).UnixNano()
	for _, id := range c.entries.Keys() {
		if e, ok := c.entries.Peek(id); ok && e.lastUsed.Load() < cutoff {
			c.entries.Remove(id)
		}
	}
}

func (c *cache) purge() { c.entries.Purge() }

// runtimes answers the runtimes held ready.
func (c *cache) runtimes() []*Runtime {
	var out []*Runtime
	for _, e := range c.entries.Values() {
		if e.rt != nil {
			out = append(out, e.rt)
		}
	}
	return out
}

// CachedProjects reports how many projects are held ready (for metrics and tests).
func (r *Registry) CachedProjects() int { return r.cache.entries.Len() }
