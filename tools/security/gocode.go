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

// goFindings runs gosec's AST rules and SSA analyzers over the packages below dir, a module
// folder or a folder inside a module. Type information comes from the local build and module
// caches only: GOPROXY=off keeps an analysis from downloading anything. When the go command
// cannot load the packages (a dependency missing from an empty module cache, a go.mod the
// toolchain refuses), the files are parsed and type-checked against the standard library
// alone and gosec's AST rules run on what that gives, which a note says. Findings carry the
// absolute file name; the caller maps it into the workspace. shown names dir in notes.
func goFindings(ctx context.Context, dir, shown string) ([]Finding, []string) {
	var notes []string
	conf := &packages.Config{
		Context: ctx,
		Mode:    gosec.LoadMode,
		Dir:     dir,
		Env:     append(os.Environ(), "GOPROXY=off", "GOTOOLCHAIN=local", "GOWORK=off"),
	}
	pkgs, err := packages.Load(conf, "./...")
	withAnalyzers := true
	if err != nil || listFailed(pkgs) {
		if ctx.Err() != nil {
			return nil, nil
		}
		why := "its dependencies are not in the module cache"
		if err != nil {
			why = err.Error()
		}
		pkgs = parsePackages(ctx, dir)
		withAnalyzers = false
		notes = append(notes, fmt.Sprintf("Go packages in %s not loaded by the go command (%s): "+
			"gosec's AST rules ran on the parsed files, type-checked against the standard library only; "+
			"its data-flow analyzers did not run", shown, firstLine(why)))
	}
	logger := log.New(io.Discard, "", 0)
	an := gosec.NewAnalyzer(gosec.NewConfig(), false, true, false, 1, logger)
	an.LoadRules(rules.Generate(false).RulesInfo())
	an.LoadAnalyzers(analyzers.Generate(false).AnalyzersInfo())
	incomplete := 0
	for _, pkg := range pkgs {
		if ctx.Err() != nil {
			return nil, notes
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

// parsePackages builds the packages below dir without the go command: each folder's non-test
// files parsed and type-checked with the standard library's export data; imports that are not
// in the standard library stay unresolved, which leaves some expressions untyped but every
// call into the standard library (crypto, os/exec, database/sql, net/http, tls) typed.
func parsePackages(ctx context.Context, dir string) []*packages.Package {
	byDir := map[string][]string{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return filepath.SkipDir
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			byDir[filepath.Dir(p)] = append(byDir[filepath.Dir(p)], p)
		}
		return nil
	})
	fset := gotoken.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", nil)
	sizes := types.SizesFor("gc", runtime.GOARCH)
	var out []*packages.Package
	for d, files := range byDir {
		var syntax []*ast.File
		for _, f := range files {
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
		pkgPath := filepath.ToSlash(d)
		tp, _ := tc.Check(pkgPath, fset, syntax, info)
		out = append(out, &packages.Package{
			ID: pkgPath, Name: syntax[0].Name.Name, PkgPath: pkgPath, GoFiles: files, CompiledGoFiles: files,
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
