package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
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
	// Records without a field of a unique index do not collide on it, as NULLs in SQL.
	before := count()
	if err := r.Insert(ctx, "products", "o", []map[string]any{{"name": "m"}, {"name": "m", "sku": nil}}, nil); err != nil {
		t.Fatalf("two records without sku or qty: %v", err)
	}
	if err := r.Update(ctx, "products", first[0].UID, store.All, map[string]any{"sku": nil}, nil, nil); err != nil {
		t.Fatalf("removing a sku by setting it to null: %v", err)
	}
	if n := count(); n != before+2 {
		t.Fatalf("%d records, want %d", n, before+2)
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

// TestMongoEnsureIndexes: Ensure creates the platform's and the declared indexes once (uid
// after the fields of all but unique ones), drops those no longer declared, remakes one of
// the platform's names with other keys, leaves an operator's own alone, and refuses a unique
// index that the records break with the duplicate value, keeping the indexes it had.
func TestMongoEnsureIndexes(t *testing.T) {
	ctx := context.Background()
	s, uri := openMongoStores(t)
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	coll := client.Database(store.ProjectDatabaseName("demo")).Collection("products")
	// indexes lists the collection's indexes as name(keys), unique ones with a "!".
	indexes := func() []string {
		specs, err := coll.Indexes().ListSpecifications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, sp := range specs {
			elems, _ := sp.KeysDocument.Elements()
			var keys []string
			for _, e := range elems {
				keys = append(keys, e.Key())
			}
			name := sp.Name + "(" + strings.Join(keys, ",") + ")"
			if sp.Unique != nil && *sp.Unique {
				name += "!"
			}
			names = append(names, name)
		}
		slices.Sort(names)
		return names
	}
	r := records(t, s, mongoTable(store.Index{Fields: []string{"price", store.KeyCreatedAt}}, store.Index{Fields: []string{"sku"}, Unique: true}))
	want := []string{"_id_(_id)", "platform__owner(_owner,_id)", "platform_createdAt(createdAt,_id)",
		"platform_price_createdAt(price,createdAt,_id)", "platform_sku_unique(sku)!"}
	if got := indexes(); !slices.Equal(got, want) {
		t.Fatalf("indexes %v, want %v", got, want)
	}
	if err := r.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if got := indexes(); !slices.Equal(got, want) {
		t.Fatalf("after a second Ensure: indexes %v, want %v", got, want)
	}
	for _, m := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "name", Value: 1}}},
		{Keys: bson.D{{Key: "createdAt", Value: -1}}, Options: options.Index().SetName("platform_createdAt_x")},
	} {
		if _, err := coll.Indexes().CreateOne(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := coll.Indexes().DropOne(ctx, "platform__owner"); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "_owner", Value: 1}}, Options: options.Index().SetName("platform__owner")}); err != nil {
		t.Fatal(err)
	}
	if err := r.Insert(ctx, "products", "o", []map[string]any{{"name": "x", "qty": int64(3)}, {"name": "y", "qty": int64(3)}}, nil); err != nil {
		t.Fatal(err)
	}

	records(t, s, mongoTable(store.Index{Fields: []string{"createdAt"}}))
	want = []string{"_id_(_id)", "name_1(name)", "platform__owner(_owner,_id)", "platform_createdAt(createdAt,_id)"}
	if got := indexes(); !slices.Equal(got, want) {
		t.Fatalf("after removing two declared indexes and remaking platform__owner: %v, want %v", got, want)
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

// TestMongoDedicatedCluster: a project that names its own mongoURI keeps its records there,
// not on the main cluster, and Drop removes them there.
func TestMongoDedicatedCluster(t *testing.T) {
	ctx := context.Background()
	s, _ := openMongoStores(t)
	own, stop, err := store.StartFerretDB(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop(context.Background()) })
	open := func(uri string) *store.Records {
		r, err := s.ProjectRecords(ctx, "own", uri, []store.Table{mongoTable()})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	dedicated, main := open(own), open("")
	if err := dedicated.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dedicated.Insert(ctx, "products", "o", []map[string]any{{"name": "there"}}, nil); err != nil {
		t.Fatal(err)
	}
	tables := func(r *store.Records) []string {
		names, err := r.StoredTables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	if got, want := tables(dedicated), []string{"products"}; !slices.Equal(got, want) {
		t.Fatalf("tables on the dedicated cluster: %v, want %v", got, want)
	}
	if got := tables(main); len(got) != 0 {
		t.Fatalf("tables of the project on the main cluster: %v, want none", got)
	}
	// A second Records on the same mongoURI shares the client, and sees the record.
	if n, err := open(own).Count(ctx, "products", store.All); n != 1 || err != nil {
		t.Fatalf("count through a second ProjectRecords: %d, %v; want 1", n, err)
	}
	if err := dedicated.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := tables(dedicated); len(got) != 0 {
		t.Fatalf("tables after Drop: %v, want none", got)
	}
}

// BenchmarkMongo runs BenchmarkSQLite's queries on the mongo backend over an embedded
// FerretDB, which answers everything but a lookup by uid by reading the whole collection.
func BenchmarkMongo(b *testing.B) {
	for _, n := range []int{10_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			s, _ := openMongoStores(b)
			benchQueries(b, seedProducts(b, s, n), n)
		})
	}
}

// TestMongoFailedImportKeepsRecords: an import that fails without saying which records it
// wrote (here: out of time before it began) removes only what it may have written itself,
// never a stored record with a uid it also carries.
func TestMongoFailedImportKeepsRecords(t *testing.T) {
	ctx := context.Background()
	s, _ := openMongoStores(t)
	r := records(t, s, mongoTable())
	var stored []map[string]any
	if err := r.Insert(ctx, "products", "o", []map[string]any{{"name": "kept"}}, &stored); err != nil {
		t.Fatal(err)
	}
	uid := stored[0]["uid"].(string)
	late, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	err := r.Import(late, "products", []store.Record{
		store.Record(`{"uid":"` + uid + `","_owner":"x","createdAt":"2020-01-01T00:00:00.000Z","name":"other"}`),
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("import out of time: %v, want DeadlineExceeded", err)
	}
	var got map[string]any
	if err := r.Get(ctx, "products", uid, store.All, &got); err != nil || got["name"] != "kept" {
		t.Fatalf("the stored record after the failed import: %v, %v", got, err)
	}
}
