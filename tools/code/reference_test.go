package code

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools/workspace"
)

// The tests of this file measure import resolution against a language's own resolver on a
// large real tree (thousands of files, minutes of work), so most run only when asked, each by
// its own environment variable (bench/code-reference.sh, a step of make bench, sets them).
// Without it they are skipped, under CI=true too: they are measurements, not checks. Python's
// is the exception: its tree is small and on every machine with python3. The figures are in
// docs/performance.md.

// referenceIndex analyses dir cold, as a new analyzer's first call does, and returns its graph.
func referenceIndex(t *testing.T, dir string) *index {
	t.Helper()
	ws, err := workspace.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(context.Background(), ws, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	snap, err := a.scan(context.Background(), ws.Roots()[0])
	if err != nil {
		t.Fatal(err)
	}
	return buildIndex(snap)
}

// compareEdges reports precision and recall of got against want and fails below floor.
func compareEdges(t *testing.T, name string, want, got map[string]bool, floor float64) {
	t.Helper()
	both := 0
	var missed, extra []string
	for e := range got {
		if want[e] {
			both++
		} else {
			extra = append(extra, e)
		}
	}
	for e := range want {
		if !got[e] {
			missed = append(missed, e)
		}
	}
	precision, recall := float64(both)/float64(len(got)), float64(both)/float64(len(want))
	t.Logf("%s: %d reference edges, %d found, %d in both: precision %.3f, recall %.3f", name, len(want), len(got), both, precision, recall)
	for i, e := range missed {
		if i == 20 {
			t.Logf("... %d more missed", len(missed)-i)
			break
		}
		t.Logf("missed %s", e)
	}
	for i, e := range extra {
		if i == 20 {
			t.Logf("... %d more not in the reference", len(extra)-i)
			break
		}
		t.Logf("not in the reference %s", e)
	}
	if precision < floor || recall < floor {
		t.Errorf("precision %.3f, recall %.3f: want both at least %.2f", precision, recall, floor)
	}
}

// TestPythonImportsAgainstImportlib measures Python import resolution against Python's own
// path finder (testdata/reference/python_imports.py) on the standard library every machine
// with python3 has: Debian's /usr/lib/python3.X (about 670 files), or the interpreter's own
// where that is missing. Every module file a statement depends on is an edge: "from pkg
// import a, b" is pkg/a.py and pkg/b.py when they are submodules. Unlike the other tests of
// this file it is a check, not only a measurement: it runs wherever python3 is (and under
// CI=true, where .ci/run installs it) and fails below 0.98.
func TestPythonImportsAgainstImportlib(t *testing.T) {
	python := testenv.Need(t, "python3")
	out, err := exec.Command(python, "-S", "-c", "import sys, sysconfig; print(sys.version_info[0], sys.version_info[1], sysconfig.get_paths()['stdlib'])").Output()
	if err != nil {
		t.Fatalf("ask %s for its standard library: %v", python, err)
	}
	var major, minor int
	var lib string
	if _, err := fmt.Sscan(string(out), &major, &minor, &lib); err != nil {
		t.Fatalf("%s answered %q: %v", python, out, err)
	}
	if debian := fmt.Sprintf("/usr/lib/python%d.%d", major, minor); fileExists(filepath.Join(debian, "os.py")) {
		lib = debian
	}
	ref, err := exec.Command(python, "-S", "testdata/reference/python_imports.py", lib).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("reference edges: %v\n%s", err, exit.Stderr)
		}
		t.Fatalf("reference edges: %v", err)
	}
	want := map[string]bool{}
	for sc := bufio.NewScanner(bytes.NewReader(ref)); sc.Scan(); {
		want[sc.Text()] = true
	}
	installed := regexp.MustCompile(`(^|/)(site|dist)-packages/`)
	ix := referenceIndex(t, lib)
	got := map[string]bool{}
	for _, fi := range ix.files {
		if fi.Lang != "Python" || installed.MatchString(fi.Rel) {
			continue
		}
		for _, r := range ix.imports[fi.Rel] {
			for _, to := range r.Targets {
				if to != fi.Rel && !installed.MatchString(to) {
					got[fmt.Sprintf("%s\t%d\t%s", fi.Rel, r.Ref.Line, to)] = true
				}
			}
		}
	}
	compareEdges(t, lib, want, got, 0.98)
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// goListPackage is what TestGoImportsAgainstGoList reads of `go list -json`.
type goListPackage struct {
	ImportPath, Dir                              string
	GoFiles, CgoFiles, TestGoFiles, XTestGoFiles []string
	Imports, TestImports, XTestImports           []string
	ImportMap                                    map[string]string
}

// TestGoImportsAgainstGoList measures Go import resolution against the go tool on
// $(go env GOROOT)/src (the std and cmd modules, about 11,000 files): the reference edges are
// package folder -> package folder as `go list -json std cmd` resolves them, tests included;
// both sides read only the files the go tool builds for this platform. Packages the go tool
// resolves into a vendor folder are external code for both.
//
//	CODE_REFERENCE_GO=go go test -run TestGoImportsAgainstGoList -v ./tools/code
func TestGoImportsAgainstGoList(t *testing.T) {
	goTool := os.Getenv("CODE_REFERENCE_GO")
	if goTool == "" {
		t.Skip("set CODE_REFERENCE_GO to a go command to measure against")
	}
	out, err := exec.Command(goTool, "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	list := exec.Command(goTool, "list", "-e", "-json", "std", "cmd")
	list.Dir = src
	out, err = list.Output()
	if err != nil {
		t.Fatalf("go list std cmd: %v", err)
	}
	var pkgs []goListPackage
	dirOf := map[string]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p goListPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(p.ImportPath, " [") {
			continue
		}
		rel, err := filepath.Rel(src, p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		p.Dir = filepath.ToSlash(rel)
		dirOf[p.ImportPath] = p.Dir
		pkgs = append(pkgs, p)
	}
	vendored := func(dir string) bool {
		return dir == "vendor" || strings.HasPrefix(dir, "vendor/") || strings.Contains(dir, "/vendor/")
	}
	want, got := map[string]bool{}, map[string]bool{}
	built := map[string]bool{}
	for _, p := range pkgs {
		if vendored(p.Dir) {
			continue
		}
		for _, fs := range [][]string{p.GoFiles, p.CgoFiles, p.TestGoFiles, p.XTestGoFiles} {
			for _, f := range fs {
				built[path.Join(p.Dir, f)] = true
			}
		}
		for _, imps := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, imp := range imps {
				if m, ok := p.ImportMap[imp]; ok {
					imp = m
				}
				// A package built for another's tests is named "path [other]".
				imp, _, _ = strings.Cut(imp, " [")
				to, ok := dirOf[imp]
				if !ok || vendored(to) || to == p.Dir {
					continue
				}
				want[p.Dir+" -> "+to] = true
			}
		}
	}

	ix := referenceIndex(t, src)
	for _, fi := range ix.files {
		if !built[fi.Rel] {
			continue
		}
		for _, r := range ix.imports[fi.Rel] {
			if len(r.Targets) == 0 {
				continue
			}
			if from, to := path.Dir(fi.Rel), path.Dir(r.Targets[0]); from != to {
				got[from+" -> "+to] = true
			}
		}
	}
	compareEdges(t, src, want, got, 0.95)
}

// TestJSImportsAgainstResolvers measures JavaScript, TypeScript and TSX import resolution
// against TypeScript's resolver (TypeScript files) and Node's (JavaScript files), with
// TypeScript's scanner finding the imports: CODE_REFERENCE_TYPESCRIPT names the folder of a
// typescript package and CODE_REFERENCE_JS the trees to measure, separated by colons.
// Files the workspace leaves out as vendored or generated (Linguist's rules: dist/, minified
// bundles) are third-party or built code for the analysis and are left out on both sides.
//
//	npm install --prefix /tmp/ref typescript@5.9.3 @tanstack/react-query@5.108.0 zod@4.6.7
//	npm install --prefix /tmp/ref/aria react-aria-components@1.13.0
//	CODE_REFERENCE_TYPESCRIPT=/tmp/ref/node_modules/typescript \
//	CODE_REFERENCE_JS=/usr/lib/node_modules/npm/node_modules:/tmp/ref/node_modules/@tanstack:/tmp/ref/node_modules/zod:/tmp/ref/aria/node_modules \
//	go test -run TestJSImportsAgainstResolvers -v ./tools/code
func TestJSImportsAgainstResolvers(t *testing.T) {
	tsDir, trees := os.Getenv("CODE_REFERENCE_TYPESCRIPT"), os.Getenv("CODE_REFERENCE_JS")
	if tsDir == "" || trees == "" {
		t.Skip("set CODE_REFERENCE_TYPESCRIPT and CODE_REFERENCE_JS to measure against TypeScript and Node")
	}
	want, got := map[string]map[string]bool{}, map[string]map[string]bool{}
	add := func(m map[string]map[string]bool, lang, edge string) {
		if m[lang] == nil {
			m[lang] = map[string]bool{}
		}
		m[lang][edge] = true
	}
	for _, tree := range filepath.SplitList(trees) {
		out, err := exec.Command("node", "--no-warnings", "--experimental-import-meta-resolve", "testdata/reference/js_imports.mjs", tsDir, tree).Output()
		if err != nil {
			t.Fatalf("reference edges of %s: %v", tree, err)
		}
		ix := referenceIndex(t, tree)
		// Declaration files (.d.ts) type code that is elsewhere, and dot-folders hold links
		// (node_modules/.bin); the reference leaves both out.
		skip := regexp.MustCompile(`\.d\.[mc]?ts$|(^|/)\.`)
		counted := map[string]string{}
		for _, fi := range ix.snap.files {
			if fi.counted() && !skip.MatchString(fi.Rel) {
				counted[fi.Rel] = fi.Lang
			}
		}
		// An import the resolver takes to built code the workspace leaves out (dist/) is
		// one the analysis takes to that code's source: such imports are not compared.
		toBuilt := map[string]bool{}
		for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
			from, rest, _ := strings.Cut(sc.Text(), "\t")
			line, to, _ := strings.Cut(rest, "\t")
			switch lang := counted[from]; {
			case lang != "" && counted[to] != "":
				add(want, lang, tree+": "+sc.Text())
			case lang != "":
				toBuilt[from+"\t"+line] = true
			}
		}
		for _, fi := range ix.files {
			if counted[fi.Rel] == "" {
				continue
			}
			for _, r := range ix.imports[fi.Rel] {
				if len(r.Targets) > 0 && r.Targets[0] != fi.Rel && counted[r.Targets[0]] != "" && !toBuilt[fmt.Sprintf("%s\t%d", fi.Rel, r.Ref.Line)] {
					add(got, fi.Lang, fmt.Sprintf("%s: %s\t%d\t%s", tree, fi.Rel, r.Ref.Line, r.Targets[0]))
				}
			}
		}
	}
	for _, lang := range []string{"JavaScript", "TypeScript", "TSX"} {
		t.Run(lang, func(t *testing.T) { compareEdges(t, lang, want[lang], got[lang], 0.95) })
	}
}

// TestJavaImportsAgainstJavac measures Java import resolution against javac's symbol table on
// a JDK's own sources: CODE_REFERENCE_JAVA names the java launcher of a JDK and
// CODE_REFERENCE_JAVA_SRC a folder of that JDK's sources (java.base of its lib/src.zip,
// about 3,400 files). Imports of a whole package (import a.b.*) name no single file and are
// left out on both sides.
//
//	unzip -q /usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip 'java.base/*' -d /tmp/jdk
//	CODE_REFERENCE_JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java CODE_REFERENCE_JAVA_SRC=/tmp/jdk/java.base \
//	go test -run TestJavaImportsAgainstJavac -v ./tools/code
func TestJavaImportsAgainstJavac(t *testing.T) {
	java, src := os.Getenv("CODE_REFERENCE_JAVA"), os.Getenv("CODE_REFERENCE_JAVA_SRC")
	if java == "" || src == "" {
		t.Skip("set CODE_REFERENCE_JAVA and CODE_REFERENCE_JAVA_SRC to measure against javac")
	}
	out, err := exec.Command(java, "--add-exports", "jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED",
		"testdata/reference/JavaImports.java", src).Output()
	if err != nil {
		t.Fatalf("reference edges: %v", err)
	}
	want := map[string]bool{}
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		want[sc.Text()] = true
	}
	ix := referenceIndex(t, src)
	got := map[string]bool{}
	for _, fi := range ix.files {
		if fi.Lang != "Java" || path.Base(fi.Rel) == "module-info.java" {
			continue
		}
		for _, r := range ix.imports[fi.Rel] {
			if r.Ref.Wildcard && ix.javaPkgs[r.Ref.Spec] != nil {
				continue
			}
			if len(r.Targets) > 0 && r.Targets[0] != fi.Rel {
				got[fmt.Sprintf("%s\t%d\t%s", fi.Rel, r.Ref.Line, r.Targets[0])] = true
			}
		}
	}
	compareEdges(t, src, want, got, 0.95)
}

// TestRustImportsAgainstRustc measures Rust use and mod resolution against rustc's own name
// resolution (a nightly rustc's HIR dump, read by testdata/reference/rust_imports.py):
// CODE_REFERENCE_RUSTC names the nightly rustc and CODE_REFERENCE_RUST_CRATE a crate's folder
// (Debian's librust-regex-syntax-dev installs one below /usr/share/cargo/registry), built
// with every feature; modules a cfg leaves out of that build are compared in none. Edges are
// file -> file: rustc places each name of a grouped use at its own line.
//
//	apt-get install librust-regex-syntax-dev
//	CODE_REFERENCE_RUSTC=$(rustup +nightly which rustc) CODE_REFERENCE_RUST_CRATE=/usr/share/cargo/registry/regex-syntax-0.6.27 \
//	go test -run TestRustImportsAgainstRustc -v ./tools/code
func TestRustImportsAgainstRustc(t *testing.T) {
	rustc, crate := os.Getenv("CODE_REFERENCE_RUSTC"), os.Getenv("CODE_REFERENCE_RUST_CRATE")
	if rustc == "" || crate == "" {
		t.Skip("set CODE_REFERENCE_RUSTC and CODE_REFERENCE_RUST_CRATE to measure against rustc")
	}
	out, err := exec.Command("python3", "testdata/reference/rust_imports.py", rustc, crate).Output()
	if err != nil {
		t.Fatalf("reference edges: %v", err)
	}
	want, compiled := map[string]bool{}, map[string]bool{}
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		if strings.Contains(sc.Text(), "\t") {
			want[sc.Text()] = true
		} else {
			compiled[sc.Text()] = true
		}
	}
	ix := referenceIndex(t, crate)
	got := map[string]bool{}
	for _, fi := range ix.files {
		if !compiled[fi.Rel] {
			continue
		}
		for _, r := range ix.imports[fi.Rel] {
			if len(r.Targets) > 0 && r.Targets[0] != fi.Rel && compiled[r.Targets[0]] {
				got[fi.Rel+"\t"+r.Targets[0]] = true
			}
		}
	}
	compareEdges(t, crate, want, got, 0.95)
}
