package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
)

func TestConformanceKeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx, keys := t.Context(), s.Keys()
		created := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
		support := store.StoredKey{Name: "support", Scope: "operator:read", Hash: "aa", CreatedAt: created, ExpiresAt: created.Add(time.Hour)}
		shop := store.StoredKey{Name: "shop-admin", Scope: "project:shop:admin", Hash: "bb", CreatedAt: created}
		for _, k := range []store.StoredKey{support, shop} {
			if err := keys.Add(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		if err := keys.Add(ctx, store.StoredKey{Name: "support", Scope: "operator", Hash: "cc", CreatedAt: created}); !errors.Is(err, store.ErrKeyExists) {
			t.Errorf("a second key named support: %v, want ErrKeyExists", err)
		}
		got, err := keys.ByHash(ctx, "aa")
		if err != nil || *got != support {
			t.Errorf("ByHash(aa) = %+v, %v; want %+v", got, err, support)
		}
		if _, err := keys.ByHash(ctx, "cc"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ByHash of no key: %v, want ErrNotFound", err)
		}
		used := created.Add(time.Minute)
		if err := keys.Touch(ctx, "shop-admin", used); err != nil {
			t.Fatal(err)
		}
		list, err := keys.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		shop.LastUsed = used
		if len(list) != 2 || list[0] != shop || list[1] != support {
			t.Errorf("List = %+v, want shop-admin (used) then support", list)
		}
		if k, err := keys.Remove(ctx, "support"); err != nil || k.Name != "support" {
			t.Errorf("Remove(support) = %+v, %v", k, err)
		}
		if _, err := keys.ByHash(ctx, "aa"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a revoked key is still found: %v", err)
		}
		if _, err := keys.Remove(ctx, "support"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Remove of a removed key: %v, want ErrNotFound", err)
		}
	})
}

func TestConformanceAudit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx, log := t.Context(), s.Audit()
		at := func(m int) time.Time { return time.Date(2026, 11, 27, 10, m, 0, 0, time.UTC) }
		entries := []store.AuditEntry{
			{At: at(1), Key: "bootstrap", Scope: "operator", Client: "10.0.0.1", Action: "project.apply", Project: "shop", Diff: []string{"+ table products"}, Outcome: "ok"},
			{At: at(2), Key: "shop-admin", Scope: "project:shop:admin", Client: "10.0.0.2", Action: "project.delete", Project: "shop", Outcome: "refused 403: the key's scope project:shop:admin does not allow it"},
			{At: at(3), Key: "bootstrap", Scope: "operator", Client: "10.0.0.1", Action: "key.create", Target: "support", Outcome: "ok"},
			{At: at(4), Key: "bootstrap", Scope: "operator", Client: "10.0.0.1", Action: "project.apply", Project: "blog", Outcome: "ok"},
		}
		for _, e := range entries {
			if err := log.Append(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		entries[1].Diff, entries[2].Diff, entries[3].Diff = []string{}, []string{}, []string{}
		for _, c := range []struct {
			name string
			q    store.AuditQuery
			want []int
		}{
			{"all", store.AuditQuery{}, []int{0, 1, 2, 3}},
			{"project", store.AuditQuery{Project: "shop"}, []int{0, 1}},
			{"since", store.AuditQuery{Since: at(2)}, []int{1, 2, 3}},
			{"project since", store.AuditQuery{Project: "shop", Since: at(2)}, []int{1}},
			{"limit", store.AuditQuery{Limit: 2}, []int{0, 1}},
			{"newest", store.AuditQuery{Limit: 2, Newest: true}, []int{3, 2}},
			{"action", store.AuditQuery{Action: "project.apply"}, []int{0, 3}},
		} {
			got, err := log.Read(ctx, c.q)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Errorf("%s: %d entries, want %d: %+v", c.name, len(got), len(c.want), got)
				continue
			}
			for i, w := range c.want {
				g, e := got[i], entries[w]
				if !g.At.Equal(e.At) || g.Key != e.Key || g.Scope != e.Scope || g.Client != e.Client || g.Action != e.Action ||
					g.Project != e.Project || g.Target != e.Target || g.Outcome != e.Outcome || len(g.Diff) != len(e.Diff) {
					t.Errorf("%s: entry %d = %+v, want %+v", c.name, i, g, e)
				}
			}
		}
		n, err := log.Prune(ctx, at(3))
		if err != nil || n != 2 {
			t.Errorf("Prune before 10:03 = %d, %v; want 2 removed", n, err)
		}
		if got, _ := log.Read(ctx, store.AuditQuery{}); len(got) != 2 || got[0].Action != "key.create" {
			t.Errorf("after pruning: %+v", got)
		}
	})
}
