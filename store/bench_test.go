package store_test

import (
	"context"
	"fmt"
	"testing"

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
	ctx := context.Background()
	recs, err := s.ProjectRecords(ctx, "bench", "", []store.Table{benchProducts})
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
// 100,000 records, with an unindexed equality and keyset pages 1 and 1,000 besides: from
// 10k to 100k an indexed query should cost about the same, and page 1,000 what page 1 costs.
func BenchmarkSQLite(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			s, err := store.Open(context.Background(), store.Config{DataDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(context.Background())
			benchQueries(b, seedProducts(b, s, n), n)
		})
	}
}

func benchQueries(b *testing.B, recs *store.Records, n int) {
	ctx := context.Background()
	p := min(777, n/2)
	// each runs q and checks that it selected want records.
	each := func(name string, q store.Query, want int) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				got := 0
				if err := recs.Each(ctx, "products", q, func(store.Record) (bool, error) {
					got++
					return true, nil
				}); err != nil {
					b.Fatal(err)
				}
				if got != want {
					b.Fatalf("%d records, want %d", got, want)
				}
			}
		})
	}
	var first struct {
		UID string `json:"uid"`
	}
	var byUID []struct {
		UID string `json:"uid"`
	}
	if err := recs.Find(ctx, "products", store.Query{Offset: int64(p), Limit: 1}, &byUID); err != nil || len(byUID) != 1 {
		b.Fatal(byUID, err)
	}
	first = byUID[0]
	b.Run("a_uid", func(b *testing.B) {
		var got map[string]any
		for b.Loop() {
			if err := recs.Get(ctx, "products", first.UID, store.All, &got); err != nil {
				b.Fatal(err)
			}
		}
	})
	each("b_sku", store.Query{Filter: store.Compare("sku", store.Eq, fmt.Sprintf("sku-%d", p))}, 1)
	each("b_name_unindexed", store.Query{Filter: store.Compare("name", store.Eq, fmt.Sprintf("item-%d", p))}, 1)
	gte500 := store.Compare("price", store.Gte, 500.0)
	desc := []store.Order{{Key: "price", Desc: true}}
	each("c_price_desc_20", store.Query{Filter: gte500, Order: desc, Limit: 20}, 20)
	b.Run("d_count", func(b *testing.B) {
		for b.Loop() {
			c, err := recs.Count(ctx, "products", gte500)
			if err != nil || c != int64(n/2) {
				b.Fatal(c, err)
			}
		}
	})
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
}
