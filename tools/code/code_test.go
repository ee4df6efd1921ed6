package code_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/code"
	"github.com/platform-dev/platform/tools/workspace"
)

// The fixture testdata/polyglot is a small repository in six languages whose true figures are
// known: the line counts below are cloc 1.96's (`cloc --by-file-by-lang testdata/polyglot`),
// and it has a planted import cycle (internal/handler -> service -> store -> handler), a
// planted god file (py/app/god.py), planted singletons in Go, Python and Java, a planted
// duplicated block (py/app/report_a.py and report_b.py), an unused export
// (web/src/greet.ts unusedThing), and a plugin registry, factory and strategy
// (internal/plugins), a builder (web/src/query.ts) and an observer (py/app/events.py).
const fixture = "testdata/polyglot"

func newAnalyzer(t testing.TB, root string) *code.Analyzer {
	t.Helper()
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	a, err := code.New(context.Background(), ws, &tools.Hub{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func tool(t testing.TB, a *code.Analyzer, name string) tools.Tool {
	t.Helper()
	for _, tl := range a.Tools() {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// call runs a tool with args and decodes its result, as the server marshals it, into out.
func call(t testing.TB, a *code.Analyzer, name string, args any, out any) error {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool(t, a, name).Call(context.Background(), raw)
	if err != nil {
		return err
	}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	validate(t, tool(t, a, name).Spec().OutputSchema, data)
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
	return nil
}

// validate checks a result against the tool's output schema, as an MCP client may.
func validate(t testing.TB, schema json.RawMessage, data []byte) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("output.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("output.json")
	if err != nil {
		t.Fatalf("output schema: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("result does not match the output schema: %v", err)
	}
}

func mustCall(t testing.TB, a *code.Analyzer, name string, args any, out any) {
	t.Helper()
	if err := call(t, a, name, args, out); err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
}

func TestAnalyzeCodebaseLineCounts(t *testing.T) {
	a := newAnalyzer(t, fixture)
	var rep code.CodebaseReport
	mustCall(t, a, "analyze_codebase", map[string]any{"limit": 100}, &rep)

	want := map[string]code.Lines{
		"Python":     {Code: 555, Comment: 6, Blank: 49},
		"Go":         {Code: 74, Comment: 24, Blank: 29},
		"Java":       {Code: 27, Comment: 2, Blank: 7},
		"Rust":       {Code: 23, Comment: 2, Blank: 5},
		"TypeScript": {Code: 26, Comment: 4, Blank: 5},
		"JavaScript": {Code: 5, Comment: 2, Blank: 2},
	}
	files := map[string]int{"Python": 7, "Go": 5, "Java": 2, "Rust": 2, "TypeScript": 3, "JavaScript": 1}
	got := map[string]code.LanguageStat{}
	for _, l := range rep.Languages {
		got[l.Name] = l
	}
	for lang, lines := range want {
		l := got[lang]
		if l.Lines != lines || l.Files != files[lang] || !l.Parsed || l.Type != "programming" {
			t.Errorf("%s: got %d files %+v parsed=%v type=%s, want %d files %+v", lang, l.Files, l.Lines, l.Parsed, l.Type, files[lang], lines)
		}
	}
	if rep.Languages[0].Name != "Python" {
		t.Errorf("languages are not ordered by code lines: first is %s", rep.Languages[0].Name)
	}
	if s := rep.Summary; s.Files != 25 || s.CountedFiles != 25 || s.VendoredFiles != 0 || s.ParseErrors != 0 {
		t.Errorf("summary %+v", s)
	}

	manifests := map[string]string{}
	for _, m := range rep.Manifests {
		var deps []string
		for _, d := range m.Dependencies {
			deps = append(deps, d.Name+"@"+d.Version+"/"+d.Scope)
		}
		manifests[m.Path] = m.Kind + " " + m.Name + " " + strings.Join(deps, ",")
	}
	wantManifests := map[string]string{
		"go.mod":              "go.mod example.com/poly github.com/google/uuid@v1.6.0/",
		"java/pom.xml":        "pom.xml com.acme:app com.google.guava:guava@33.0.0-jre/,junit:junit@4.13.2/test",
		"py/requirements.txt": "requirements.txt  requests@==2.31.0/",
		"rust/Cargo.toml":     "Cargo.toml rcore serde@1.0/,proptest@1.4/dev",
		"web/package.json":    "package.json web express@^4.18.2/,typescript@^5.4.0/dev",
	}
	if len(manifests) != len(wantManifests) {
		t.Errorf("manifests: got %v", manifests)
	}
	for p, w := range wantManifests {
		if manifests[p] != w {
			t.Errorf("manifest %s: got %q, want %q", p, manifests[p], w)
		}
	}

	var entries []string
	for _, e := range rep.EntryPoints {
		entries = append(entries, e.File+":"+strconv.Itoa(e.Line)+" "+e.Kind)
	}
	wantEntries := []string{
		"cmd/server/main.go:11 main", "java/src/main/java/com/acme/App.java:8 main", "py/app/main.py:16 main",
		"rust/src/main.rs:7 main", "web/package.json:0 manifest", "web/src/index.ts:10 server",
	}
	if !slices.Equal(entries, wantEntries) {
		t.Errorf("entry points\n got %q\nwant %q", entries, wantEntries)
	}

	// The tree sums code per folder; py holds Python and requirements.txt.
	tree := map[string]code.Folder{}
	for _, c := range rep.Tree.Children {
		tree[c.Path] = *c
	}
	if f := tree["py"]; f.Code != 557 || f.Files != 8 {
		t.Errorf("tree py: %+v", f)
	}
	if f := tree["internal"]; f.Code != 63 || f.Files != 4 || len(f.Children) != 4 {
		t.Errorf("tree internal: %+v", f)
	}

	// Files within depth 3 list their symbols; Java sources are deeper.
	byPath := map[string]code.FileSymbols{}
	for _, f := range rep.Files {
		byPath[f.Path] = f
	}
	if _, ok := byPath["java/src/main/java/com/acme/App.java"]; ok {
		t.Error("a file below depth 3 lists symbols")
	}
	util := byPath["py/app/util.py"]
	if len(util.Symbols) != 2 || util.Symbols[0] != (code.Symbol{Name: "helper", Kind: "function", Line: 4, Exported: true}) ||
		util.Symbols[1] != (code.Symbol{Name: "Config", Kind: "class", Line: 8, Exported: true}) {
		t.Errorf("py/app/util.py symbols: %+v", util.Symbols)
	}
	if rep.Files[0].Path != "py/app/god.py" {
		t.Errorf("files are not ordered by size: first %s", rep.Files[0].Path)
	}

	// Hotspots: the Java singleton accessor (if + &&-free) and the Rust match are small; the
	// most complex function of the fixture is handler.ServeHTTP (if with && = 3) or a god.py step.
	top := rep.Hotspots[0]
	if top.Complexity != 4 || top.File != "py/app/god.py" || top.Symbol != "step_01" {
		t.Errorf("top hotspot %+v", top)
	}
	if l := rep.Largest[0]; l.Symbol != "step_01" || l.Lines != 17 || len(rep.Largest) != len(rep.Hotspots) {
		t.Errorf("largest function %+v of %d", l, len(rep.Largest))
	}
	for i := 1; i < len(rep.Largest); i++ {
		if rep.Largest[i].Lines > rep.Largest[i-1].Lines {
			t.Fatalf("largest functions out of order at %d: %+v", i, rep.Largest[i-1:i+1])
		}
	}
	hot := map[string]code.Hotspot{}
	for _, h := range rep.Hotspots {
		hot[h.Symbol] = h
	}
	for sym, cc := range map[string]int{"Handler.ServeHTTP": 3, "Registry.getInstance": 2, "Client.ready": 3, "App.main": 2, "run": 3, "Config.__new__": 2} {
		if hot[sym].Complexity != cc {
			t.Errorf("complexity of %s: got %d, want %d", sym, hot[sym].Complexity, cc)
		}
	}
}

func TestAnalyzeCodebaseArguments(t *testing.T) {
	a := newAnalyzer(t, fixture)

	var rep code.CodebaseReport
	mustCall(t, a, "analyze_codebase", map[string]any{"path": "py", "language": "python", "depth": 1, "limit": 1}, &rep)
	if rep.Path != "py" || rep.Language != "Python" || len(rep.Languages) != 1 || rep.Languages[0].Code != 555 {
		t.Errorf("python under py: path=%s language=%s %+v", rep.Path, rep.Language, rep.Languages)
	}
	if len(rep.Hotspots) != 1 || rep.Omitted["hotspots"] != 37 || rep.Hint == "" {
		t.Errorf("limit 1: %d hotspots, omitted %v, hint %q", len(rep.Hotspots), rep.Omitted, rep.Hint)
	}
	if len(rep.Files) != 0 || len(rep.Tree.Children) != 1 || rep.Tree.Children[0].Children != nil {
		t.Errorf("depth 1 below py: files %v, tree %+v", rep.Files, rep.Tree)
	}

	var zero code.CodebaseReport
	mustCall(t, a, "analyze_codebase", map[string]any{"depth": 0}, &zero)
	if len(zero.Tree.Children) != 0 || len(zero.Files) != 0 || zero.Summary.Files != 25 {
		t.Errorf("depth 0: tree %+v, %d files", zero.Tree, len(zero.Files))
	}

	var one code.CodebaseReport
	mustCall(t, a, "analyze_codebase", map[string]any{"path": "rust/src/net.rs", "depth": 2.0}, &one)
	if one.Summary.Files != 1 || one.Languages[0].Lines != (code.Lines{Code: 14, Comment: 1, Blank: 3}) {
		t.Errorf("single file: %+v %+v", one.Summary, one.Languages)
	}

	for _, tt := range []struct {
		args map[string]any
		arg  string
	}{
		{map[string]any{"path": "../code"}, "path"},
		{map[string]any{"path": "py/../go.mod"}, "path"},
		{map[string]any{"path": "/etc"}, "path"},
		{map[string]any{"path": "missing"}, "path"},
		{map[string]any{"language": "klingon"}, "language"},
		{map[string]any{"depth": -1}, "depth"},
		{map[string]any{"depth": 21}, "depth"},
		{map[string]any{"limit": 0}, "limit"},
		{map[string]any{"limit": 1001}, "limit"},
		{map[string]any{"depth": 1.5}, "arguments"},
	} {
		err := call(t, a, "analyze_codebase", tt.args, &rep)
		if ae, ok := tools.IsArgumentError(err); !ok || ae.Argument != tt.arg {
			t.Errorf("%v: got %v, want an argument error about %s", tt.args, err, tt.arg)
		}
	}
}

func TestSymlinkOutsideWorkspace(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	if err := os.CopyFS(root, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "secret.py")
	if err := os.WriteFile(outside, []byte("password = 'x'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "py", "escape.py")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	a := newAnalyzer(t, root)
	var rep code.CodebaseReport
	for _, p := range []string{"py/escape.py", "up", "up/secret.py"} {
		err := call(t, a, "analyze_codebase", map[string]any{"path": p}, &rep)
		if ae, ok := tools.IsArgumentError(err); !ok || !strings.Contains(ae.Reason, "symbolic link") {
			t.Errorf("path %s: got %v, want a refusal naming the symbolic link", p, err)
		}
	}
	var deps code.DependencyReport
	if err := call(t, a, "find_dependencies", map[string]any{"component": "up/secret.py"}, &deps); err == nil {
		t.Error("find_dependencies followed a link out of the workspace")
	}
	// The walk of the whole root leaves the link out: the Python figures are the fixture's.
	mustCall(t, a, "analyze_codebase", map[string]any{"language": "Python"}, &rep)
	if rep.Languages[0].Files != 7 || rep.Languages[0].Code != 555 {
		t.Errorf("python after planting links: %+v", rep.Languages[0])
	}
}

func TestFindDependencies(t *testing.T) {
	a := newAnalyzer(t, fixture)
	type imp struct{ kind, target, pkg, version, decl string }
	tests := []struct {
		component string
		kind      string
		imports   map[string]imp
	}{
		{"internal/store", "folder", map[string]imp{
			"example.com/poly/internal/handler": {"workspace", "internal/handler", "example.com/poly/internal/handler", "", ""},
			"github.com/google/uuid":            {"external", "", "github.com/google/uuid", "v1.6.0", "go.mod"},
		}},
		{"example.com/poly/internal/service", "package", map[string]imp{
			"sync":                            {"stdlib", "", "sync", "", ""},
			"example.com/poly/internal/store": {"workspace", "internal/store", "example.com/poly/internal/store", "", ""},
		}},
		{"py/app/main.py", "file", map[string]imp{
			"os":       {"stdlib", "", "os", "", ""},
			"requests": {"external", "", "requests", "==2.31.0", "py/requirements.txt"},
			"app.util": {"workspace", "py/app/util.py", "", "", ""},
		}},
		{"app.util", "module", map[string]imp{}},
		{"web/src/index.ts", "file", map[string]imp{
			"express": {"external", "", "express", "^4.18.2", "web/package.json"},
			"./greet": {"workspace", "web/src/greet.ts", "", "", ""},
		}},
		{"web/src/legacy.js", "file", map[string]imp{"path": {"stdlib", "", "path", "", ""}}},
		{"com.acme.App", "module", map[string]imp{
			"com.acme.util.Registry":                  {"workspace", "java/src/main/java/com/acme/util/Registry.java", "", "", ""},
			"com.google.common.collect.ImmutableList": {"external", "", "com.google.guava:guava", "33.0.0-jre", "java/pom.xml"},
		}},
		{"com.acme.util", "package", map[string]imp{
			"java.util.ArrayList": {"stdlib", "", "java.util.ArrayList", "", ""},
			"java.util.List":      {"stdlib", "", "java.util.List", "", ""},
		}},
		{"rust/src/main.rs", "file", map[string]imp{
			"self::net":          {"workspace", "rust/src/net.rs", "", "", ""},
			"crate::net::Client": {"workspace", "rust/src/net.rs", "", "", ""},
			"serde::Serialize":   {"external", "", "serde", "1.0", "rust/Cargo.toml"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.component, func(t *testing.T) {
			var rep code.DependencyReport
			mustCall(t, a, "find_dependencies", map[string]any{"component": tt.component, "type": "imports"}, &rep)
			if rep.Resolved.Kind != tt.kind {
				t.Errorf("resolved as %s, want %s", rep.Resolved.Kind, tt.kind)
			}
			got := map[string]imp{}
			for _, im := range rep.Imports {
				got[im.Import] = imp{im.Kind, im.Target, im.Package, im.Version, im.DeclaredIn}
				if len(im.Locations) == 0 || im.Count == 0 {
					t.Errorf("import %s without locations", im.Import)
				}
			}
			for spec, want := range tt.imports {
				if got[spec] != want {
					t.Errorf("import %s: got %+v, want %+v", spec, got[spec], want)
				}
			}
			if len(tt.imports) > 0 && len(got) != len(tt.imports) {
				t.Errorf("imports: got %v", got)
			}
			if rep.Exports != nil || rep.Importers != nil {
				t.Errorf("type imports answered exports too")
			}
		})
	}
}

// TestFindDependenciesLimitCutsCycles: limit cuts a cycle's units, path and evidence too,
// and says how many of each it left out.
func TestFindDependenciesLimitCutsCycles(t *testing.T) {
	a := newAnalyzer(t, fixture)
	var rep code.DependencyReport
	mustCall(t, a, "find_dependencies", map[string]any{"component": "internal/store", "limit": 1}, &rep)
	if len(rep.Cycles) != 1 || !slices.Equal(rep.Cycles[0].Units, []string{"internal/handler"}) || len(rep.Cycles[0].Path) != 1 || len(rep.Cycles[0].Evidence) != 1 ||
		rep.Omitted["cycleUnits"] != 2 || rep.Omitted["cyclePath"] != 3 || rep.Omitted["cycleEvidence"] != 2 {
		t.Errorf("cycles %+v, omitted %v", rep.Cycles, rep.Omitted)
	}
}

func TestFindDependenciesExportsCyclesAndDepth(t *testing.T) {
	a := newAnalyzer(t, fixture)

	var rep code.DependencyReport
	mustCall(t, a, "find_dependencies", map[string]any{"component": "web/src/greet.ts", "type": "exports"}, &rep)
	uses := map[string]int{}
	for _, e := range rep.Exports {
		uses[e.Symbol] = e.Uses
	}
	if uses["greet"] != 1 || uses["unusedThing"] != 0 || len(uses) != 2 || rep.Exports[0].UsedBy[0] != (code.Location{File: "web/src/index.ts", Line: 2}) {
		t.Errorf("exports of greet.ts: %+v", rep.Exports)
	}
	if len(rep.Importers) != 1 || rep.Importers[0].Unit != "web/src/index.ts" || rep.Imports != nil {
		t.Errorf("importers of greet.ts: %+v, imports %+v", rep.Importers, rep.Imports)
	}

	mustCall(t, a, "find_dependencies", map[string]any{"component": "Registry.getInstance"}, &rep)
	if rep.Resolved.Kind != "symbol" || len(rep.Exports) != 1 || rep.Exports[0].UsedBy[0].File != "java/src/main/java/com/acme/App.java" {
		t.Errorf("symbol Registry.getInstance: %+v %+v", rep.Resolved, rep.Exports)
	}

	mustCall(t, a, "find_dependencies", map[string]any{"component": "internal/store"}, &rep)
	if len(rep.Cycles) != 1 || !slices.Equal(rep.Cycles[0].Path, []string{"internal/store", "internal/handler", "internal/service", "internal/store"}) {
		t.Fatalf("cycles through internal/store: %+v", rep.Cycles)
	}
	if ev := rep.Cycles[0].Evidence; len(ev) != 3 || ev[0] != (code.Location{File: "internal/store/store.go", Line: 7}) {
		t.Errorf("cycle evidence %+v", ev)
	}

	mustCall(t, a, "find_dependencies", map[string]any{"component": "cmd/server", "depth": 3, "type": "imports"}, &rep)
	var reach []string
	for _, r := range rep.Transitive {
		reach = append(reach, r.Unit+"@"+strconv.Itoa(r.Depth))
	}
	if !slices.Equal(reach, []string{"internal/service@2", "internal/store@3"}) || len(rep.Cycles) != 0 {
		t.Errorf("transitive from cmd/server: %v, cycles %v", reach, rep.Cycles)
	}

	mustCall(t, a, "find_dependencies", map[string]any{"component": "internal/handler", "type": "exports", "depth": 2}, &rep)
	var up []string
	for _, r := range rep.TransitiveImporters {
		up = append(up, r.Unit+"@"+strconv.Itoa(r.Depth))
	}
	if !slices.Equal(up, []string{"internal/service@2"}) {
		t.Errorf("transitive importers of internal/handler: %v (importers %+v)", up, rep.Importers)
	}

	mustCall(t, a, "find_dependencies", map[string]any{"component": "py", "limit": 1}, &rep)
	if len(rep.Imports) != 1 || rep.Omitted["imports"] != 1 || rep.Hint == "" {
		t.Errorf("limit 1: %+v omitted %v", rep.Imports, rep.Omitted)
	}
}

func TestFindDependenciesRefusals(t *testing.T) {
	a := newAnalyzer(t, fixture)
	var rep code.DependencyReport

	err := call(t, a, "find_dependencies", map[string]any{"component": "internal/stor"}, &rep)
	if err == nil || !strings.Contains(err.Error(), "internal/store") {
		t.Errorf("unknown component: got %v, want the closest match internal/store", err)
	}
	if _, ok := tools.IsArgumentError(err); ok {
		t.Error("an unknown component is a tool failure (isError), not invalid params")
	}
	err = call(t, a, "find_dependencies", map[string]any{"component": "Regstry"}, &rep)
	if err == nil || !strings.Contains(err.Error(), "Registry") {
		t.Errorf("misspelt symbol: got %v", err)
	}
	for _, tt := range []struct {
		args map[string]any
		arg  string
	}{
		{map[string]any{"component": "../polyglot/go.mod"}, "component"},
		{map[string]any{"component": "/etc/passwd"}, "component"},
		{map[string]any{"component": "  "}, "component"},
		{map[string]any{"component": "go.mod", "type": "everything"}, "type"},
		{map[string]any{"component": "go.mod", "depth": 0}, "depth"},
		{map[string]any{"component": "go.mod", "depth": 11}, "depth"},
	} {
		err := call(t, a, "find_dependencies", tt.args, &rep)
		if ae, ok := tools.IsArgumentError(err); !ok || ae.Argument != tt.arg {
			t.Errorf("%v: got %v, want an argument error about %s", tt.args, err, tt.arg)
		}
	}
	if err := call(t, a, "find_dependencies", map[string]any{"component": "go.mod"}, &rep); err == nil ||
		!strings.Contains(err.Error(), "not source code") {
		t.Errorf("a manifest as component: %v", err)
	}
}

func TestDetectPatterns(t *testing.T) {
	a := newAnalyzer(t, fixture)
	var rep code.PatternReport
	mustCall(t, a, "detect_patterns", map[string]any{"limit": 1000}, &rep)

	find := func(name string) []code.Finding {
		var out []code.Finding
		for _, f := range rep.Findings {
			if f.Name == name {
				out = append(out, f)
			}
		}
		return out
	}
	evidence := func(fs []code.Finding) []string {
		var out []string
		for _, f := range fs {
			for _, e := range f.Evidence {
				out = append(out, e.File+":"+strconv.Itoa(e.Line))
			}
		}
		return out
	}
	tests := []struct {
		name     string
		evidence []string
	}{
		{"import-cycle", []string{"internal/handler/handler.go:7", "internal/service/service.go:7", "internal/store/store.go:7"}},
		{"god-file", []string{"py/app/god.py:1"}},
		{"singleton", []string{"internal/service/service.go:19", "java/src/main/java/com/acme/util/Registry.java:6", "py/app/util.py:8"}},
		{"duplicated-code", []string{"py/app/report_a.py:5", "py/app/report_b.py:5"}},
		{"layer-violation", []string{"internal/store/store.go:7"}},
		{"middleware-chain", []string{"internal/handler/handler.go:25", "web/src/index.ts:8"}},
		{"plugin-registry", []string{"internal/plugins/plugins.go:24"}},
		{"factory", []string{"internal/plugins/plugins.go:27"}},
		{"strategy", []string{"internal/plugins/plugins.go:5", "internal/plugins/plugins.go:16", "internal/plugins/plugins.go:10"}},
		{"builder", []string{"web/src/query.ts:1"}},
		{"observer", []string{"py/app/events.py:1"}},
		{"event-driven", []string{"py/app/events.py:1", "py/app/events.py:5", "py/app/events.py:8"}},
	}
	for _, tt := range tests {
		if got := evidence(find(tt.name)); !slices.Equal(got, tt.evidence) {
			t.Errorf("%s evidence\n got %q\nwant %q", tt.name, got, tt.evidence)
		}
	}
	if f := find("import-cycle"); len(f) != 1 || f[0].Severity != "high" || f[0].Why == "" || f[0].Action == "" {
		t.Errorf("import cycle finding %+v", f)
	}
	if rep.Findings[0].Name != "import-cycle" {
		t.Errorf("the most important finding is %s, not the import cycle", rep.Findings[0].Name)
	}
	var unused []string
	for _, f := range find("unused-export") {
		for _, e := range f.Evidence {
			unused = append(unused, e.Note)
		}
	}
	if !slices.Contains(unused, "function unusedThing") || slices.Contains(unused, "function greet") || slices.Contains(unused, "function helper") {
		t.Errorf("unused exports: %v", unused)
	}
	for _, f := range rep.Findings {
		if f.Confidence <= 0 || f.Confidence > 1 || len(f.Evidence) == 0 && f.Name != "layered" {
			t.Errorf("finding without confidence or evidence: %+v", f)
		}
	}
	total := len(rep.Findings)

	mustCall(t, a, "detect_patterns", map[string]any{"pattern_type": "design"}, &rep)
	for _, f := range rep.Findings {
		if f.Kind != "design" {
			t.Errorf("pattern_type design returned %s", f.Name)
		}
	}
	mustCall(t, a, "detect_patterns", map[string]any{"pattern_type": "singleton", "scope": "file", "path": "py/app/util.py"}, &rep)
	if len(rep.Findings) != 1 || rep.Findings[0].Evidence[0].Note != "Config" {
		t.Errorf("singleton in util.py: %+v", rep.Findings)
	}
	mustCall(t, a, "detect_patterns", map[string]any{"scope": "directory", "path": "internal"}, &rep)
	for _, f := range rep.Findings {
		if !strings.HasPrefix(f.Evidence[0].File, "internal/") && f.Name != "middleware-chain" {
			t.Errorf("directory internal: finding %s at %s", f.Name, f.Evidence[0].File)
		}
	}
	mustCall(t, a, "detect_patterns", map[string]any{"limit": 2}, &rep)
	if len(rep.Findings) != 2 || rep.Omitted != total-2 || rep.Hint == "" {
		t.Errorf("limit 2: %d findings, omitted %d of %d", len(rep.Findings), rep.Omitted, total)
	}

	for _, tt := range []struct {
		args map[string]any
		arg  string
	}{
		{map[string]any{"scope": "file"}, "path"},
		{map[string]any{"scope": "file", "path": "py"}, "path"},
		{map[string]any{"scope": "directory", "path": "go.mod"}, "path"},
		{map[string]any{"scope": "directory", "path": "../.."}, "path"},
		{map[string]any{"scope": "galaxy"}, "scope"},
		{map[string]any{"pattern_type": "spaghetti"}, "pattern_type"},
		{map[string]any{"limit": -3}, "limit"},
	} {
		err := call(t, a, "detect_patterns", tt.args, &rep)
		if ae, ok := tools.IsArgumentError(err); !ok || ae.Argument != tt.arg {
			t.Errorf("%v: got %v, want an argument error about %s", tt.args, err, tt.arg)
		}
	}
}

func TestResourceFollowsChanges(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	hub := &tools.Hub{}
	updated := make(chan string, 16)
	hub.Listen(func(uri string) { updated <- uri })
	a, err := code.New(context.Background(), ws, hub, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	res := a.Resource()
	if info := res.Info(); info.URI != "service://code/analysis" || info.Name != "Code Analysis" || info.MIMEType != "application/json" {
		t.Errorf("resource info %+v", info)
	}
	first := readReport(t, res)
	if first.Summary.Lines.Code != 757 {
		t.Fatalf("first read: %+v", first.Summary)
	}

	src := "package store\n\n// Extra is new.\nfunc Extra() int { return 1 }\n"
	if err := os.WriteFile(filepath.Join(root, "internal", "store", "extra.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-updated:
		if uri != code.ResourceURI {
			t.Errorf("updated %s", uri)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no resources/updated signal after a file changed")
	}
	if got := readReport(t, res).Summary.Lines; got.Code != 759 || got.Comment != 41 || got.Blank != 102 {
		t.Errorf("after adding extra.go: %+v", got)
	}
}

func readReport(t *testing.T, r tools.Resource) code.CodebaseReport {
	t.Helper()
	v, err := r.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var rep code.CodebaseReport
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestCancelledCall(t *testing.T) {
	a := newAnalyzer(t, fixture)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tool(t, a, "analyze_codebase").Call(ctx, json.RawMessage(`{}`))
	if err == nil || ctx.Err() == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("cancelled call: %v", err)
	}

	// Calls cut short in the middle of parsing leave neither wrong parses in the cache nor
	// broken parsers behind: the next call gets the true figures.
	dir := t.TempDir()
	lines := writeCorpus(t, dir, 20_000)
	big := newAnalyzer(t, dir)
	for _, d := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		_, _ = tool(t, big, "analyze_codebase").Call(ctx, json.RawMessage(`{}`))
		cancel()
	}
	var rep, fresh code.CodebaseReport
	mustCall(t, big, "analyze_codebase", map[string]any{"limit": 1000}, &rep)
	if got := rep.Summary.Lines.Code + rep.Summary.Lines.Comment + rep.Summary.Lines.Blank; got < lines || rep.Summary.ParseErrors != 0 {
		t.Errorf("after cancelled calls: %d lines of %d, %d parse errors", got, lines, rep.Summary.ParseErrors)
	}
	mustCall(t, newAnalyzer(t, dir), "analyze_codebase", map[string]any{"limit": 1000}, &fresh)
	if !reflect.DeepEqual(rep.Files, fresh.Files) || !reflect.DeepEqual(rep.Hotspots, fresh.Hotspots) {
		t.Error("after cancelled calls the analysis differs from a fresh analyzer's")
	}
}

func TestSpecs(t *testing.T) {
	a := newAnalyzer(t, fixture)
	for _, tl := range a.Tools() {
		s := tl.Spec()
		for name, schema := range map[string]json.RawMessage{"input": s.InputSchema, "output": s.OutputSchema} {
			var v map[string]any
			if err := json.Unmarshal(schema, &v); err != nil || v["type"] != "object" {
				t.Errorf("%s %s schema: %v", s.Name, name, err)
			}
		}
		if s.Description == "" || s.Title == "" {
			t.Errorf("%s without title or description", s.Name)
		}
	}
}

// TestImportResolution covers the resolution rules the fixture does not: relative Python
// imports, index files and ".js" specifiers of TypeScript sources, Rust super:: and mod.rs,
// Java wildcard imports, nested Go modules, and pyproject.toml and Cargo.toml declarations.
func TestImportResolution(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"pkg/pyproject.toml":           "[project]\nname = \"pkg\"\ndependencies = [\"httpx>=0.27\", \"PyYAML==6.0.1\"]\n",
		"pkg/src/shop/__init__.py":     "",
		"pkg/src/shop/cart.py":         "from . import prices\nfrom .sub.tax import rate\nfrom shop.sub import tax\nimport httpx\nimport yaml\n",
		"pkg/src/shop/prices.py":       "PRICES = {}\n",
		"pkg/src/shop/sub/__init__.py": "",
		"pkg/src/shop/sub/tax.py":      "from .. import prices\nrate = 1\n",
		"ui/lib/index.ts":              "export const x = 1;\n",
		"ui/app/main.ts":               "import { x } from \"../lib\";\nimport { y } from \"./util.js\";\nimport React from \"react\";\n",
		"ui/app/util.ts":               "export const y = 2;\n",
		"rs/Cargo.toml":                "[package]\nname = \"rs\"\n[dependencies]\ntokio-util = { version = \"0.7\" }\n",
		"rs/src/lib.rs":                "pub mod net;\n",
		"rs/src/net/mod.rs":            "pub mod tcp;\nuse tokio_util::codec;\n",
		"rs/src/net/tcp.rs":            "use super::helper;\nuse crate::net;\n",
		"jv/src/a/Main.java":           "package a;\nimport b.*;\nimport static b.Util.max;\nclass Main {}\n",
		"jv/src/b/Util.java":           "package b;\npublic class Util {}\n",
		"jv/src/b/Other.java":          "package b;\npublic class Other {}\n",
		"go.mod":                       "module example.com/top\n\ngo 1.22\n",
		"inner/go.mod":                 "module example.com/inner\n\ngo 1.22\n\nrequire golang.org/x/text v0.14.0\n",
		"inner/lib/lib.go":             "package lib\n",
		"inner/cmd/main.go":            "package main\n\nimport (\n\t\"example.com/inner/lib\"\n\t\"golang.org/x/text/language\"\n)\n\nfunc main() { _ = lib.X; _ = language.English }\n",
	}
	testenv.WriteTree(t, root, files)
	a := newAnalyzer(t, root)
	tests := []struct {
		file    string
		imports map[string]string // import -> target or package@version
	}{
		{"pkg/src/shop/cart.py", map[string]string{
			"":         "pkg/src/shop/prices.py",
			"sub.tax":  "pkg/src/shop/sub/tax.py",
			"shop.sub": "pkg/src/shop/sub/tax.py",
			"httpx":    "httpx@>=0.27",
			"yaml":     "yaml@",
		}},
		{"pkg/src/shop/sub/tax.py", map[string]string{"": "pkg/src/shop/prices.py"}},
		{"ui/app/main.ts", map[string]string{"../lib": "ui/lib/index.ts", "./util.js": "ui/app/util.ts", "react": "react@"}},
		{"rs/src/net/mod.rs", map[string]string{"self::tcp": "rs/src/net/tcp.rs", "tokio_util::codec": "tokio-util@0.7"}},
		{"rs/src/net/tcp.rs", map[string]string{"super::helper": "rs/src/net/mod.rs", "crate::net": "rs/src/net/mod.rs"}},
		{"rs/src/lib.rs", map[string]string{"self::net": "rs/src/net/mod.rs"}},
		{"jv/src/a/Main.java", map[string]string{"b": "jv/src/b/Other.java", "b.Util": "jv/src/b/Util.java"}},
		{"inner/cmd/main.go", map[string]string{"example.com/inner/lib": "inner/lib", "golang.org/x/text/language": "golang.org/x/text@v0.14.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var rep code.DependencyReport
			mustCall(t, a, "find_dependencies", map[string]any{"component": tt.file, "type": "imports"}, &rep)
			got := map[string]string{}
			for _, im := range rep.Imports {
				if im.Kind == "workspace" {
					got[im.Import] = im.Target
				} else {
					got[im.Import] = im.Package + "@" + im.Version
				}
			}
			for spec, want := range tt.imports {
				if got[spec] != want {
					t.Errorf("%q: got %q, want %q (all: %v)", spec, got[spec], want, got)
				}
			}
		})
	}
}

// TestDesignPatternsAcrossLanguages plants the same patterns in the languages the fixture
// shows them in only once.
func TestDesignPatternsAcrossLanguages(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"store.js": "class Store {}\nexport default new Store();\n",
		"config.ts": "export class Config {\n  private static instance: Config;\n  static getInstance(): Config {\n" +
			"    return (Config.instance ??= new Config());\n  }\n}\n",
		"registry.rs":  "use std::sync::OnceLock;\npub struct Registry;\nstatic INSTANCE: OnceLock<Registry> = OnceLock::new();\n",
		"Request.java": "public class Request {\n  public static class Builder {}\n}\n",
		"RequestBuilder.java": "public class RequestBuilder {\n  public RequestBuilder url(String u) { return this; }\n" +
			"  public RequestBuilder header(String h) { return this; }\n  public Request build() { return null; }\n}\n",
		"bus.ts": "export class Bus {\n  private handlers: Array<() => void> = [];\n  on(fn: () => void): void { this.handlers.push(fn); }\n" +
			"  emit(): void { this.handlers.forEach((h) => h()); }\n}\n",
		"tree.ts": "export class Tree {\n  private kids: Tree[] = [];\n  add(kid: Tree): void { this.kids.push(kid); }\n" +
			"  render(): void { for (const k of this.kids) k.render(); }\n}\n",
		"shapes.rs": "pub trait Shape { fn area(&self) -> f64; }\npub struct Sq;\npub struct Ci;\n" +
			"impl Shape for Sq { fn area(&self) -> f64 { 1.0 } }\nimpl Shape for Ci { fn area(&self) -> f64 { 2.0 } }\n",
		"PaymentAdapter.java": "public class PaymentAdapter implements Payments {\n  private final Gateway gateway;\n" +
			"  public PaymentAdapter(Gateway g) { gateway = g; }\n  public void pay(int cents) { gateway.charge(cents); }\n" +
			"  public void refund(int cents) { this.gateway.credit(cents); }\n}\n",
		"TextWrapper.py": "class TextWrapper:\n    def wrap(self, text):\n        return text.split()\n" +
			"    def fill(self, text):\n        return ' '.join(self.wrap(text))\n",
	}
	testenv.WriteTree(t, root, files)
	a := newAnalyzer(t, root)
	var summary code.CodebaseReport
	mustCall(t, a, "analyze_codebase", map[string]any{}, &summary)
	if summary.Summary.ParseErrors != 0 {
		t.Errorf("%d files with syntax errors", summary.Summary.ParseErrors)
	}
	var rep code.PatternReport
	mustCall(t, a, "detect_patterns", map[string]any{"pattern_type": "design"}, &rep)
	got := map[string][]string{}
	for _, f := range rep.Findings {
		got[f.Name] = append(got[f.Name], f.Evidence[0].File+":"+strconv.Itoa(f.Evidence[0].Line))
	}
	for _, v := range got {
		slices.Sort(v)
	}
	want := map[string][]string{
		"singleton": {"config.ts:1", "registry.rs:3", "store.js:2"},
		"builder":   {"RequestBuilder.java:1"},
		"observer":  {"bus.ts:1"},
		"strategy":  {"shapes.rs:1"},
		"adapter":   {"PaymentAdapter.java:1"},
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("%s: got %v, want %v", name, got[name], w)
		}
	}
}

// TestLeftOutFiles adds to the fixture what must not change its code figures: generated,
// vendored, binary and git-ignored files; and files with syntax errors, which are still
// counted and reported.
func TestLeftOutFiles(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"internal/store/zz_generated.go":     "// Code generated by stringer. DO NOT EDIT.\n\npackage store\n\nconst x = 1\n",
		"vendor/github.com/x/y/y.go":         "package y\n\nfunc Y() {}\n",
		"web/node_modules/left-pad/index.js": "module.exports = 1;\n",
		"logo.png":                           "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		".gitignore":                         "build/\n*.tmp.py\n",
		"build/out.py":                       "print(1)\n",
		"py/app/scratch.tmp.py":              "print(2)\n",
		"py/app/broken.py":                   "def broken(:\n    return\n",
	}
	testenv.WriteTree(t, root, files)
	a := newAnalyzer(t, root)
	var rep code.CodebaseReport
	mustCall(t, a, "analyze_codebase", map[string]any{"language": "Go"}, &rep)
	if l := rep.Languages[0]; l.Files != 5 || l.Lines != (code.Lines{Code: 74, Comment: 24, Blank: 29}) {
		t.Errorf("Go with generated and vendored files: %+v", l)
	}
	if s := rep.Summary; s.GeneratedFiles != 1 || s.VendoredFiles != 1 || s.Files != 7 {
		t.Errorf("Go summary %+v", s)
	}
	mustCall(t, a, "analyze_codebase", map[string]any{}, &rep)
	s := rep.Summary
	// 25 fixture files + broken.py counted; the generated file, two vendored files (and the
	// .gitignore, which Linguist calls vendored) and the image are listed but not counted;
	// the ignored files are not listed at all.
	if s.Files != 31 || s.CountedFiles != 26 || s.GeneratedFiles != 1 || s.VendoredFiles != 3 || s.BinaryFiles != 1 || s.ParseErrors != 1 {
		t.Errorf("summary %+v", s)
	}
	for _, l := range rep.Languages {
		if l.Name == "Python" && (l.Files != 8 || l.Code != 557) {
			t.Errorf("Python with a broken file: %+v", l)
		}
	}
}

// A finding's summary counts every place that shows it, and omittedEvidence counts every
// place not shown, whether past the first eight or cut by limit.
func TestOmittedEvidenceCountsEveryPlaceNotShown(t *testing.T) {
	root := t.TempDir()
	src := "package shapes\n\ntype Shape interface{ Area() float64 }\n"
	for i := range 11 {
		src += fmt.Sprintf("\ntype s%d struct{}\n\nfunc (s%d) Area() float64 { return %d }\n", i, i, i)
	}
	testenv.WriteTree(t, root, map[string]string{"go.mod": "module example.com/shapes\n\ngo 1.26\n", "shapes.go": src})
	a := newAnalyzer(t, root)
	for _, limit := range []int{3, 8, 1000} {
		var rep code.PatternReport
		mustCall(t, a, "detect_patterns", map[string]any{"pattern_type": "strategy", "limit": limit}, &rep)
		if len(rep.Findings) != 1 {
			t.Fatalf("limit %d: %+v, want one strategy", limit, rep.Findings)
		}
		f := rep.Findings[0]
		shown := min(limit, 8)
		if !strings.HasSuffix(f.Summary, "(12 places)") || len(f.Evidence) != shown || f.OmittedEvidence != 12-shown {
			t.Errorf("limit %d: summary %q, %d shown, %d omitted; want 12 places, %d shown, %d omitted",
				limit, f.Summary, len(f.Evidence), f.OmittedEvidence, shown, 12-shown)
		}
	}
}
