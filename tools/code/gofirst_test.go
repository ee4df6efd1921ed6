package code

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
)

// firstPassDiff compares the first pass's facts of src with the full parse's, and says what
// differs; "" when the full parse finds a syntax error (then the first pass may decline).
// ok is false when the first pass declined a file the full parse reads without error.
func firstPassDiff(name string, src []byte, fp, full *goParser) (diff string, ok bool) {
	want, _ := full.full(name, src)
	if want.ParseError {
		return "", true
	}
	got := fp.first(name, src)
	if got == nil {
		return "the first pass declined it", false
	}
	var d []string
	if got.Package != want.Package {
		d = append(d, "package "+got.Package+" != "+want.Package)
	}
	if !reflect.DeepEqual(got.Imports, want.Imports) {
		d = append(d, "imports differ")
	}
	if !reflect.DeepEqual(got.Entry, want.Entry) {
		d = append(d, "entry points differ")
	}
	if got.Lines != want.Lines {
		d = append(d, "lines differ")
	}
	if len(got.Symbols) != len(want.Symbols) {
		d = append(d, "symbol counts differ")
	} else {
		for i := range got.Symbols {
			if got.Symbols[i] != want.Symbols[i] {
				g, w := got.Symbols[i], want.Symbols[i]
				d = append(d, "symbol "+w.qualified()+": "+strings.Join(fieldDiff(g, w), ", "))
			}
		}
	}
	if got.Uses.text != want.Uses.text || !reflect.DeepEqual(got.Uses.lines, want.Uses.lines) {
		d = append(d, "names used differ")
	}
	return strings.Join(d, "; "), true
}

func fieldDiff(g, w symbol) []string {
	var out []string
	gv, wv := reflect.ValueOf(g), reflect.ValueOf(w)
	for i := range gv.NumField() {
		if gv.Field(i).Interface() != wv.Field(i).Interface() {
			out = append(out, reflect.TypeOf(g).Field(i).Name)
		}
	}
	return out
}

// TestFirstPassMatchesGoParser holds the first pass, a scanner of our own, to go/parser over
// every Go file of GOROOT: for each file go/parser reads without error, the first pass gives
// the same package, imports, symbols (with complexity and nesting), entry points, line counts
// and names used. It also counts the files with syntax errors the first pass does not see,
// which analyze_codebase would not name.
func TestFirstPassMatchesGoParser(t *testing.T) {
	if testing.Short() || testenv.Race {
		t.Skip("reads all of GOROOT, on one goroutine")
	}
	root := filepath.Join(testenv.GOROOT(t), "src")
	var fp, full goParser
	files, broken, missed := 0, 0, 0
	var bad []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		diff, ok := firstPassDiff(path, src, &fp, &full)
		if diff != "" || !ok {
			bad = append(bad, path+": "+diff)
		}
		if f, _ := full.full(path, src); f.ParseError {
			broken++
			if fp.first(path, src) != nil {
				missed++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files, %d with syntax errors, %d of them not seen by the first pass", files, broken, missed)
	if len(bad) > 0 {
		t.Errorf("%d files differ, first: %s", len(bad), strings.Join(bad[:min(len(bad), 30)], "\n"))
	}
}

// FuzzFirstPass checks that whenever the first pass reads a file that go/parser reads without
// error, both give the same facts. The seeds are the Go files of testdata and the shapes that
// are hardest for a scanner: braces in control statements' headers (composite literals,
// function literals), else-if chains, multi-line comments and strings, dot imports.
func FuzzFirstPass(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*", "go", "*.go"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, path := range seeds {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, body := range []string{
		"for range []int{1} {\n\t\tif x {\n\t\t}\n\t}",
		"if func() bool { for {\n\t}; return true }() {\n\t\tif y {\n\t\t}\n\t}",
		"switch x := (T{}); x {\n\tcase 1:\n\t\tif a && b || c {\n\t\t}\n\t}",
		"if v, ok := m[k]; ok {\n\t} else if z {\n\t\tfor {\n\t\t}\n\t} else {\n\t\tswitch {\n\t\t}\n\t}",
		"for _, t := range []struct{ a int }{{1}, {2}} {\n\t\tselect {\n\t\tcase <-c:\n\t\tdefault:\n\t\t}\n\t}",
		"if x == map[string]int{\"a\": 1}[\"a\"] {\n\t\tfor {\n\t\t}\n\t}",
		"for i := range [3]int{} {\n\t\t_ = i\n\t}",
		"if f := func() struct{ a int } { return struct{ a int }{1} }; f().a > 0 {\n\t\tif true {\n\t\t}\n\t}",
		"for _, f := range []func() int{func() int { if x { return 1 }; return 2 }} {\n\t\t_ = f\n\t}",
		"if x := []int(nil); len(x) > 0 {\n\t\tfor {\n\t\t}\n\t}",
		"for p := (T{}); p.ok; {\n\t\tgoto L\n\t}\nL:\n\tswitch v := x.(type) {\n\tcase []int, map[int]int:\n\t\t_ = v\n\t}",
		"s := `a\n{ if for\n` + \"}\\\"\" + string('\\'') + string('{') /* {\n */\n\tif s != \"\" { // }\n\t}",
		"go func() {\n\t\tif x {\n\t\t\tfor {\n\t\t\t}\n\t\t}\n\t}()\n\tdefer func() { _ = recover() }()",
	} {
		f.Add([]byte("package p\n\nimport . \"fmt\"\n\nfunc F[T interface{ ~int }](x T) (y T, err error) {\n\t" + body + "\n\treturn\n}\n"))
	}
	f.Add([]byte("package p\n\nvar tab = []struct {\n\ta int\n\tf func()\n}{\n\t{1, func() { if x { } }},\n}\n\ntype S struct{ a, b struct{ c int } }\n\nfunc (s *S) M() (int, error) { return 0, nil }\n"))
	f.Add([]byte("package p\r\n\r\n/* a\r\ncomment */\r\nfunc f() {\r\n\tif x {\r\n\t}\r\n}\r\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		var fp, full goParser
		if diff, _ := firstPassDiff("f.go", src, &fp, &full); diff != "" {
			t.Errorf("the first pass differs from go/parser: %s\n%s", diff, src)
		}
	})
}
