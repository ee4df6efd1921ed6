package store_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/platform-dev/platform/store"
)

// TestConformanceQuotas: quotas kept beside a project are replaced whole, removed by an
// empty set and by purge, on both backends.
func TestConformanceQuotas(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		p := s.Projects()
		if _, _, err := p.Put(ctx, "q", `{"id":"q"}`, store.Applied{}); err != nil {
			t.Fatal(err)
		}
		if q, err := p.Quotas(ctx, "q"); err != nil || len(q) != 0 {
			t.Fatalf("quotas of a new project: %v, %v; want none", q, err)
		}
		want := map[string]int64{"requestsPerMinute": 600, "records": 1000}
		if err := p.SetQuotas(ctx, "q", want); err != nil {
			t.Fatal(err)
		}
		if err := p.SetQuotas(ctx, "other", map[string]int64{"tables": 2}); err != nil {
			t.Fatal(err)
		}
		if q, err := p.Quotas(ctx, "q"); err != nil || !maps.Equal(q, want) {
			t.Fatalf("quotas: %v, %v; want %v", q, err, want)
		}
		want = map[string]int64{"tables": 3}
		if err := p.SetQuotas(ctx, "q", want); err != nil {
			t.Fatal(err)
		}
		if q, err := p.Quotas(ctx, "q"); err != nil || !maps.Equal(q, want) {
			t.Fatalf("replaced quotas: %v, %v; want %v", q, err, want)
		}
		if err := p.SetQuotas(ctx, "q", nil); err != nil {
			t.Fatal(err)
		}
		if q, err := p.Quotas(ctx, "q"); err != nil || len(q) != 0 {
			t.Fatalf("quotas after an empty set: %v, %v; want none", q, err)
		}
		if err := p.SetQuotas(ctx, "q", want); err != nil {
			t.Fatal(err)
		}
		if err := p.Purge(ctx, "q"); err != nil {
			t.Fatal(err)
		}
		if q, err := p.Quotas(ctx, "q"); err != nil || len(q) != 0 {
			t.Fatalf("quotas after purge: %v, %v; want none", q, err)
		}
		if q, err := p.Quotas(ctx, "other"); err != nil || q["tables"] != 2 {
			t.Fatalf("another project's quotas after purge: %v, %v", q, err)
		}
	})
}

// TestConformanceStorageQuota: inserts past the records quota and writes to a project past
// its bytes quota are refused with a QuotaError naming the quota; deletes make room at
// once; reads go on.
func TestConformanceStorageQuota(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		recs := seedItems(t, s, items)
		n, err := recs.Count(ctx, "items", store.All)
		if err != nil {
			t.Fatal(err)
		}
		recs.LimitStorage(store.StorageQuota{Records: n + 2})
		one := []map[string]any{{"name": "q"}}
		var out []struct{ UID string }
		if err := recs.Insert(ctx, "items", "", append(one, one[0]), &out); err != nil {
			t.Fatalf("insert up to the quota: %v", err)
		}
		err = recs.Insert(ctx, "items", "", one, nil)
		var qe *store.QuotaError
		if !errors.As(err, &qe) || qe.Quota != "records" || qe.Limit != n+2 || qe.Used != n+2 {
			t.Fatalf("insert past the quota: %v, want a QuotaError on records at %d", err, n+2)
		}
		if got, err := recs.Count(ctx, "items", store.All); got != n+2 || err != nil {
			t.Fatalf("count past the quota: %d, %v", got, err)
		}
		if err := recs.Delete(ctx, "items", out[0].UID, store.All); err != nil {
			t.Fatal(err)
		}
		if err := recs.Insert(ctx, "items", "", one, nil); err != nil {
			t.Fatalf("insert after a delete: %v", err)
		}
		u, err := recs.Stored(ctx)
		if err != nil || u.Records != n+2 || u.Bytes <= 0 {
			t.Fatalf("usage: %+v, %v; want %d records and some bytes", u, err, n+2)
		}
		recs.LimitStorage(store.StorageQuota{Bytes: u.Bytes})
		err = recs.Update(ctx, "items", out[1].UID, store.All, map[string]any{"name": "r"}, nil, nil)
		if !errors.As(err, &qe) || qe.Quota != "bytesStored" {
			t.Fatalf("update past the bytes quota: %v, want a QuotaError on bytes", err)
		}
	})
}
