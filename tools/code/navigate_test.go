package code_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools/code"
)

func navigationTree(t *testing.T) *code.Analyzer {
	t.Helper()
	root := t.TempDir()
	testenv.WriteTree(t, root, map[string]string{
		"go.mod": "module example.com/nav\n\ngo 1.22\n",
		"store/store.go": "package store\n\n// Open opens a store.\nfunc Open(name string) *DB {\n\tif name == \"\" {\n\t\treturn nil\n\t}\n\treturn newDB(name)\n}\n\n" +
			"func newDB(n string) *DB { return &DB{n: n} }\n\n// DB is a store.\ntype DB struct{ n string }\n\n// Get reads k.\nfunc (d *DB) Get(k string) string { return d.n + k }\n",
		"store/store_test.go":     "package store\n\nimport \"testing\"\n\nfunc TestOpen(t *testing.T) {\n\tif Open(\"x\") == nil {\n\t\tt.Fatal(\"nil\")\n\t}\n}\n",
		"api/api.go":              "package api\n\nimport \"example.com/nav/store\"\n\n// Handler calls Open (a comment is no use).\nfunc Handler() string {\n\tdb := store.Open(\"a\")\n\ts := \"Open(\"\n\treturn db.Get(s)\n}\n\nvar opener = store.Open\n",
		"other/other.go":          "package other\n\n// Open is another Open that nothing imports.\nfunc Open() {}\n",
		"py/app/__init__.py":      "",
		"py/app/prices.py":        "def total(items):\n    return sum(items)\n",
		"py/app/cart.py":          "from app.prices import total\n\n\nclass Cart:\n    def sum(self):\n        # total in a comment\n        return total(self.items)\n",
		"py/tests/test_prices.py": "from app.prices import total\n\n\ndef test_total():\n    assert total([1]) == 1\n",
		"web/src/util.ts":         "export function fmt(x: number): string {\n  return String(x);\n}\n",
		"web/src/view.tsx":        "import { fmt } from \"./util\";\nexport const View = ({ n }: { n: number }) => <b>{fmt(n)}</b>;\n",
	})
	return newAnalyzer(t, root)
}

func TestFindSymbol(t *testing.T) {
	a := navigationTree(t)
	var rep code.SymbolReport
	mustCall(t, a, "find_symbol", map[string]any{"name": "Open", "include_body": true, "include_callees": true}, &rep)
	var defs []string
	for _, d := range rep.Definitions {
		defs = append(defs, fmt.Sprintf("%s %s %s:%d-%d", d.Symbol, d.Kind, d.File, d.Line, d.End))
	}
	if want := []string{"Open function other/other.go:4-4", "Open function store/store.go:4-9"}; !slices.Equal(defs, want) {
		t.Errorf("definitions %q, want %q", defs, want)
	}
	if d := rep.Definitions[1]; d.Signature != "func Open(name string) *DB {" || !strings.Contains(d.Body, "return newDB(name)") || d.Complexity != 2 {
		t.Errorf("store.Open: %+v", d)
	}
	var callees []string
	for _, c := range rep.Callees {
		callees = append(callees, fmt.Sprintf("%s %d %v", c.Name, c.Calls, c.Definitions))
	}
	if want := []string{"newDB 1 [{store/store.go 11}]"}; !slices.Equal(callees, want) {
		t.Errorf("callees %q, want %q", callees, want)
	}

	mustCall(t, a, "find_symbol", map[string]any{"name": "DB.Get"}, &rep)
	if len(rep.Definitions) != 1 || rep.Definitions[0].Kind != "method" || rep.Definitions[0].Line != 17 {
		t.Errorf("DB.Get: %+v", rep.Definitions)
	}
	mustCall(t, a, "find_symbol", map[string]any{"name": "Open", "path": "store"}, &rep)
	if len(rep.Definitions) != 1 {
		t.Errorf("Open in store/: %+v", rep.Definitions)
	}
	err := call(t, a, "find_symbol", map[string]any{"name": "Opn"}, &rep)
	if err == nil || !strings.Contains(err.Error(), "Open") {
		t.Errorf("unknown name: %v, want the closest names", err)
	}
}

func TestFindReferences(t *testing.T) {
	a := navigationTree(t)
	tests := []struct {
		symbol, file string
		want         []string // file:line kind caller
		tests        int
	}{
		{"Open", "store", []string{"api/api.go:7 call Handler", "api/api.go:12 reference ", "store/store_test.go:6 call TestOpen test"}, 1},
		{"DB.Get", "", []string{"api/api.go:9 call Handler"}, 0},
		{"total", "", []string{"py/app/cart.py:1 reference ", "py/app/cart.py:7 call Cart.sum", "py/tests/test_prices.py:1 reference  test",
			"py/tests/test_prices.py:5 call test_total test"}, 2},
		{"fmt", "web/src/util.ts", []string{"web/src/view.tsx:1 reference ", "web/src/view.tsx:2 call View"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.symbol, func(t *testing.T) {
			var rep code.ReferenceReport
			args := map[string]any{"symbol": tt.symbol}
			if tt.file != "" {
				args["file"] = tt.file
			}
			mustCall(t, a, "find_references", args, &rep)
			var got []string
			for _, r := range rep.References {
				s := fmt.Sprintf("%s:%d %s %s", r.File, r.Line, r.Kind, r.Caller)
				if r.Test {
					s += " test"
				}
				got = append(got, s)
			}
			slices.Sort(got)
			slices.Sort(tt.want)
			if !slices.Equal(got, tt.want) {
				t.Errorf("references\n got %q\nwant %q", got, tt.want)
			}
			if rep.Summary.Tests != tt.tests || rep.Summary.References != len(tt.want) {
				t.Errorf("summary %+v", rep.Summary)
			}
		})
	}
}

func TestFileOutline(t *testing.T) {
	a := navigationTree(t)
	var rep code.OutlineReport
	mustCall(t, a, "file_outline", map[string]any{"path": "store/store.go", "include_body": true}, &rep)
	var got []string
	for _, s := range rep.Symbols {
		got = append(got, fmt.Sprintf("%s %s %d-%d", s.Symbol, s.Kind, s.Line, s.End))
	}
	if want := []string{"Open function 4-9", "newDB function 11-11", "DB struct 14-14", "DB.Get method 17-17"}; !slices.Equal(got, want) {
		t.Errorf("outline %q, want %q", got, want)
	}
	if rep.Symbols[3].Body != "func (d *DB) Get(k string) string { return d.n + k }" || rep.Lines.Code != 10 {
		t.Errorf("outline %+v", rep)
	}
	if err := call(t, a, "file_outline", map[string]any{"path": "store"}, &rep); err == nil {
		t.Error("a folder was outlined")
	}
}

// TestProjectsAreApart: a workspace holding two repositories is two projects; no finding
// mixes them, and each finding names its project.
func TestProjectsAreApart(t *testing.T) {
	root := t.TempDir()
	var block strings.Builder
	for i := range 12 {
		fmt.Fprintf(&block, "    total_%d = compute(items, %d) + offset * %d\n", i, i, i)
	}
	report := "def report(items, offset):\n" + block.String() + "    return total_0\n"
	testenv.WriteTree(t, root, map[string]string{
		"a/pyproject.toml":  "[project]\nname = \"alpha\"\n",
		"a/a/__init__.py":   "",
		"a/a/report.py":     report,
		"b/pyproject.toml":  "[project]\nname = \"beta\"\n",
		"b/b/__init__.py":   "",
		"b/b/report.py":     report,
		"b/b/report_two.py": report,
	})
	a := newAnalyzer(t, root)
	var ana code.CodebaseReport
	mustCall(t, a, "analyze_codebase", map[string]any{}, &ana)
	var projs []string
	for _, p := range ana.Projects {
		projs = append(projs, fmt.Sprintf("%s %s %v", p.Path, p.Name, p.Manifests))
	}
	if want := []string{"b beta [b/pyproject.toml]", "a alpha [a/pyproject.toml]"}; !slices.Equal(projs, want) {
		t.Errorf("projects %q, want %q", projs, want)
	}
	var rep code.PatternReport
	mustCall(t, a, "detect_patterns", map[string]any{"pattern_type": "duplicated-code"}, &rep)
	if len(rep.Findings) != 1 || rep.Findings[0].Project != "b" {
		t.Fatalf("findings %+v, want one duplicate in project b", rep.Findings)
	}
	for _, e := range rep.Findings[0].Evidence {
		if !strings.HasPrefix(e.File, "b/") {
			t.Errorf("evidence %s lies outside project b", e.File)
		}
	}
	mustCall(t, a, "detect_patterns", map[string]any{"pattern_type": "duplicated-code", "path": "a/a/report.py"}, &rep)
	if len(rep.Findings) != 0 || rep.Path != "a" {
		t.Errorf("project of a/a/report.py: path %q, findings %+v", rep.Path, rep.Findings)
	}
}

// TestChangesImpact commits the navigation tree with git, edits it, and asks what changed
// since HEAD and what depends on it.
func TestChangesImpact(t *testing.T) {
	root := t.TempDir()
	testenv.NewGit(t, root).Commit("first", map[string]string{
		"go.mod":              "module example.com/nav\n\ngo 1.22\n",
		"store/store.go":      "package store\n\n// Open opens a store.\nfunc Open(name string) string {\n\treturn name\n}\n\n// Close closes it.\nfunc Close() {}\n",
		"store/store_test.go": "package store\n\nimport \"testing\"\n\nfunc TestOpen(t *testing.T) { _ = Open(\"x\") }\n",
		"api/api.go":          "package api\n\nimport \"example.com/nav/store\"\n\nfunc Handler() string { return store.Open(\"a\") }\n",
		"cmd/main.go":         "package main\n\nimport \"example.com/nav/api\"\n\nfunc main() { _ = api.Handler() }\n",
		"other/other.go":      "package other\n\nfunc Other() {}\n",
	})
	testenv.WriteTree(t, root, map[string]string{
		"store/store.go": "package store\n\n// Open opens a store.\nfunc Open(name string) string {\n\tif name == \"\" {\n\t\treturn \"default\"\n\t}\n\treturn name\n}\n\n// Close closes it.\nfunc Close() {}\n",
		"store/new.go":   "package store\n\nfunc Fresh() {}\n",
	})
	if err := os.Remove(filepath.Join(root, "other", "other.go")); err != nil {
		t.Fatal(err)
	}
	a := newAnalyzer(t, root)
	var rep code.ImpactReport
	mustCall(t, a, "changes_impact", map[string]any{"since": "HEAD", "depth": 2}, &rep)
	var changed []string
	for _, c := range rep.Changed {
		changed = append(changed, fmt.Sprintf("%s %s %v %v", c.File, c.Status, c.Lines, c.Symbols))
	}
	want := []string{"other/other.go deleted [] []", "store/new.go added [[1 3]] [Fresh]", "store/store.go modified [[5 7]] [Open]"}
	if !slices.Equal(changed, want) {
		t.Errorf("changed\n got %q\nwant %q", changed, want)
	}
	var deps []string
	for _, d := range rep.Dependents {
		deps = append(deps, fmt.Sprintf("%s %d", d.Unit, d.Depth))
	}
	if want := []string{"api 1", "cmd 2"}; !slices.Equal(deps, want) {
		t.Errorf("dependents %q, want %q", deps, want)
	}
	if want := []string{"store [test]"}; !slices.Equal(rep.Tests, want) {
		t.Errorf("tests %q, want %q", rep.Tests, want)
	}
	if err := call(t, a, "changes_impact", map[string]any{"since": "no-such-branch"}, &rep); err == nil {
		t.Error("an unknown revision was accepted")
	}
}

// TestDependenciesStayInTheirProject: two repositories in one workspace root with a module of
// the same name; each file's import reaches its own repository's module.
func TestDependenciesStayInTheirProject(t *testing.T) {
	root := t.TempDir()
	testenv.WriteTree(t, root, map[string]string{
		"a/pyproject.toml": "[project]\nname = \"alpha\"\n",
		"a/utils.py":       "def helper():\n    return 1\n",
		"a/main.py":        "import utils\n\nutils.helper()\n",
		"b/pyproject.toml": "[project]\nname = \"beta\"\n",
		"b/utils.py":       "def helper():\n    return 2\n",
		"b/main.py":        "import utils\n\nutils.helper()\n",
	})
	a := newAnalyzer(t, root)
	for _, p := range []string{"a", "b"} {
		var rep code.DependencyReport
		mustCall(t, a, "find_dependencies", map[string]any{"component": p + "/main.py", "type": "imports"}, &rep)
		if len(rep.Imports) != 1 || rep.Imports[0].Target != p+"/utils.py" || rep.Resolved.Project != p {
			t.Errorf("%s/main.py: %+v (project %q)", p, rep.Imports, rep.Resolved.Project)
		}
		mustCall(t, a, "find_dependencies", map[string]any{"component": p + "/utils.py", "type": "exports"}, &rep)
		if len(rep.Importers) != 1 || rep.Importers[0].Unit != p+"/main.py" {
			t.Errorf("%s/utils.py importers: %+v", p, rep.Importers)
		}
	}
}
