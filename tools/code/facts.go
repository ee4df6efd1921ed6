package code

import (
	"bytes"
	"context"
	"encoding/binary"
	"sort"

	"github.com/cespare/xxhash/v2"
)

// facts is what one file's parse yields. It depends only on the file's name, language and
// content, so it is cached by content hash and shared by every analysis.
type facts struct {
	Language string
	Parsed   bool // a real parser read the file (else only lines were counted)
	// Skipped says why a file in a parsed language was not parsed (generated, minified, over
	// the parse budget): its lines are counted, and it stays a node of the import graph.
	Skipped    string
	ParseError bool // the parser recovered from syntax errors
	// ErrorLine and ErrorMsg locate the first syntax error (line 0 when the parser gave up
	// without one, e.g. it panicked).
	ErrorLine int
	ErrorMsg  string
	Lines     Lines
	Package   string // Go package name, Java package
	Symbols   []symbol
	Imports   []importRef
	Entry     []entryPoint
	Hints     []hint         // design-pattern evidence found in this file
	Uses      map[string]int // identifiers referenced in this file -> first line
	Blocks    []block        // hashes of normalised code windows, for duplication
	Manifest  *Manifest      // set when the file is a package manifest
	TSConfig  *tsConfig      // set when the file is a tsconfig.json or jsconfig.json
}

// Lines counts a file's lines: a line with any code is code, else a line with a comment is a
// comment, else it is blank.
type Lines struct {
	Code    int `json:"code"`
	Comment int `json:"comment"`
	Blank   int `json:"blank"`
}

// source reports a file in a parsed language, whether parsed or skipped.
func (f *facts) source() bool { return f.Parsed || f.Skipped != "" }

func (l *Lines) add(o Lines) {
	l.Code += o.Code
	l.Comment += o.Comment
	l.Blank += o.Blank
}

// symbol is a top-level declaration, or a method of a top-level type.
type symbol struct {
	Name       string
	Kind       string // function, method, type, struct, interface, class, enum, trait, const, var, module
	Parent     string // receiver or enclosing type of a method
	Line, End  int
	Exported   bool
	Complexity int // cyclomatic complexity, functions and methods only
	Nesting    int // deepest nesting of control statements, functions and methods only
	Returns    string
	Signature  string // Go methods: parameter and result types, to match interfaces' methods
}

func (s symbol) isFunc() bool { return s.Kind == "function" || s.Kind == "method" }

func (s symbol) qualified() string {
	if s.Parent != "" {
		return s.Parent + "." + s.Name
	}
	return s.Name
}

// importRef is one import statement's target as written.
type importRef struct {
	Spec string // "fmt", "./util", "a.b.c", "crate::net::http", "com.acme.Util"
	Line int
	// Wildcard marks Java's "import a.b.*" and Python's "from x import *".
	Wildcard bool
	// Relative is Python's leading-dot count ("from ..x import y" has 2).
	Relative int
	// Names are the names imported from the target (Python from-imports, JS named imports).
	Names []string
	// Module marks Rust's "mod x;", which makes x.rs part of the crate.
	Module bool
	// Require marks a CommonJS require() call, which a package's "exports" answer under the
	// "require" condition.
	Require bool
}

type entryPoint struct {
	Line   int
	Kind   string // main, script, server, ...
	Detail string
}

// hint is evidence of a design pattern in one file.
type hint struct {
	Pattern   string // singleton, factory, builder, observer, adapter, strategy, repository, middleware, registry, event
	Line, End int
	Subject   string // the type or function showing it
	Detail    string
	Of        string // a type the finding depends on (a factory's result, to be an interface)
}

// block is a window of dupWindow normalised code lines starting at Line. Every code line of
// a tree starts one and the cache keeps them all: 32-bit lines make them 16 bytes, not 24
// (37 MB of GOROOT's analysis).
type block struct {
	Hash uint64
	Line int32
	End  int32
}

// dupWindow is the number of consecutive code lines that must repeat to count as duplicated.
const dupWindow = 8

// fileParser parses one language. Implementations are used by one goroutine at a time.
type fileParser interface {
	parse(ctx context.Context, name string, src []byte) (*facts, error)
}

// countLines classifies each line of src given the byte ranges of its comments (sorted,
// non-overlapping).
func countLines(src []byte, comments [][2]int) Lines {
	var l Lines
	ci := 0
	for off := 0; off < len(src); {
		end := bytes.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off
		}
		code, comment := false, false
		for i := off; i < end; i++ {
			for ci < len(comments) && comments[ci][1] <= i {
				ci++
			}
			inComment := ci < len(comments) && comments[ci][0] <= i
			c := src[i]
			if c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' {
				continue
			}
			if inComment {
				comment = true
			} else {
				code = true
				break
			}
		}
		// A multi-line comment that covers a whole line without visible bytes (e.g. an empty
		// line inside a block comment) is still comment.
		if !code && !comment {
			for ci < len(comments) && comments[ci][1] <= off {
				ci++
			}
			if ci < len(comments) && comments[ci][0] < off && comments[ci][1] > end {
				comment = true
			}
		}
		switch {
		case code:
			l.Code++
		case comment:
			l.Comment++
		default:
			l.Blank++
		}
		off = end + 1
	}
	return l
}

// codeBlocks hashes every window of dupWindow consecutive code lines, each line stripped of
// surrounding blanks, skipping comment-only and blank lines and lines too trivial to matter
// (a lone brace), and appends them to dst. Line numbers are 1-based. Each line is hashed
// once, and a window's hash is the hash of its lines' hashes: hashing every line once per
// window it is in was a tenth of a cold analysis.
func codeBlocks(dst []block, src []byte, comments [][2]int) []block {
	type line struct {
		hash uint64
		no   int
	}
	var ring [dupWindow]line // the last dupWindow code lines, the n-th at n % dupWindow
	var buf [dupWindow * 8]byte
	out := dst
	ci, no, n := 0, 0, 0
	for off := 0; off < len(src); {
		no++
		end := bytes.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off
		}
		for ci < len(comments) && comments[ci][1] <= off {
			ci++
		}
		text := bytes.TrimSpace(src[off:end])
		if len(text) > 3 && ci < len(comments) && comments[ci][0] <= off+bytes.Index(src[off:end], text) {
			text = nil // starts inside a comment
		}
		off = end + 1
		if len(text) <= 3 {
			continue
		}
		ring[n%dupWindow] = line{xxhash.Sum64(text), no}
		n++
		if n < dupWindow {
			continue
		}
		first := n - dupWindow
		for i := range dupWindow {
			binary.LittleEndian.PutUint64(buf[i*8:], ring[(first+i)%dupWindow].hash)
		}
		out = append(out, block{Hash: xxhash.Sum64(buf[:]), Line: int32(ring[first%dupWindow].no), End: int32(no)})
	}
	return out
}

// sortRanges orders comment ranges and merges overlaps so that countLines can sweep them.
func sortRanges(r [][2]int) [][2]int {
	sort.Slice(r, func(i, j int) bool { return r[i][0] < r[j][0] })
	out := r[:0]
	for _, x := range r {
		if n := len(out); n > 0 && x[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], x[1])
			continue
		}
		out = append(out, x)
	}
	return out
}
