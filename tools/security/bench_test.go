package security_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools/security"
)

// pythonCorpus writes 200 generated Python files of 400 lines (80,000 lines).
func pythonCorpus(b *testing.B) string {
	dir := b.TempDir()
	var src strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&src, "def handler_%d(cursor, uid):\n    # look up one row\n    return cursor.execute(\"SELECT * FROM t WHERE id = %%s\", (uid,))\n\n", i)
	}
	for f := 0; f < 200; f++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%03d.py", f)), []byte(src.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// benchAssess measures one assessment of dir: cold with a new assessor (empty caches) per
// iteration, warm with one assessor whose caches a first call filled.
func benchAssess(b *testing.B, dir string, opts security.Options, warm bool) {
	a := assessorOn(b, dir)
	if warm {
		if _, err := a.Assess(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if !warm {
			b.StopTimer()
			a = assessorOn(b, dir)
			b.StartTimer()
		}
		if _, err := a.Assess(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssessFixture is one scope-both assessment of the fixture: gitleaks, gosec (one Go
// module), token rules over three languages and the infrastructure rules.
func BenchmarkAssessFixture(b *testing.B) {
	opts := security.Options{Scope: security.ScopeBoth}
	b.Run("cold", func(b *testing.B) { benchAssess(b, "testdata/ws", opts, false) })
	b.Run("warm", func(b *testing.B) { benchAssess(b, "testdata/ws", opts, true) })
}

// BenchmarkAssessPythonCorpus assesses 80,000 generated lines of Python with scope code: the
// cost of secrets and token rules per line, and what the cache saves.
func BenchmarkAssessPythonCorpus(b *testing.B) {
	dir := pythonCorpus(b)
	opts := security.Options{Scope: security.ScopeCode}
	b.Run("cold", func(b *testing.B) { benchAssess(b, dir, opts, false) })
	b.Run("warm", func(b *testing.B) { benchAssess(b, dir, opts, true) })
}

// largeTree copies $(go env GOROOT)/src/net, crypto and encoding (about 420,000 lines, 1,750
// files) into a module of its own, a repository every machine with Go can build.
func largeTree(b *testing.B) string {
	goroot := testenv.GOROOT(b)
	dir := b.TempDir()
	for _, sub := range []string{"net", "crypto", "encoding"} {
		if err := os.CopyFS(filepath.Join(dir, sub), os.DirFS(filepath.Join(goroot, "src", sub))); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/large\n\ngo 1.26\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkPeakRSSLargeTree makes 10 scope-both assessments of largeTree with one assessor
// and reports the process's peak RSS and its RSS after the first and the last call. Run it
// alone: the peak is the process's since it started.
func BenchmarkPeakRSSLargeTree(b *testing.B) {
	benchPeakRSS(b, largeTree(b))
}

// BenchmarkPeakRSSTenCalls makes 10 scope-both assessments of the Go standard library's net
// folder (about 500 files, gosec over its packages) with one assessor, the way a server
// answers repeated calls, and reports the process's peak RSS. Run it alone: the peak is the
// process's since it started.
func BenchmarkPeakRSSTenCalls(b *testing.B) {
	benchPeakRSS(b, filepath.Join(testenv.GOROOT(b), "src", "net"))
}

// benchPeakRSS makes 10 scope-both assessments of dir with one assessor.
func benchPeakRSS(b *testing.B, dir string) {
	opts := security.Options{Scope: security.ScopeBoth}
	var first, last float64
	for b.Loop() {
		a := assessorOn(b, dir)
		for i := range 10 {
			rep, err := a.Assess(context.Background(), opts)
			if err != nil {
				b.Fatal(err)
			}
			switch i {
			case 0:
				b.Logf("%d findings, notes %q", rep.Summary.Total, rep.Notes)
				first = rssMB(b)
			case 9:
				last = rssMB(b)
			}
		}
	}
	b.ReportMetric(first, "RSS-after-call-1-MB")
	b.ReportMetric(last, "RSS-after-call-10-MB")
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB") // Linux reports KiB
	}
}

// rssMB reads the process's resident set from /proc: Linux only, elsewhere the benchmark
// (which CI never runs) is skipped.
func rssMB(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Skip("no /proc:", err)
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(data), &size, &resident); err != nil {
		b.Fatal(err)
	}
	return float64(resident*int64(os.Getpagesize())) / (1 << 20)
}
