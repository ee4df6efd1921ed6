package store

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestMongoDeadlineReachesServer: every command a request sends carries maxTimeMS, the time
// its context has left, so the server stops work the request no longer waits for; finds too,
// which the driver's Collection.Find would send without it. A request out of time fails with
// an error that is context.DeadlineExceeded.
func TestMongoDeadlineReachesServer(t *testing.T) {
	uri, stop, err := StartFerretDB(t.Context(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop(context.Background()) })
	var mu sync.Mutex
	maxTime := map[string][]int64{} // by command
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		ms, ok := e.Command.Lookup("maxTimeMS").AsInt64OK()
		if !ok {
			ms = -1
		}
		mu.Lock()
		maxTime[e.CommandName] = append(maxTime[e.CommandName], ms)
		mu.Unlock()
	}}
	c, err := mongo.Connect(options.Client().ApplyURI(uri).SetMonitor(monitor))
	if err != nil {
		t.Fatal(err)
	}
	m := &mongoDatabases{client: c, updating: new(updateLocks), clients: map[string]*mongo.Client{}}
	t.Cleanup(func() { _ = m.close(context.Background()) })
	b, err := m.project(t.Context(), "demo", "")
	if err != nil {
		t.Fatal(err)
	}
	tbl := &Table{Name: "t", Fields: []Field{{Name: "n", Type: FieldType{Scalar: Int}}}}
	tbl.index()
	if err := b.ensure(t.Context(), tbl); err != nil {
		t.Fatal(err)
	}
	docs := make([]Doc, 40) // more than the first batch of a find
	for i := range docs {
		uid, _ := NewUID()
		docs[i] = Doc{UID: uid, CreatedAt: now(), UpdatedAt: now(), Fields: map[string]any{"n": int64(i)}}
	}
	if err := b.insert(t.Context(), tbl, docs); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	clear(maxTime)
	mu.Unlock()
	const budget = time.Minute
	ctx, cancel := context.WithTimeout(t.Context(), budget)
	defer cancel()
	n := 0
	if err := b.find(ctx, tbl, Query{Filter: Compare("n", Gte, int64(0))}, func(Record) (bool, error) { n++; return true, nil }); err != nil || n != len(docs) {
		t.Fatalf("find: %d records, %v", n, err)
	}
	if _, err := b.count(ctx, tbl, Compare("n", Gt, int64(3))); err != nil {
		t.Fatal(err)
	}
	if _, err := b.update(ctx, tbl, docs[0].UID, All, map[string]any{"n": int64(-1)}, nil, now()); err != nil {
		t.Fatal(err)
	}
	if err := b.remove(ctx, tbl, docs[1].UID, All); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for _, cmd := range []string{"find", "aggregate", "findAndModify", "delete"} {
		ms := maxTime[cmd]
		if len(ms) == 0 || slices.ContainsFunc(ms, func(v int64) bool { return v <= 0 || v > budget.Milliseconds() }) {
			t.Errorf("%s sent with maxTimeMS %v, want one in (0, %d]", cmd, ms, budget.Milliseconds())
		}
	}
	mu.Unlock()

	late, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	err = b.find(late, tbl, Query{}, func(Record) (bool, error) { return true, nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("find out of time: %v, want context.DeadlineExceeded", err)
	}
	if _, err := b.count(late, tbl, All); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("count out of time: %v, want context.DeadlineExceeded", err)
	}
}

// benchDoc is a record as a product table stores it.
func benchDoc(b *testing.B) bson.Raw {
	raw, err := bson.Marshal(mongoDoc(Doc{
		UID: "019ab3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b", Owner: "auth0|5f7c8ec7c33c6c004bbafe82",
		CreatedAt: now(), UpdatedAt: now(),
		Fields: map[string]any{
			"name": "Ergonomic Granite Keyboard", "sku": "SKU-0042917", "price": 499.95, "stock": int64(17),
			"active": true, "tags": []any{"office", "électronique", "keyboard"},
			"description": "A keyboard with \"quotes\", a tab\tand ünïcödé, as users write them.",
			"meta":        map[string]any{"color": "grey", "weight": 1.2},
		},
	}))
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkMongoRecord: a stored document to its Record by walking the BSON once, against
// what the driver offers (decode to a map, then encoding/json).
func BenchmarkMongoRecord(b *testing.B) {
	raw := benchDoc(b)
	b.Run("walk", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, err := appendRecord(make([]byte, 0, len(raw)+len(raw)/4+16), raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			var m map[string]any
			if err := bson.Unmarshal(raw, &m); err != nil {
				b.Fatal(err)
			}
			m["uid"] = m["_id"]
			delete(m, "_id")
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
