package mcpserver

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools"
)

// BenchmarkLimiter measures the per-request limit checks of a tools/call: the sliding-window
// rate check and taking and returning a concurrency slot, against miniredis and, when
// installed, redis-server.
func BenchmarkLimiter(b *testing.B) {
	addrs := map[string]string{"miniredis": miniredis.RunT(b).Addr()}
	if testenv.Use("redis-server") {
		addrs["redis-server"], _ = testenv.RedisServer(b)
	}
	for name, addr := range addrs {
		b.Run(name, func(b *testing.B) {
			rdb := redis.NewClient(&redis.Options{Addr: addr})
			defer rdb.Close()
			// A 1 ms window keeps the rate log as short as a real client's (60 at most).
			s, err := New(Config{RequestsPerWindow: 1 << 30, Window: time.Millisecond, MaxConcurrent: 1 << 20, KeyPrefix: "bench:"}, rdb, tools.Set{}, nil, slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				adm, rerr := s.admit(ctx, w, "192.0.2.1", "", slotTake, time.Minute)
				if rerr != nil {
					b.Fatal(rerr.Details)
				}
				s.releaseSlot("192.0.2.1", adm.slot)
			}
		})
	}
}
