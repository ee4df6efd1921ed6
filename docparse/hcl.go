package docparse

import "bytes"

// CheckHCL checks the size and nesting depth of an HCL file (Terraform) before its parser,
// which recurses once per level of brackets, templates, unary operators and conditionals: a
// file of nothing but brackets overflows the parser's stack, and that ends the process. The
// scan builds nothing (HCL's own scanner would hold a token per few bytes) and counts an
// upper bound of the parser's depth: brackets, quoted and heredoc templates and their
// interpolations and %{ if }/%{ for } directives, runs of ! and -, and the conditionals of
// one expression (a ? b : c ? ... nests on the right).
func CheckHCL(src []byte, lim Limits) error {
	if lim.MaxBytes > 0 && len(src) > lim.MaxBytes {
		return &LimitError{Bound: BoundBytes, Max: lim.MaxBytes}
	}
	if lim.MaxDepth <= 0 {
		return nil
	}
	type level struct {
		kind       byte   // '{', '[', '(', '"' (quoted template), 'h' (heredoc), '$' (interpolation)
		marker     []byte // a heredoc's closing marker
		questions  int    // conditionals of the expression written at this level so far
		directives int    // open %{ if } and %{ for } of a template
	}
	levels := []level{{kind: '{'}} // the file's body, where a newline ends an expression
	questions, directives, unary, line := 0, 0, 0, 1
	deeper := func() error {
		if len(levels)-1+questions+directives+unary > lim.MaxDepth {
			return &LimitError{Bound: BoundDepth, Max: lim.MaxDepth, Line: line}
		}
		return nil
	}
	push := func(kind byte, marker []byte) error {
		levels = append(levels, level{kind: kind, marker: marker})
		return deeper()
	}
	pop := func() {
		if len(levels) > 1 {
			questions -= levels[len(levels)-1].questions
			directives -= levels[len(levels)-1].directives
			levels = levels[:len(levels)-1]
		}
	}
	// skipLine moves i to the end of its line (the newline is the loop's, which counts it).
	skipLine := func(i int) int {
		if j := bytes.IndexByte(src[i:], '\n'); j >= 0 {
			return i + j - 1
		}
		return len(src)
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\n' {
			line++
		}
		next := func(k int) byte {
			if i+k < len(src) {
				return src[i+k]
			}
			return 0
		}
		top := &levels[len(levels)-1]
		if top.kind == '"' || top.kind == 'h' {
			if top.kind == 'h' && (i == 0 || src[i-1] == '\n') {
				end := bytes.IndexByte(src[i:], '\n')
				if end < 0 {
					end = len(src) - i
				}
				if bytes.Equal(bytes.TrimSpace(src[i:i+end]), top.marker) {
					pop()
					i += end - 1
					continue
				}
			}
			switch {
			case top.kind == '"' && c == '\\':
				i++
			case top.kind == '"' && c == '"':
				pop()
			case (c == '$' || c == '%') && next(1) == c && next(2) == '{': // $${ is a literal ${
				i += 2
			case (c == '$' || c == '%') && next(1) == '{':
				// %{ if } and %{ for } nest what follows up to their %{ endif } or
				// %{ endfor }, in the template's own level.
				word := bytes.TrimLeft(src[i+2:min(i+20, len(src))], "~ \t")
				switch {
				case c == '%' && (bytes.HasPrefix(word, []byte("if")) || bytes.HasPrefix(word, []byte("for"))):
					top.directives++
					directives++
				case c == '%' && (bytes.HasPrefix(word, []byte("endif")) || bytes.HasPrefix(word, []byte("endfor"))) && top.directives > 0:
					top.directives--
					directives--
				}
				i++
				if err := push('$', nil); err != nil {
					return err
				}
			}
			continue
		}
		switch c {
		case '"':
			if err := push('"', nil); err != nil {
				return err
			}
		case '#':
			i = skipLine(i)
		case '/':
			switch next(1) {
			case '/':
				i = skipLine(i)
			case '*':
				end := bytes.Index(src[i+2:], []byte("*/"))
				if end < 0 {
					end = len(src) - i - 2
				}
				line += bytes.Count(src[i+2:i+2+end], []byte("\n"))
				i += end + 3
			}
		case '<':
			if next(1) != '<' {
				break
			}
			j := i + 2
			if j < len(src) && src[j] == '-' {
				j++
			}
			k := j
			for k < len(src) && (src[k] == '_' || src[k] == '-' || 'a' <= src[k]|0x20 && src[k]|0x20 <= 'z' || '0' <= src[k] && src[k] <= '9') {
				k++
			}
			if k > j && k < len(src) && (src[k] == '\n' || src[k] == '\r') {
				if err := push('h', src[j:k]); err != nil {
					return err
				}
				i = k - 1 // the newline ends the heredoc's first line
				if src[k] == '\r' {
					i++
				}
			}
		case '{', '[', '(':
			if err := push(c, nil); err != nil {
				return err
			}
		case '}', ']', ')':
			pop()
		case '?':
			top.questions++
			questions++
		case ',', '\n':
			if c == ',' || top.kind == '{' {
				questions -= top.questions
				top.questions = 0
			}
		}
		switch c {
		case '!', '-':
			unary++
		case ' ', '\t', '\r':
		default:
			unary = 0
		}
		if err := deeper(); err != nil {
			return err
		}
	}
	return nil
}
