package store

import (
	"errors"
	"fmt"
	"time"
)

// Op is a comparison a Filter makes.
type Op string

// The comparisons. Their meaning is the same on every backend (the conformance suite in
// conformance_test.go holds both to it):
//
//   - Eq v: the value equals v. On a list field, an element equals v. Numbers compare by
//     value (an Int 3 equals a Float 3.0). Eq nil matches a missing value (see IsNull).
//   - Ne v: not Eq v (a missing value matches, except Ne nil).
//   - Gt, Gte, Lt, Lte v: the value is present and compares so with v; numbers with numbers,
//     strings with strings by code point (byte order of UTF-8), times with times.
//   - In [v...]: Eq one of them; In of an empty list matches nothing. Nin: not In.
//   - Contains s, StartsWith s: a String value holds s, starts with s (case-sensitively);
//     IContains s: holds s ignoring case (Unicode simple case folding).
//   - Has v: a list field holds v.
//   - IsNull true: the value is missing (never set, or removed); IsNull false: present.
//
// An optional String that was never set reads back as "", so every comparison of a String
// field but IsNull sees a missing value as "": Eq "" matches it, Gt "" does not. In an order
// a missing value (of any type) sorts before every present one, so a missing String sorts
// just before "".
const (
	Eq         Op = "eq"
	Ne         Op = "ne"
	Gt         Op = "gt"
	Gte        Op = "gte"
	Lt         Op = "lt"
	Lte        Op = "lte"
	In         Op = "in"
	Nin        Op = "nin"
	Contains   Op = "contains"
	IContains  Op = "icontains"
	StartsWith Op = "startsWith"
	Has        Op = "has"
	IsNull     Op = "isNull"
)

type filterKind uint8

const (
	kindAll filterKind = iota // the zero Filter: every record
	kindNone
	kindCmp
	kindAnd
	kindOr
	kindNot
	kindSearch // Matches: value is a searchQuery
)

// Filter is a condition on records: a tree of comparisons joined by And, Or and Not. The zero
// Filter matches every record. Filters are values; the constructors simplify as they build
// (And with None is None, Or with All is All), so a backend never sees a constant inside a
// tree.
//
// Keys name what the API shows: a declared field, or one the service keeps (KeyUID,
// KeyCreatedAt, KeyUpdatedAt, KeyOwner). Values have the Go types of the field's scalar:
// string (String, ID), int64 (Int), float64 (Float; int64 is accepted and compared by value),
// bool, time.Time (DateTime), a []any of those for In and Nin, bool for IsNull.
type Filter struct {
	kind  filterKind
	key   string
	op    Op
	value any
	parts []Filter
	// exact compares the stored value as it is: a missing String is not "". Keyset pages
	// use it, since they continue an order, which tells missing from "".
	exact bool
}

// All matches every record; None matches none.
var (
	All  = Filter{}
	None = Filter{kind: kindNone}
)

// Compare is the comparison of the value at key with value.
func Compare(key string, op Op, value any) Filter {
	if op == In {
		if l, ok := value.([]any); ok && len(l) == 0 {
			return None
		}
	}
	if op == Nin {
		if l, ok := value.([]any); ok && len(l) == 0 {
			return All
		}
	}
	return Filter{kind: kindCmp, key: key, op: op, value: value}
}

// And matches the records every part matches.
func And(parts ...Filter) Filter { return join(kindAnd, parts) }

// Or matches the records some part matches.
func Or(parts ...Filter) Filter { return join(kindOr, parts) }

// Not matches the records f does not.
func Not(f Filter) Filter {
	switch f.kind {
	case kindAll:
		return None
	case kindNone:
		return All
	case kindNot:
		return f.parts[0]
	}
	return Filter{kind: kindNot, parts: []Filter{f}}
}

func join(kind filterKind, parts []Filter) Filter {
	// The constant that decides the join, and the one that drops out of it.
	absorbing, neutral := kindNone, kindAll
	if kind == kindOr {
		absorbing, neutral = kindAll, kindNone
	}
	// Counted first, so that a join of one part (a query's filter and a rule that allows
	// everything) allocates nothing and any other allocates once.
	n, last := 0, 0 // the parts the join keeps, and the last part that gives one
	for i, p := range parts {
		switch {
		case p.kind == absorbing:
			return p
		case p.kind == kind && len(p.parts) > 0:
			n, last = n+len(p.parts), i
		case p.kind != kind && p.kind != neutral:
			n, last = n+1, i
		}
	}
	switch {
	case n == 0:
		return Filter{kind: neutral}
	case n == 1 && parts[last].kind == kind:
		return parts[last].parts[0]
	case n == 1:
		return parts[last]
	}
	kept := make([]Filter, 0, n)
	for _, p := range parts {
		switch p.kind {
		case kind:
			kept = append(kept, p.parts...)
		case neutral:
		default:
			kept = append(kept, p)
		}
	}
	return Filter{kind: kind, parts: kept}
}

// oneUID reports whether f matches at most the record with one given uid: it is that
// comparison, or an And with it among its parts.
func (f Filter) oneUID() bool {
	switch f.kind {
	case kindCmp:
		_, isString := f.value.(string)
		return f.key == KeyUID && f.op == Eq && isString
	case kindAnd:
		for _, p := range f.parts {
			if p.oneUID() {
				return true
			}
		}
	}
	return false
}

// IsAll reports whether f matches every record; IsNone whether it matches none.
func (f Filter) IsAll() bool  { return f.kind == kindAll }
func (f Filter) IsNone() bool { return f.kind == kindNone }

// String writes f for logs and test failures.
func (f Filter) String() string {
	switch f.kind {
	case kindAll:
		return "all"
	case kindNone:
		return "none"
	case kindCmp:
		return fmt.Sprintf("%s %s %v", f.key, f.op, f.value)
	case kindNot:
		return "not(" + f.parts[0].String() + ")"
	case kindSearch:
		return "search " + f.value.(searchQuery).fts5()
	}
	sep := " and "
	if f.kind == kindOr {
		sep = " or "
	}
	s := "("
	for i, p := range f.parts {
		if i > 0 {
			s += sep
		}
		s += p.String()
	}
	return s + ")"
}

// Bounds limit what one filter may ask of the database: its comparisons (In counts each
// value), its nesting, and the values of one In.
type Bounds struct {
	MaxNodes int
	MaxDepth int
	MaxIn    int
}

// DefaultBounds let through any filter a person writes and stop ones that would cost seconds
// of database work.
var DefaultBounds = Bounds{MaxNodes: 1000, MaxDepth: 16, MaxIn: 1000}

// ErrFilterTooLarge is wrapped by the errors of Check.
var ErrFilterTooLarge = errors.New("filter too large")

// Check reports, wrapping ErrFilterTooLarge, a filter larger than b allows.
func (f Filter) Check(b Bounds) error {
	nodes := 0
	var walk func(Filter, int) error
	walk = func(f Filter, depth int) error {
		if depth > b.MaxDepth {
			return fmt.Errorf("%w: conditions nest more than %d levels deep", ErrFilterTooLarge, b.MaxDepth)
		}
		if f.kind == kindCmp {
			n := 1
			if l, ok := f.value.([]any); ok {
				if len(l) > b.MaxIn {
					return fmt.Errorf("%w: %s %s lists %d values, at most %d are allowed", ErrFilterTooLarge, f.key, f.op, len(l), b.MaxIn)
				}
				n = max(1, len(l))
			}
			nodes += n
		}
		for _, p := range f.parts {
			if err := walk(p, depth+1); err != nil {
				return err
			}
		}
		if nodes > b.MaxNodes {
			return fmt.Errorf("%w: more than %d comparisons", ErrFilterTooLarge, b.MaxNodes)
		}
		return nil
	}
	return walk(f, 0)
}

// Order sorts by one key.
type Order struct {
	Key  string
	Desc bool
}

// Query selects records of a table. Records come in Order, then by uid in the direction of
// the last key (which also breaks ties, so pages never overlap; see NormalOrder); without an
// Order, by uid, which is creation order.
type Query struct {
	Filter Filter
	Order  []Order
	// After continues a keyset page: only records that come after it in the order. Its
	// values must be those of the same Order (ParseCursor checks).
	After  *Cursor
	Offset int64
	Limit  int64 // 0: no limit
	// MaxBytes bounds the records' stored size; a query that would read more fails with a
	// *TooLargeError before reading past the bound. 0: no bound.
	MaxBytes int64
}

// ErrNotFound is returned when a looked-up record or document does not exist.
var ErrNotFound = errors.New("not found")

// TooLargeError says that the records a query selects exceed its MaxBytes.
type TooLargeError struct {
	Table    string
	MaxBytes int64
	Records  int // how many records fitted
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the %s records selected are larger than %d bytes (%d fitted)", e.Table, e.MaxBytes, e.Records)
}

// ConflictError says that a write would break a unique index.
type ConflictError struct {
	Table  string
	Fields []string
	Value  []any // the duplicate value, when known
}

func (e *ConflictError) Error() string {
	if len(e.Value) > 0 {
		return fmt.Sprintf("another %s record has %v = %v", e.Table, e.Fields, e.Value)
	}
	return fmt.Sprintf("another %s record has the same %v", e.Table, e.Fields)
}

// now is the time records are stamped with: both backends keep milliseconds.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }
