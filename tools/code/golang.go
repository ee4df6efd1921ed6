package code

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"path"
	"slices"
	"strconv"
	"strings"
)

// goParser reads Go with the standard library's parser, which is the reference grammar. It
// belongs to one worker, and reuses its scratch slices from file to file.
type goParser struct {
	comments [][2]int
	uses     firstUses
	starts   []int32 // the offsets lines start at
	// The first pass's: the skeleton of the file, the brackets open, the bodies measured.
	skel   []byte
	stack  []frame
	bodies map[int]bodyMeasure
}

// parse reads src with the first pass, which builds syntax trees of the declarations only,
// and with go/parser whole when the first pass cannot vouch for the file (a syntax error it
// sees, which only the full parse reports as go/parser does).
func (p *goParser) parse(_ context.Context, name string, src []byte) (*facts, error) {
	if out := p.first(name, src); out != nil {
		return out, nil
	}
	return p.full(name, src)
}

// full reads src with go/parser whole: what the first pass gives, and the design-pattern
// evidence of function bodies (Hints).
func (p *goParser) full(name string, src []byte) (*facts, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	out := &facts{Language: "Go", Parsed: true, ParseError: err != nil, Unhashed: true}
	p.starts = lineStarts(p.starts[:0], src)
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		out.ErrorMsg = list[0].Msg
		if list[0].Pos.IsValid() {
			out.ErrorLine = lineAt(p.starts, list[0].Pos.Offset)
		}
	} else if err != nil {
		out.ErrorMsg = err.Error()
	}
	if f == nil {
		return out, err
	}
	p.uses.reset()
	g := newGoFile(out, &p.uses, fset.File(f.Pos()), p.starts)
	// The comments are measured in src: go/parser's end of a comment is its start and the
	// length of its text, from which carriage returns are taken out.
	p.comments = goComments(p.comments[:0], src)
	out.Lines = countLines(src, p.comments)
	// Names used are gathered by the walks below: the function bodies' one walk, which also
	// measures complexity and finds hints, and a plain one over everything else.
	g.use(f.Name)
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			ast.Inspect(d, g.inspectUses)
			continue
		}
		if fd.Recv != nil {
			ast.Inspect(fd.Recv, g.inspectUses)
		}
		g.use(fd.Name)
		ast.Inspect(fd.Type, g.inspectUses)
	}
	g.declarations(f)
	out.Uses = g.uses.names(func(pos int) int { return g.line(token.Pos(pos)) })
	g.intern()
	return out, nil
}

func newGoFile(out *facts, uses *firstUses, tf *token.File, starts []int32) *goFile {
	return &goFile{out: out, uses: uses, tf: tf, starts: starts, pkgVars: map[string]bool{}, pkgMaps: map[string]bool{},
		eager: map[string]bool{}, assigns: map[string]map[string]bool{}, callbacks: map[string]string{},
		imported: map[string]bool{}}
}

// declarations reads f's package name, imports and symbols; the functions' complexity and
// nesting come from a walk of their bodies, or from g.bodies when the first pass measured them.
func (g *goFile) declarations(f *ast.File) {
	out := g.out
	out.Package = f.Name.Name
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		out.Imports = append(out.Imports, importRef{Spec: p, Line: g.line(im.Pos())})
		if im.Name != nil {
			g.imported[im.Name.Name] = true
		} else {
			g.imported[path.Base(p)] = true
		}
	}
	// The symbols are counted first, so that the cache keeps them in an array of their size
	// and appending them allocates it once.
	n := 0
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			n++
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.Name != "_" {
							n++
						}
					}
				case *ast.TypeSpec:
					n++
				}
			}
		}
	}
	out.Symbols = make([]symbol, 0, n)
	// Package-level variables first: functions are read for what they do to them.
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok {
			for _, s := range gd.Specs {
				g.spec(gd.Tok, s)
			}
		}
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			g.function(fd)
		}
	}
	g.singletons()
}

// intern makes the symbols' names, parents and result types share the names used's text.
func (g *goFile) intern() {
	out := g.out
	for i := range out.Symbols {
		s := &out.Symbols[i]
		s.Name, s.Parent, s.Returns = out.Uses.intern(s.Name), out.Uses.intern(s.Parent), out.Uses.intern(s.Returns)
	}
}

// use records the first position an identifier appears at; parse turns positions into lines
// once all are known, one lookup a name instead of one an occurrence.
func (g *goFile) use(id *ast.Ident) {
	g.uses.earliest(id.Name, int(id.Pos()))
}

func (g *goFile) inspectUses(n ast.Node) bool {
	if id, ok := n.(*ast.Ident); ok {
		g.use(id)
	}
	return true
}

// goFile is one Go file being read.
type goFile struct {
	out     *facts
	uses    *firstUses // identifiers, at their first position
	tf      *token.File
	starts  []int32         // the offsets lines start at, for line
	pkgVars map[string]bool // package-level variables
	pkgMaps map[string]bool // package-level maps (registries)
	eager   map[string]bool // package-level variables given a value where declared
	// callbacks holds the struct fields (type.field) that are slices or maps of funcs ("func")
	// or of a named type (its name), which may be a listener interface.
	callbacks map[string]string
	imported  map[string]bool // names the file's imports are used by
	// assigns holds the package variables each function assigns, for once.Do(f) with a
	// named f; handouts the functions that return a package variable. Both are read once the
	// whole file is walked, because f may be declared after its caller.
	assigns  map[string]map[string]bool
	handouts []handout
	stats    *goStats // the walk of one function body, reused by the next
	// bodies are the function bodies' measures from the first pass, which leaves the bodies
	// out of the syntax tree; nil when the tree has them.
	bodies map[int]bodyMeasure
}

// handout is a function returning a package variable of a named type, and how that variable
// was created in it.
type handout struct {
	fn       symbol
	v, typ   string
	iface    string   // the result type, when it is not a pointer and so must be an interface
	accessor bool     // a function without parameters whose body is return v
	created  string   // "with sync.Once" or "lazily", when the function itself creates v
	onceFns  []string // functions it runs with once.Do(f)
}

// line is p's line in the file itself. token.File's Line follows //line directives to the
// file the code was generated from (goyacc's grammar, cgo's source), and takes a lock for
// every lookup, which was 3 % of GOROOT's cold analysis.
func (g *goFile) line(p token.Pos) int {
	if !p.IsValid() {
		return 0
	}
	return lineAt(g.starts, int(p)-g.tf.Base())
}

// lineAt is the line of the offset off, given the offsets lines start at.
func lineAt(starts []int32, off int) int {
	i, found := slices.BinarySearch(starts, int32(off))
	if found {
		return i + 1
	}
	return i
}

// lineStarts appends to dst the offset of every line of src.
func lineStarts(dst []int32, src []byte) []int32 {
	dst = append(dst, 0)
	for i := 0; ; {
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 || i+j+1 >= len(src) {
			return dst
		}
		i += j + 1
		dst = append(dst, int32(i))
	}
}

func (g *goFile) spec(tok token.Token, s ast.Spec) {
	switch s := s.(type) {
	case *ast.TypeSpec:
		kind := kindType
		switch t := s.Type.(type) {
		case *ast.StructType:
			kind = kindStruct
			for _, f := range t.Fields.List {
				if elem := callbackElem(f.Type); elem != "" {
					for _, n := range f.Names {
						g.callbacks[s.Name.Name+"."+n.Name] = elem
					}
				}
			}
		case *ast.InterfaceType:
			kind = kindInterface
			// Methods are kept with their signatures: a type implements the interface when
			// it has methods of the same names and types, not only of the same names. An
			// interface embedding another has methods this file may not show: none are kept.
			var methods []string
			for _, m := range t.Methods.List {
				ft, ok := m.Type.(*ast.FuncType)
				if !ok || len(m.Names) == 0 {
					methods = nil
					break
				}
				for _, n := range m.Names {
					methods = append(methods, n.Name+goSignature(ft))
				}
			}
			g.out.Hints = append(g.out.Hints, hint{Pattern: "interface", Subject: s.Name.Name,
				Line: g.line(s.Pos()), End: g.line(s.End()), Detail: strings.Join(methods, ";")})
		}
		g.out.Symbols = append(g.out.Symbols, symbol{Name: s.Name.Name, Kind: kind, Line: int32(g.line(s.Pos())),
			End: int32(g.line(s.End())), Exported: ast.IsExported(s.Name.Name)})
	case *ast.ValueSpec:
		kind := kindVar
		if tok == token.CONST {
			kind = kindConst
		}
		_, typedMap := s.Type.(*ast.MapType)
		for i, n := range s.Names {
			if n.Name == "_" {
				continue
			}
			if kind == kindVar {
				g.pkgVars[n.Name] = true
				g.pkgMaps[n.Name] = typedMap || (i < len(s.Values) && isMapValue(s.Values[i]))
				g.eager[n.Name] = i < len(s.Values)
			}
			g.out.Symbols = append(g.out.Symbols, symbol{Name: n.Name, Kind: kind, Line: int32(g.line(n.Pos())),
				End: int32(g.line(s.End())), Exported: ast.IsExported(n.Name)})
		}
	}
}

func (g *goFile) function(fd *ast.FuncDecl) {
	s := symbol{Name: fd.Name.Name, Kind: kindFunction, Line: int32(g.line(fd.Pos())), End: int32(g.line(fd.End())),
		Exported: ast.IsExported(fd.Name.Name), Complexity: 1}
	if fd.Recv != nil && len(fd.Recv.List) > 0 {
		s.Kind = kindMethod
		s.Parent = typeName(fd.Recv.List[0].Type)
		if g.bodies == nil {
			if g.out.Signatures == nil {
				g.out.Signatures = map[string]string{}
			}
			g.out.Signatures[s.qualified()] = goSignature(fd.Type)
		}
	}
	if fd.Type.Results != nil && len(fd.Type.Results.List) > 0 {
		s.Returns = typeName(fd.Type.Results.List[0].Type)
	}
	if fd.Body != nil && g.bodies != nil {
		m := g.bodies[g.tf.Offset(fd.Body.Lbrace)]
		s.Complexity, s.Nesting = clamp16(m.complexity), clamp16(m.nesting)
	} else if fd.Body != nil {
		st := g.walkBody(fd, s)
		s.Complexity, s.Nesting = clamp16(st.complexity), clamp16(st.nesting)
		g.out.Hints = append(g.out.Hints, st.hints(fd, s)...)
	}
	if s.Kind == kindFunction && s.Name == "main" && g.out.Package == "main" {
		g.out.Entry = append(g.out.Entry, entryPoint{Line: int(s.Line), Kind: "main", Detail: "func main in package main"})
	}
	g.out.Symbols = append(g.out.Symbols, s)
}

func isMapValue(e ast.Expr) bool {
	switch v := e.(type) {
	case *ast.CompositeLit:
		_, ok := v.Type.(*ast.MapType)
		return ok
	case *ast.CallExpr:
		if id, ok := v.Fun.(*ast.Ident); ok && id.Name == "make" && len(v.Args) > 0 {
			_, ok := v.Args[0].(*ast.MapType)
			return ok
		}
	}
	return false
}

// goSignature is a function type's parameter and result types, without names and package
// qualifiers (an interface and its implementation may be in different packages):
// "(string, ...any) (int, error)".
func goSignature(ft *ast.FuncType) string {
	list := func(fl *ast.FieldList) string {
		var out []string
		if fl != nil {
			for _, f := range fl.List {
				t := unqualified(types.ExprString(f.Type))
				for range max(1, len(f.Names)) {
					out = append(out, t)
				}
			}
		}
		return strings.Join(out, ", ")
	}
	return "(" + list(ft.Params) + ") (" + list(ft.Results) + ")"
}

// unqualified drops every package qualifier (an ASCII identifier and its dot) from a type's
// text: *pkg.T -> *T, map[a.K]b.V -> map[K]V. It runs for every method parsed, so it scans
// instead of using a regular expression.
func unqualified(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	word := func(c byte) bool {
		return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if word(c) && (c < '0' || c > '9') && (i == 0 || !word(s[i-1])) {
			j := i + 1
			for j < len(s) && word(s[j]) {
				j++
			}
			if j < len(s) && s[j] == '.' {
				i = j + 1 // a qualifier
				continue
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// typeName is the bare name of a receiver or result type: *pkg.T[K] -> T.
func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return typeName(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.IndexExpr:
		return typeName(t.X)
	case *ast.IndexListExpr:
		return typeName(t.X)
	}
	return ""
}

// walkBody walks a function's body once for what the analysis reads in it: McCabe's number as
// gocyclo counts it (1 + if, for, case, &&, ||), the deepest nesting of control statements,
// the names used, and design-pattern evidence. One walk instead of three was a tenth of a cold
// analysis of GOROOT.
func (g *goFile) walkBody(fd *ast.FuncDecl, s symbol) *goStats {
	st := g.stats
	if st == nil {
		st = &goStats{g: g}
		st.levels = []*goVisitor{{st: st}}
		g.stats = st
	}
	// What a handout keeps (onceFns, created) is left to it; the rest is scratch for the next
	// function: a walk's state for each of GOROOT's functions was 2 % of what its analysis
	// allocated.
	*st = goStats{g: g, s: s, fd: fd, complexity: 1, levels: st.levels, found: st.found[:0], paramSwitches: st.paramSwitches[:0]}
	ast.Walk(st.levels[0], fd.Body)
	return st
}

// goStats holds one visitor per depth: a visitor returned by value is boxed for every node
// visited, which was a third of the walk of GOROOT's function bodies.
type goStats struct {
	g                   *goFile
	s                   symbol
	fd                  *ast.FuncDecl
	complexity, nesting int
	levels              []*goVisitor
	found               []hint
	// paramSwitches are the expression switches over a parameter: a choice by what the
	// caller asks for. A type switch over one dispatches on its representation instead
	// (conversions, arithmetic, tree walks).
	paramSwitches []*ast.SwitchStmt
	returned      string            // a package variable returned as the first result
	created       map[string]string // package variables created here, and how (nil when none)
	onceFns       []string          // functions run with once.Do(f)
}

type goVisitor struct {
	depth int
	st    *goStats
}

func (v *goVisitor) deeper() *goVisitor {
	d := v.depth + 1
	for len(v.st.levels) <= d {
		v.st.levels = append(v.st.levels, &goVisitor{depth: len(v.st.levels), st: v.st})
	}
	v.st.nesting = max(v.st.nesting, d)
	return v.st.levels[d]
}

// Visit is called once for every node of the body: the if statement's children are walked
// by hand, each once.
func (v *goVisitor) Visit(n ast.Node) ast.Visitor {
	v.st.see(n)
	switch n := n.(type) {
	case *ast.IfStmt:
		v.st.complexity++
		d := v.deeper()
		for _, c := range [...]ast.Node{n.Init, n.Cond, n.Body} {
			if c != nil {
				ast.Walk(d, c)
			}
		}
		// "else if" continues the chain at the same depth; a plain else is one level in.
		switch e := n.Else.(type) {
		case *ast.IfStmt:
			ast.Walk(v, e)
		case *ast.BlockStmt:
			ast.Walk(d, e)
		}
		return nil
	case *ast.ForStmt, *ast.RangeStmt:
		v.st.complexity++
		return v.deeper()
	case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
		return v.deeper()
	case *ast.CaseClause:
		if n.List != nil {
			v.st.complexity++
		}
	case *ast.CommClause:
		if n.Comm != nil {
			v.st.complexity++
		}
	case *ast.BinaryExpr:
		if n.Op == token.LAND || n.Op == token.LOR {
			v.st.complexity++
		}
	}
	return v
}

// see records a name used, and the evidence of design patterns: package variables created
// once (singleton), registration into a package-level map (registry), switches (factory),
// and a receiver's field that callbacks are appended to or called from (observer).
func (st *goStats) see(n ast.Node) {
	s := &st.s // a copy of the symbol for every node visited was 0.7 % of a cold analysis
	switch n := n.(type) {
	case *ast.Ident:
		st.g.use(n)
	case *ast.CallExpr:
		if v := onceAssigned(n, st.g.pkgVars); v != "" {
			st.create(v, "with sync.Once")
		} else if f := onceNamed(n); f != "" {
			st.onceFns = append(st.onceFns, f)
		}
	case *ast.IfStmt:
		if v := lazilyAssigned(n, st.g.pkgVars); v != "" {
			st.create(v, "lazily, when still nil,")
		}
	case *ast.AssignStmt:
		if m := mapAssigned(n, st.g.pkgMaps); m != "" && strings.HasPrefix(s.Name, "Register") {
			st.add("registry", m, s.qualified()+" registers into package map "+m)
		}
		for _, l := range n.Lhs {
			if id, ok := l.(*ast.Ident); ok && st.g.pkgVars[id.Name] && s.Kind == kindFunction {
				if st.g.assigns[s.Name] == nil {
					st.g.assigns[s.Name] = map[string]bool{}
				}
				st.g.assigns[s.Name][id.Name] = true
			}
		}
		if field := registersCallback(st.fd, n); field != "" {
			st.callback("subscribe", field)
		}
	case *ast.RangeStmt:
		if field := notifiesCallbacks(st.fd, n); field != "" {
			st.callback("notify", field)
		}
	case *ast.SwitchStmt:
		if st.isParam(n.Tag) {
			st.paramSwitches = append(st.paramSwitches, n)
		}

	case *ast.ReturnStmt:
		if len(n.Results) > 0 && st.returned == "" {
			if id, ok := n.Results[0].(*ast.Ident); ok && st.g.pkgVars[id.Name] {
				st.returned = id.Name
			}
		}
	}
}

// create records a package variable created here: few functions do, and a map for each of
// GOROOT's functions was 5% of the bytes a cold analysis allocates.
func (st *goStats) create(v, how string) {
	if st.created == nil {
		st.created = map[string]string{}
	}
	st.created[v] = how
}

// callback records a field of callbacks added to or called (pattern subscribe or notify),
// when the struct declares it as a slice or map of funcs or of a named type, which patterns
// checks is a listener interface.
func (st *goStats) callback(pattern, field string) {
	elem := st.g.callbacks[st.s.Parent+"."+field]
	if elem == "" {
		return
	}
	h := hint{Pattern: pattern, Subject: st.s.Parent, Line: int(st.s.Line), End: int(st.s.End), Detail: field}
	if elem != "func" {
		h.Of = elem
	}
	st.found = append(st.found, h)
}

// isParam reports whether e is, or is read from, a parameter of the function: x, x.f, x.M(),
// x[i], x.(T).
func (st *goStats) isParam(e ast.Expr) bool {
	for e != nil {
		switch v := e.(type) {
		case *ast.Ident:
			return isParam(st.fd, v)
		case *ast.SelectorExpr:
			e = v.X
		case *ast.CallExpr:
			e = v.Fun
		case *ast.IndexExpr:
			e = v.X
		case *ast.TypeAssertExpr:
			e = v.X
		case *ast.ParenExpr:
			e = v.X
		default:
			return false
		}
	}
	return false
}

// callbackElem is "func" for a slice or map of funcs, the name of the element type for a
// slice or map of a named type, and "" otherwise.
func callbackElem(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.ArrayType:
		if t.Len != nil {
			return ""
		}
		e = t.Elt
	case *ast.MapType:
		e = t.Value
	default:
		return ""
	}
	switch t := e.(type) {
	case *ast.FuncType:
		return "func"
	case *ast.Ident:
		return t.Name
	}
	return ""
}

func (st *goStats) add(pattern, subject, detail string) {
	st.found = append(st.found, hint{Pattern: pattern, Subject: subject, Line: int(st.s.Line), End: int(st.s.End), Detail: detail})
}

// hints is the design-pattern evidence of one function: what its body showed, functions that
// choose among implementations of an interface (factory), functions wrapping an http.Handler
// (middleware) and adapters. A function handing out a package variable is kept for
// singletons, which are decided once the whole file is read.
func (st *goStats) hints(fd *ast.FuncDecl, s symbol) []hint {
	var result ast.Expr
	if fd.Type.Results != nil && len(fd.Type.Results.List) > 0 {
		result = fd.Type.Results.List[0].Type
	}
	// A shared instance is a pointer or an interface value; a declared type of this package is
	// checked by patterns to be an interface, and another package's value type cannot be told
	// from one here.
	id, isIdent := result.(*ast.Ident)
	_, isPtr := result.(*ast.StarExpr)
	if typ := namedType(result); st.returned != "" && typ != "" && (isPtr || isIdent) {
		h := handout{fn: s, v: st.returned, typ: typ, created: st.created[st.returned], onceFns: st.onceFns,
			accessor: fd.Recv == nil && fd.Type.Params.NumFields() == 0 && len(fd.Body.List) == 1}
		if isIdent {
			h.iface = typ
		}
		st.g.handouts = append(st.g.handouts, h)
	}
	// A factory chooses by what its caller asks for (a switch over a parameter) and returns an
	// interface, a declared type of its own package that patterns checks is one.
	if isIdent && len(st.paramSwitches) > 0 && namedType(id) != "" {
		// A case returning the function's own result is a recursive transformation.
		if built := st.g.constructedInCases(st.paramSwitches); len(built) >= 2 && !slices.Contains(built, s.Name+"()") {
			st.found = append(st.found, hint{Pattern: "factory", Subject: s.qualified(), Line: int(s.Line), End: int(s.End), Of: id.Name,
				Detail: fmt.Sprintf("%s returns %s, built in the cases of a switch by %s", s.qualified(), id.Name, strings.Join(built, ", "))})
		}
	}
	if isHandlerWrapper(fd.Type) {
		st.add("middleware", s.qualified(), s.qualified()+" wraps an http.Handler")
	}
	if p, subject, detail := adapterMethod(fd, s); p != "" {
		st.add(p, subject, detail)
	}
	return st.found
}

// singletons reports the package variables of a named type that are created once (with
// sync.Once, lazily behind a nil check, or where declared and never assigned again) and handed
// out by a function.
func (g *goFile) singletons() {
	for _, h := range g.handouts {
		how := h.created
		for _, f := range h.onceFns {
			if how == "" && g.assigns[f][h.v] {
				how = "with sync.Once in " + f + ","
			}
		}
		// A variable set where declared is a singleton when an accessor hands it out; other
		// functions returning one are returning a sentinel or a default.
		if how == "" && h.accessor && g.eager[h.v] && !g.assignedInFunction(h.v) {
			how = "where it is declared"
		}
		if how == "" {
			continue
		}
		g.out.Hints = append(g.out.Hints, hint{Pattern: "singleton", Subject: h.v, Line: int(h.fn.Line), End: int(h.fn.End), Of: h.iface,
			Detail: fmt.Sprintf("package variable %s (%s) is created once %s and handed out by %s", h.v, h.typ, how, h.fn.qualified())})
	}
}

func (g *goFile) assignedInFunction(v string) bool {
	for _, vars := range g.assigns {
		if vars[v] {
			return true
		}
	}
	return false
}

// namedType is the name of a result type that can be an object handed out or built: a
// declared type or a pointer to one, not a builtin (error, string, ...), a func, slice or map.
func namedType(e ast.Expr) string {
	if st, ok := e.(*ast.StarExpr); ok {
		e = st.X
	}
	switch t := e.(type) {
	case *ast.Ident:
		if types.Universe.Lookup(t.Name) == nil {
			return t.Name
		}
	case *ast.SelectorExpr:
		if x, ok := t.X.(*ast.Ident); ok {
			return x.Name + "." + t.Sel.Name
		}
	}
	return ""
}

// constructedInCases names what the return statements of the switches' cases build, when
// each builds a value: a composite literal's type or a called function's name, each once.
// Returns nested deeper (in an inner switch over something else) are not the choice.
func (g *goFile) constructedInCases(switches []*ast.SwitchStmt) []string {
	var built []string
	for _, sw := range switches {
		for _, c := range sw.Body.List {
			for _, stmt := range c.(*ast.CaseClause).Body {
				r, ok := stmt.(*ast.ReturnStmt)
				if !ok || len(r.Results) == 0 {
					continue
				}
				if b := g.constructor(r.Results[0]); b != "" && !slices.Contains(built, b) {
					built = append(built, b)
				}
			}
		}
	}
	return built
}

// constructor names what e builds: a composite literal's type, or a function of this or an
// imported package (a method call reads a value rather than building one).
func (g *goFile) constructor(e ast.Expr) string {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	switch v := e.(type) {
	case *ast.CompositeLit:
		return typeName(v.Type) + "{}"
	case *ast.CallExpr:
		switch fn := v.Fun.(type) {
		case *ast.Ident:
			return fn.Name + "()"
		case *ast.SelectorExpr:
			if pkg, ok := fn.X.(*ast.Ident); ok && g.imported[pkg.Name] {
				return pkg.Name + "." + fn.Sel.Name + "()"
			}
		}
	}
	return ""
}

// registersCallback recognises recv.f = append(recv.f, p) and recv.f[k] = p in a method,
// where p is one of its parameters: a caller's value kept in a field of the receiver.
func registersCallback(fd *ast.FuncDecl, a *ast.AssignStmt) string {
	recv := receiverName(fd)
	if recv == "" || len(a.Lhs) != 1 || len(a.Rhs) != 1 {
		return ""
	}
	if ix, ok := a.Lhs[0].(*ast.IndexExpr); ok {
		if f := recvField(ix.X, recv); f != "" && isParam(fd, a.Rhs[0]) {
			return f
		}
		return ""
	}
	field := recvField(a.Lhs[0], recv)
	call, ok := a.Rhs[0].(*ast.CallExpr)
	if field == "" || !ok || len(call.Args) < 2 {
		return ""
	}
	if fn, ok := call.Fun.(*ast.Ident); !ok || fn.Name != "append" || recvField(call.Args[0], recv) != field {
		return ""
	}
	for _, arg := range call.Args[1:] {
		if !isParam(fd, arg) {
			return ""
		}
	}
	return field
}

// notifiesCallbacks recognises for _, x := range recv.f { ... x(...) or x.M(...) ... }.
func notifiesCallbacks(fd *ast.FuncDecl, r *ast.RangeStmt) string {
	recv := receiverName(fd)
	field := recvField(r.X, recv)
	v, ok := r.Value.(*ast.Ident)
	if recv == "" || field == "" || !ok {
		return ""
	}
	called := false
	ast.Inspect(r.Body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			fn := c.Fun
			if sel, ok := fn.(*ast.SelectorExpr); ok {
				fn = sel.X
			}
			if id, ok := fn.(*ast.Ident); ok && id.Name == v.Name {
				called = true
			}
		}
		return !called
	})
	if !called {
		return ""
	}
	return field
}

func receiverName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) != 1 || len(fd.Recv.List[0].Names) != 1 {
		return ""
	}
	return fd.Recv.List[0].Names[0].Name
}

// recvField is f of recv.f.
func recvField(e ast.Expr, recv string) string {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == recv {
			return sel.Sel.Name
		}
	}
	return ""
}

func isParam(fd *ast.FuncDecl, e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	if !ok {
		return false
	}
	for _, p := range fd.Type.Params.List {
		for _, n := range p.Names {
			if n.Name == id.Name {
				return true
			}
		}
	}
	return false
}

// adapterMethod recognises the two shapes of a Go adapter method, whose body is one call:
// a method of a function type that calls the receiver itself (http.HandlerFunc's ServeHTTP
// calls f(w, r): a plain function made into an interface), and a method that forwards to a
// method of another name on one of the receiver's fields (Len() calling r.list.Count()),
// reported as "forward" with "field.method" so that a type forwarding several is found.
func adapterMethod(fd *ast.FuncDecl, s symbol) (pattern, subject, detail string) {
	if fd.Recv == nil || len(fd.Recv.List) != 1 || len(fd.Recv.List[0].Names) != 1 || len(fd.Body.List) != 1 {
		return "", "", ""
	}
	recv := fd.Recv.List[0].Names[0].Name
	var call *ast.CallExpr
	switch st := fd.Body.List[0].(type) {
	case *ast.ExprStmt:
		call, _ = st.X.(*ast.CallExpr)
	case *ast.ReturnStmt:
		if len(st.Results) == 1 {
			call, _ = st.Results[0].(*ast.CallExpr)
		}
	}
	if call == nil {
		return "", "", ""
	}
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		if fn.Name == recv && recv != "_" {
			return "adapter", s.Parent, fmt.Sprintf("%s calls the function %s itself: the function type %s adapts plain functions to a type with method %s",
				s.qualified(), recv, s.Parent, s.Name)
		}
	case *ast.SelectorExpr:
		if inner, ok := fn.X.(*ast.SelectorExpr); ok {
			if id, ok := inner.X.(*ast.Ident); ok && id.Name == recv && fn.Sel.Name != s.Name {
				return "forward", s.Parent, inner.Sel.Name + "." + fn.Sel.Name
			}
		}
	}
	return "", "", ""
}

// assignsTo returns the first of names that n assigns to.
func assignsTo(n ast.Node, names map[string]bool) string {
	found := ""
	ast.Inspect(n, func(c ast.Node) bool {
		if a, ok := c.(*ast.AssignStmt); ok {
			for _, l := range a.Lhs {
				if id, ok := l.(*ast.Ident); ok && names[id.Name] {
					found = id.Name
				}
			}
		}
		return found == ""
	})
	return found
}

// onceAssigned recognises once.Do(func() { instance = ... }).
func onceAssigned(call *ast.CallExpr, pkgVars map[string]bool) string {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Do" || len(call.Args) != 1 {
		return ""
	}
	if fl, ok := call.Args[0].(*ast.FuncLit); ok {
		return assignsTo(fl.Body, pkgVars)
	}
	return ""
}

// onceNamed recognises once.Do(f) with a named function f.
func onceNamed(call *ast.CallExpr) string {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Do" || len(call.Args) != 1 {
		return ""
	}
	if id, ok := call.Args[0].(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// lazilyAssigned recognises if instance == nil { instance = ... }.
func lazilyAssigned(n *ast.IfStmt, pkgVars map[string]bool) string {
	be, ok := n.Cond.(*ast.BinaryExpr)
	if !ok || be.Op != token.EQL || !isNil(be.Y) {
		return ""
	}
	if id, ok := be.X.(*ast.Ident); ok && pkgVars[id.Name] {
		return assignsTo(n.Body, map[string]bool{id.Name: true})
	}
	return ""
}

// mapAssigned recognises registry[name] = value on a package-level map.
func mapAssigned(n *ast.AssignStmt, pkgMaps map[string]bool) string {
	for _, l := range n.Lhs {
		if ix, ok := l.(*ast.IndexExpr); ok {
			if id, ok := ix.X.(*ast.Ident); ok && pkgMaps[id.Name] {
				return id.Name
			}
		}
	}
	return ""
}

func isNil(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "nil"
}

// isHandlerWrapper reports a func(http.Handler) http.Handler (or HandlerFunc) signature.
func isHandlerWrapper(ft *ast.FuncType) bool {
	isHandler := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		return ok && (sel.Sel.Name == "Handler" || sel.Sel.Name == "HandlerFunc")
	}
	if ft.Params == nil || ft.Results == nil || len(ft.Results.List) != 1 || !isHandler(ft.Results.List[0].Type) {
		return false
	}
	for _, p := range ft.Params.List {
		if isHandler(p.Type) {
			return true
		}
	}
	return false
}
