package code

import (
	"regexp"
	"testing"
)

// unqualified writes what the regular expression it replaced wrote, on the shapes of type
// text go/types prints.
func TestUnqualified(t *testing.T) {
	re := regexp.MustCompile(`\b[A-Za-z_][A-Za-z0-9_]*\.`)
	for _, in := range []string{
		"", "int", "*T", "pkg.T", "*pkg.T", "[]*http.Request", "map[a.K]b.V", "func(x.A) (y.B, error)",
		"...io.Reader", "chan<- ctx.Context", "[8]byte", "a1.b2", "_x.Y", "T[p.K, q.V]", "struct{ f x.Y }",
		"interface{ M(a.B) c.D }", "9a.b", "é.T", "x..y", "pkg.",
	} {
		if got, want := unqualified(in), re.ReplaceAllString(in, ""); got != want {
			t.Errorf("unqualified(%q) = %q, want %q", in, got, want)
		}
	}
}
