package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
)

// benchProducts is the table and data of the peer benchmark (../shared/peers/pocketbase):
// record i has name "item-i", price i%1000+0.5, sku "sku-i", and author "author-(i%10)" when
// i is even; sku and price are indexed.
var benchProducts = store.Table{
	Name: "products",
	Fields: []store.Field{
		{Name: "author", Type: store.FieldType{Scalar: store.String}},
		{Name: "name", Type: store.FieldType{Scalar: store.String}, Required: true},
		{Name: "price", Type: store.FieldType{Scalar: store.Float}, Required: true},
		{Name: "sku", Type: store.FieldType{Scalar: store.String}},
	},
	Indexes: []store.Index{{Fields: []string{"sku"}}, {Fields: []string{"price"}}},
}

func seedProducts(b *testing.B, s *store.Stores, n int) *store.Records {
	return seedTable(b, s, fmt.Sprintf("bench%d", n), benchProducts, n)
}

// seedTable fills table t of project id with the peer benchmark's n records.
func seedTable(b *testing.B, s *store.Stores, id string, t store.Table, n int) *store.Records {
	ctx := context.Background()
	recs, err := s.ProjectRecords(ctx, id, "", []store.Table{t})
	if err != nil {
		b.Fatal(err)
	}
	if err := recs.Ensure(ctx); err != nil {
		b.Fatal(err)
	}
	const batch = 1000
	fields := make([]map[string]any, 0, batch)
	for i := range n {
		f := map[string]any{"name": fmt.Sprintf("item-%d", i), "price": float64(i%1000) + 0.5, "sku": fmt.Sprintf("sku-%d", i)}
		if i%2 == 0 {
			f["author"] = fmt.Sprintf("author-%d", i%10)
		}
		fields = append(fields, f)
		if len(fields) == batch || i == n-1 {
			if err := recs.Insert(ctx, "products", "alice", fields, nil); err != nil {
				b.Fatal(err)
			}
			fields = fields[:0]
		}
	}
	return recs
}

// BenchmarkSQLite runs the peer benchmark's five queries on the store's API at 10,000 and
// 100,000 records, with an unindexed equality and keyset pages 1 and 1,000 besides.
func BenchmarkSQLite(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			benchQueries(b, seedProducts(b, openSQLiteStores(b), n), n)
		})
	}
}

// BenchmarkSQLiteRatios measures what the targets compare, each pair in the same loop so
// that the load of a shared machine weighs on both sides alike: every query at 100,000
// records against 10,000 (an indexed query should cost about the same), and keyset page
// 1,000 against page 1.
func BenchmarkSQLiteRatios(b *testing.B) {
	s := openSQLiteStores(b)
	small := productQueries(b, seedProducts(b, s, 10_000), 10_000)
	large := productQueries(b, seedProducts(b, s, 100_000), 100_000)
	pair := func(name, unit1, unit2 string, q1, q2 func() error) {
		b.Run(name, func(b *testing.B) {
			var d1, d2 time.Duration
			for b.Loop() {
				t0 := time.Now()
				if err := q1(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := q2(); err != nil {
					b.Fatal(err)
				}
				d1, d2 = d1+t1.Sub(t0), d2+time.Since(t1)
			}
			b.ReportMetric(float64(d1.Nanoseconds())/float64(b.N), unit1+"-ns/op")
			b.ReportMetric(float64(d2.Nanoseconds())/float64(b.N), unit2+"-ns/op")
			b.ReportMetric(float64(d2)/float64(d1), unit2+"/"+unit1)
		})
	}
	for i, q := range large {
		if q.name == "b_name_unindexed" {
			continue // a scan: ten times the records cost ten times as much
		}
		name := q.name
		if name != small[i].name {
			name = "f_keyset_deep_page" // page 500 of 10,000 records, page 1,000 of 100,000
		}
		pair(name, "10k", "100k", small[i].run, q.run)
	}
	pages := map[string]func() error{}
	for _, q := range large {
		pages[q.name] = q.run
	}
	pair("keyset_page_1000_vs_1", "page1", "page1000", pages["f_keyset_page_1"], pages["f_keyset_page_1000"])
}

// BenchmarkSQLiteNoIndex runs the peer benchmark's queries that an index serves (b, c, d)
// on a table that declares none, at 100,000 records: scans.
func BenchmarkSQLiteNoIndex(b *testing.B) {
	noIndex := benchProducts
	noIndex.Indexes = nil
	const n = 100_000
	qs := productQueries(b, seedTable(b, openSQLiteStores(b), "benchnoidx", noIndex, n), n)
	runQueries(b, slices.DeleteFunc(qs, func(q benchQuery) bool {
		return q.name != "b_sku" && q.name != "c_price_desc_20" && q.name != "d_count"
	}))
}

// BenchmarkSQLiteInsert writes the peer benchmark's records in batches of 100 (as its
// seeding does) into a table with no declared index: the write cost of the platform's own
// indexes, the scan index among them.
func BenchmarkSQLiteInsert(b *testing.B) {
	ctx := context.Background()
	noIndex := benchProducts
	noIndex.Indexes = nil
	recs := seedTable(b, openSQLiteStores(b), "insert", noIndex, 0)
	batch := make([]map[string]any, 100)
	i := 0
	for b.Loop() {
		for j := range batch {
			batch[j] = map[string]any{"name": fmt.Sprintf("item-%d", i), "price": float64(i%1000) + 0.5, "sku": fmt.Sprintf("sku-%d", i), "author": "author-1"}
			i++
		}
		if err := recs.Insert(ctx, "products", "alice", batch, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/record")
}

func openSQLiteStores(b *testing.B) *store.Stores { return openSQLiteAt(b, b.TempDir()) }

// openSQLiteAt opens the stores of data folder dir, as each replica sharing it does.
func openSQLiteAt(tb testing.TB, dir string) *store.Stores {
	s, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// benchQueries runs each of productQueries as a benchmark.
func benchQueries(b *testing.B, recs *store.Records, n int) {
	runQueries(b, productQueries(b, recs, n))
}

func runQueries(b *testing.B, qs []benchQuery) {
	for _, q := range qs {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				if err := q.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type benchQuery struct {
	name string
	run  func() error
}

// productQueries are the peer benchmark's queries on recs, which seedProducts filled with n
// records, each checking its answer.
func productQueries(b *testing.B, recs *store.Records, n int) []benchQuery {
	ctx := context.Background()
	p := min(777, n/2)
	var qs []benchQuery
	// each selects q and checks that it selected want records.
	each := func(name string, q store.Query, want int) {
		qs = append(qs, benchQuery{name, func() error {
			got := 0
			if err := recs.Each(ctx, "products", q, func(store.Record) (bool, error) {
				got++
				return true, nil
			}); err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("%s: %d records, want %d", name, got, want)
			}
			return nil
		}})
	}
	var byUID []struct {
		UID string `json:"uid"`
	}
	if err := recs.Find(ctx, "products", store.Query{Offset: int64(p), Limit: 1}, &byUID); err != nil || len(byUID) != 1 {
		b.Fatal(byUID, err)
	}
	qs = append(qs, benchQuery{"a_uid", func() error {
		var got map[string]any
		return recs.Get(ctx, "products", byUID[0].UID, store.All, &got)
	}})
	each("b_sku", store.Query{Filter: store.Compare("sku", store.Eq, fmt.Sprintf("sku-%d", p))}, 1)
	each("b_name_unindexed", store.Query{Filter: store.Compare("name", store.Eq, fmt.Sprintf("item-%d", p))}, 1)
	gte500 := store.Compare("price", store.Gte, 500.0)
	each("c_price_desc_20", store.Query{Filter: gte500, Order: []store.Order{{Key: "price", Desc: true}}, Limit: 20}, 20)
	qs = append(qs, benchQuery{"d_count", func() error {
		c, err := recs.Count(ctx, "products", gte500)
		if err == nil && c != int64(n/2) {
			err = fmt.Errorf("count %d, want %d", c, n/2)
		}
		return err
	}})
	each("e_first_100", store.Query{Limit: 100}, 100)

	// Keyset pages of 20 by price: page 1, and page 1,000 (or the last full page of a
	// smaller table) after the cursor of the record before it.
	asc := []store.Order{{Key: "price"}}
	page := min(1000, n/20)
	var before []store.Record
	if err := recs.Each(ctx, "products", store.Query{Order: asc, Offset: int64((page-1)*20 - 1), Limit: 1}, func(r store.Record) (bool, error) {
		before = append(before, r)
		return true, nil
	}); err != nil || len(before) != 1 {
		b.Fatal(err)
	}
	cur, err := benchProducts.CursorOf(before[0], asc)
	if err != nil {
		b.Fatal(err)
	}
	each("f_keyset_page_1", store.Query{Order: asc, Limit: 20}, 20)
	each(fmt.Sprintf("f_keyset_page_%d", page), store.Query{Order: asc, After: &cur, Limit: 20}, 20)
	return qs
}
