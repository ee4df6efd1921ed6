package store

import (
	"context"
	"sync/atomic"
	"time"
)

// Queries answers how many calls the Records have sent to the database since they were made:
// one per read, count, aggregate or write (one SQL statement on SQLite; an aggregate or a
// batch write on MongoDB may send a few commands for one call). Tests use it to prove that
// a request costs a bounded number of queries, and metrics can export it.
func (r *Records) Queries() int64 { return r.queries.Load() }

// countingBackend counts the data calls of a backend.
type countingBackend struct {
	backend
	n *atomic.Int64
}

func (c countingBackend) find(ctx context.Context, t *Table, q Query, fn func(Record) (bool, error)) error {
	c.n.Add(1)
	return c.backend.find(ctx, t, q, fn)
}

func (c countingBackend) count(ctx context.Context, t *Table, f Filter) (int64, error) {
	c.n.Add(1)
	return c.backend.count(ctx, t, f)
}

func (c countingBackend) insert(ctx context.Context, t *Table, docs []Doc) error {
	c.n.Add(1)
	return c.backend.insert(ctx, t, docs)
}

func (c countingBackend) update(ctx context.Context, t *Table, uid string, f Filter, set map[string]any, unset []string, at time.Time) (Record, error) {
	c.n.Add(1)
	return c.backend.update(ctx, t, uid, f, set, unset, at)
}

func (c countingBackend) remove(ctx context.Context, t *Table, uid string, f Filter) error {
	c.n.Add(1)
	return c.backend.remove(ctx, t, uid, f)
}

func (c countingBackend) updateWhere(ctx context.Context, t *Table, f Filter, set map[string]any, unset []string, at time.Time) ([]Record, error) {
	c.n.Add(1)
	return c.backend.updateWhere(ctx, t, f, set, unset, at)
}

func (c countingBackend) removeWhere(ctx context.Context, t *Table, f Filter) ([]string, error) {
	c.n.Add(1)
	return c.backend.removeWhere(ctx, t, f)
}

func (c countingBackend) aggregate(ctx context.Context, t *Table, f Filter, aggs []Aggregate) (Aggregated, error) {
	c.n.Add(1)
	return c.backend.aggregate(ctx, t, f, aggs)
}
