package store

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// monitoredBackend is a project's mongo backend on an embedded FerretDB whose client calls
// started with every command it sends.
func monitoredBackend(t *testing.T, started func(*event.CommandStartedEvent)) backend {
	t.Helper()
	uri, stop, err := StartFerretDB(t.Context(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop(context.Background()) })
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) { started(e) }}
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
	return b
}

// TestMongoDeadlineReachesServer: every command a request sends carries maxTimeMS, the time
// its context has left, so the server stops work the request no longer waits for; finds too,
// which the driver's Collection.Find would send without it. A request out of time fails with
// an error that is context.DeadlineExceeded.
func TestMongoDeadlineReachesServer(t *testing.T) {
	var mu sync.Mutex
	maxTime := map[string][]int64{} // by command
	b := monitoredBackend(t, func(e *event.CommandStartedEvent) {
		ms, ok := e.Command.Lookup("maxTimeMS").AsInt64OK()
		if !ok {
			ms = -1
		}
		mu.Lock()
		maxTime[e.CommandName] = append(maxTime[e.CommandName], ms)
		mu.Unlock()
	})
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
	if err := b.find(late, tbl, Query{}, func(Record) (bool, error) { return true, nil }); !errors.Is(err, context.DeadlineExceeded) {
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

// TestMongoRecordOfStoredValues: values the service does not write itself but may find (ones
// an older version stored, such as 32-bit integers, or another program's) still read as
// valid JSON.
func TestMongoRecordOfStoredValues(t *testing.T) {
	dec, _ := bson.ParseDecimal128("12.50")
	oid, _ := bson.ObjectIDFromHex("65f0c0ffee0000000000abcd")
	for _, tc := range []struct {
		name string
		doc  bson.D
		want string
	}{
		{"uid from _id, int32", bson.D{{Key: "_id", Value: "u1"}, {Key: "n", Value: int32(-42)}}, `{"uid":"u1","n":-42}`},
		{"_id inside a value stays", bson.D{{Key: "j", Value: bson.D{{Key: "_id", Value: int64(1)}}}}, `{"j":{"_id":1}}`},
		{"null and undefined", bson.D{{Key: "a", Value: nil}, {Key: "b", Value: bson.Undefined{}}}, `{"a":null,"b":null}`},
		{"floats as encoding/json", bson.D{{Key: "a", Value: 1e21}, {Key: "b", Value: 1e-7}, {Key: "c", Value: 2.0}, {Key: "d", Value: 0.1}}, `{"a":1e+21,"b":1e-7,"c":2,"d":0.1}`},
		{"NaN and infinity, which JSON cannot hold", bson.D{{Key: "a", Value: math.NaN()}, {Key: "b", Value: math.Inf(-1)}}, `{"a":null,"b":null}`},
		{"dates to milliseconds UTC", bson.D{{Key: "t", Value: bson.DateTime(1795464096753)}}, `{"t":"2026-11-23T20:01:36.753Z"}`},
		{"arrays in documents in arrays", bson.D{{Key: "l", Value: bson.A{bson.D{{Key: "x", Value: bson.A{true, "s"}}}, bson.A{}}}}, `{"l":[{"x":[true,"s"]},[]]}`},
		{"invalid UTF-8 and escapes", bson.D{{Key: "s\"k", Value: "a\xffb\u2028\x00"}}, `{"s\"k":"a\ufffdb\u2028\u0000"}`},
		{"an ObjectID as its hex", bson.D{{Key: "o", Value: oid}}, `{"o":"65f0c0ffee0000000000abcd"}`},
		{"other types as extended JSON", bson.D{{Key: "d", Value: dec}}, `{"d":{"$numberDecimal":"12.50"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := bson.Marshal(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendRecord(nil, raw)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want || !json.Valid(got) {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	raw, _ := bson.Marshal(bson.D{{Key: "s", Value: "text"}})
	for i := 1; i < len(raw); i++ {
		if _, err := appendRecord(nil, raw[:i]); err == nil {
			t.Errorf("a document cut to %d bytes converted without an error", i)
		}
	}
}

// TestMongoFindBatches: a find asks for a small first batch, then for batches of about a
// megabyte, so that reading large records holds few of them at a time and small ones come in
// few round trips.
func TestMongoFindBatches(t *testing.T) {
	var mu sync.Mutex
	var batches []int64 // batchSize of each find and getMore
	b := monitoredBackend(t, func(e *event.CommandStartedEvent) {
		if e.CommandName != "find" && e.CommandName != "getMore" {
			return
		}
		n, _ := e.Command.Lookup("batchSize").AsInt64OK()
		mu.Lock()
		batches = append(batches, n)
		mu.Unlock()
	})
	for _, tc := range []struct {
		name       string
		size       int // bytes of each record's string
		count      int // records
		next, most int64
	}{
		// 16, then 50 at a time: about a megabyte.
		{"records of 20 KB", 20 << 10, 18, 48, 52},
		// 16, then about 5,000 at a time.
		{"records of 200 bytes", 100, 40, 4000, 6000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := &Table{Name: strings.ReplaceAll(tc.name, " ", "_"), Fields: []Field{{Name: "s", Type: FieldType{Scalar: String}}}}
			tbl.index()
			s := string(make([]byte, tc.size))
			for i := 0; i < tc.count; i += 100 {
				docs := make([]Doc, min(100, tc.count-i))
				for j := range docs {
					uid, _ := NewUID()
					docs[j] = Doc{UID: uid, CreatedAt: now(), UpdatedAt: now(), Fields: map[string]any{"s": s}}
				}
				if err := b.insert(t.Context(), tbl, docs); err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			batches = nil
			mu.Unlock()
			n := 0
			if err := b.find(t.Context(), tbl, Query{}, func(Record) (bool, error) { n++; return true, nil }); err != nil || n != tc.count {
				t.Fatalf("find: %d records, %v", n, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(batches) < 2 || batches[0] != firstBatch || slices.ContainsFunc(batches[1:], func(n int64) bool { return n < tc.next || n > tc.most }) {
				t.Errorf("batch sizes asked for: %v, want %d then between %d and %d", batches, firstBatch, tc.next, tc.most)
			}
		})
	}
}
