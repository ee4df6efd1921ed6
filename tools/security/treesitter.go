package security

import (
	"context"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// treeSitterLanguages are parsed with tree-sitter, a real parser and an order of magnitude
// faster than a regular-expression lexer; the other languages of the rules are lexed by chroma.
var treeSitterLanguages = map[string]func() *sitter.Language{
	"Python": python.GetLanguage, "JavaScript": javascript.GetLanguage, "TypeScript": typescript.GetLanguage,
	"TSX": tsx.GetLanguage, "Java": java.GetLanguage,
}

// stringNodes are the grammars' string literal nodes; interpolations are the nodes inside them
// that hold expressions.
var (
	stringNodes    = map[string]bool{"string": true, "template_string": true, "string_literal": true, "text_block": true}
	interpolations = map[string]bool{"interpolation": true, "template_substitution": true}
	commentNodes   = map[string]bool{"comment": true, "line_comment": true, "block_comment": true}
)

// parseTokens parses src with tree-sitter and returns its leaves as tokens, each string
// literal as one token; ok is false for languages without a grammar here.
func parseTokens(ctx context.Context, language string, src []byte) ([]token, bool) {
	get, ok := treeSitterLanguages[language]
	if !ok {
		return nil, false
	}
	lang := get()
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(lang)
	tree, err := p.ParseCtx(ctx, nil, src)
	if err != nil {
		return nil, false
	}
	defer tree.Close()
	names := make([]string, lang.SymbolCount())
	for i := range names {
		names[i] = lang.SymbolName(sitter.Symbol(i))
	}
	typ := func(n *sitter.Node) string {
		if s := int(n.Symbol()); s < len(names) {
			return names[s]
		}
		return ""
	}
	var out []token
	c := sitter.NewTreeCursor(tree.RootNode())
	defer c.Close()
	for {
		n := c.CurrentNode()
		t := typ(n)
		descend := true
		switch {
		case commentNodes[t]:
			descend = false
		case stringNodes[t]:
			out = append(out, stringToken(n, src, typ))
			descend = false
		case t == "concatenated_string":
			// Python joins adjacent literals ("SELECT ... " "WHERE id = %s") into one string
			// before any operator applies: so do the rules.
			joined := token{str: true, line: int(n.StartPoint().Row) + 1}
			for i := 0; i < int(n.ChildCount()); i++ {
				if c := n.Child(i); stringNodes[typ(c)] {
					part := stringToken(c, src, typ)
					joined.text += part.text
					joined.interp = joined.interp || part.interp
				}
			}
			out = append(out, joined)
			descend = false
		case n.ChildCount() == 0:
			if text := strings.TrimSpace(n.Content(src)); text != "" {
				out = append(out, token{text: text, line: int(n.StartPoint().Row) + 1})
			}
		}
		if descend && c.GoToFirstChild() {
			continue
		}
		for !c.GoToNextSibling() {
			if !c.GoToParent() {
				return out, true
			}
		}
	}
}

// stringToken is a string literal's content without prefix and quotes, marked when it
// interpolates expressions (f"{x}", `${x}`).
func stringToken(n *sitter.Node, src []byte, typ func(*sitter.Node) string) token {
	tk := token{str: true, line: int(n.StartPoint().Row) + 1}
	for i := 0; i < int(n.ChildCount()); i++ {
		if interpolations[typ(n.Child(i))] {
			tk.interp = true
		}
	}
	text := strings.TrimLeft(n.Content(src), "fFrRbBuU")
	for _, q := range []string{`"""`, `'''`, `"`, `'`, "`"} {
		if strings.HasPrefix(text, q) && strings.HasSuffix(text, q) && len(text) >= 2*len(q) {
			text = text[len(q) : len(text)-len(q)]
			break
		}
	}
	tk.text = text
	return tk
}
