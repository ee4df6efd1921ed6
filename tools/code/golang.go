package code

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// goParser reads Go with the standard library's parser, which is the reference grammar. It
// belongs to one worker, and reuses its scratch slices from file to file.
type goParser struct {
	comments [][2]int
	blocks   []block
}

func (p *goParser) parse(_ context.Context, name string, src []byte) (*facts, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	out := &facts{Language: "Go", Parsed: true, ParseError: err != nil, Uses: map[string]int{}}
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		out.ErrorLine, out.ErrorMsg = list[0].Pos.Line, list[0].Msg
	} else if err != nil {
		out.ErrorMsg = err.Error()
	}
	if f == nil {
		return out, err
	}
	g := &goFile{out: out, tf: fset.File(f.Pos()), pkgVars: map[string]bool{}, pkgMaps: map[string]bool{}}
	comments := p.comments[:0]
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			comments = append(comments, [2]int{g.tf.Offset(c.Pos()), g.tf.Offset(c.End())})
		}
	}
	comments = sortRanges(comments)
	out.Lines = countLines(src, comments)
	p.comments = comments
	// The facts keep a copy of their exact size; the scratch slice serves the next file.
	if p.blocks = codeBlocks(p.blocks[:0], src, comments); len(p.blocks) > 0 {
		out.Blocks = slices.Clone(p.blocks)
	}
	out.Package = f.Name.Name
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		out.Imports = append(out.Imports, importRef{Spec: p, Line: g.line(im.Pos())})
	}
	// Package-level variables first: functions are read for what they do to them.
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok {
			for _, s := range gd.Specs {
				g.spec(gd.Tok, s)
			}
		}
	}
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
		g.function(fd)
	}
	for name, pos := range out.Uses {
		out.Uses[name] = g.line(token.Pos(pos))
	}
	return out, nil
}

// use records the first position an identifier appears at; parse turns positions into lines
// once all are known, one lookup a name instead of one an occurrence.
func (g *goFile) use(id *ast.Ident) {
	if first, seen := g.out.Uses[id.Name]; !seen || int(id.Pos()) < first {
		g.out.Uses[id.Name] = int(id.Pos())
	}
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
	tf      *token.File
	pkgVars map[string]bool // package-level variables
	pkgMaps map[string]bool // package-level maps (registries)
}

func (g *goFile) line(p token.Pos) int { return g.tf.Line(p) }

func (g *goFile) spec(tok token.Token, s ast.Spec) {
	switch s := s.(type) {
	case *ast.TypeSpec:
		kind := "type"
		switch t := s.Type.(type) {
		case *ast.StructType:
			kind = "struct"
		case *ast.InterfaceType:
			kind = "interface"
			var methods []string
			for _, m := range t.Methods.List {
				for _, n := range m.Names {
					methods = append(methods, n.Name)
				}
			}
			g.out.Hints = append(g.out.Hints, hint{Pattern: "interface", Subject: s.Name.Name,
				Line: g.line(s.Pos()), End: g.line(s.End()), Detail: strings.Join(methods, ",")})
		}
		g.out.Symbols = append(g.out.Symbols, symbol{Name: s.Name.Name, Kind: kind, Line: g.line(s.Pos()),
			End: g.line(s.End()), Exported: ast.IsExported(s.Name.Name)})
	case *ast.ValueSpec:
		kind := "var"
		if tok == token.CONST {
			kind = "const"
		}
		_, typedMap := s.Type.(*ast.MapType)
		for i, n := range s.Names {
			if n.Name == "_" {
				continue
			}
			if kind == "var" {
				g.pkgVars[n.Name] = true
				g.pkgMaps[n.Name] = typedMap || (i < len(s.Values) && isMapValue(s.Values[i]))
			}
			g.out.Symbols = append(g.out.Symbols, symbol{Name: n.Name, Kind: kind, Line: g.line(n.Pos()),
				End: g.line(s.End()), Exported: ast.IsExported(n.Name)})
		}
	}
}

func (g *goFile) function(fd *ast.FuncDecl) {
	s := symbol{Name: fd.Name.Name, Kind: "function", Line: g.line(fd.Pos()), End: g.line(fd.End()),
		Exported: ast.IsExported(fd.Name.Name), Complexity: 1}
	if fd.Recv != nil && len(fd.Recv.List) > 0 {
		s.Kind = "method"
		s.Parent = typeName(fd.Recv.List[0].Type)
	}
	if fd.Type.Results != nil && len(fd.Type.Results.List) > 0 {
		s.Returns = typeName(fd.Type.Results.List[0].Type)
	}
	if fd.Body != nil {
		st := g.walkBody(fd, s)
		s.Complexity, s.Nesting = st.complexity, st.nesting
		g.out.Hints = append(g.out.Hints, st.hints(fd, s)...)
	}
	if s.Kind == "function" && s.Name == "main" && g.out.Package == "main" {
		g.out.Entry = append(g.out.Entry, entryPoint{Line: s.Line, Kind: "main", Detail: "func main in package main"})
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
	st := &goStats{g: g, s: s, complexity: 1}
	root := &goVisitor{st: st}
	st.levels = []*goVisitor{root}
	ast.Walk(root, fd.Body)
	return st
}

// goStats holds one visitor per depth: a visitor returned by value is boxed for every node
// visited, which was a third of the walk of GOROOT's function bodies.
type goStats struct {
	g                   *goFile
	s                   symbol
	complexity, nesting int
	levels              []*goVisitor
	found               []hint
	switches, returns   int
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

// see records a name used, and the evidence of lazily created package-level instances
// (singleton), registration into a package-level map (registry), and of the switches and
// returns a factory has.
func (st *goStats) see(n ast.Node) {
	s := st.s
	switch n := n.(type) {
	case *ast.Ident:
		st.g.use(n)
	case *ast.CallExpr:
		if v := onceAssigned(n, st.g.pkgVars); v != "" {
			st.add("singleton", v, "package variable "+v+" created once with sync.Once in "+s.qualified())
		}
	case *ast.IfStmt:
		if v := lazilyAssigned(n, st.g.pkgVars); v != "" {
			st.add("singleton", v, "package variable "+v+" created lazily in "+s.qualified())
		}
	case *ast.AssignStmt:
		if m := mapAssigned(n, st.g.pkgMaps); m != "" && strings.HasPrefix(s.Name, "Register") {
			st.add("registry", m, s.qualified()+" registers into package map "+m)
		}
	case *ast.SwitchStmt, *ast.TypeSwitchStmt:
		st.switches++
	case *ast.ReturnStmt:
		st.returns++
	}
}

func (st *goStats) add(pattern, subject, detail string) {
	st.found = append(st.found, hint{Pattern: pattern, Subject: subject, Line: st.s.Line, End: st.s.End, Detail: detail})
}

// hints is the design-pattern evidence of one function: what its body showed, constructors
// that choose a type (factory), functions wrapping an http.Handler (middleware) and adapters.
func (st *goStats) hints(fd *ast.FuncDecl, s symbol) []hint {
	name := s.Name
	if (strings.HasPrefix(name, "New") || strings.HasPrefix(name, "Create") || strings.Contains(name, "Factory")) &&
		st.switches > 0 && st.returns > 1 {
		st.add("factory", s.qualified(), s.qualified()+" chooses what to construct with a switch")
	}
	if isHandlerWrapper(fd.Type) {
		st.add("middleware", s.qualified(), s.qualified()+" wraps an http.Handler")
	}
	if p, subject, detail := adapterMethod(fd, s); p != "" {
		st.add(p, subject, detail)
	}
	return st.found
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
