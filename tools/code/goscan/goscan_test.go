package goscan_test

import (
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools/code/goscan"
)

// kindOf is the goscan kind of a go/scanner token.
func kindOf(tok token.Token) goscan.Token {
	switch tok {
	case token.IDENT:
		return goscan.Ident
	case token.INT, token.FLOAT, token.IMAG, token.CHAR, token.STRING:
		return goscan.Literal
	case token.COMMENT:
		return goscan.Comment
	case token.SEMICOLON:
		return goscan.Semicolon
	case token.COMMA:
		return goscan.Comma
	case token.LPAREN:
		return goscan.LParen
	case token.RPAREN:
		return goscan.RParen
	case token.LBRACK:
		return goscan.LBrack
	case token.RBRACK:
		return goscan.RBrack
	case token.LBRACE:
		return goscan.LBrace
	case token.RBRACE:
		return goscan.RBrace
	case token.LAND:
		return goscan.AndAnd
	case token.LOR:
		return goscan.OrOr
	case token.IF:
		return goscan.If
	case token.ELSE:
		return goscan.Else
	case token.FOR:
		return goscan.For
	case token.SWITCH:
		return goscan.Switch
	case token.SELECT:
		return goscan.Select
	case token.CASE:
		return goscan.Case
	case token.FUNC:
		return goscan.Func
	case token.STRUCT:
		return goscan.Struct
	case token.INTERFACE:
		return goscan.Interface
	case token.MAP:
		return goscan.Map
	}
	if tok.IsKeyword() {
		return goscan.Keyword
	}
	return goscan.Operator
}

// tokens lists src's tokens as go/scanner reads them (ok false when it reports an error) and
// as goscan does, one line each: kind and start, and the end of tokens whose text go/scanner
// keeps as written (it takes carriage returns out of comments and raw strings). Comments are
// listed apart: go/scanner gives a line's semicolon after its comment, goscan before it.
func tokens(src []byte) (want, got []string, ok bool) {
	fset := token.NewFileSet()
	tf := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	errs := 0
	s.Init(tf, src, func(token.Position, string) { errs++ }, scanner.ScanComments)
	var comments []string
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		start, end := tf.Offset(pos), tf.Offset(pos)+len(lit)
		switch {
		case tok == token.SEMICOLON && lit == "\n":
			want = append(want, fmt.Sprint(goscan.Semicolon)) // inserted: where is goscan's choice
			continue
		case tok == token.COMMENT:
			comments = append(comments, fmt.Sprint(goscan.Comment, start))
			continue
		case lit == "":
			end = start + len(tok.String())
		case tok == token.STRING && lit[0] == '`':
			end = -1
		}
		want = append(want, fmt.Sprint(kindOf(tok), start, end))
	}
	want = append(want, comments...)
	comments = nil
	var g goscan.Scanner
	g.Init(src)
	for {
		tok, start, end := g.Next()
		if tok == goscan.EOF {
			break
		}
		switch {
		case tok == goscan.Semicolon && start == end:
			got = append(got, fmt.Sprint(goscan.Semicolon))
			continue
		case tok == goscan.Comment:
			comments = append(comments, fmt.Sprint(goscan.Comment, start))
			continue
		case tok == goscan.Literal && src[start] == '`':
			end = -1
		}
		got = append(got, fmt.Sprint(tok, start, end))
	}
	got = append(got, comments...)
	if _, bad := g.Err(); bad && errs == 0 {
		got = append(got, "an error go/scanner does not report")
	}
	return want, got, errs == 0
}

// TestTokensAsGoScanner holds goscan to go/scanner over every Go file of GOROOT that
// go/scanner reads without error: the same tokens, of the same kinds, at the same offsets,
// with the same semicolons inserted.
func TestTokensAsGoScanner(t *testing.T) {
	if testing.Short() || testenv.Race {
		t.Skip("reads all of GOROOT, on one goroutine")
	}
	files, differ := 0, 0
	err := filepath.WalkDir(filepath.Join(testenv.GOROOT(t), "src"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		want, got, ok := tokens(src)
		if !ok {
			return nil
		}
		files++
		if i := firstDiff(want, got); i >= 0 {
			differ++
			if differ <= 10 {
				t.Errorf("%s: token %d: go/scanner %s, goscan %s", path, i, at(want, i), at(got, i))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files, %d differ", files, differ)
}

// TestTokens covers what GOROOT's source has few of.
func TestTokens(t *testing.T) {
	for _, src := range []string{
		"x := 0x1p-2 + 1e+3 + 0X1E+2 + .5 + 1_000 + 0b1 + 0o7 + 1i",
		"a &^= b; c <<= d >> e; f <- g; h...; i &^ j; k ~ l",
		"s := \"a\\\"b\\x41\\u00e9\\U0001F600\\101\" + 'x' + '\\'' + '\\n' + 'é'",
		"return /* a\ncomment */ x",
		"break // comment\nx++\ny--\n",
		"\uFEFFpackage p; var π, 日本 = 1, 2",
		"x /* one line */ + y\r\nz",
		"a.b[c](d){e}",
	} {
		want, got, ok := tokens([]byte(src))
		if !ok {
			t.Errorf("%q: go/scanner reports an error", src)
			continue
		}
		if i := firstDiff(want, got); i >= 0 {
			t.Errorf("%q: token %d: go/scanner %s, goscan %s", src, i, at(want, i), at(got, i))
		}
	}
}

// TestErrors: a malformed token is reported at its start.
func TestErrors(t *testing.T) {
	for src, want := range map[string]int{
		"x := \"abc\ny":  5,
		"x := `abc":      5,
		"x := 'ab'":      5,
		"x := '\\q'":     5,
		"/* open":        0,
		"x := 1 # 2":     7,
		"x := \x00":      5,
		"x := \"a\\zb\"": 5,
		"x := a\uFEFF":   6,
	} {
		var s goscan.Scanner
		s.Init([]byte(src))
		for tok, _, _ := s.Next(); tok != goscan.EOF; tok, _, _ = s.Next() {
		}
		if off, bad := s.Err(); !bad || off != want {
			t.Errorf("%q: error at %d (%v), want at %d", src, off, bad, want)
		}
	}
}

func firstDiff(a, b []string) int {
	for i := range max(len(a), len(b)) {
		if at(a, i) != at(b, i) {
			return i
		}
	}
	return -1
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "nothing"
}
