package store

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// StorageQuota bounds what one project stores; a zero field bounds nothing.
type StorageQuota struct {
	Records int64 // records across every table
	Bytes   int64 // bytes the project's database takes, indexes included
}

// StoredSize is what a project stores: the records of its declared tables, and the bytes
// its database takes (pages in use on SQLite; data and indexes on MongoDB) and its files. Storage quotas
// and usage metering both read it.
type StoredSize struct {
	Records int64 `json:"records"`
	Bytes   int64 `json:"bytes"`
}

// QuotaError is a write refused because it would take the project past a storage quota.
type QuotaError struct {
	Quota string // "records" or "bytesStored", as operators name them
	Limit int64
	Used  int64
}

func (e *QuotaError) Error() string {
	if e.Quota == "bytesStored" {
		return fmt.Sprintf("the project stores %d bytes, and its quota is %d: delete records before writing more", e.Used, e.Limit)
	}
	return fmt.Sprintf("the project stores %d records, and its quota is %d: delete records before adding more", e.Used, e.Limit)
}

// usageMaxAge is how old the usage a write is checked against may be. Counting every table
// on every write would make writes cost as much as the table is large; between counts a
// replica adds its own writes, so only writes made at once on other replicas can pass a
// quota, by what they write in that time.
const usageMaxAge = 2 * time.Second

// storageGuard checks writes against a StorageQuota.
type storageGuard struct {
	quota StorageQuota

	mu    sync.Mutex
	usage StoredSize
	at    time.Time // when usage was counted; zero: never
}

// LimitStorage makes Insert, Update and UpdateWhere refuse, with a *QuotaError, writes
// past q: an insert that would hold more than q.Records records, or any write that adds to a
// project already holding q.Bytes bytes. Reads are never refused. Call it before the
// Records serve.
func (r *Records) LimitStorage(q StorageQuota) { r.guard.quota = q }

// Stored counts what the project stores now. It counts every table, so it is for quota
// checks now and then, not for every request.
func (r *Records) Stored(ctx context.Context) (StoredSize, error) {
	return r.stored(ctx, func(ctx context.Context, t *Table) (int64, error) { return r.b.count(ctx, t, Filter{}) })
}

// StoredSample is Stored with the records counted as the database can cheaply (on MongoDB,
// the collections' estimated counts, which need no read of the records): for sampling
// usage, where a count a little off matters less than one that takes long.
func (r *Records) StoredSample(ctx context.Context) (StoredSize, error) {
	return r.stored(ctx, r.b.estimate)
}

// stored is what the project stores, its tables' records counted by count.
func (r *Records) stored(ctx context.Context, count func(context.Context, *Table) (int64, error)) (StoredSize, error) {
	var u StoredSize
	for _, t := range r.tables {
		n, err := count(ctx, t)
		if err != nil {
			return StoredSize{}, fmt.Errorf("count the records of %s: %w", t.Name, err)
		}
		u.Records += n
	}
	b, err := r.b.size(ctx)
	if err != nil {
		return StoredSize{}, fmt.Errorf("measure the database: %w", err)
	}
	u.Bytes = b
	if r.files != nil {
		if b, err = r.files.Usage(ctx); err != nil {
			return StoredSize{}, fmt.Errorf("measure the files: %w", err)
		}
		u.Bytes += b
	}
	return u, nil
}

// admitWrite checks a write of add new records against the quota and counts them in,
// answering the function that takes them out again when the write fails.
func (r *Records) admitWrite(ctx context.Context, add int64) (undo func(), err error) {
	g := &r.guard
	// An update adds no record: only a bytes quota can refuse it.
	if g.quota == (StorageQuota{}) || add == 0 && g.quota.Bytes == 0 {
		return func() {}, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.at.IsZero() || time.Since(g.at) > usageMaxAge {
		u, err := r.Stored(ctx)
		if err != nil {
			return nil, err
		}
		g.usage, g.at = u, time.Now()
	}
	switch {
	case g.quota.Records > 0 && g.usage.Records+add > g.quota.Records:
		return nil, &QuotaError{Quota: "records", Limit: g.quota.Records, Used: g.usage.Records}
	case g.quota.Bytes > 0 && g.usage.Bytes >= g.quota.Bytes:
		return nil, &QuotaError{Quota: "bytesStored", Limit: g.quota.Bytes, Used: g.usage.Bytes}
	}
	g.usage.Records += add
	return func() { r.removed(add) }, nil
}

// removed takes n deleted records out of the usage counted.
func (r *Records) removed(n int64) {
	g := &r.guard
	if g.quota == (StorageQuota{}) || n == 0 {
		return
	}
	g.mu.Lock()
	g.usage.Records = max(g.usage.Records-n, 0)
	g.mu.Unlock()
}

// Quotas answers the quotas the operator set on project id, by name; empty when none is
// set. They live beside the project's document, not in it, so that whoever may apply the
// document cannot raise them. Purge removes them with the project.
func (p *Projects) Quotas(ctx context.Context, id string) (map[string]int64, error) {
	return p.b.quotas(ctx, id)
}

// SetQuotas replaces the quotas of project id; an empty q removes them.
func (p *Projects) SetQuotas(ctx context.Context, id string, q map[string]int64) error {
	return p.b.setQuotas(ctx, id, q)
}
