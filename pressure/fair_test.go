package pressure_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/platform-dev/platform/pressure"
)

// BenchmarkFairShareDo is what admission costs a request that finds a free slot (the fast
// path), with requests of 10 projects arriving from every core at once.
func BenchmarkFairShareDo(b *testing.B) {
	share, err := pressure.NewFairShare(pressure.FairShareConfig{Slots: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			if err := share.Do(ctx, "p"+strconv.Itoa(i%10), func() {}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
