package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The figures of issue 27's fair share: project "quiet" is fetched by uid alone, then while
// 1, 2 and 8 other projects are each sent the equality query on an unindexed field of
// noisyRecords records by noisyConns clients at once (the noisy-neighbour script's load);
// quiet must keep at least minKept of its alone throughput beside one flooding project.
const (
	noisyRecords     = 100000
	noisyConns       = 32
	noisyMeasurement = 5 * time.Second
	minKept          = 0.70
)

// BenchmarkNoisyNeighbour: go test -run '^$' -bench NoisyNeighbour -benchtime 1x -timeout 30m ./e2e
func BenchmarkNoisyNeighbour(b *testing.B) {
	s := startNoisySite(b, 8, noisyRecords, "PLATFORM_GRAPHQL_TIMEOUT=60s")
	for _, flooding := range []int{1, 2, 8} {
		b.Run(fmt.Sprintf("flooding=%d", flooding), func(b *testing.B) {
			var alone, shared quietRun
			var floods []*floodRun
			for b.Loop() {
				alone, shared, floods = s.noisyRun(context.Background(), flooding, noisyConns, noisyRecords, noisyMeasurement)
			}
			kept := float64(shared.requests) / float64(alone.requests)
			p99 := float64(shared.p99) / float64(alone.p99)
			var served, refused, other int64
			for _, f := range floods {
				served += f.served.Load()
				refused += f.overloaded.Load()
				other += f.other.Load()
			}
			b.ReportMetric(kept, "quiet-kept")
			b.ReportMetric(p99, "quiet-p99/alone")
			b.ReportMetric(float64(served)/(noisyMeasurement+4*time.Second).Seconds(), "flood-req/s")
			// Logged as well, since a failed benchmark prints no metrics.
			b.Logf("quiet alone %.0f req/s, p99 %v; beside %d flooding: %.0f req/s (%.3f kept), p99 %v (%.1fx); floods served %d, refused %d",
				float64(alone.requests)/noisyMeasurement.Seconds(), alone.p99, flooding,
				float64(shared.requests)/noisyMeasurement.Seconds(), kept, shared.p99, p99, served, refused)
			for i, f := range floods {
				if f.served.Load() == 0 {
					b.Errorf("flooding project %s was never served", bigProject(i+1))
				}
			}
			if other > 0 {
				b.Errorf("%d answers to the floods were neither served nor 503 OVERLOADED", other)
			}
			if flooding == 1 && kept < minKept {
				b.Errorf("quiet kept %.3f of its alone throughput beside one flooding project, want at least %.2f", kept, minKept)
			}
		})
	}
}
