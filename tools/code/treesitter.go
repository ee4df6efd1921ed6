package code

import (
	"context"
	"fmt"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// grammar tells the generic tree-sitter walk what a language's node types mean. Names are the
// grammar's node types, e.g. "if_statement".
type grammar struct {
	name      string
	language  func() *sitter.Language
	comments  []string
	idents    []string // node types whose text is a name used in the file
	decisions []string // each adds one path to cyclomatic complexity
	logical   []string // binary nodes that add a path when their operator is &&, || or ??
	nesting   []string // control structures that nest
	// elseIf reports an if that continues an else chain (it does not nest deeper).
	elseIf func(n *sitter.Node, parentType string) bool
	// top reads the file's declarations, imports, entry points and pattern evidence.
	top func(t *tsFile)
	// node sees every node (used for imports that can appear anywhere, like require()).
	node func(t *tsFile, n *sitter.Node, typ string)
}

// tsParser parses one language with tree-sitter. It owns a sitter.Parser, which is not safe
// for concurrent use: each worker has its own.
type tsParser struct {
	g        *grammar
	p        *sitter.Parser
	names    []string // node type by symbol: Type() allocates, Symbol() does not
	comments map[string]bool
	idents   map[string]bool
	decide   map[string]bool
	logical  map[string]bool
	nest     map[string]bool
	uses     firstUses
}

func newTSParser(g *grammar) *tsParser {
	lang := g.language()
	p := sitter.NewParser()
	p.SetLanguage(lang)
	names := make([]string, lang.SymbolCount())
	for i := range names {
		names[i] = lang.SymbolName(sitter.Symbol(i))
	}
	set := func(xs []string) map[string]bool {
		m := make(map[string]bool, len(xs))
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	return &tsParser{g: g, p: p, names: names, comments: set(g.comments), idents: set(g.idents),
		decide: set(g.decisions), logical: set(g.logical), nest: set(g.nesting)}
}

// tsFile is one file being read: the tree, its source and the facts gathered so far.
type tsFile struct {
	p    *tsParser
	src  []byte
	root *sitter.Node
	out  *facts
}

// typ is the node's type, "" for a missing node (an optional child such as the value of
// "let x;"). Error nodes carry tree-sitter's built-in symbols (65535, 65534), which are not in
// the language's table.
func (t *tsFile) typ(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	if s := int(n.Symbol()); s < len(t.p.names) {
		return t.p.names[s]
	}
	return n.Type()
}

func (t *tsFile) text(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	return string(t.src[n.StartByte():n.EndByte()])
}

func (t *tsFile) line(n *sitter.Node) int { return int(n.StartPoint().Row) + 1 }
func (t *tsFile) end(n *sitter.Node) int  { return int(n.EndPoint().Row) + 1 }

// children returns the node's children (all, or only named ones).
func (t *tsFile) children(n *sitter.Node, named bool) []*sitter.Node {
	var out []*sitter.Node
	if named {
		for i := 0; i < int(n.NamedChildCount()); i++ {
			out = append(out, n.NamedChild(i))
		}
		return out
	}
	for i := 0; i < int(n.ChildCount()); i++ {
		out = append(out, n.Child(i))
	}
	return out
}

// field is the text of n's child in the named field.
func (t *tsFile) field(n *sitter.Node, name string) string { return t.text(n.ChildByFieldName(name)) }

// has reports whether n has a direct child of the given type.
func (t *tsFile) has(n *sitter.Node, typ string) bool {
	for _, c := range t.children(n, false) {
		if t.typ(c) == typ {
			return true
		}
	}
	return false
}

// find returns the first descendant (or n itself) of the given type, depth first.
func (t *tsFile) find(n *sitter.Node, typ string) *sitter.Node {
	if t.typ(n) == typ {
		return n
	}
	for _, c := range t.children(n, false) {
		if f := t.find(c, typ); f != nil {
			return f
		}
	}
	return nil
}

func (t *tsFile) symbol(n *sitter.Node, name, kind, parent string, exported bool) symbol {
	s := symbol{Name: name, Kind: kindOf(kind), Parent: parent, Line: int32(t.line(n)), End: int32(t.end(n)), Exported: exported}
	if s.isFunc() {
		cx, depth := t.complexity(n)
		s.Complexity, s.Nesting = clamp16(cx), clamp16(depth)
	}
	return s
}

func (t *tsFile) addHint(n *sitter.Node, pattern, subject, detail string) {
	t.out.Hints = append(t.out.Hints, hint{Pattern: pattern, Subject: subject, Line: t.line(n), End: t.end(n), Detail: detail})
}

// complexity is 1 + the decision points below n, and the deepest nesting of control structures.
func (t *tsFile) complexity(n *sitter.Node) (complexity, nesting int) {
	complexity = 1
	var walk func(n *sitter.Node, parentType string, depth int)
	walk = func(n *sitter.Node, parentType string, depth int) {
		typ := t.typ(n)
		switch {
		case t.p.decide[typ]:
			complexity++
		case t.p.logical[typ]:
			if op := n.ChildByFieldName("operator"); op != nil {
				switch t.text(op) {
				case "&&", "||", "??", "and", "or":
					complexity++
				}
			}
		}
		if t.p.nest[typ] && !(t.p.g.elseIf != nil && t.p.g.elseIf(n, parentType)) {
			depth++
			nesting = max(nesting, depth)
		}
		for i := 0; i < int(n.ChildCount()); i++ {
			walk(n.Child(i), typ, depth)
		}
	}
	walk(n, "", 0)
	return complexity, nesting
}

func (p *tsParser) parse(ctx context.Context, _ string, src []byte) (*facts, error) {
	// A parse that was cancelled is resumed by the next call unless the parser is reset:
	// the next file would be read as the rest of the last one.
	p.p.Reset()
	tree, err := p.p.ParseCtx(ctx, nil, src)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", p.g.name, err)
	}
	defer tree.Close()
	t := &tsFile{p: p, src: src, root: tree.RootNode(),
		out: &facts{Language: p.g.name, Parsed: true}}
	p.uses.reset()
	t.out.ParseError = t.root.HasError()

	// One pass over every node: comments, names used, and imports that hide in expressions.
	var comments [][2]int
	cur := sitter.NewTreeCursor(t.root)
	defer cur.Close()
	for {
		n := cur.CurrentNode()
		typ := t.typ(n)
		switch {
		case p.comments[typ]:
			comments = append(comments, [2]int{int(n.StartByte()), int(n.EndByte())})
		case t.out.ParseError && t.out.ErrorLine == 0 && (n.IsError() || n.IsMissing()):
			t.out.ErrorLine = t.line(n)
			if n.IsMissing() {
				t.out.ErrorMsg = "missing " + typ
			} else {
				t.out.ErrorMsg = "unexpected " + strings.Join(strings.Fields(truncate(t.text(n), 40)), " ")
			}
		case p.idents[typ]:
			p.uses.first(src[n.StartByte():n.EndByte()], t.line(n))
		}
		if p.g.node != nil {
			p.g.node(t, n, typ)
		}
		if cur.GoToFirstChild() {
			continue
		}
		for !cur.GoToNextSibling() {
			if !cur.GoToParent() {
				comments = sortRanges(comments)
				t.out.Lines = countLines(src, comments)
				t.out.Blocks = codeBlocks(blocks{}, src, comments)
				t.out.Uses = p.uses.names(nil)
				p.g.top(t)
				return t.out, nil
			}
		}
	}
}

// truncate cuts s to at most n bytes, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// unquote strips the quotes of a string literal's text.
func unquote(s string) string {
	if len(s) >= 2 && strings.ContainsRune("\"'`", rune(s[0])) && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// isInstanceName reports the names that singletons keep their one instance in.
func isInstanceName(name string) bool {
	n := strings.ToLower(strings.Trim(name, "_"))
	return n == "instance" || n == "inst" || n == "singleton" || n == "default_instance" || n == "shared"
}
