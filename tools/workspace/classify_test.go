package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-enry/go-enry/v2"
	"github.com/go-enry/go-enry/v2/data"

	"github.com/platform-dev/platform/internal/testenv"
)

// TestLanguageAsLinguist: language, which skips the modeline strategy where no modeline can
// match, answers what enry.GetLanguage answers, for modelines at every place enry looks
// (including one split across the join of the first and last five lines it reads) and for the
// files of Go's runtime, except that it names the family (Assembly) where Linguist picks a
// dialect (Unix or Motorola 68K Assembly, for Go's assembly).
func TestLanguageAsLinguist(t *testing.T) {
	lines := func(n int, at map[int]string) string {
		var b strings.Builder
		for i := range n {
			if s, ok := at[i]; ok {
				b.WriteString(s)
			} else {
				b.WriteString("x = 1")
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	cases := map[string]struct{ name, content, want string }{
		"emacs first line":    {"a.txt", "# -*- mode: ruby -*-\nputs 1\n", "Ruby"},
		"emacs last line":     {"a.txt", lines(20, map[int]string{19: "# -*- mode: python -*-"}), "Python"},
		"vim first line":      {"script", "# vim: set ft=python:\nprint(1)\n", "Python"},
		"vim last line":       {"a.h", lines(20, map[int]string{19: "/* vim: set filetype=cpp: */"}), "C++"},
		"ex modeline":         {"a.h", lines(20, map[int]string{18: " ex: syntax=cpp"}), "C++"},
		"vim in the middle":   {"a.h", lines(20, map[int]string{9: "// vim: set ft=cpp:"}), "C"},
		"vim across the join": {"a.h", lines(20, map[int]string{4: "int a; // v", 16: "i: set ft=cpp:"}), "C++"},
		"no modeline":         {"a.h", "#include <stdio.h>\nint main(void) { return 0; }\n", "C"},
		"go":                  {"main.go", "package main\n\nfunc main() {}\n", "Go"},
		"empty":               {"a.s", "", "Assembly"},
	}
	root := func(l string) string {
		if g := enry.GetLanguageGroup(l); g != "" {
			return g
		}
		return l
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got, want := language(c.name, []byte(c.content)), enry.GetLanguage(c.name, []byte(c.content)); got != want || got != c.want {
				t.Errorf("language = %q, enry says %q, want %q", got, want, c.want)
			}
		})
	}

	// Go's assembly, which Linguist's classifier takes for a dialect.
	goAsm := "#include \"textflag.h\"\n\nTEXT ·add(SB),NOSPLIT,$0-24\n\tMOVQ a+0(FP), AX\n\tADDQ b+8(FP), AX\n\tMOVQ AX, ret+16(FP)\n\tRET\n"
	if got, linguist := language("add_amd64.s", []byte(goAsm)), enry.GetLanguage("add_amd64.s", []byte(goAsm)); got != "Assembly" || linguist == got {
		t.Errorf("Go assembly: language = %q (Linguist %q), want Assembly", got, linguist)
	}

	// Every Go installation carries its sources; the tests are run by one.
	dir := filepath.Join(testenv.GOROOT(t), "src", "runtime")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Every seventh file keeps the race detector's run short; the runtime's assembly is where
	// Linguist's classifier has the last word.
	for i, e := range entries {
		if i%7 != 0 || !e.Type().IsRegular() {
			continue
		}
		content, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		content = content[:min(len(content), classifyBytes)]
		if enry.IsBinary(content) {
			continue
		}
		got, want := language(e.Name(), content), enry.GetLanguage(e.Name(), content)
		if got != want && got != root(want) {
			t.Errorf("%s: language = %q, enry says %q", e.Name(), got, want)
		}

	}
}

// TestGeneratedAsLinguist: generated, which runs Linguist's rules on the path only when it
// holds a word one of them needs, answers what enry.IsGenerated answers for a path each rule
// matches, for paths close to them that none matches, and for every file of Go's net/http.
func TestGeneratedAsLinguist(t *testing.T) {
	// One path a rule of data.GeneratedCodeNameMatchers, in its order; a rule enry adds
	// needs a row here and, if no word covers it, a word in generatedNameWords.
	rules := []string{"app/.idea/workspace.xml", "ios/Pods/Alamofire/x.swift", "Carthage/Build/Mac/x.h",
		"Form1.Designer.CS", "login.feature.cs", "web/node_modules/x/index.js",
		"vendor/github.com/x/y/z.go", "Gopkg.lock", "glide.lock", "poetry.lock", "pdm.lock", "uv.lock",
		"x/esy.lock", "deno.lock", "npm-shrinkwrap.json", "package-lock.json", "pnpm-lock.yaml",
		".pnp.cjs", "Godeps/Godeps.json", "ext/a.zep.c", "composer.lock", "Cargo.lock",
		"Cargo.toml.orig", "flake.lock", "MODULE.bazel.lock", "Pipfile.lock", "infra/.terraform.lock.hcl",
		"src/__generated__/Query.graphql.ts", "Lib_TLB.pas", "htmlcov/index.html", ".sqlx/query-1.json"}
	if len(rules) != len(data.GeneratedCodeNameMatchers) {
		t.Fatalf("%d paths for enry's %d rules on generated paths: add a path for each new rule", len(rules), len(data.GeneratedCodeNameMatchers))
	}
	near := []string{"idea/x.go", "pods.go", "Carthage/x.swift", "designer.cs", "feature.cs", "node_modules.go",
		"vendor.go", "flake.nix", "pnp.js", "zep.c", "src/generated/x.ts", "tlb.pas", "htmlcov.py", "sqlx/query.json",
		"Form1.cs", "README.md"}
	for i, p := range append(rules, near...) {
		got, want := generated(p, nil), enry.IsGenerated(p, nil)
		if got != want || got != (i < len(rules)) {
			t.Errorf("%s: generated = %v, enry says %v", p, got, want)
		}
	}

	// The rules on the content: a Go file that says it is generated, a minified script.
	dir := filepath.Join(testenv.GOROOT(t), "src", "net", "http")
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(dir), p)
		if got, want := generated(rel, content), enry.IsGenerated(rel, content); got != want {
			t.Errorf("%s: generated = %v, enry says %v", rel, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"zz_generated.go": "// Code generated by stringer; DO NOT EDIT.\n\npackage x\n",
		"app.min.js":      strings.Repeat("var a=1;", 200),
	} {
		if !generated(name, []byte(content)) || !enry.IsGenerated(name, []byte(content)) {
			t.Errorf("%s: generated = %v, enry says %v, want true", name, generated(name, []byte(content)), enry.IsGenerated(name, []byte(content)))
		}
	}
}
