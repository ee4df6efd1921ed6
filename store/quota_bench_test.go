package store_test

import (
	"context"
	"testing"

	"github.com/platform-dev/platform/store"
)

// BenchmarkStoredSample compares, on the mongo backend (FerretDB) at 20,000 records, the
// exact count of what a project stores (Stored, for quotas) with the sample usage metering
// takes (StoredSample: the collections' estimated counts).
func BenchmarkStoredSample(b *testing.B) {
	s, _ := openMongoStores(b)
	recs := seedProducts(b, s, 20_000)
	for _, c := range []struct {
		name   string
		stored func(context.Context) (store.StoredSize, error)
	}{{"exact", recs.Stored}, {"sample", recs.StoredSample}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if st, err := c.stored(b.Context()); err != nil || st.Records != 20_000 {
					b.Fatalf("%+v, %v", st, err)
				}
			}
		})
	}
}
