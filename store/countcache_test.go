package store_test

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/platform-dev/platform/store"
)

// TestCountCacheFollowsEveryWrite counts, and aggregates, after a write by each path that
// writes records: through this Stores, another one on the same data folder (a second
// replica, with a cache of its own) and another connection to the file that no code of the
// store opened. Each count is asked twice, so that the second comes from the cache, and
// both must be what reading every record finds.
func TestCountCacheFollowsEveryWrite(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	open := func() (*store.Stores, *store.Records) {
		s := openSQLiteAt(t, dir)
		recs, err := s.ProjectRecords(ctx, "c", "", []store.Table{benchProducts})
		if err != nil {
			t.Fatal(err)
		}
		return s, recs
	}
	s1, r1 := open()
	s2, r2 := open()
	if err := r1.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", filepath.Join(dir, "projects", "c.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	var seeded []map[string]any
	for i := range 10 {
		seeded = append(seeded, map[string]any{"price": float64(i)})
	}
	var made []map[string]any
	if err := r1.Insert(ctx, "products", "alice", seeded, &made); err != nil {
		t.Fatal(err)
	}
	uid := func(i int) string { return made[i][store.KeyUID].(string) }

	inRange := store.Compare("price", store.Gte, 5.0)
	named := store.Compare("author", store.IsNull, false)
	// check compares the count of each filter and the sum of prices in the range with what
	// reading every record finds.
	check := func(t *testing.T) {
		t.Helper()
		var all []struct {
			Author *string
			Price  float64
		}
		if err := r2.Find(ctx, "products", store.Query{}, &all); err != nil {
			t.Fatal(err)
		}
		var wantRange, wantNamed int64
		wantSum := 0.0
		for _, r := range all {
			if r.Price >= 5 {
				wantRange++
				wantSum += r.Price
			}
			if r.Author != nil {
				wantNamed++
			}
		}
		for try := range 2 {
			if n, err := r1.Count(ctx, "products", inRange); err != nil || n != wantRange {
				t.Fatalf("count %d of the range: %d, %v; want %d", try, n, err, wantRange)
			}
			if n, err := r1.Count(ctx, "products", named); err != nil || n != wantNamed {
				t.Fatalf("count %d of those with an author: %d, %v; want %d", try, n, err, wantNamed)
			}
			agg, err := r1.Aggregate(ctx, "products", inRange, []store.Aggregate{{Func: store.Sum, Key: "price"}})
			if err != nil || agg.Count != wantRange || agg.Values[0] != any(wantSum) && wantRange > 0 {
				t.Fatalf("aggregate %d of the range: %+v, %v; want %d, %v", try, agg, err, wantRange, wantSum)
			}
		}
	}
	exported := func(price float64) store.Record {
		id, err := store.NewUID()
		if err != nil {
			t.Fatal(err)
		}
		rec, _ := json.Marshal(map[string]any{"uid": id, "_owner": "bob", "createdAt": "2026-01-01T00:00:00.000Z",
			"updatedAt": "2026-01-01T00:00:00.000Z", "price": price})
		return rec
	}
	check(t)
	target := store.BackupFolder(filepath.Join(t.TempDir(), "backups"))
	if _, _, err := s1.Projects().Put(ctx, "c", `{"id":"c"}`, store.Applied{}); err != nil {
		t.Fatal(err)
	}
	backup, err := s1.TakeBackup(ctx, target, "c", "")
	if err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		name  string
		write func() error
	}{
		{"insert", func() error { return r1.Insert(ctx, "products", "alice", []map[string]any{{"price": 7.0}}, nil) }},
		{"insert by another replica", func() error {
			return r2.Insert(ctx, "products", "bob", []map[string]any{{"price": 8.0}, {"price": 1.0}}, nil)
		}},
		{"update into the range", func() error {
			return r2.Update(ctx, "products", uid(1), store.All, map[string]any{"price": 6.0}, nil, nil)
		}},
		{"update out of the range", func() error {
			return r2.Update(ctx, "products", uid(9), store.All, map[string]any{"price": 2.0}, nil, nil)
		}},
		{"update of another field", func() error {
			return r2.Update(ctx, "products", uid(0), store.All, map[string]any{"author": "x"}, nil, nil)
		}},
		{"update by filter", func() error {
			_, err := r2.UpdateWhere(ctx, "products", store.Compare("price", store.Gte, 8.0), map[string]any{"price": 3.0}, nil)
			return err
		}},
		{"delete", func() error { return r2.Delete(ctx, "products", uid(5), store.All) }},
		{"delete by filter", func() error {
			_, err := r2.DeleteWhere(ctx, "products", store.Compare("price", store.Eq, 6.0))
			return err
		}},
		{"import", func() error { return r2.Import(ctx, "products", []store.Record{exported(9), exported(0)}) }},
		{"migration", func() error {
			_, err := r2.Migrate(ctx, "products", []store.FieldChange{{Field: "author", Require: true, Default: "nobody"}}, true)
			return err
		}},
		{"import replacing the table", func() error {
			rp, err := r2.Replace(ctx, []string{"products"})
			if err != nil {
				return err
			}
			if err := rp.Import(ctx, "products", []store.Record{exported(5), exported(6), exported(1)}); err != nil {
				return err
			}
			return rp.Commit(ctx, true)
		}},
		{"another connection", func() error {
			_, err := raw.ExecContext(ctx, `INSERT INTO t_products (uid, _owner, createdAt, updatedAt, data, "f:price") VALUES ('raw', '', '', '', '{"price":9}', 9)`)
			return err
		}},
		{"restore", func() error {
			bf, err := s2.OpenBackup(ctx, target, backup)
			if err != nil {
				return err
			}
			defer bf.Close()
			return bf.Restore(ctx, "c", "", []store.Table{benchProducts})
		}},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			if err := step.write(); err != nil {
				t.Fatal(err)
			}
			check(t)
		})
	}

	// The triggers on the table are what keeps the cache exact: a row written where
	// they do not fire is not counted until the table's generation changes.
	t.Run("served from the cache", func(t *testing.T) {
		before, err := r1.Count(ctx, "products", inRange)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			`DROP TRIGGER "gen:products:insert"`,
			`INSERT INTO t_products (uid, _owner, createdAt, updatedAt, data, "f:price") VALUES ('unseen', '', '', '', '{"price":9}', 9)`,
		} {
			if _, err := raw.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := r1.Count(ctx, "products", inRange); err != nil || n != before {
			t.Fatalf("count %d, %v; want %d from the cache", n, err, before)
		}
		if err := r2.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		check(t)
	})
}

// TestCountCacheKeepsCallersApart: counts that differ only in their parameters (the owner an
// access rule adds) are kept apart.
func TestCountCacheKeepsCallersApart(t *testing.T) {
	ctx := t.Context()
	recs, err := openSQLiteAt(t, t.TempDir()).ProjectRecords(ctx, "c", "", []store.Table{benchProducts})
	if err != nil {
		t.Fatal(err)
	}
	if err := recs.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	for i, owner := range []string{"alice", "bob", "bob", "1", "1", "1"} {
		if err := recs.Insert(ctx, "products", owner, []map[string]any{{"price": float64(i)}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		for owner, want := range map[string]int64{"alice": 1, "bob": 2, "1": 3, "carol": 0} {
			n, err := recs.Count(ctx, "products", store.Compare(store.KeyOwner, store.Eq, owner))
			if err != nil || n != want {
				t.Errorf("count of %s's: %d, %v; want %d", owner, n, err, want)
			}
		}
	}
}
