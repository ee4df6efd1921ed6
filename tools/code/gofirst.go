package code

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"

	"github.com/platform-dev/platform/tools/code/goscan"
)

// bodyMeasure is what the first pass measures in a function's body: McCabe's number as
// gocyclo counts it and the deepest nesting of control statements.
type bodyMeasure struct{ complexity, nesting int }

// frame is a bracket open at some point of the first pass, or a control statement's header
// (from its keyword to the brace that opens its block).
type frame struct {
	kind    uint8
	operand uint8 // in a header: what the operand being read started with
}

const (
	fParen uint8 = iota
	fBrack
	fBrace  // any other brace: a block, a composite literal, a function literal's body
	fType   // a struct's or interface's brace
	fCtrl   // a control statement's block
	fBlank  // a top-level brace whose contents the skeleton leaves out
	fHeader // a control statement's header

	// An operand starting with a slice, array, map or struct type, whose brace in a header
	// opens a composite literal, or with func, whose brace opens the literal's body.
	opLiteralType = 1
	opFunc        = 2
)

// maxKeptSkeleton bounds the skeleton a parser keeps for the next file: GOROOT's largest Go
// file is 3 MB, which each worker would hold to the end of the analysis and beyond.
const maxKeptSkeleton = 256 << 10

// first reads a Go file without building syntax trees of its function bodies: one pass of
// goscan gives the names used, the comments and each body's complexity and nesting, and
// go/parser reads a skeleton of the file (the same bytes, with the contents of function bodies
// and of top-level composite literals blanked) for the declarations. It returns nil when
// the file may have a syntax error (a malformed token, unbalanced brackets, a declaration
// that does not parse), which the full parse reports: a file the first pass accepts gives the
// same facts as the full parse, except the design-pattern evidence in function bodies,
// which detect_patterns gets from a full parse when it needs it (windows.go).
func (p *goParser) first(name string, src []byte) *facts {
	var s goscan.Scanner
	s.Init(src)
	p.uses.reset()
	comments := p.comments[:0]
	skel := append(p.skel[:0], src...)
	stack := p.stack[:0]
	clear(p.bodies)
	if p.bodies == nil {
		p.bodies = map[int]bodyMeasure{}
	}
	defer func() {
		p.comments, p.skel, p.stack = comments, skel, stack
		if cap(skel) > maxKeptSkeleton {
			p.skel = nil
		}
	}()

	var (
		prev       = goscan.Semicolon
		blank      = -1 // the offset of the open fBlank brace
		funcDecl   bool // a top-level func declaration's signature is being read
		imports    bool // an import declaration is being read
		body       = -1 // the offset of the brace of the function body being read
		m          bodyMeasure
		ctrl       int // headers and control blocks open in the body
		prevIsType bool
		semiAt     = -1 // the offset of the last semicolon inserted
	)
	for {
		tok, start, end := s.Next()
		if tok == goscan.EOF {
			break
		}
		if tok == goscan.Comment {
			comments = append(comments, [2]int{start, end})
			blankOut(skel[start:end]) // the skeleton's parse would copy its text
			if prev == goscan.Semicolon && semiAt == start {
				skel[start] = ';' // the semicolon that ends the comment's line
			}
			continue
		}
		top := uint8(255)
		if len(stack) > 0 {
			top = stack[len(stack)-1].kind
		}
		if top == fHeader {
			readHeader(&stack[len(stack)-1], tok, prev, src[start:end])
		}
		switch tok {
		case goscan.Ident:
			p.uses.first(src[start:end], s.Line())
		case goscan.Keyword:
			imports = imports || len(stack) == 0 && string(src[start:end]) == "import"
		case goscan.Operator:
			if imports && src[start] == '.' {
				p.uses.first(src[start:end], s.Line()) // import . "path" names the package "."
			}
		case goscan.If, goscan.For, goscan.Case, goscan.AndAnd, goscan.OrOr:
			if body >= 0 {
				m.complexity++
			}
		}
		switch tok {
		case goscan.If, goscan.For, goscan.Switch, goscan.Select:
			stack = append(stack, frame{kind: fHeader})
			ctrl++
			m.nesting = max(m.nesting, ctrl)
		case goscan.Func:
			if len(stack) == 0 && prev == goscan.Semicolon {
				funcDecl = true
			}
		case goscan.Semicolon:
			if len(stack) == 0 {
				funcDecl, imports = false, false
			}
			if start == end && start < len(skel) {
				skel[start], semiAt = ';', start
			}
		case goscan.LParen:
			stack = append(stack, frame{kind: fParen})
		case goscan.LBrack:
			stack = append(stack, frame{kind: fBrack})
		case goscan.RParen, goscan.RBrack:
			want := fParen
			if tok == goscan.RBrack {
				want = fBrack
			}
			if top != want {
				return nil
			}
			stack = stack[:len(stack)-1]
		case goscan.LBrace:
			kind := fBrace
			switch {
			case prevIsType:
				kind = fType
			case blank < 0:
				kind, blank = fBlank, start
				if funcDecl {
					body, m, ctrl, funcDecl = start, bodyMeasure{complexity: 1}, 0, false
				}
			case top == fHeader && stack[len(stack)-1].operand == 0:
				stack[len(stack)-1].kind = fCtrl
				prev, prevIsType = tok, false
				continue
			case prev == goscan.Else:
				kind = fCtrl
				ctrl++
			}
			stack = append(stack, frame{kind: kind})
		case goscan.RBrace:
			if top > fBlank || top < fBrace {
				return nil
			}
			stack = stack[:len(stack)-1]
			switch top {
			case fCtrl:
				ctrl--
			case fBlank:
				blankOut(skel[blank+1 : start])
				if body == blank {
					p.bodies[body] = m
					body = -1
				}
				blank = -1
			}
			if n := len(stack); n > 0 && stack[n-1].kind == fHeader && top != fType {
				stack[n-1].operand = 0 // the composite literal or function literal is read
			}
		}
		prev, prevIsType = tok, tok == goscan.Struct || tok == goscan.Interface
	}
	if _, bad := s.Err(); bad || len(stack) > 0 {
		return nil
	}
	// The skeleton is one line: its semicolons are written where the scanner inserted them,
	// and every other line break is a space, so that go/parser's line table of it (a
	// seventh of the bytes the first pass allocated) stays empty. The analysis counts lines
	// in the source itself.
	for i := 0; ; i++ {
		j := bytes.IndexByte(skel[i:], '\n')
		if j < 0 {
			break
		}
		i += j
		skel[i] = ' '
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, skel, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	out := &facts{Language: "Go", Parsed: true, Unhashed: true}
	p.starts = lineStarts(p.starts[:0], src)
	comments = sortRanges(comments)
	out.Lines = countLines(src, comments)
	g := newGoFile(out, &p.uses, fset.File(f.Pos()), p.starts)
	g.bodies = p.bodies
	g.declarations(f)
	for _, fd := range f.Decls {
		if fd, ok := fd.(*ast.FuncDecl); ok && fd.Body != nil {
			if _, ok := p.bodies[g.tf.Offset(fd.Body.Lbrace)]; !ok {
				return nil
			}
		}
	}
	out.Hints = nil
	out.Uses = p.uses.names(nil)
	g.intern()
	return out
}

// readHeader follows the operand being read at the top level of a control statement's
// header, to tell the brace of a composite literal or a function literal (go/parser's rule: in
// a header, only a literal of a slice, array, map or struct type needs no parentheses) from
// the brace that opens the statement's block.
func readHeader(h *frame, tok, prev goscan.Token, text []byte) {
	switch tok {
	case goscan.LBrack:
		if h.operand == 0 && !endsOperand(prev) {
			h.operand = opLiteralType
		}
	case goscan.Map, goscan.Struct:
		if h.operand == 0 {
			h.operand = opLiteralType
		}
	case goscan.Func:
		if h.operand == 0 {
			h.operand = opFunc
		}
	case goscan.LParen:
		// A conversion to the type read so far: []byte(s).
		if h.operand == opLiteralType && (prev == goscan.Ident || prev == goscan.RBrack) {
			h.operand = 0
		}
	case goscan.Semicolon, goscan.Comma, goscan.AndAnd, goscan.OrOr:
		h.operand = 0
	case goscan.Keyword:
		if string(text) != "chan" {
			h.operand = 0
		}
	case goscan.Operator:
		switch string(text) {
		case "*", ".", "<-":
		default:
			h.operand = 0
		}
	}
}

// endsOperand reports whether a token ends an operand, so that a bracket after it indexes.
func endsOperand(t goscan.Token) bool {
	switch t {
	case goscan.Ident, goscan.Literal, goscan.RParen, goscan.RBrack, goscan.RBrace:
		return true
	}
	return false
}

// blankOut overwrites b with spaces.
func blankOut(b []byte) {
	for i := range b {
		b[i] = ' '
	}
}
