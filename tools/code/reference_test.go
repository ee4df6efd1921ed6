package code

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tools/workspace"
)

// TestPythonImportsAgainstImportlib measures Python import resolution against Python's own
// import system on a standard library tree (about 1,800 files): CODE_REFERENCE_PYTHON names
// the interpreter, whose standard library is analysed. It takes minutes, so it runs only when
// asked:
//
//	CODE_REFERENCE_PYTHON=python3 go test -run TestPythonImportsAgainstImportlib -v ./tools/code
func TestPythonImportsAgainstImportlib(t *testing.T) {
	python := os.Getenv("CODE_REFERENCE_PYTHON")
	if python == "" {
		t.Skip("set CODE_REFERENCE_PYTHON to an interpreter to measure against")
	}
	out, err := exec.Command(python, "-S", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])").Output()
	if err != nil {
		t.Fatalf("ask %s for its standard library: %v", python, err)
	}
	lib := strings.TrimSpace(string(out))
	ref, err := exec.Command(python, "-S", "-X", "frozen_modules=off", "testdata/reference/python_imports.py", lib).Output()
	if err != nil {
		t.Fatalf("reference edges: %v", err)
	}
	want := map[string]bool{}
	for sc := bufio.NewScanner(bytes.NewReader(ref)); sc.Scan(); {
		want[sc.Text()] = true
	}

	ws, err := workspace.New(lib)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(context.Background(), ws, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	snap, err := a.scan(context.Background(), ws.Roots()[0])
	if err != nil {
		t.Fatal(err)
	}
	ix := buildIndex(snap)
	got := map[string]bool{}
	for _, fi := range ix.files {
		if fi.Lang != "Python" || strings.HasPrefix(fi.Rel, "site-packages/") {
			continue
		}
		for _, r := range ix.imports[fi.Rel] {
			if len(r.Targets) > 0 && r.Targets[0] != fi.Rel && !strings.HasPrefix(r.Targets[0], "site-packages/") {
				got[fmt.Sprintf("%s\t%d\t%s", fi.Rel, r.Ref.Line, r.Targets[0])] = true
			}
		}
	}
	both := 0
	for e := range got {
		if want[e] {
			both++
		}
	}
	precision, recall := float64(both)/float64(len(got)), float64(both)/float64(len(want))
	t.Logf("%s: %d reference edges, %d found, %d in both: precision %.3f, recall %.3f", lib, len(want), len(got), both, precision, recall)
	if precision < 0.95 || recall < 0.95 {
		t.Errorf("precision %.3f, recall %.3f: want both at least 0.95", precision, recall)
	}
}
