package code_test

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools/code"
)

// TestHotspotOrder checks that hotspots and largest are, at every limit, the first functions
// of a stable sort of all of them (ties keep the order of the listing), among many ties.
func TestHotspotOrder(t *testing.T) {
	type fn struct {
		file, name        string
		complexity, lines int
	}
	var all []fn
	files := map[string]string{}
	for i := range 20 {
		file := "a.go"
		if i >= 10 {
			file = "b.go"
		}
		var b strings.Builder
		name := fmt.Sprintf("f%02d", i)
		fmt.Fprintf(&b, "func %s(x int) int {\n", name)
		for range i % 3 {
			b.WriteString("\tif x > 0 {\n\t\tx++\n\t}\n")
		}
		for range i % 2 {
			b.WriteString("\tx++\n")
		}
		b.WriteString("\treturn x\n}\n\n")
		if files[file] == "" {
			files[file] = "package p\n\n"
		}
		files[file] += b.String()
		all = append(all, fn{file, name, 1 + i%3, strings.Count(b.String(), "\n") - 1})
	}
	dir := t.TempDir()
	testenv.WriteTree(t, dir, files)
	a := newAnalyzer(t, dir)

	byComplexity := slices.Clone(all)
	slices.SortStableFunc(byComplexity, func(a, b fn) int {
		return cmp.Or(cmp.Compare(b.complexity, a.complexity), cmp.Compare(b.lines, a.lines))
	})
	byLines := slices.Clone(all)
	slices.SortStableFunc(byLines, func(a, b fn) int {
		return cmp.Or(cmp.Compare(b.lines, a.lines), cmp.Compare(b.complexity, a.complexity))
	})
	names := func(hs []code.Hotspot) []string {
		var out []string
		for _, h := range hs {
			out = append(out, fmt.Sprintf("%s %s %d %d", h.File, h.Symbol, h.Complexity, h.Lines))
		}
		return out
	}
	want := func(fs []fn) []string {
		var out []string
		for _, f := range fs {
			out = append(out, fmt.Sprintf("%s %s %d %d", f.file, f.name, f.complexity, f.lines))
		}
		return out
	}
	for _, limit := range []int{1, 3, 7, 19, 20, 1000} {
		var rep code.CodebaseReport
		mustCall(t, a, "analyze_codebase", map[string]any{"limit": limit}, &rep)
		n := min(limit, len(all))
		if got, w := names(rep.Hotspots), want(byComplexity[:n]); !slices.Equal(got, w) {
			t.Errorf("limit %d: hotspots\n%q\nwant\n%q", limit, got, w)
		}
		if got, w := names(rep.Largest), want(byLines[:n]); !slices.Equal(got, w) {
			t.Errorf("limit %d: largest\n%q\nwant\n%q", limit, got, w)
		}
		if rep.Omitted["hotspots"] != len(all)-n || rep.Omitted["largest"] != len(all)-n {
			t.Errorf("limit %d: omitted %v, want %d each", limit, rep.Omitted, len(all)-n)
		}
	}
}
