package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/platform-dev/platform/store"
)

// openMongoStores opens Stores on the mongo backend, against an embedded FerretDB at uri.
func openMongoStores(t testing.TB) (s *store.Stores, uri string) {
	t.Helper()
	ctx := context.Background()
	uri, stop, err := store.StartFerretDB(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	s, err = store.Open(ctx, store.Config{DataDir: t.TempDir(), MongoURI: uri})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	if s.Backend != "mongo" {
		t.Fatalf("Backend = %q, want mongo", s.Backend)
	}
	return s, uri
}

func mongoTable(indexes ...store.Index) store.Table {
	return store.Table{
		Name: "products",
		Fields: []store.Field{
			{Name: "at", Type: store.FieldType{Scalar: store.DateTime}},
			{Name: "meta", Type: store.FieldType{Scalar: store.JSON}},
			{Name: "name", Type: store.FieldType{Scalar: store.String}},
			{Name: "price", Type: store.FieldType{Scalar: store.Float}},
			{Name: "qty", Type: store.FieldType{Scalar: store.Int}},
			{Name: "sku", Type: store.FieldType{Scalar: store.String}},
			{Name: "tags", Type: store.FieldType{Scalar: store.String, List: true}},
		},
		Indexes: indexes,
	}
}

func records(t testing.TB, s *store.Stores, tables ...store.Table) *store.Records {
	t.Helper()
	r, err := s.ProjectRecords(context.Background(), "demo", "", tables)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMongoRecordsReadBackAsWritten: what a read answers is the Record that Insert answered,
// value for value, whatever the strings, numbers, dates and nesting; the conversion from BSON
// writes JSON by hand, so this is its check against encoding/json.
func TestMongoRecordsReadBackAsWritten(t *testing.T) {
	ctx := context.Background()
	s, _ := openMongoStores(t)
	r := records(t, s, mongoTable())
	at := time.Date(2026, 11, 22, 10, 4, 5, 123_000_000, time.UTC)
	rows := []map[string]any{
		{"name": `quote " backslash \ tab 	 newline` + "\n\x01\x1f", "price": 3.0, "qty": int64(-7)},
		{"name": "ünïcödé 日本語 \u2028 \u2029 emoji 🎉", "price": 1e21, "qty": int64(1) << 53},
		{"name": "<html>&amp;", "price": 1e-7, "at": at, "tags": []any{"a", "", "ß"}},
		{"name": "", "price": -0.5, "meta": map[string]any{"nested": map[string]any{"list": []any{1.5, "x", nil, true}}, "n": 2.0}},
		{"price": 123456789.125, "meta": []any{map[string]any{}, "s"}},
	}
	var inserted []map[string]any
	if err := r.Insert(ctx, "products", "owner-1", rows, &inserted); err != nil {
		t.Fatal(err)
	}
	var read []map[string]any
	if err := r.Find(ctx, "products", store.Query{}, &read); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(read, inserted) {
		a, _ := json.MarshalIndent(inserted, "", " ")
		b, _ := json.MarshalIndent(read, "", " ")
		t.Fatalf("read back:\n%s\nwant what Insert answered:\n%s", b, a)
	}
	var raw []json.RawMessage
	if err := r.Find(ctx, "products", store.Query{Limit: 1}, &raw); err != nil {
		t.Fatal(err)
	}
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(raw[0]))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var v json.RawMessage
		_ = dec.Decode(&v)
	}
	if want := []string{"uid", "_owner", "createdAt", "updatedAt"}; !slices.Equal(keys[:4], want) {
		t.Errorf("a record's keys start %v, want %v", keys, want)
	}
}

// TestMongoUniqueConflicts: a write that breaks a unique index is a *ConflictError naming its
// fields and the value, and writes nothing, whether the server names the index (MongoDB) or
// not (FerretDB).
func TestMongoUniqueConflicts(t *testing.T) {
	ctx := context.Background()
	s, _ := openMongoStores(t)
	r := records(t, s, mongoTable(
		store.Index{Fields: []string{"sku"}, Unique: true},
		store.Index{Fields: []string{"name", "qty"}, Unique: true},
	))
	var first []struct {
		UID string `json:"uid"`
	}
	if err := r.Insert(ctx, "products", "o", []map[string]any{
		{"sku": "a", "name": "n", "qty": int64(1)},
		{"sku": "b", "name": "n", "qty": int64(2)},
	}, &first); err != nil {
		t.Fatal(err)
	}
	count := func() int64 {
		n, err := r.Count(ctx, "products", store.All)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	exported := func(uid string) store.Record {
		var recs []json.RawMessage
		if err := r.Find(ctx, "products", store.Query{Filter: store.Compare(store.KeyUID, store.Eq, uid)}, &recs); err != nil || len(recs) != 1 {
			t.Fatalf("find %s: %v %v", uid, recs, err)
		}
		return store.Record(recs[0])
	}
	for _, tc := range []struct {
		name   string
		write  func() error
		fields []string
		value  []any
	}{
		{"insert a taken sku", func() error {
			return r.Insert(ctx, "products", "o", []map[string]any{{"sku": "a"}}, nil)
		}, []string{"sku"}, []any{"a"}},
		{"a batch whose last record takes a sku", func() error {
			return r.Insert(ctx, "products", "o", []map[string]any{{"sku": "c"}, {"sku": "d"}, {"sku": "b"}}, nil)
		}, []string{"sku"}, []any{"b"}},
		{"a batch that repeats a sku", func() error {
			return r.Insert(ctx, "products", "o", []map[string]any{{"sku": "e"}, {"sku": "e"}}, nil)
		}, []string{"sku"}, []any{"e"}},
		{"insert a taken pair of two fields", func() error {
			return r.Insert(ctx, "products", "o", []map[string]any{{"sku": "f", "name": "n", "qty": int64(2)}}, nil)
		}, []string{"name", "qty"}, []any{"n", int64(2)}},
		{"update to a taken sku", func() error {
			return r.Update(ctx, "products", first[1].UID, store.All, map[string]any{"sku": "a"}, nil, nil)
		}, []string{"sku"}, []any{"a"}},
		{"import a stored uid", func() error {
			return r.Import(ctx, "products", []store.Record{exported(first[0].UID)})
		}, []string{store.KeyUID}, []any{first[0].UID}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := count()
			err := tc.write()
			var ce *store.ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *ConflictError", err)
			}
			if !slices.Equal(ce.Fields, tc.fields) || !reflect.DeepEqual(normalize(ce.Value), tc.value) {
				t.Errorf("conflict on %v = %#v, want %v = %#v", ce.Fields, ce.Value, tc.fields, tc.value)
			}
			if n := count(); n != before {
				t.Errorf("%d records after the refused write, want %d", n, before)
			}
		})
	}
	var got struct {
		SKU string `json:"sku"`
	}
	if err := r.Get(ctx, "products", first[1].UID, store.All, &got); err != nil || got.SKU != "b" {
		t.Errorf("after the refused update: %+v %v, want sku b", got, err)
	}
}

// normalize reads numbers as the store's Int values are: whole float64s as int64.
func normalize(vals []any) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		if f, ok := v.(float64); ok && f == float64(int64(f)) {
			v = int64(f)
		}
		out[i] = v
	}
	return out
}

// TestMongoEnsureIndexes: Ensure creates the platform's and the declared indexes once, drops
// those no longer declared, leaves an operator's own alone, and refuses a unique index that
// the records break with the duplicate value, keeping the indexes it had.
func TestMongoEnsureIndexes(t *testing.T) {
	ctx := context.Background()
	s, uri := openMongoStores(t)
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	coll := client.Database(store.ProjectDatabaseName("demo")).Collection("products")
	indexes := func() []string {
		specs, err := coll.Indexes().ListSpecifications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, sp := range specs {
			names = append(names, sp.Name)
		}
		slices.Sort(names)
		return names
	}
	r := records(t, s, mongoTable(store.Index{Fields: []string{"price", store.KeyCreatedAt}}, store.Index{Fields: []string{"sku"}, Unique: true}))
	want := []string{"_id_", "platform__owner", "platform_createdAt", "platform_price_createdAt", "platform_sku_unique"}
	if got := indexes(); !slices.Equal(got, want) {
		t.Fatalf("indexes %v, want %v", got, want)
	}
	if err := r.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if got := indexes(); !slices.Equal(got, want) {
		t.Fatalf("after a second Ensure: indexes %v, want %v", got, want)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Insert(ctx, "products", "o", []map[string]any{{"name": "x", "qty": int64(3)}, {"name": "y", "qty": int64(3)}}, nil); err != nil {
		t.Fatal(err)
	}

	records(t, s, mongoTable(store.Index{Fields: []string{"createdAt"}}))
	want = []string{"_id_", "name_1", "platform__owner", "platform_createdAt"}
	if got := indexes(); !slices.Equal(got, want) {
		t.Fatalf("after removing two declared indexes: %v, want %v", got, want)
	}

	r, err = s.ProjectRecords(ctx, "demo", "", []store.Table{mongoTable(store.Index{Fields: []string{"qty"}, Unique: true}, store.Index{Fields: []string{"price"}})})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Ensure(ctx)
	var ie *store.IndexError
	if !errors.As(err, &ie) || !reflect.DeepEqual(normalize(ie.Value), []any{int64(3)}) || !slices.Equal(ie.Index.Fields, []string{"qty"}) {
		t.Fatalf("unique index on duplicates: %v, want an *IndexError with the value 3", err)
	}
	if got := indexes(); !slices.Equal(got, want) {
		t.Fatalf("after the refused index: %v, want %v", got, want)
	}
}
