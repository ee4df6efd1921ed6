package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/store"
)

// TestEmbeddedStores opens the embedded SQLite files and Redis, writes, reopens the same data
// folder and reads the write back.
func TestEmbeddedStores(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(ctx, store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend != "sqlite" || !s.EmbeddedRedis {
		t.Fatalf("backend %q, embedded redis %v; want sqlite and true", s.Backend, s.EmbeddedRedis)
	}
	if _, _, err := s.Projects().Put(ctx, "kept", `{"id":"kept"}`, store.Applied{Who: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}

	s, err = store.Open(ctx, store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	sp, err := s.Projects().Get(ctx, "kept")
	if err != nil || sp.Document != `{"id":"kept"}` || sp.Version != 1 {
		t.Fatalf("after reopening: %+v, %v", sp, err)
	}
	if _, err := s.Projects().Get(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing project: %v, want ErrNotFound", err)
	}
	if err := s.PingDatabase(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestEmbeddedRedisExpiresKeys: keys with a TTL leave the embedded Redis as time passes, as
// they do in Redis itself.
func TestEmbeddedRedisExpiresKeys(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if err := s.Redis.Set(ctx, "short", "v", time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.Redis.Get(ctx, "short").Err()
		if errors.Is(err, redis.Nil) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a key with a 1s TTL is still there after 10s (%v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestExternalStoreUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := store.Open(ctx, store.Config{DataDir: t.TempDir(), MongoURI: "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=500"})
	if err == nil {
		t.Fatal("opening an unreachable MongoDB succeeded")
	}
}

// TestSQLiteCancelStopsQuery: a request's deadline interrupts the statement it is running
// (a scan of 20 MB that folds the case of every record), and the connection serves the
// next query.
func TestSQLiteCancelStopsQuery(t *testing.T) {
	ctx := t.Context()
	s, err := store.Open(ctx, store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	docs := store.Table{Name: "docs", Fields: []store.Field{{Name: "body", Type: store.FieldType{Scalar: store.String}}}}
	recs, err := s.ProjectRecords(ctx, "slow", "", []store.Table{docs})
	if err != nil {
		t.Fatal(err)
	}
	if err := recs.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("Straße und Ölkännchen ", 200) // 4.6 kB
	const n = 5000
	for range n / 500 {
		batch := make([]map[string]any, 500)
		for i := range batch {
			batch[i] = map[string]any{"body": body}
		}
		if err := recs.Insert(ctx, "docs", "alice", batch, nil); err != nil {
			t.Fatal(err)
		}
	}
	slow := store.Query{Filter: store.Compare("body", store.IContains, "not there")}
	for _, op := range []string{"find", "count"} {
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		if op == "find" {
			err = recs.Each(short, "docs", slow, func(store.Record) (bool, error) { return true, nil })
		} else {
			_, err = recs.Count(short, "docs", slow.Filter)
		}
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s past its deadline: %v, want DeadlineExceeded", op, err)
		}
	}
	if got, err := recs.Count(ctx, "docs", store.All); got != n || err != nil {
		t.Fatalf("count after the interrupted queries: %d, %v; want %d", got, err, n)
	}
}

// TestSQLiteSharedByTwoProcesses: two Stores on one data folder, as two replicas of one
// machine: a field's column that one adds while applying a definition is filled by the
// other's writes, which had seen the table before.
func TestSQLiteSharedByTwoProcesses(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	open := func() *store.Stores {
		s, err := store.Open(ctx, store.Config{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close(context.Background()) })
		return s
	}
	a, b := open(), open()
	v1 := store.Table{Name: "boxes", Fields: []store.Field{{Name: "name", Type: store.FieldType{Scalar: store.String}}}}
	v2 := v1
	v2.Fields = append(slices.Clone(v1.Fields), store.Field{Name: "size", Type: store.FieldType{Scalar: store.Int}})
	v2.Indexes = []store.Index{{Fields: []string{"size"}}}
	records := func(s *store.Stores, tbl store.Table) *store.Records {
		r, err := s.ProjectRecords(ctx, "shared", "", []store.Table{tbl})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ra1 := records(a, v1)
	if err := ra1.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ra1.Insert(ctx, "boxes", "alice", []map[string]any{{"name": "first"}}, nil); err != nil {
		t.Fatal(err)
	}
	rb2 := records(b, v2)
	if err := rb2.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	ra2 := records(a, v2)
	if err := ra2.Insert(ctx, "boxes", "alice", []map[string]any{{"name": "second", "size": int64(5)}}, nil); err != nil {
		t.Fatal(err)
	}
	var got []struct{ Name string }
	if err := ra2.Find(ctx, "boxes", store.Query{}, &got); err != nil || len(got) != 2 {
		t.Fatalf("records: %v, %v", got, err)
	}
	if err := ra2.Update(ctx, "boxes", firstUIDOf(t, ra2), store.All, map[string]any{"size": int64(7)}, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*store.Records{ra2, rb2} {
		for size, want := range map[int64]int64{5: 1, 7: 1, 6: 0} {
			if n, err := r.Count(ctx, "boxes", store.Compare("size", store.Eq, size)); n != want || err != nil {
				t.Errorf("size %d: %d records, %v; want %d", size, n, err, want)
			}
		}
	}
}

func firstUIDOf(t *testing.T, r *store.Records) string {
	t.Helper()
	var got []struct {
		UID string `json:"uid"`
	}
	if err := r.Find(t.Context(), "boxes", store.Query{Limit: 1}, &got); err != nil || len(got) != 1 {
		t.Fatalf("first record: %v, %v", got, err)
	}
	return got[0].UID
}
