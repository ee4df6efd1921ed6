package docparse

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// CheckHCL checks the size and nesting depth of an HCL file (Terraform) with HCL's own
// scanner, which does not recurse, before its parser, which recurses once per level of
// brackets, templates, unary operators and conditionals: a file of nothing but brackets
// would otherwise overflow the parser's stack and end the process. The depth counted here
// is an upper bound of the parser's.
func CheckHCL(src []byte, filename string, lim Limits) error {
	if lim.MaxBytes > 0 && len(src) > lim.MaxBytes {
		return &LimitError{Bound: BoundBytes, Max: lim.MaxBytes}
	}
	if lim.MaxDepth <= 0 {
		return nil
	}
	tokens, _ := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	// levels holds, for each open bracket, the conditionals (a ? b : c, nested on the
	// right) of the expression being written inside it; questions is their sum, and unary
	// the length of the current run of ! and - (each nests the next). A comma ends an
	// expression, and so does a newline in a body or an object (not in brackets or
	// parentheses, where the parser skips newlines).
	type level struct {
		questions int
		newlines  bool // a newline ends an expression here
	}
	levels := []level{{newlines: true}}
	questions, unary := 0, 0
	for _, t := range tokens {
		top := &levels[len(levels)-1]
		switch t.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenOQuote,
			hclsyntax.TokenOHeredoc, hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			levels = append(levels, level{newlines: t.Type == hclsyntax.TokenOBrace})
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenCQuote,
			hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
			if len(levels) > 1 {
				questions -= top.questions
				levels = levels[:len(levels)-1]
			}
		case hclsyntax.TokenQuestion:
			top.questions++
			questions++
		case hclsyntax.TokenComma, hclsyntax.TokenNewline:
			if t.Type == hclsyntax.TokenComma || top.newlines {
				questions -= top.questions
				top.questions = 0
			}
		}
		if t.Type == hclsyntax.TokenBang || t.Type == hclsyntax.TokenMinus {
			unary++
		} else {
			unary = 0
		}
		if len(levels)-1+questions+unary > lim.MaxDepth {
			return &LimitError{Bound: BoundDepth, Max: lim.MaxDepth, Line: t.Range.Start.Line}
		}
	}
	return nil
}
