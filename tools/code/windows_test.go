package code_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools/code"
)

// TestGoDuplicatesAfterAnalysis: a Go file's duplication windows are hashed when
// detect_patterns first needs them, after analyze_codebase parsed the files without them, and
// again for a file edited since. Comments between the copied lines (a line comment, a block
// comment over several lines, a CRLF file's comment) do not break a copy, and code inside a
// block comment is no code line.
func TestGoDuplicatesAfterAnalysis(t *testing.T) {
	body := []string{
		"\ttotal := 0",
		"\tfor _, v := range values {",
		"\t\tif v > limit {",
		"\t\t\ttotal += limit",
		"\t\t} else {",
		"\t\t\ttotal += v",
		"\t\t}",
		"\t}",
		"\tavg := total / len(values)",
		"\treturn avg",
	}
	fn := func(name string, between map[int]string) string {
		lines := []string{"func " + name + "(values []int, limit int) int {"}
		for i, l := range body {
			if c, ok := between[i]; ok {
				lines = append(lines, c)
			}
			lines = append(lines, l)
		}
		return strings.Join(append(lines, "}"), "\n") + "\n"
	}
	root := t.TempDir()
	testenv.WriteTree(t, root, map[string]string{
		"go.mod": "module example.com/dup\n\ngo 1.22\n",
		"a/a.go": "package a\n\n" + fn("Sum", nil),
		"b/b.go": "package b\n\n/*\n\ttotal := 0\n\tfor _, v := range values {\n*/\n\n" +
			fn("Add", map[int]string{2: "\t\t// a comment between", 5: "\t\t/* a block\n\t\t   over lines */"}),
		"c/c.go": strings.ReplaceAll("package c\n\n"+fn("Plus", map[int]string{4: "\t\t// crlf"}), "\n", "\r\n"),
	})
	a := newAnalyzer(t, root)
	var ana code.CodebaseReport
	mustCall(t, a, "analyze_codebase", map[string]any{}, &ana)
	duplicates := func() []string {
		t.Helper()
		var rep code.PatternReport
		mustCall(t, a, "detect_patterns", map[string]any{"pattern_type": "duplicated-code"}, &rep)
		var out []string
		for _, f := range rep.Findings {
			for _, e := range f.Evidence {
				out = append(out, e.File+":"+strconv.Itoa(e.Line)+"-"+strconv.Itoa(e.End))
			}
		}
		slices.Sort(out)
		return out
	}
	if got, want := duplicates(), []string{"a/a.go:4-13", "b/b.go:9-21", "c/c.go:4-14"}; !slices.Equal(got, want) {
		t.Errorf("duplicates %q, want %q", got, want)
	}
	if err := os.WriteFile(filepath.Join(root, "c/c.go"), []byte("package c\n\nfunc Plus() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := duplicates(), []string{"a/a.go:4-13", "b/b.go:9-21"}; !slices.Equal(got, want) {
		t.Errorf("after c/c.go's edit: duplicates %q, want %q", got, want)
	}
}
