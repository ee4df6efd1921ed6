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

// CountInto makes the Records count their database work into a as well (records read and
// written, time in database calls). Call it before the Records are used; nil stops counting.
func (r *Records) CountInto(a *Activity) {
	c := r.b.(countingBackend)
	c.act = a
	r.b = c
}

// logSlow makes the Records keep the finds and counts that take at least after in l.
func (r *Records) logSlow(l *SlowLog, after time.Duration) {
	c := r.b.(countingBackend)
	c.slow, c.slowAfter = l, after
	r.b = c
}

// countingBackend counts the data calls of a backend and, with act, their work; with slow,
// it logs the slow finds and counts.
type countingBackend struct {
	backend
	n         *atomic.Int64
	act       *Activity
	slow      *SlowLog
	slowAfter time.Duration
}

// start counts a call and returns what counts its records and time when it ends.
func (c countingBackend) start() func(read, written int64) {
	c.n.Add(1)
	if c.act == nil {
		return func(int64, int64) {}
	}
	began := time.Now()
	return func(read, written int64) {
		c.act.StoreNanos.Add(int64(time.Since(began)))
		if read != 0 {
			c.act.RecordsRead.Add(read)
		}
		if written != 0 {
			c.act.RecordsWritten.Add(written)
		}
	}
}

func (c countingBackend) find(ctx context.Context, t *Table, q Query, fn func(Record) (bool, error)) error {
	if c.act == nil && c.slow == nil {
		c.n.Add(1)
		return c.backend.find(ctx, t, q, fn)
	}
	done, slow, n := c.start(), c.slowRun(ctx, t, q, false), int64(0)
	err := c.backend.find(ctx, t, q, func(r Record) (bool, error) {
		n++
		return fn(r)
	})
	done(n, 0)
	if err == nil {
		slow(n)
	}
	return err
}

func (c countingBackend) count(ctx context.Context, t *Table, f Filter) (int64, error) {
	defer c.start()(0, 0)
	slow := c.slowRun(ctx, t, Query{Filter: f}, true)
	n, err := c.backend.count(ctx, t, f)
	if err == nil {
		slow(n)
	}
	return n, err
}

func (c countingBackend) insert(ctx context.Context, t *Table, docs []Doc) error {
	done := c.start()
	err := c.backend.insert(ctx, t, docs)
	if err != nil {
		done(0, 0)
		return err
	}
	done(0, int64(len(docs)))
	return nil
}

func (c countingBackend) update(ctx context.Context, t *Table, uid string, f Filter, set map[string]any, unset []string, at time.Time) (Record, error) {
	done := c.start()
	rec, err := c.backend.update(ctx, t, uid, f, set, unset, at)
	done(0, written(err, 1))
	return rec, err
}

func (c countingBackend) remove(ctx context.Context, t *Table, uid string, f Filter) error {
	done := c.start()
	err := c.backend.remove(ctx, t, uid, f)
	done(0, written(err, 1))
	return err
}

func (c countingBackend) updateWhere(ctx context.Context, t *Table, f Filter, set map[string]any, unset []string, at time.Time) ([]Record, error) {
	done := c.start()
	recs, err := c.backend.updateWhere(ctx, t, f, set, unset, at)
	done(0, written(err, len(recs)))
	return recs, err
}

func (c countingBackend) removeWhere(ctx context.Context, t *Table, f Filter) ([]string, error) {
	done := c.start()
	uids, err := c.backend.removeWhere(ctx, t, f)
	done(0, written(err, len(uids)))
	return uids, err
}

func (c countingBackend) aggregate(ctx context.Context, t *Table, f Filter, aggs []Aggregate) (Aggregated, error) {
	defer c.start()(0, 0)
	return c.backend.aggregate(ctx, t, f, aggs)
}

// written is n records written by a call that answered err: none when it failed.
func written(err error, n int) int64 {
	if err != nil {
		return 0
	}
	return int64(n)
}
