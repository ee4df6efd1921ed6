package code

import (
	"bytes"
	"context"
	"encoding/binary"
	"iter"
	"math"
	"slices"
	"sort"
	"strings"

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
	Hints     []hint // design-pattern evidence found in this file
	Uses      names  // identifiers referenced in this file, with their first line
	Blocks    blocks // hashes of normalised code windows, for duplication
	// Signatures are Go methods' parameter and result types by qualified name (T.M), to
	// match interfaces' methods: set by the full parse, which detect_patterns asks for
	// (windows.go). A field of each symbol, empty in all others, was 2.7 MB of GOROOT's.
	Signatures map[string]string
	Manifest   *Manifest // set when the file is a package manifest
	TSConfig   *tsConfig // set when the file is a tsconfig.json or jsconfig.json
	// Unhashed marks a Go file whose Blocks, Hints and Signatures are left to the first call
	// that needs them (detect_patterns, windows.go), which parses it whole: the windows were a
	// quarter of the parse cache of GOROOT, the syntax trees of function bodies most of a cold
	// analysis's time, and analyze_codebase and the navigation tools read none of them.
	Unhashed bool
}

// Lines counts a file's lines: a line with any code is code, else a line with a comment is a
// comment, else it is blank.
type Lines struct {
	Code    int `json:"code"`
	Comment int `json:"comment"`
	Blank   int `json:"blank"`
}

// compact gives back the spare capacity that appending left in the slices the cache keeps
// (a fifth of the symbols' memory on GOROOT).
func (f *facts) compact() {
	f.Symbols = exact(f.Symbols)
	f.Imports = exact(f.Imports)
	f.Hints = exact(f.Hints)
	f.Blocks = blocks{exact(f.Blocks.hashes), exact(f.Blocks.lines)}
}

// exact is s in an array of its length (or of the next allocation size), when it has more
// than an eighth spare.
func exact[S ~[]E, E any](s S) S {
	if cap(s)-len(s) <= len(s)/8 {
		return s
	}
	return slices.Clone(s)
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
	Name   string
	Parent string // receiver or enclosing type of a method
	// The numbers are small integers, and the kind a byte beside Exported, so that a symbol
	// takes 64 bytes, not 120: GOROOT has 172,000 kept in the parse cache.
	Line, End  int32
	Complexity uint16 // cyclomatic complexity, functions and methods only
	Nesting    uint16 // deepest nesting of control statements, functions and methods only
	Kind       symbolKind
	Exported   bool
	Returns    string
}

// clamp16 is n, or the largest uint16 when n is larger: no function has 65,535 paths.
func clamp16(n int) uint16 { return uint16(min(n, math.MaxUint16)) }

// symbolKind is what a symbol declares; its String is the word the tools answer with.
type symbolKind uint8

const (
	kindUnknown symbolKind = iota
	kindFunction
	kindMethod
	kindType
	kindStruct
	kindInterface
	kindClass
	kindEnum
	kindTrait
	kindConst
	kindVar
	kindModule
)

var kindNames = [...]string{"", "function", "method", "type", "struct", "interface", "class", "enum", "trait", "const", "var", "module"}

func (k symbolKind) String() string { return kindNames[k] }

// kindOf is the kind named s.
func kindOf(s string) symbolKind {
	for k, name := range kindNames {
		if name == s {
			return symbolKind(k)
		}
	}
	return kindUnknown
}

func (s symbol) isFunc() bool { return s.Kind == kindFunction || s.Kind == kindMethod }

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

// block is a window of dupWindow normalised code lines, from Line to End.
type block struct {
	Hash      uint64
	Line, End int
}

// blocks are a file's windows: every code line starts one, and the cache keeps them all
// (GOROOT has 2.2 million). The window i covers the code lines i to i+dupWindow-1, so a hash
// a window and a line a code line are all it takes: 12 bytes a window, not the 16 of a
// {hash, line, end} (5 MB of GOROOT's analysis).
type blocks struct {
	hashes []uint64
	lines  []int32 // of every code line; empty when there are fewer than dupWindow
}

func (b blocks) len() int { return len(b.hashes) }

func (b blocks) at(i int) block {
	return block{Hash: b.hashes[i], Line: int(b.lines[i]), End: int(b.lines[i+dupWindow-1])}
}

// dupWindow is the number of consecutive code lines that must repeat to count as duplicated.
const dupWindow = 8

// names is a file's identifiers with the line each first appears on, sorted, in one string
// with an end offset and a line per name: as a map they were a third of the cached analysis
// of GOROOT (31 MB of 89), as names 8 bytes each and their text.
type names struct {
	text  string
	ends  []int32
	lines []int32
}

// firstUses gathers a file's names and where each first appears; it is scratch that a parser
// reuses from file to file.
type firstUses struct {
	at map[string]int
	// keys are the names in the order first seen: a cleared map keeps the size of the
	// largest file it held, and iterating it for every file cost more than the parse.
	keys []string
	// recent mirrors some entries of at, one a slot chosen by a name's length and end
	// bytes: most identifiers repeat a name met shortly before (err, nil, i), and comparing
	// with one slot costs a fraction of the map lookup, which was 7 % of a cold analysis of
	// GOROOT.
	recent [256]struct {
		name string
		pos  int
	}
}

// reset empties u for the next file. A map that held many names is dropped, not cleared:
// clearing costs its size.
func (u *firstUses) reset() {
	if u.at == nil || len(u.at) > 1024 {
		u.at = map[string]int{}
	} else {
		clear(u.at)
	}
	u.keys = u.keys[:0]
	clear(u.recent[:])
}

// earliest records that name appears at pos, keeping the least pos.
func (u *firstUses) earliest(name string, pos int) {
	if name == "" {
		return // never an identifier; an empty slot of recent holds ""
	}
	r := &u.recent[(len(name)*31+int(name[0])*7+int(name[len(name)-1]))%len(u.recent)]
	if r.name == name {
		if pos < r.pos {
			r.pos, u.at[name] = pos, pos
		}
		return
	}
	first, seen := u.at[name]
	if !seen {
		u.keys = append(u.keys, name)
	}
	if !seen || pos < first {
		first, u.at[name] = pos, pos
	}
	r.name, r.pos = name, first
}

// first records the name in b at line unless it was seen before; only a new name is
// copied.
func (u *firstUses) first(b []byte, line int) {
	if _, seen := u.at[string(b)]; !seen {
		name := string(b)
		u.at[name] = line
		u.keys = append(u.keys, name)
	}
}

// names are the names gathered, with the line of their first use: the recorded value
// itself, or line of it when line is not nil.
func (u *firstUses) names(line func(int) int) names {
	slices.Sort(u.keys)
	size := 0
	for _, k := range u.keys {
		size += len(k)
	}
	var sb strings.Builder
	sb.Grow(size)
	n := names{ends: make([]int32, len(u.keys)), lines: make([]int32, len(u.keys))}
	for i, k := range u.keys {
		sb.WriteString(k)
		at := u.at[k]
		if line != nil {
			at = line(at)
		}
		n.ends[i], n.lines[i] = int32(sb.Len()), int32(at)
	}
	n.text = sb.String()
	return n
}

func (n names) name(i int) string {
	start := int32(0)
	if i > 0 {
		start = n.ends[i-1]
	}
	return n.text[start:n.ends[i]]
}

// find is the index of name, and whether it is there.
func (n names) find(name string) (int, bool) {
	return sort.Find(len(n.ends), func(i int) int { return strings.Compare(name, n.name(i)) })
}

// line is the first line name appears on, and whether it appears.
func (n names) line(name string) (int, bool) {
	i, ok := n.find(name)
	if !ok {
		return 0, false
	}
	return int(n.lines[i]), true
}

// intern is s in n's text when n has the name: the names of a file's symbols, their parents
// and result types are names the file uses, and sharing those bytes instead of keeping a
// string of each was a tenth of the parse cache of GOROOT.
func (n names) intern(s string) string {
	if i, ok := n.find(s); ok {
		return n.name(i)
	}
	return s
}

// all yields every name with its first line, in order.
func (n names) all() iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		for i := range n.ends {
			if !yield(n.name(i), int(n.lines[i])) {
				return
			}
		}
	}
}

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
// (a lone brace), and returns them in dst's arrays. Line numbers are 1-based. Each line is
// hashed once, and a window's hash is the hash of its lines' hashes: hashing every line once
// per window it is in was a tenth of a cold analysis.
func codeBlocks(dst blocks, src []byte, comments [][2]int) blocks {
	var ring [dupWindow]uint64 // the last dupWindow code lines' hashes, the n-th at n % dupWindow
	var buf [dupWindow * 8]byte
	out := blocks{hashes: dst.hashes[:0], lines: dst.lines[:0]}
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
		ring[n%dupWindow] = xxhash.Sum64(text)
		out.lines = append(out.lines, int32(no))
		n++
		if n < dupWindow {
			continue
		}
		first := n - dupWindow
		for i := range dupWindow {
			binary.LittleEndian.PutUint64(buf[i*8:], ring[(first+i)%dupWindow])
		}
		out.hashes = append(out.hashes, xxhash.Sum64(buf[:]))
	}
	if n < dupWindow {
		out.lines = out.lines[:0]
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
