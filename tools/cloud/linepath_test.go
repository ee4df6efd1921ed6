package cloud_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tools/cloud"
	"github.com/platform-dev/platform/tools/workspace"
)

// TestDeepLongKeysStayBounded: a manifest of kilobyte keys nested 90 deep above 150,000
// list items (390 KB, within every reading limit) is read without writing the keys out again
// for every node below them (it took 28 GB), and the lines of short paths are still known.
func TestDeepLongKeysStayBounded(t *testing.T) {
	var s strings.Builder
	s.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  short: {a: 1}\n  deep: ")
	for i := range 90 {
		fmt.Fprintf(&s, "{%s%d: ", strings.Repeat("k", 1000), i)
	}
	s.WriteString("[" + strings.TrimSuffix(strings.Repeat("a,", 150_000), ",") + "]" + strings.Repeat("}", 90) + "\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c := cloud.NewCollector()
	c.Add(workspace.File{Rel: "cm.yaml", Content: []byte(s.String())})
	inv := c.Inventory()
	runtime.ReadMemStats(&after)
	t.Logf("reading a %d-byte manifest allocated %d MB", s.Len(), (after.TotalAlloc-before.TotalAlloc)>>20)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
		t.Errorf("reading the manifest allocated %d MB", grew>>20)
	}
	if len(inv.Resources) != 1 || len(inv.Errors) != 0 {
		t.Fatalf("resources %d, errors %v", len(inv.Resources), inv.Errors)
	}
	r := inv.Resources[0]
	if l := r.LineOf("data", "short", "a"); l != 6 {
		t.Errorf("line of data.short.a: %d, want 6", l)
	}
	if l := r.LineOf("data", "deep", strings.Repeat("k", 1000)+"0", strings.Repeat("k", 1000)+"1"); l != 7 {
		t.Errorf("line of a path past the recorded length: %d, want 7 (data.deep's)", l)
	}
}
