package code

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
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
	if testing.Short() {
		t.Skip("reads all of GOROOT")
	}
	root := filepath.Join(runtime.GOROOT(), "src")
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
