package gql

import (
	"encoding/json"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// readOnce reads a POST's body as nearly every client writes it in one pass, variables
// decoded: the members of GraphQL over HTTP in their spelling, each once, values in valid
// UTF-8 with no name twice in an object, numbers a float64 holds, nesting at most
// maxOnceDepth deep. It returns false for any other body (or an error), which encoding/json
// then reads with the leniency and the messages the API has always had. encoding/json
// validates the whole body, decodes it, then validates and decodes the variables again,
// and even one pass through reflection (go-json-experiment) cost a fetch by uid several
// times what this reader does (docs/performance.md, "Request handling").
func readOnce(body []byte, req *request) bool {
	r := onceReader{b: body}
	out := request{decoded: true}
	if !r.next('{') {
		return false
	}
	if !r.next('}') {
		var seen [4]bool
		for {
			name, ok := r.plainName()
			if !ok || !r.next(':') {
				return false
			}
			var member int
			switch string(name) {
			case "query":
				member, ok = 0, r.optString(&out.Query)
			case "operationName":
				member, ok = 1, r.optString(&out.OperationName)
			case "variables":
				member = 2
				if !r.null() {
					out.vars, ok = r.object()
				}
			case "extensions":
				member = 3
				r.space()
				start := r.i
				_, ok = r.value()
				out.Extensions = json.RawMessage(body[start:r.i])
			default:
				return false
			}
			if !ok || seen[member] {
				return false
			}
			seen[member] = true
			if r.next('}') {
				break
			}
			if !r.next(',') {
				return false
			}
		}
	}
	r.space()
	if r.i != len(body) {
		return false
	}
	*req = out
	return true
}

// maxOnceDepth bounds the nesting readOnce reads (its recursion); deeper variables are
// encoding/json's, which has a limit of its own.
const maxOnceDepth = 64

// onceReader reads JSON values from b at i as encoding/json decodes them into an any,
// refusing what readOnce leaves to it.
type onceReader struct {
	b     []byte
	i     int
	depth int
}

// space skips JSON whitespace.
func (r *onceReader) space() { r.i = skipSpace(r.b, r.i) }

// next consumes c, after whitespace, if it comes next.
func (r *onceReader) next(c byte) bool {
	r.space()
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// null consumes a null if one comes next.
func (r *onceReader) null() bool {
	r.space()
	if r.i+4 <= len(r.b) && string(r.b[r.i:r.i+4]) == "null" {
		r.i += 4
		return true
	}
	return false
}

// literal consumes word, which starts at i.
func (r *onceReader) literal(word string) bool {
	if r.i+len(word) <= len(r.b) && string(r.b[r.i:r.i+len(word)]) == word {
		r.i += len(word)
		return true
	}
	return false
}

// stringSpecial marks the bytes that quoted must look at: the quote, the backslash, control
// characters and non-ASCII. One table lookup per byte passes over the others, which are
// nearly all a query's.
var stringSpecial = func() (t [256]bool) {
	for c := range t {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80
	}
	return t
}()

// quoted finds the JSON string that comes next: its text between the quotes, and whether
// that is the string itself (printable ASCII without escapes).
func (r *onceReader) quoted() (text []byte, plain, ok bool) {
	r.space()
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, false, false
	}
	plain = true
	for i := r.i + 1; i < len(r.b); i++ {
		if !stringSpecial[r.b[i]] {
			continue
		}
		switch c := r.b[i]; {
		case c == '"':
			text, r.i = r.b[r.i+1:i], i+1
			return text, plain, true
		case c == '\\':
			plain = false
			i++
		case c < 0x20:
			return nil, false, false
		case c >= 0x80:
			plain = false
		}
	}
	return nil, false, false
}

// str reads a JSON string: escapes and UTF-8 are checked and decoded by jsontext, whose
// rules refuse what encoding/json would replace (invalid UTF-8, a lone surrogate).
func (r *onceReader) str() (string, bool) {
	start := r.i
	text, plain, ok := r.quoted()
	if !ok || plain {
		return string(text), ok
	}
	s, err := jsontext.AppendUnquote(nil, r.b[start:r.i])
	return string(s), err == nil
}

// plainName reads a member name written without escapes, as clients write GraphQL over
// HTTP's; encoding/json also matches other spellings of them, which readOnce leaves to it.
func (r *onceReader) plainName() ([]byte, bool) {
	text, plain, ok := r.quoted()
	return text, ok && plain
}

// optString reads a string or null into *dst.
func (r *onceReader) optString(dst **string) bool {
	if r.null() {
		*dst = nil
		return true
	}
	s, ok := r.str()
	*dst = &s
	return ok
}

// value reads any JSON value as encoding/json decodes it into an any.
func (r *onceReader) value() (any, bool) {
	r.space()
	if r.i >= len(r.b) {
		return nil, false
	}
	switch c := r.b[r.i]; {
	case c == '"':
		return r.str()
	case c == '{':
		m, ok := r.object()
		return m, ok
	case c == '[':
		return r.array()
	case c == 't':
		return true, r.literal("true")
	case c == 'f':
		return false, r.literal("false")
	case c == 'n':
		return nil, r.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	}
	return nil, false
}

// object reads a JSON object; false for a name twice, where encoding/json keeps the last.
func (r *onceReader) object() (map[string]any, bool) {
	if !r.next('{') || r.depth == maxOnceDepth {
		return nil, false
	}
	r.depth++
	m := map[string]any{}
	if r.next('}') {
		r.depth--
		return m, true
	}
	for {
		k, ok := r.str()
		if !ok || !r.next(':') {
			return nil, false
		}
		if _, twice := m[k]; twice {
			return nil, false
		}
		if m[k], ok = r.value(); !ok {
			return nil, false
		}
		if r.next('}') {
			r.depth--
			return m, true
		}
		if !r.next(',') {
			return nil, false
		}
	}
}

// array reads a JSON array.
func (r *onceReader) array() ([]any, bool) {
	if !r.next('[') || r.depth == maxOnceDepth {
		return nil, false
	}
	r.depth++
	l := []any{}
	if r.next(']') {
		r.depth--
		return l, true
	}
	for {
		v, ok := r.value()
		if !ok {
			return nil, false
		}
		l = append(l, v)
		if r.next(']') {
			r.depth--
			return l, true
		}
		if !r.next(',') {
			return nil, false
		}
	}
}

// number reads a JSON number as a float64; false past a float64's range, where encoding/json
// answers an error.
func (r *onceReader) number() (float64, bool) {
	b, start := r.b, r.i
	i := start
	digits := func() bool {
		from := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > from
	}
	if b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if !digits() {
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return 0, false
		}
	}
	r.i = i
	f, err := strconv.ParseFloat(string(b[start:i]), 64)
	return f, err == nil
}
