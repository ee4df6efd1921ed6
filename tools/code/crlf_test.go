package code_test

import (
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools/code"
)

// TestCRLFCommentLines: a comment over several lines of a file with Windows line ends is
// comment to its last byte. The lines were counted from go/parser's end of the comment, which
// is short of a byte for each carriage return in it, so that the comment's last line was code.
// They stay the same once detect_patterns has parsed the file whole.
func TestCRLFCommentLines(t *testing.T) {
	root := t.TempDir()
	testenv.WriteTree(t, root, map[string]string{
		"go.mod": "module example.com/crlf\n\ngo 1.22\n",
		"p/p.go": "package p\r\n\r\n/* a\r\ncomment */\r\nfunc f(x bool) {\r\n\tif x {\r\n\t}\r\n}\r\n",
	})
	a := newAnalyzer(t, root)
	want := code.Lines{Code: 5, Comment: 2, Blank: 1}
	for _, after := range []string{"", "detect_patterns"} {
		if after != "" {
			var pats code.PatternReport
			mustCall(t, a, after, map[string]any{}, &pats)
		}
		var rep code.CodebaseReport
		mustCall(t, a, "analyze_codebase", map[string]any{}, &rep)
		for _, l := range rep.Languages {
			if l.Name == "Go" && l.Lines != want {
				t.Errorf("after %q: Go lines %+v, want %+v", after, l.Lines, want)
			}
		}
	}
}
