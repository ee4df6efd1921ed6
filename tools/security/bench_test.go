package security_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tools/security"
	"github.com/platform-dev/platform/tools/workspace"
)

// BenchmarkAssessFixture is one scope-both assessment of the fixture: gitleaks, gosec (one Go
// module), token rules over three languages and the infrastructure rules.
func BenchmarkAssessFixture(b *testing.B) {
	ws, err := workspace.New("testdata/ws")
	if err != nil {
		b.Fatal(err)
	}
	a, err := security.New(ws, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := a.Assess(context.Background(), security.Options{Scope: security.ScopeBoth}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssessPythonCorpus assesses 200 generated Python files of 400 lines (80,000 lines)
// with scope code: the cost of secrets and token rules per line.
func BenchmarkAssessPythonCorpus(b *testing.B) {
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
	ws, err := workspace.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	a, err := security.New(ws, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := a.Assess(context.Background(), security.Options{Scope: security.ScopeCode}); err != nil {
			b.Fatal(err)
		}
	}
}
