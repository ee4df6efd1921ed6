// Package docparse reads the YAML, JSON and HCL documents that operators and strangers hand
// to the service (project documents, files in an MCP workspace) within bounds, so that a few
// hundred bytes cannot make the process build gigabytes. A YAML document is parsed into its
// node tree, which costs in proportion to its bytes, and measured with its aliases expanded
// before anything builds values from it: that expansion is where a "billion laughs" document
// takes its memory, and neither goccy/go-yaml nor yaml.v3's node decoding bounds it. JSON and
// HCL have no aliases; their parsers recurse once per nesting level, so their depth is
// checked first with a scan that does not.
package docparse

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"gopkg.in/yaml.v3"
)

// Limits bound a document. A zero field means no bound.
type Limits struct {
	// MaxBytes bounds the document as written and, for YAML, the bytes of its scalars once
	// its aliases are expanded (each scalar counted at every place an alias puts it).
	MaxBytes int
	// MaxDepth bounds the nesting of mappings, sequences (and HCL's brackets and templates),
	// aliases expanded.
	MaxDepth int
	// MaxAliasNodes bounds the nodes that YAML aliases add to a document (a stream's
	// documents together) when they are expanded. The nodes written out are bounded by
	// MaxBytes already: each takes a few bytes.
	MaxAliasNodes int
}

// DefaultLimits are the bounds of every entry that reads documents: a project document's
// size, and the size of a workspace file that the MCP tools read. A docker-compose file's
// `<<: *defaults` adds a few dozen nodes per service, far below MaxAliasNodes.
func DefaultLimits() Limits {
	return Limits{MaxBytes: 1 << 20, MaxDepth: 100, MaxAliasNodes: 10_000}
}

// Bound names the limit a document passed.
type Bound string

// The bounds a LimitError names.
const (
	BoundBytes         Bound = "size"
	BoundExpandedBytes Bound = "expanded size"
	BoundDepth         Bound = "depth"
	BoundAliasNodes    Bound = "alias nodes"
)

// LimitError is a document refused for passing a bound; Error says which and where.
type LimitError struct {
	Bound Bound
	Max   int
	Line  int // where the bound was passed; 0 when unknown
}

func (e *LimitError) Error() string {
	var s string
	switch e.Bound {
	case BoundBytes:
		s = fmt.Sprintf("document is larger than %d bytes", e.Max)
	case BoundExpandedBytes:
		s = fmt.Sprintf("YAML aliases expand the document past %d bytes", e.Max)
	case BoundDepth:
		s = fmt.Sprintf("document nests deeper than %d levels", e.Max)
	case BoundAliasNodes:
		s = fmt.Sprintf("YAML aliases expand to more than %d nodes", e.Max)
	default:
		s = fmt.Sprintf("document passes the %s limit of %d", e.Bound, e.Max)
	}
	if e.Line > 0 {
		s += fmt.Sprintf(" (line %d)", e.Line)
	}
	return s
}

// ErrAliasCycle is an anchor whose own content refers to it: it has no expansion.
var ErrAliasCycle = errors.New("YAML alias refers to an anchor that contains it")

// Decoder reads the documents of a YAML stream (JSON is YAML) as node trees, each checked
// against the limits, which the stream's documents share, before Decode returns it.
type Decoder struct {
	dec    *yaml.Decoder
	lim    Limits
	err    error // sticky: a stream past a bound is not read further
	added  int   // nodes the aliases added so far
	extra  int   // scalar bytes the aliases added so far
	scalar int   // scalar bytes written so far
	// anchors are the extents of the anchored nodes read so far, which the aliases of
	// later documents may name too.
	anchors map[*yaml.Node]*extent
}

// NewDecoder returns a Decoder of src.
func NewDecoder(src []byte, lim Limits) *Decoder {
	d := &Decoder{dec: yaml.NewDecoder(bytes.NewReader(src)), lim: lim, anchors: map[*yaml.Node]*extent{}}
	if lim.MaxBytes > 0 && len(src) > lim.MaxBytes {
		d.err = &LimitError{Bound: BoundBytes, Max: lim.MaxBytes}
	}
	return d
}

// Decode returns the stream's next document, io.EOF after the last, yaml.v3's error for a
// syntax error, or a *LimitError or ErrAliasCycle (and then the same error on every later
// call). The node tree is yaml.v3's: aliases are AliasNodes pointing at their anchor, for
// the caller to follow (Value does).
func (d *Decoder) Decode() (*yaml.Node, error) {
	if d.err != nil {
		return nil, d.err
	}
	var doc yaml.Node
	if err := d.dec.Decode(&doc); err != nil {
		return nil, err
	}
	m := measure{lim: d.lim, anchors: d.anchors}
	whole, err := m.walk(&doc, 0)
	if err == nil {
		d.added = addCapped(d.added, whole.nodes-m.written)
		d.extra = addCapped(d.extra, whole.bytes-m.scalarBytes)
		d.scalar += m.scalarBytes
		switch {
		case d.lim.MaxAliasNodes > 0 && d.added > d.lim.MaxAliasNodes:
			err = &LimitError{Bound: BoundAliasNodes, Max: d.lim.MaxAliasNodes, Line: m.lastAlias}
		case d.lim.MaxBytes > 0 && addCapped(d.scalar, d.extra) > d.lim.MaxBytes:
			err = &LimitError{Bound: BoundExpandedBytes, Max: d.lim.MaxBytes, Line: m.lastAlias}
		}
	}
	if err != nil {
		d.err = err
		return nil, err
	}
	return &doc, nil
}

// extent is a node's tree with its aliases expanded.
type extent struct {
	nodes, bytes, height int
	done                 bool // false while the node's own content is walked
}

// measure walks one document. Each node is walked once; an alias takes its anchor's
// extent, computed where the anchor was written (YAML writes an anchor before its
// aliases), so the walk is linear in the written document however far the aliases reach.
type measure struct {
	lim         Limits
	anchors     map[*yaml.Node]*extent
	written     int // nodes written, aliases excluded
	scalarBytes int // bytes of the scalars written
	lastAlias   int // line of the last alias followed
}

func (m *measure) walk(n *yaml.Node, depth int) (extent, error) {
	if n.Kind == yaml.AliasNode {
		m.lastAlias = n.Line
		x, ok := m.anchors[n.Alias]
		if n.Alias == nil || !ok || !x.done {
			return extent{}, fmt.Errorf("line %d: %w", n.Line, ErrAliasCycle)
		}
		if m.lim.MaxDepth > 0 && depth+x.height > m.lim.MaxDepth {
			return extent{}, &LimitError{Bound: BoundDepth, Max: m.lim.MaxDepth, Line: n.Line}
		}
		return *x, nil
	}
	var self *extent
	if n.Anchor != "" {
		self = &extent{}
		m.anchors[n] = self
	}
	m.written++
	x := extent{nodes: 1, bytes: len(n.Value)}
	m.scalarBytes += len(n.Value)
	inner := depth
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		inner = depth + 1
		if m.lim.MaxDepth > 0 && inner > m.lim.MaxDepth {
			return extent{}, &LimitError{Bound: BoundDepth, Max: m.lim.MaxDepth, Line: n.Line}
		}
	}
	for _, c := range n.Content {
		cx, err := m.walk(c, inner)
		if err != nil {
			return extent{}, err
		}
		x.nodes = addCapped(x.nodes, cx.nodes)
		x.bytes = addCapped(x.bytes, cx.bytes)
		x.height = max(x.height, cx.height)
		// Past the bounds the exact figure does not matter, and stopping here keeps a deep
		// chain of aliases from running on.
		if m.lim.MaxAliasNodes > 0 && x.nodes-m.written > m.lim.MaxAliasNodes {
			return extent{}, &LimitError{Bound: BoundAliasNodes, Max: m.lim.MaxAliasNodes, Line: m.lastAlias}
		}
	}
	if inner > depth {
		x.height++
	}
	if self != nil {
		*self = x
		self.done = true
	}
	return x, nil
}

// addCapped adds two counts that aliases may have multiplied, saturating instead of
// overflowing.
func addCapped(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// YAML reads the first document of src within lim. A stream without documents (empty, or
// only comments) is io.EOF.
func YAML(src []byte, lim Limits) (*yaml.Node, error) {
	return NewDecoder(src, lim).Decode()
}

// Value converts a document read by a Decoder into the values encoding/json would read from
// the same document written as JSON: map[string]any (merge keys applied; a key that is not a
// string is kept as YAML wrote it), []any, string, bool, int64, float64 and nil. Scalars of
// other types (timestamps, binary, custom tags) stay the strings they were written as.
func Value(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return Value(n.Content[0])
	case yaml.AliasNode:
		return Value(n.Alias)
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := Value(c)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return l, nil
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		var merged []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
				merged = append(merged, v)
				continue
			}
			val, err := Value(v)
			if err != nil {
				return nil, err
			}
			m[k.Value] = val
		}
		// The mapping's own keys win over merged ones, and an earlier merged mapping over a
		// later one (YAML's merge key type).
		for _, v := range merged {
			if err := merge(m, v); err != nil {
				return nil, err
			}
		}
		return m, nil
	case yaml.ScalarNode:
		var v any
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			v = new(bool)
		case "!!int":
			v = new(int64)
		case "!!float":
			v = new(float64)
		default:
			return n.Value, nil
		}
		if err := n.Decode(v); err != nil {
			var f float64 // an integer too large for int64
			if n.ShortTag() != "!!int" || n.Decode(&f) != nil {
				return nil, err
			}
			return f, nil
		}
		switch p := v.(type) {
		case *bool:
			return *p, nil
		case *int64:
			return *p, nil
		case *float64:
			return *p, nil
		}
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

// merge adds the keys of the mapping (or sequence of mappings) v that m lacks.
func merge(m map[string]any, v *yaml.Node) error {
	for v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	if v.Kind == yaml.SequenceNode {
		for _, c := range v.Content {
			if err := merge(m, c); err != nil {
				return err
			}
		}
		return nil
	}
	mv, err := Value(v)
	if err != nil {
		return err
	}
	mm, ok := mv.(map[string]any)
	if !ok {
		return fmt.Errorf("line %d: a merge key takes a mapping or a sequence of mappings", v.Line)
	}
	for k, e := range mm {
		if _, own := m[k]; !own {
			m[k] = e
		}
	}
	return nil
}

// CheckJSON checks the size and nesting depth of a JSON document, or of JSON with comments
// and trailing commas (tsconfig.json), in one pass that builds nothing: brackets are counted
// outside strings and comments. It says nothing of the document's validity, which its parser
// decides.
func CheckJSON(src []byte, lim Limits) error {
	return checkNesting(src, lim, func(i int) int {
		switch {
		case src[i] == '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case bytes.HasPrefix(src[i:], []byte("//")):
			return endOfLine(src, i)
		case bytes.HasPrefix(src[i:], []byte("/*")):
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				return len(src)
			}
			i += 2 + end + 1
		}
		return i
	})
}

// endOfLine is the index of the last byte of i's line before its newline (len(src) when it
// has none), for a comment that runs to it.
func endOfLine(src []byte, i int) int {
	if n := bytes.IndexByte(src[i:], '\n'); n > 0 {
		return i + n - 1
	}
	return len(src)
}

// checkNesting checks the size of src and counts the nesting of its brackets and braces
// outside the strings and comments that skip passes over: skip(i) is the index of the last
// byte of the string or comment that starts at i (len(src) when it never ends), or i when
// none does.
func checkNesting(src []byte, lim Limits, skip func(i int) int) error {
	if lim.MaxBytes > 0 && len(src) > lim.MaxBytes {
		return &LimitError{Bound: BoundBytes, Max: lim.MaxBytes}
	}
	if lim.MaxDepth <= 0 {
		return nil
	}
	depth, line := 0, 1
	for i := 0; i < len(src); i++ {
		if end := skip(i); end != i {
			end = min(max(end, i), len(src)-1)
			line += bytes.Count(src[i:end+1], []byte("\n"))
			i = end
			continue
		}
		switch src[i] {
		case '\n':
			line++
		case '[', '{':
			if depth++; depth > lim.MaxDepth {
				return &LimitError{Bound: BoundDepth, Max: lim.MaxDepth, Line: line}
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return nil
}
