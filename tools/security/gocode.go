package security

import (
	"context"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	gotoken "go/token"
	"go/types"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/securego/gosec/v2"
	"github.com/securego/gosec/v2/analyzers"
	"github.com/securego/gosec/v2/issue"
	"github.com/securego/gosec/v2/rules"
	"golang.org/x/tools/go/packages"
)

// gosecRemediation says what to do for the gosec rules met most often; the others link to
// gosec's rule page.
var gosecRemediation = map[string]string{
	"G101": "Move the credential out of the source into a secret manager or the environment, and rotate it",
	"G102": "Bind to a specific interface (127.0.0.1 or a configured address) instead of all interfaces",
	"G104": "Handle or explicitly discard the error",
	"G106": "Do not use ssh.InsecureIgnoreHostKey: verify host keys with knownhosts",
	"G107": "Validate the URL against an allow-list before requesting it (SSRF)",
	"G108": "Do not expose net/http/pprof on a public listener",
	"G110": "Limit decompressed size with io.LimitReader or io.CopyN",
	"G112": "Set ReadHeaderTimeout on http.Server to resist Slowloris",
	"G114": "Use an http.Server with timeouts instead of http.ListenAndServe",
	"G115": "Check the range before converting between integer types",
	"G201": "Use placeholders (db.Query(\"... WHERE id = ?\", id)) instead of building SQL with fmt.Sprintf",
	"G202": "Use placeholders instead of concatenating SQL",
	"G204": "Do not pass untrusted input to exec.Command; use a fixed program and validated arguments",
	"G301": "Create folders with 0750 or stricter",
	"G302": "Open files with 0600 or stricter",
	"G304": "Clean and confine the path (filepath.Clean, a root directory, os.Root) before opening it",
	"G306": "Write files with 0600 or stricter",
	"G401": "Use SHA-256 or stronger instead of MD5/SHA-1",
	"G402": "Keep TLS verification on (InsecureSkipVerify false) and MinVersion at TLS 1.2 or later",
	"G403": "Use RSA keys of at least 2048 bits",
	"G404": "Use crypto/rand for anything security-relevant",
	"G501": "Import crypto/sha256 instead of crypto/md5",
	"G505": "Import crypto/sha256 instead of crypto/sha1",
}

// goBatchBytes bounds the Go source one load holds: the packages of a large tree are loaded,
// checked and dropped a batch at a time, so memory follows the batch, not the tree (syntax
// and type information take about 20 times the source's size).
const goBatchBytes = 4 << 20

// goFindings runs gosec's AST rules and SSA analyzers over the packages below dir, a module
// folder or a folder inside a module, goBatchBytes of source at a time. Type information comes
// from the local build and module caches only: GOPROXY=off keeps an analysis from downloading
// anything. When the go command cannot load the packages (a dependency missing from an empty
// module cache, a go.mod the toolchain refuses), the files are parsed and type-checked against
// the standard library alone and gosec's AST rules run on what that gives, which a note says.
// Findings carry the absolute file name; the caller maps it into the workspace. shown names
// dir in notes.
func goFindings(ctx context.Context, dir, shown string) ([]Finding, []string) {
	var notes []string
	conf := &packages.Config{
		Context: ctx,
		Mode:    gosec.LoadMode,
		Dir:     dir,
		Env:     append(os.Environ(), "GOPROXY=off", "GOTOOLCHAIN=local", "GOWORK=off"),
	}
	logger := log.New(io.Discard, "", 0)
	an := gosec.NewAnalyzer(gosec.NewConfig(), false, true, false, 1, logger)
	an.LoadRules(rules.Generate(false).RulesInfo())
	an.LoadAnalyzers(analyzers.Generate(false).AnalyzersInfo())
	withAnalyzers := true
	incomplete := 0
	for _, batch := range goBatches(ctx, dir) {
		var pkgs []*packages.Package
		if withAnalyzers {
			patterns := make([]string, len(batch))
			for i, d := range batch {
				rel, err := filepath.Rel(dir, d.dir)
				if err != nil {
					return nil, notes
				}
				patterns[i] = "./" + filepath.ToSlash(rel)
			}
			var err error
			pkgs, err = packages.Load(conf, patterns...)
			if err != nil || listFailed(pkgs) {
				if ctx.Err() != nil {
					return nil, nil
				}
				why := "its dependencies are not in the module cache"
				if err != nil {
					why = err.Error()
				}
				// The go command fails the same way on every batch: the rest are parsed.
				withAnalyzers = false
				notes = append(notes, fmt.Sprintf("Go packages in %s not loaded by the go command (%s): "+
					"gosec's AST rules ran on the parsed files, type-checked against the standard library only; "+
					"its data-flow analyzers did not run", shown, firstLine(why)))
			}
		}
		if !withAnalyzers {
			pkgs = parsePackages(batch)
		}
		for _, pkg := range pkgs {
			if ctx.Err() != nil {
				return nil, notes
			}
			if len(pkg.GoFiles) == 0 {
				continue // every file excluded by build constraints: ./... would not list it
			}
			if len(pkg.Errors) > 0 {
				incomplete++
			}
			if pkg.Types == nil || len(pkg.Syntax) == 0 {
				continue
			}
			an.CheckRules(pkg)
			if withAnalyzers {
				an.CheckAnalyzers(pkg)
			}
		}
	}
	if incomplete > 0 && withAnalyzers {
		notes = append(notes, fmt.Sprintf("%d Go packages in %s have load or type errors (missing modules?): their findings may be incomplete", incomplete, shown))
	}
	issues, _, _ := an.Report()
	var out []Finding
	for _, is := range issues {
		line, _ := strconv.Atoi(strings.SplitN(is.Line, "-", 2)[0])
		cwe := ""
		if is.Cwe != nil {
			cwe = "CWE-" + is.Cwe.ID
		}
		rem, ok := gosecRemediation[is.RuleID]
		if !ok {
			rem = "See https://securego.io/docs/rules/" + strings.ToLower(is.RuleID) + ".html"
		}
		out = append(out, Finding{
			RuleID:      "gosec/" + is.RuleID,
			Title:       gosecTitle(is),
			Severity:    strings.ToLower(is.Severity.String()),
			Category:    CategoryCode,
			CWE:         cwe,
			File:        is.File,
			Line:        line,
			Message:     is.What,
			Remediation: rem,
			Tool:        "gosec",
		})
	}
	return out, notes
}

// listFailed reports whether the go command could not list the packages at all: every package
// carries a list error and none was type-checked.
func listFailed(pkgs []*packages.Package) bool {
	for _, p := range pkgs {
		if p.Types != nil && len(p.Syntax) > 0 && !p.IllTyped {
			return false
		}
	}
	for _, p := range pkgs {
		if len(p.GoFiles) == 0 && len(p.IgnoredFiles) > 0 {
			continue // excluded by build constraints, not unloadable
		}
		for _, e := range p.Errors {
			if e.Kind == packages.ListError {
				return true
			}
		}
	}
	return len(pkgs) == 0
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// goDir is a folder with Go files: its non-test files and their size.
type goDir struct {
	dir   string
	files []string
	size  int64
}

// goBatches lists the folders below dir that hold non-test Go files, skipping what the go
// command's ./... skips (testdata, vendor, hidden and _ folders, other modules), in batches of
// about goBatchBytes.
func goBatches(ctx context.Context, dir string) [][]goDir {
	var dirs []goDir
	index := map[string]int{} // a folder's files and subfolders come interleaved
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return filepath.SkipDir
		}
		name := d.Name()
		if d.IsDir() {
			if p == dir {
				return nil
			}
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // another module: analysed on its own
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		i, ok := index[filepath.Dir(p)]
		if !ok {
			i = len(dirs)
			index[filepath.Dir(p)] = i
			dirs = append(dirs, goDir{dir: filepath.Dir(p)})
		}
		dirs[i].files = append(dirs[i].files, p)
		if fi, err := d.Info(); err == nil {
			dirs[i].size += fi.Size()
		}
		return nil
	})
	var batches [][]goDir
	var size int64
	for i, d := range dirs {
		if i == 0 || size+d.size > goBatchBytes {
			batches = append(batches, nil)
			size = 0
		}
		batches[len(batches)-1] = append(batches[len(batches)-1], d)
		size += d.size
	}
	return batches
}

// parsePackages builds the packages of dirs without the go command: each folder's non-test
// files parsed and type-checked with the standard library's export data; imports that are not
// in the standard library stay unresolved, which leaves some expressions untyped but every
// call into the standard library (crypto, os/exec, database/sql, net/http, tls) typed.
func parsePackages(dirs []goDir) []*packages.Package {
	fset := gotoken.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", nil)
	sizes := types.SizesFor("gc", runtime.GOARCH)
	var out []*packages.Package
	for _, d := range dirs {
		var syntax []*ast.File
		for _, f := range d.files {
			if af, err := parser.ParseFile(fset, f, nil, parser.ParseComments); err == nil {
				syntax = append(syntax, af)
			}
		}
		if len(syntax) == 0 {
			continue
		}
		info := &types.Info{
			Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{},
			Implicits: map[ast.Node]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
			Scopes: map[ast.Node]*types.Scope{}, Instances: map[*ast.Ident]types.Instance{},
		}
		tc := types.Config{Importer: imp, Sizes: sizes, Error: func(error) {}} // unresolved imports are expected
		pkgPath := filepath.ToSlash(d.dir)
		tp, _ := tc.Check(pkgPath, fset, syntax, info)
		out = append(out, &packages.Package{
			ID: pkgPath, Name: syntax[0].Name.Name, PkgPath: pkgPath, GoFiles: d.files, CompiledGoFiles: d.files,
			Fset: fset, Syntax: syntax, Types: tp, TypesInfo: info, TypesSizes: sizes, IllTyped: true,
		})
	}
	return out
}

// gosecTitle names what a gosec rule finds: the weakness it reports, else its message.
func gosecTitle(is *issue.Issue) string {
	if is.Cwe != nil && is.Cwe.Name != "" {
		return is.Cwe.Name
	}
	return is.What
}
