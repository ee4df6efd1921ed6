package docparse

import (
	"bytes"
	"encoding/xml"
)

// CheckTOML checks the size and nesting depth of a TOML file (Cargo.toml, pyproject.toml) in
// one pass that builds nothing, as CheckJSON does for JSON: brackets and braces are counted
// outside strings and comments. go-toml stops at 10,000 levels by itself; the smaller bound
// is every document's.
func CheckTOML(src []byte, lim Limits) error {
	return checkNesting(src, lim, func(i int) int {
		c := src[i]
		switch c {
		case '#':
			return endOfLine(src, i)
		case '"', '\'':
			// A basic string ("...", escapes) or a literal one ('...'), on one line or,
			// tripled, on several.
			quote := src[i : i+1]
			if bytes.HasPrefix(src[i:], []byte{c, c, c}) {
				quote = src[i : i+3]
			}
			for i += len(quote); i < len(src) && !bytes.HasPrefix(src[i:], quote); i++ {
				if src[i] == '\\' && c == '"' {
					i++
				}
			}
			return i + len(quote) - 1
		}
		return i
	})
}

// CheckXML checks the size and element depth of an XML file (pom.xml) with the tokenizer
// alone, before it is decoded into values. encoding/xml stops at 10,000 levels by itself;
// the smaller bound is every document's. A syntax error is left to the decoding.
func CheckXML(src []byte, lim Limits) error {
	if lim.MaxBytes > 0 && len(src) > lim.MaxBytes {
		return &LimitError{Bound: BoundBytes, Max: lim.MaxBytes}
	}
	if lim.MaxDepth <= 0 {
		return nil
	}
	dec := xml.NewDecoder(bytes.NewReader(src))
	depth := 0
	for {
		tok, err := dec.RawToken()
		if err != nil { // io.EOF, or a syntax error
			return nil
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth++; depth > lim.MaxDepth {
				line, _ := dec.InputPos()
				return &LimitError{Bound: BoundDepth, Max: lim.MaxDepth, Line: line}
			}
		case xml.EndElement:
			depth--
		}
	}
}
