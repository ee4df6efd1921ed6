package store_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/platform-dev/platform/store"
)

// TestIndexBuildMemory: declaring an index on a table that holds records builds it without
// holding its sorted entries in memory (SQLite's writer sorts through temporary files past
// its page cache): the process's peak resident memory grows by a fraction of what the sort
// holds. With the sort in memory, an import of a million records peaked at 424 MB.
func TestIndexBuildMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50,000 records")
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak resident memory: %v", err)
	}
	const n = 50_000
	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	tbl := store.Table{Name: "products", Fields: []store.Field{
		{Name: "name", Type: store.FieldType{Scalar: store.String}},
		{Name: "sku", Type: store.FieldType{Scalar: store.String}},
	}}
	recs, err := s.ProjectRecords(ctx, "big", "", []store.Table{tbl})
	if err != nil {
		t.Fatal(err)
	}
	if err := recs.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	// sorted is what the entries of an index on (name, sku) hold: the two values, the uid
	// and a few bytes of header.
	var sorted int64
	batch := make([]map[string]any, 0, 1000)
	for i := range n {
		name, sku := fmt.Sprintf("item-%d-%s", i, strings.Repeat("x", 400)), fmt.Sprintf("sku-%d", n-i)
		sorted += int64(len(name) + len(sku) + 36 + 8)
		batch = append(batch, map[string]any{"name": name, "sku": sku})
		if len(batch) == cap(batch) {
			if err := recs.Insert(ctx, "products", "alice", batch, nil); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	tbl.Indexes = []store.Index{{Fields: []string{"name", "sku"}}}
	recs, err = s.ProjectRecords(ctx, "big", "", []store.Table{tbl})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
	before := memory(t, "VmRSS")
	if err := recs.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	grew := memory(t, "VmHWM") - before
	t.Logf("building the index of %d records grew the peak resident memory by %d KB", n, grew>>10)
	if grew > sorted/2 {
		t.Fatalf("the peak resident memory grew by %d KB building an index whose entries hold %d KB", grew>>10, sorted>>10)
	}
}

// memory is the process's figure named key in /proc/self/status, in bytes.
func memory(t *testing.T, key string) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", key)
	return 0
}
