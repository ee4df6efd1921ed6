package code

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/platform-dev/platform/tools"
)

// Symbol navigation: find_symbol (definitions), find_references (uses, callers and tests) and
// file_outline. Definitions come from the cached parses; uses are read again from the few
// files that can see the symbol and mention its name, so no index of every identifier of the
// workspace is kept in memory.

// maxBodyLines bounds a symbol body returned on request.
const maxBodyLines = 400

// Definition is where a symbol is declared.
type Definition struct {
	Symbol     string `json:"symbol"` // Name, or Type.Method
	Kind       string `json:"kind"`
	File       string `json:"file"`
	Line       int    `json:"line"`
	End        int    `json:"end"`
	Exported   bool   `json:"exported"`
	Language   string `json:"language"`
	Signature  string `json:"signature"` // the declaration's first line
	Complexity int    `json:"complexity,omitempty"`
	Body       string `json:"body,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"` // the body was cut at maxBodyLines
}

// SymbolReport is find_symbol's answer.
type SymbolReport struct {
	Name        string       `json:"name"`
	Root        string       `json:"root"`
	Definitions []Definition `json:"definitions"`
	Callees     []Callee     `json:"callees,omitempty"`
	Omitted     int          `json:"omitted,omitempty"`
	Hint        string       `json:"hint,omitempty"`
}

// Callee is a function a definition calls, with where the workspace defines it (none for
// functions of the standard library or of dependencies).
type Callee struct {
	Name        string     `json:"name"`
	Line        int        `json:"line"` // first call in the body
	Calls       int        `json:"calls"`
	Definitions []Location `json:"definitions"`
}

// Reference is one use of a symbol.
type Reference struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Kind   string `json:"kind"`             // call or reference
	Caller string `json:"caller,omitempty"` // the function or method the use is in
	Test   bool   `json:"test,omitempty"`
	Text   string `json:"text"` // the line, trimmed
}

// Caller is a function that uses the symbol.
type Caller struct {
	Symbol string `json:"symbol"`
	File   string `json:"file"`
	Line   int    `json:"line"`
	Uses   int    `json:"uses"`
	Test   bool   `json:"test,omitempty"`
}

// ReferenceReport is find_references' answer.
type ReferenceReport struct {
	Symbol      string       `json:"symbol"`
	Root        string       `json:"root"`
	Definitions []Definition `json:"definitions"`
	Summary     struct {
		References int `json:"references"`
		Files      int `json:"files"`
		Callers    int `json:"callers"`
		Tests      int `json:"tests"` // references in test files
	} `json:"summary"`
	References []Reference    `json:"references"`
	Callers    []Caller       `json:"callers"`
	Omitted    map[string]int `json:"omitted,omitempty"`
	Hint       string         `json:"hint,omitempty"`
}

// OutlineImport is an import statement as written.
type OutlineImport struct {
	Import string `json:"import"`
	Line   int    `json:"line"`
}

// OutlineReport is file_outline's answer.
type OutlineReport struct {
	File     string          `json:"file"`
	Language string          `json:"language"`
	Lines    Lines           `json:"lines"`
	Imports  []OutlineImport `json:"imports"`
	Symbols  []Definition    `json:"symbols"`
	Skipped  string          `json:"skipped,omitempty"`
}

type symbolArgs struct {
	Name           string `json:"name"`
	Kind           string `json:"kind"`
	Path           string `json:"path"`
	IncludeBody    bool   `json:"include_body"`
	IncludeCallees bool   `json:"include_callees"`
	Limit          count  `json:"limit"`
}

type referencesArgs struct {
	Symbol string `json:"symbol"`
	File   string `json:"file"`
	Limit  count  `json:"limit"`
}

type outlineArgs struct {
	Path        string `json:"path"`
	IncludeBody bool   `json:"include_body"`
}

type symbolTool struct{ a *Analyzer }

func (symbolTool) Spec() tools.Spec {
	return tools.Spec{
		Name:  "find_symbol",
		Title: "Find symbol definitions",
		Description: "Where a name is defined: functions, methods (Type.Method), types, classes, constants and variables " +
			"in Go, Python, JavaScript, TypeScript, Java and Rust, with kind, file:line-end and the declaration's first line. " +
			"`include_body` adds the source; `include_callees` adds, for functions, what they call and where the workspace " +
			"defines it. An unknown name fails with the closest names.",
		InputSchema:  json.RawMessage(symbolInputSchema),
		OutputSchema: json.RawMessage(symbolOutputSchema),
	}
}

func (t symbolTool) Call(ctx context.Context, raw json.RawMessage) (any, error) {
	args := symbolArgs{Limit: defaultLimit}
	if err := decodeArgs(raw, &args); err != nil {
		return nil, err
	}
	if err := checkLimit(int(args.Limit)); err != nil {
		return nil, err
	}
	ix, defs, err := t.a.lookup(ctx, "name", args.Name, args.Kind, "path", args.Path)
	if err != nil {
		return nil, err
	}
	root := ix.snap.root
	rep := &SymbolReport{Name: args.Name, Root: root, Definitions: []Definition{}}
	for _, d := range defs {
		rep.Definitions = append(rep.Definitions, definition(root, d, args.IncludeBody))
	}
	if args.IncludeCallees {
		rep.Callees = []Callee{}
		for _, d := range defs {
			if d.s.isFunc() {
				cs, err := t.a.callees(ctx, ix, d)
				if err != nil {
					return nil, err
				}
				rep.Callees = append(rep.Callees, cs...)
			}
		}
	}
	rep.Omitted = capList(&rep.Definitions, int(args.Limit))
	if rep.Omitted > 0 {
		rep.Hint = fmt.Sprintf("%d more definitions; call again with a larger limit, a kind, or a narrower path", rep.Omitted)
	}
	return rep, nil
}

// lookup finds the definitions of name (argument nameArg) of kind, below the file or folder p
// (argument pathArg; the first root when empty), in the analysis of p's root.
func (a *Analyzer) lookup(ctx context.Context, nameArg, name, kind, pathArg, p string) (*index, []symbolAt, error) {
	if name = strings.TrimSpace(name); name == "" {
		return nil, nil, tools.InvalidArgument(nameArg, "must not be empty")
	}
	abs, err := a.ws.Resolve(pathArg, p)
	if err != nil {
		return nil, nil, err
	}
	root, rel, _ := a.ws.Root(abs)
	snap, err := a.scan(ctx, root)
	if err != nil {
		return nil, nil, err
	}
	ix := buildIndex(snap)
	defs := ix.definitions(name, kind, rel)
	if len(defs) == 0 {
		err := fmt.Errorf("no definition of %q in %s; closest names: %s", name, filepath.Join(root, rel), strings.Join(ix.closest(name, 5), ", "))
		if note := snap.partialNote(); note != "" {
			err = fmt.Errorf("%w (%s)", err, note)
		}
		return nil, nil, err
	}
	return ix, defs, nil
}

// definitions finds the symbols named name ("Name" or "Type.Method") of kind (any when empty)
// in files below rel, exported ones first.
func (ix *index) definitions(name, kind, rel string) []symbolAt {
	var out []symbolAt
	for _, fi := range ix.files {
		if !under(fi.Rel, rel) {
			continue
		}
		for _, s := range fi.F.Symbols {
			if (s.Name == name || s.qualified() == name) && (kind == "" || s.Kind.String() == kind) {
				out = append(out, symbolAt{fi, s})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].s.Exported != out[j].s.Exported {
			return out[i].s.Exported
		}
		if ti, tj := isTestFile(out[i].fi.Rel), isTestFile(out[j].fi.Rel); ti != tj {
			return tj
		}
		return out[i].fi.Rel < out[j].fi.Rel
	})
	return out
}

// definition describes d, reading its file below root for the signature and, on request, the
// body.
func definition(root string, d symbolAt, body bool) Definition {
	def := Definition{Symbol: d.s.qualified(), Kind: d.s.Kind.String(), File: d.fi.Rel, Line: int(d.s.Line), End: int(d.s.End),
		Exported: d.s.Exported, Language: d.fi.Lang, Complexity: int(d.s.Complexity)}
	lines := strings.Split(string(source(root, d.fi)), "\n")
	if d.s.Line >= 1 && int(d.s.Line) <= len(lines) {
		def.Signature = truncate(strings.TrimSpace(lines[d.s.Line-1]), 200)
	}
	if body && d.s.Line >= 1 {
		end := min(int(d.s.End), len(lines), int(d.s.Line)+maxBodyLines-1)
		def.Truncated = end < int(d.s.End)
		if int(d.s.Line) <= end {
			def.Body = strings.Join(lines[d.s.Line-1:end], "\n")
		}
	}
	return def
}

// source reads a file below root as it is now on disk.
func source(root string, fi *fileInfo) []byte {
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(fi.Rel)))
	if err != nil {
		return nil // gone since the scan: nothing to show
	}
	return src
}

type referencesTool struct{ a *Analyzer }

func (referencesTool) Spec() tools.Spec {
	return tools.Spec{
		Name:  "find_references",
		Title: "Find references",
		Description: "Every use of a symbol (Name or Type.Method) in the files that can see it: its own package or module, and " +
			"the files that import it, tests included. Each use has file:line:column, whether it is a call, the function it is " +
			"in, and the line; `callers` sums the uses by enclosing function. `file` picks one definition when the name has " +
			"several. Comments and strings are not uses.",
		InputSchema:  json.RawMessage(referencesInputSchema),
		OutputSchema: json.RawMessage(referencesOutputSchema),
	}
}

func (t referencesTool) Call(ctx context.Context, raw json.RawMessage) (any, error) {
	args := referencesArgs{Limit: defaultLimit}
	if err := decodeArgs(raw, &args); err != nil {
		return nil, err
	}
	if err := checkLimit(int(args.Limit)); err != nil {
		return nil, err
	}
	ix, defs, err := t.a.lookup(ctx, "symbol", args.Symbol, "", "file", args.File)
	if err != nil {
		return nil, err
	}
	root := ix.snap.root
	rep := &ReferenceReport{Symbol: args.Symbol, Root: root, Definitions: []Definition{}, References: []Reference{}, Callers: []Caller{}}
	for _, d := range defs {
		rep.Definitions = append(rep.Definitions, definition(root, d, false))
	}
	if err := t.a.references(ctx, ix, defs, rep); err != nil {
		return nil, err
	}
	rep.Omitted = map[string]int{"definitions": capList(&rep.Definitions, int(args.Limit)),
		"references": capList(&rep.References, int(args.Limit)), "callers": capList(&rep.Callers, int(args.Limit))}
	rep.Omitted, rep.Hint = omissions(rep.Omitted, int(args.Limit), "or a file to pick one definition")
	return rep, nil
}

// references fills rep with the uses of defs' name in every file that can see one of them.
func (a *Analyzer) references(ctx context.Context, ix *index, defs []symbolAt, rep *ReferenceReport) error {
	name := defs[0].s.Name
	units := map[string]bool{}
	defLines := map[Location]bool{}
	for _, d := range defs {
		units[ix.unitOf[d.fi.Rel]] = true
		defLines[Location{File: d.fi.Rel, Line: int(d.s.Line)}] = true
	}
	callers := map[string]*Caller{}
	files := map[string]bool{}
	viewers := ix.viewers(units)
	for i, fi := range viewers {
		if _, ok := fi.F.Uses.line(name); !ok || fi.F.Skipped != "" {
			continue
		}
		if i%50 == 0 {
			tools.ReportProgress(ctx, float64(i), float64(len(viewers)), "reading "+fi.Rel)
		}
		src := source(ix.snap.root, fi)
		ids, err := a.identifiers(ctx, fi, src, func(s string) bool { return s == name })
		if err != nil {
			return err
		}
		lines := bytes.Split(src, []byte{'\n'})
		for _, id := range ids {
			if defLines[Location{File: fi.Rel, Line: id.line}] {
				continue
			}
			r := Reference{File: fi.Rel, Line: id.line, Column: id.col, Kind: "reference", Test: isTestFile(fi.Rel)}
			if id.call {
				r.Kind = "call"
			}
			if id.line <= len(lines) {
				r.Text = truncate(strings.TrimSpace(string(lines[id.line-1])), 200)
			}
			if s, ok := enclosingFunc(fi.F.Symbols, id.line); ok {
				r.Caller = s.qualified()
				key := fi.Rel + "|" + r.Caller
				c := callers[key]
				if c == nil {
					c = &Caller{Symbol: r.Caller, File: fi.Rel, Line: int(s.Line), Test: r.Test}
					callers[key] = c
				}
				c.Uses++
			}
			files[fi.Rel] = true
			if r.Test {
				rep.Summary.Tests++
			}
			rep.References = append(rep.References, r)
		}
	}
	rep.Summary.References, rep.Summary.Files, rep.Summary.Callers = len(rep.References), len(files), len(callers)
	for _, k := range sortedKeys(callers) {
		rep.Callers = append(rep.Callers, *callers[k])
	}
	// Non-test code first, then by how much each caller depends on the symbol.
	sort.SliceStable(rep.Callers, func(i, j int) bool {
		if rep.Callers[i].Test != rep.Callers[j].Test {
			return !rep.Callers[i].Test
		}
		return rep.Callers[i].Uses > rep.Callers[j].Uses
	})
	return nil
}

// viewers are the files that can use what the units define: the units' own files, a Go
// package's test files, and the files of the units that import them.
func (ix *index) viewers(units map[string]bool) []*fileInfo {
	var out []*fileInfo
	for _, fi := range ix.files {
		u := ix.unitOf[fi.Rel]
		if units[u] || units[strings.TrimSuffix(u, goTestUnit)] {
			out = append(out, fi)
			continue
		}
		for cu := range units {
			if ix.out[u][cu] != nil {
				out = append(out, fi)
				break
			}
		}
	}
	return out
}

// enclosingFunc is the innermost function or method of syms whose lines hold line.
func enclosingFunc(syms []symbol, line int) (symbol, bool) {
	var best symbol
	found := false
	for _, s := range syms {
		if s.isFunc() && int(s.Line) <= line && line <= int(s.End) && (!found || s.End-s.Line < best.End-best.Line) {
			best, found = s, true
		}
	}
	return best, found
}

// callees lists what the function d calls, each with its definitions in the files d's file
// can see: its own unit and the units it imports.
func (a *Analyzer) callees(ctx context.Context, ix *index, d symbolAt) ([]Callee, error) {
	ids, err := a.identifiers(ctx, d.fi, source(ix.snap.root, d.fi), func(string) bool { return true })
	if err != nil {
		return nil, err
	}
	byName := map[string]*Callee{}
	var order []string
	for _, id := range ids {
		if !id.call || id.line < int(d.s.Line) || id.line > int(d.s.End) || (id.line == int(d.s.Line) && id.name == d.s.Name) {
			continue
		}
		c := byName[id.name]
		if c == nil {
			c = &Callee{Name: id.name, Line: id.line, Definitions: []Location{}}
			byName[id.name] = c
			order = append(order, id.name)
		}
		c.Calls++
	}
	if len(order) == 0 {
		return nil, nil
	}
	from := ix.unitOf[d.fi.Rel]
	visible := map[string]bool{from: true, strings.TrimSuffix(from, goTestUnit): true}
	for u := range ix.out[from] {
		visible[u] = true
	}
	for _, fi := range ix.files {
		if !visible[ix.unitOf[fi.Rel]] {
			continue
		}
		for _, s := range fi.F.Symbols {
			if c := byName[s.Name]; c != nil && (s.isFunc() || s.Kind == kindClass || s.Kind == kindStruct || s.Kind == kindType) && len(c.Definitions) < maxLocations {
				c.Definitions = append(c.Definitions, Location{File: fi.Rel, Line: int(s.Line)})
			}
		}
	}
	out := make([]Callee, 0, len(order))
	for _, n := range order {
		out = append(out, *byName[n])
	}
	return out, nil
}

// ident is one identifier in a file: comments and strings are never identifiers.
type ident struct {
	name      string
	line, col int
	call      bool // followed by "(": a call, or a definition's parameter list
}

// identifiers reads the identifiers of one file that keep, with the file's own lexer: Go's
// scanner, or the tree-sitter grammar the file was parsed with.
func (a *Analyzer) identifiers(ctx context.Context, fi *fileInfo, src []byte, keep func(string) bool) ([]ident, error) {
	if fi.Lang == "Go" {
		return goIdentifiers(src, keep), nil
	}
	kind := grammarKey(fi.Rel, fi.Lang)
	g := a.grams[kind]
	if g == nil {
		return nil, nil
	}
	ps := a.parsers.Get().(parserSet)
	p, ok := ps[kind].(*tsParser)
	if !ok {
		p = newTSParser(g)
		ps[kind] = p
	}
	p.p.Reset()
	tree, err := p.p.ParseCtx(ctx, nil, src)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", fi.Rel, err)
	}
	a.parsers.Put(ps)
	defer tree.Close()
	var out []ident
	cur := sitter.NewTreeCursor(tree.RootNode())
	defer cur.Close()
	for {
		n := cur.CurrentNode()
		if s := int(n.Symbol()); s < len(p.names) && p.idents[p.names[s]] {
			if name := string(src[n.StartByte():n.EndByte()]); keep(name) {
				rest := bytes.TrimLeft(src[n.EndByte():], " \t")
				out = append(out, ident{name: name, line: int(n.StartPoint().Row) + 1, col: int(n.StartPoint().Column) + 1,
					call: len(rest) > 0 && rest[0] == '('})
			}
		}
		if cur.GoToFirstChild() {
			continue
		}
		for !cur.GoToNextSibling() {
			if !cur.GoToParent() {
				return out, nil
			}
		}
	}
}

func goIdentifiers(src []byte, keep func(string) bool) []ident {
	fset := token.NewFileSet()
	var s scanner.Scanner
	s.Init(fset.AddFile("", fset.Base(), len(src)), src, nil, 0)
	var out []ident
	var prev *ident
	for {
		pos, tok, lit := s.Scan()
		if prev != nil && tok == token.LPAREN {
			prev.call = true
		}
		prev = nil
		if tok == token.EOF {
			return out
		}
		if tok == token.IDENT && keep(lit) {
			p := fset.PositionFor(pos, false) // where it is in this file, not where a //line directive says it came from
			out = append(out, ident{name: lit, line: p.Line, col: p.Column})
			prev = &out[len(out)-1]
		}
	}
}

type outlineTool struct{ a *Analyzer }

func (outlineTool) Spec() tools.Spec {
	return tools.Spec{
		Name:  "file_outline",
		Title: "File outline",
		Description: "The declarations of one source file in order: functions, types and classes with their methods, constants " +
			"and variables, each with kind, line-end, whether exported, the declaration's first line and cyclomatic complexity " +
			"for functions; and its imports. `include_body` adds each declaration's source.",
		InputSchema:  json.RawMessage(outlineInputSchema),
		OutputSchema: json.RawMessage(outlineOutputSchema),
	}
}

func (t outlineTool) Call(ctx context.Context, raw json.RawMessage) (any, error) {
	var args outlineArgs
	if err := decodeArgs(raw, &args); err != nil {
		return nil, err
	}
	if args.Path == "" {
		return nil, tools.InvalidArgument("path", "must name a file")
	}
	abs, err := t.a.ws.Resolve("path", args.Path)
	if err != nil {
		return nil, err
	}
	root, rel, _ := t.a.ws.Root(abs)
	snap, err := t.a.scan(ctx, abs)
	if err != nil {
		return nil, err
	}
	fi := snap.byRel[rel]
	if fi == nil {
		return nil, tools.InvalidArgument("path", "%q is a folder; file_outline reads one file", args.Path)
	}
	if fi.F == nil || !fi.F.source() {
		return nil, fmt.Errorf("%s is not source code in a parsed language (Go, Python, JavaScript, TypeScript, Java, Rust)", rel)
	}
	rep := &OutlineReport{File: rel, Language: fi.Lang, Lines: fi.F.Lines, Imports: []OutlineImport{}, Symbols: []Definition{}, Skipped: fi.F.Skipped}
	for _, im := range fi.F.Imports {
		rep.Imports = append(rep.Imports, OutlineImport{Import: im.Spec, Line: im.Line})
	}
	syms := append([]symbol{}, fi.F.Symbols...)
	sort.SliceStable(syms, func(i, j int) bool { return syms[i].Line < syms[j].Line })
	for _, s := range syms {
		rep.Symbols = append(rep.Symbols, definition(root, symbolAt{fi, s}, args.IncludeBody))
	}
	return rep, nil
}
