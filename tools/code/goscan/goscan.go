// Package goscan tokenizes Go source without allocating: a token is its kind and its byte
// span in the source, never a string. It is the first pass of the code analysis, which reads
// names, comments and the shape of function bodies from it and leaves syntax trees to the
// declarations; go/scanner allocates the text of every identifier and literal it returns.
//
// It follows the language specification's lexical rules, automatic semicolons included, and
// reports the first malformed token as an error; it does not check everything go/scanner does
// (the digits of a number literal, the length of an escape), so a caller that must find every
// syntax error parses a file it accepts again.
package goscan

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// Token is a token's kind. Keywords that shape a function's body each have their own kind;
// the other keywords are Keyword, and operators other than brackets, && and || are Operator.
type Token uint8

const (
	EOF Token = iota
	Comment
	Ident
	Literal   // a number, rune or string
	Semicolon // written, or inserted at a line's end (then its span is empty)
	Comma
	LParen
	RParen
	LBrack
	RBrack
	LBrace
	RBrace
	AndAnd
	OrOr
	Operator
	Keyword
	If
	Else
	For
	Switch
	Select
	Case
	Func
	Struct
	Interface
	Map
)

// Scanner reads one source. The zero Scanner is not usable: call Init.
type Scanner struct {
	src  []byte
	off  int
	line int // of off
	semi bool
	err  int // the offset of the first malformed token, -1 when none
}

// Init makes s read src from its start (past a byte order mark).
func (s *Scanner) Init(src []byte) {
	*s = Scanner{src: src, line: 1, err: -1}
	if bytes.HasPrefix(src, []byte("\uFEFF")) {
		s.off = 3
	}
}

// Err is the offset of the first malformed token, and whether there was one.
func (s *Scanner) Err() (int, bool) { return s.err, s.err >= 0 }

// Line is the line the next token starts on, or the last token ended on: the line of the
// token Next just returned, unless that token spans lines.
func (s *Scanner) Line() int { return s.line }

func (s *Scanner) fail(off int) {
	if s.err < 0 {
		s.err = off
	}
}

// Next returns the next token and its span src[start:end]. Line, called after it, is the
// line the token ends on. After EOF it returns EOF again.
func (s *Scanner) Next() (tok Token, start, end int) {
	src := s.src
	for s.off < len(src) {
		switch src[s.off] {
		case ' ', '\t', '\r':
			s.off++
			continue
		case '\n':
			if s.semi {
				s.semi = false
				return Semicolon, s.off, s.off
			}
			s.line++
			s.off++
			continue
		}
		break
	}
	start = s.off
	if start >= len(src) {
		if s.semi {
			s.semi = false
			return Semicolon, start, start
		}
		return EOF, start, start
	}
	c := src[start]
	semi := false
	switch {
	case isLetter(c):
		end = start + 1
		for end < len(src) && (isLetter(src[end]) || isDigit(src[end])) {
			end++
		}
		if end < len(src) && src[end] >= utf8.RuneSelf {
			end = s.unicodeIdent(end)
		}
		tok = keyword(src[start:end])
		semi = tok == Ident || tok == Keyword && isSemiKeyword(src[start:end])
	case isDigit(c) || c == '.' && start+1 < len(src) && isDigit(src[start+1]):
		tok, end, semi = Literal, s.number(start), true
	case c >= utf8.RuneSelf:
		r, n := utf8.DecodeRune(src[start:])
		if r == utf8.RuneError && n == 1 || !unicode.IsLetter(r) {
			s.fail(start)
			tok, end = Operator, start+n
			break
		}
		tok, end, semi = Ident, s.unicodeIdent(start), true
	case c == '"':
		tok, end, semi = Literal, s.quoted(start, '"'), true
	case c == '\'':
		tok, end, semi = Literal, s.quoted(start, '\''), true
	case c == '`':
		tok, semi = Literal, true
		i := bytes.IndexByte(src[start+1:], '`')
		if i < 0 {
			s.fail(start)
			end = len(src)
		} else {
			end = start + 1 + i + 1
		}
		s.line += bytes.Count(src[start:end], []byte("\n"))
	case c == '/' && start+1 < len(src) && (src[start+1] == '/' || src[start+1] == '*'):
		if src[start+1] == '/' {
			end = len(src)
			if i := bytes.IndexByte(src[start:], '\n'); i >= 0 {
				end = start + i
			}
			if s.semi {
				// The line's semicolon comes before its comment, as go/scanner has it.
				s.semi = false
				return Semicolon, start, start
			}
			s.off = end
			return Comment, start, end
		}
		i := bytes.Index(src[start+2:], []byte("*/"))
		if i < 0 {
			s.fail(start)
			end = len(src)
		} else {
			end = start + 2 + i + 2
		}
		lines := bytes.Count(src[start:end], []byte("\n"))
		if lines > 0 && s.semi {
			// A comment that spans lines ends the line it starts on.
			s.semi = false
			return Semicolon, start, start
		}
		s.line += lines
		s.off = end
		return Comment, start, end
	default:
		tok, end, semi = s.operator(start)
	}
	s.off, s.semi = end, semi
	return tok, start, end
}

func (s *Scanner) unicodeIdent(i int) int {
	for i < len(s.src) {
		c := s.src[i]
		if c < utf8.RuneSelf {
			if !isLetter(c) && !isDigit(c) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s.src[i:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return i
		}
		i += n
	}
	return i
}

// number scans a number literal leniently: its digits are not checked.
func (s *Scanner) number(i int) int {
	src := s.src
	hex := src[i] == '0' && i+1 < len(src) && (src[i+1] == 'x' || src[i+1] == 'X')
	for i < len(src) {
		c := src[i]
		switch {
		case isDigit(c) || isLetter(c) || c == '.':
			i++
			exp := c == 'p' || c == 'P' || !hex && (c == 'e' || c == 'E')
			if exp && i < len(src) && (src[i] == '+' || src[i] == '-') {
				i++
			}
		default:
			return i
		}
	}
	return i
}

// quoted scans a string or rune literal, checking that it ends on its line and that each
// escape names one.
func (s *Scanner) quoted(start int, q byte) int {
	src := s.src
	runes := 0
	for i := start + 1; i < len(src); {
		c := src[i]
		switch {
		case c == q:
			if q == '\'' && runes != 1 {
				s.fail(start)
			}
			return i + 1
		case c == '\n':
			s.fail(start)
			return i
		case c == '\\':
			if i+1 >= len(src) {
				s.fail(start)
				return len(src)
			}
			switch e := src[i+1]; {
			case e == q || bytes.IndexByte([]byte(`abfnrtv\`), e) >= 0:
				i += 2
			case e == 'x' || e == 'u' || e == 'U' || '0' <= e && e <= '7':
				i += 2
				for i < len(src) && isHex(src[i]) {
					i++
				}
			default:
				s.fail(start)
				i += 2
			}
			runes++
		case c >= utf8.RuneSelf:
			_, n := utf8.DecodeRune(src[i:])
			i += n
			runes++
		default:
			if c == 0 {
				s.fail(i)
			}
			i++
			runes++
		}
	}
	s.fail(start)
	return len(src)
}

// operator scans an operator or punctuation, the longest that matches.
func (s *Scanner) operator(i int) (tok Token, end int, semi bool) {
	src := s.src
	c := src[i]
	next := func(k int) byte {
		if i+k < len(src) {
			return src[i+k]
		}
		return 0
	}
	switch c {
	case '(':
		return LParen, i + 1, false
	case ')':
		return RParen, i + 1, true
	case '[':
		return LBrack, i + 1, false
	case ']':
		return RBrack, i + 1, true
	case '{':
		return LBrace, i + 1, false
	case '}':
		return RBrace, i + 1, true
	case ',':
		return Comma, i + 1, false
	case ';':
		return Semicolon, i + 1, false
	case '&':
		switch next(1) {
		case '&':
			return AndAnd, i + 2, false
		case '^':
			if next(2) == '=' {
				return Operator, i + 3, false
			}
			return Operator, i + 2, false
		}
	case '|':
		if next(1) == '|' {
			return OrOr, i + 2, false
		}
	case '+', '-':
		if next(1) == c {
			return Operator, i + 2, true
		}
	case '<', '>':
		if next(1) == c {
			if next(2) == '=' {
				return Operator, i + 3, false
			}
			return Operator, i + 2, false
		}
		if c == '<' && next(1) == '-' {
			return Operator, i + 2, false
		}
	case '.':
		if next(1) == '.' && next(2) == '.' {
			return Operator, i + 3, false
		}
		return Operator, i + 1, false
	case ':':
		if next(1) == '=' {
			return Operator, i + 2, false
		}
		return Operator, i + 1, false
	case '*', '/', '%', '^', '=', '!', '~':
	default:
		s.fail(i)
		return Operator, i + 1, false
	}
	// An operator that may be followed by =: +=, ==, <=, !=, &=, ...
	if c != '~' && next(1) == '=' {
		return Operator, i + 2, false
	}
	return Operator, i + 1, false
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isHex(c byte) bool    { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isSemiKeyword(b []byte) bool {
	switch string(b) {
	case "break", "continue", "fallthrough", "return":
		return true
	}
	return false
}

// keyword is the kind of the identifier-shaped word b.
func keyword(b []byte) Token {
	if len(b) < 2 || len(b) > 11 || b[0] < 'b' || b[0] > 'v' {
		return Ident
	}
	switch string(b) {
	case "if":
		return If
	case "else":
		return Else
	case "for":
		return For
	case "switch":
		return Switch
	case "select":
		return Select
	case "case":
		return Case
	case "func":
		return Func
	case "struct":
		return Struct
	case "interface":
		return Interface
	case "map":
		return Map
	case "break", "chan", "const", "continue", "default", "defer", "fallthrough", "go", "goto",
		"import", "package", "range", "return", "type", "var":
		return Keyword
	}
	return Ident
}
