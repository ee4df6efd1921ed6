package code_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools/code"
)

// TestLineDirectivesDoNotMoveSymbols: a //line directive (goyacc's and cgo's output have them)
// names a line of another file, the one the code was generated from; symbols are where they
// are in the file analysed, and their bodies are the lines shown.
func TestLineDirectivesDoNotMoveSymbols(t *testing.T) {
	root := t.TempDir()
	testenv.WriteTree(t, root, map[string]string{
		"go.mod":   "module example.com/y\n\ngo 1.22\n",
		"bad/y.go": "package bad\n\n//line grammar.y:300\nfunc broken( {\n}\n",
		"parse/y.go": "package parse\n\n//line grammar.y:100\nfunc reduce(n int) int {\n\treturn n + 1\n}\n\n" +
			"//line grammar.y:7\ntype token struct{ n int }\n\n//line grammar.y:50\nfunc shift() int { return reduce(1) }\n",
	})
	a := newAnalyzer(t, root)
	var rep code.OutlineReport
	mustCall(t, a, "file_outline", map[string]any{"path": "parse/y.go", "include_body": true}, &rep)
	var got []string
	for _, s := range rep.Symbols {
		got = append(got, fmt.Sprintf("%s %s %d-%d", s.Symbol, s.Kind, s.Line, s.End))
	}
	if want := []string{"reduce function 4-6", "token struct 9-9", "shift function 12-12"}; !slices.Equal(got, want) {
		t.Errorf("outline %q, want %q", got, want)
	}
	if len(rep.Symbols) > 0 && rep.Symbols[0].Body != "func reduce(n int) int {\n\treturn n + 1\n}" {
		t.Errorf("body of reduce %q", rep.Symbols[0].Body)
	}
	var codebase code.CodebaseReport
	mustCall(t, a, "analyze_codebase", map[string]any{}, &codebase)
	if e := codebase.ParseErrors; len(e) != 1 || e[0].File != "bad/y.go" || e[0].Line != 4 {
		t.Errorf("parse errors %+v, want bad/y.go at line 4", e)
	}
	var refs code.ReferenceReport
	mustCall(t, a, "find_references", map[string]any{"symbol": "reduce"}, &refs)
	if len(refs.References) != 1 || refs.References[0].Line != 12 || refs.References[0].Caller != "shift" {
		t.Errorf("references to reduce %+v, want one, line 12, in shift", refs.References)
	}
}
