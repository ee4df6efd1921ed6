package pressure_test

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/platform-dev/platform/pressure"
)

// sink keeps the garbage the test makes from being optimised away.
var sink []byte

// waitFor allocates garbage, which makes the collector run and the live heap figure move,
// until cond holds; it fails after a long deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 20 s", what)
		}
		for range 64 {
			sink = make([]byte, 64<<10)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWatcherHeap: holding memory past the threshold of a small limit is seen as pressure,
// and letting it go clears it, on the process's real heap.
func TestWatcherHeap(t *testing.T) {
	runtime.GC()
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	base := int64(live[0].Value.Uint64())
	// The threshold sits 32 MiB above what the process holds now.
	const margin = 32 << 20
	w, err := pressure.NewWatcher(pressure.WatcherConfig{
		Limit: 2 * (base + margin), Fraction: 0.5, Interval: 5 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	waitFor(t, "first sample", func() bool { return w.Used() > 0 })
	if w.UnderPressure() {
		t.Fatalf("under pressure before allocating: held %d, threshold %d", w.Used(), w.Threshold())
	}
	held := make([][]byte, 0, 64)
	for range 64 {
		b := make([]byte, 1<<20)
		for i := range b {
			b[i] = 1
		}
		held = append(held, b)
	}
	waitFor(t, "pressure with 64 MiB held", w.UnderPressure)
	if w.Used() <= w.Threshold() {
		t.Fatalf("pressure while holding %d, under the threshold %d", w.Used(), w.Threshold())
	}
	// Past its last use the held memory is garbage.
	runtime.KeepAlive(held)
	waitFor(t, "end of pressure once released", func() bool { return !w.UnderPressure() })
}

func TestWatcherWithoutLimit(t *testing.T) {
	w, err := pressure.NewWatcher(pressure.WatcherConfig{})
	if err != nil {
		t.Fatal(err)
	}
	w.Run(t.Context()) // returns at once: nothing to watch
	if w.UnderPressure() || w.Threshold() != 0 {
		t.Fatal("pressure without a limit")
	}
}

func TestParseBytes(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		bad  bool
	}{
		{"", 0, false},
		{"900MiB", 900 << 20, false},
		{"2GiB", 2 << 30, false},
		{"1073741824", 1 << 30, false},
		{"1GB", 1e9, false},
		{"lots", 0, true},
		{"-1", 0, true},
	}
	for _, tc := range cases {
		got, err := pressure.ParseBytes(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d (error: %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
