package store

import (
	"strings"
	"time"
	"unicode"
)

// Match reports whether a record, decoded by Values, matches f, with the meaning the
// backends give f (the conformance suite holds all three to the same cases). Subscriptions
// use it to test a changed record against a filter without asking the database.
func (t *Table) Match(f Filter, values map[string]any) bool {
	switch f.kind {
	case kindAll:
		return true
	case kindNone:
		return false
	case kindAnd:
		for _, p := range f.parts {
			if !t.Match(p, values) {
				return false
			}
		}
		return true
	case kindOr:
		for _, p := range f.parts {
			if t.Match(p, values) {
				return true
			}
		}
		return false
	case kindNot:
		return !t.Match(f.parts[0], values)
	case kindSearch:
		// Only a database's full-text index tells; no subscription takes a search.
		return false
	}
	return t.matchCompare(f, values)
}

func (t *Table) matchCompare(f Filter, values map[string]any) bool {
	v, present := values[f.key]
	present = present && v != nil
	switch {
	case f.op == IsNull:
		want, _ := f.value.(bool)
		return want != present
	case f.value == nil && f.op == Eq:
		return !present
	case f.value == nil && f.op == Ne:
		return present
	}
	ft, _ := t.KeyType(f.key)
	if !present && ft.Scalar == String && !ft.List && !f.exact {
		// An optional String never set reads back as "".
		v, present = "", true
	}
	switch f.op {
	case Ne:
		return !t.matchCompare(Filter{kind: kindCmp, key: f.key, op: Eq, value: f.value, exact: f.exact}, values)
	case Nin:
		return !t.matchCompare(Filter{kind: kindCmp, key: f.key, op: In, value: f.value, exact: f.exact}, values)
	case In:
		list, _ := f.value.([]any)
		for _, want := range list {
			if want == nil && !present || want != nil && present && anyElement(v, func(e any) bool { return compare(e, want) == 0 }) {
				return true
			}
		}
		return false
	}
	if !present {
		return false
	}
	return anyElement(v, func(e any) bool { return holds(f.op, e, f.value) })
}

// anyElement applies test to a scalar, or to each element of a list until one passes.
func anyElement(v any, test func(any) bool) bool {
	list, ok := v.([]any)
	if !ok {
		return test(v)
	}
	for _, e := range list {
		if test(e) {
			return true
		}
	}
	return false
}

// holds applies one comparison to one stored scalar.
func holds(op Op, v, want any) bool {
	switch op {
	case Eq, Has:
		return compare(v, want) == 0
	case Gt:
		return compare(v, want) == 1
	case Gte:
		c := compare(v, want)
		return c == 0 || c == 1
	case Lt:
		return compare(v, want) == -1
	case Lte:
		c := compare(v, want)
		return c == 0 || c == -1
	}
	s, ok1 := v.(string)
	sub, ok2 := want.(string)
	if !ok1 || !ok2 {
		return false
	}
	switch op {
	case Contains:
		return strings.Contains(s, sub)
	case IContains:
		return strings.Contains(fold(s), fold(sub))
	case StartsWith:
		return strings.HasPrefix(s, sub)
	}
	return false
}

// incomparable is what compare answers for values of different kinds.
const incomparable = 2

// compare orders two scalars of one kind (-1, 0, 1): numbers by value, strings by code
// point, times, booleans for equality; values of different kinds are incomparable.
func compare(a, b any) int {
	if x, ok := number(a); ok {
		if y, ok := number(b); ok {
			return cmp3(x < y, x > y)
		}
		return incomparable
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y)
		}
	case bool:
		if y, ok := b.(bool); ok && x == y {
			return 0
		}
	}
	return incomparable
}

func cmp3(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}

// fold maps every rune to the smallest rune of its simple case folding orbit, so that two
// strings equal under Unicode simple case folding fold to the same string.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}
