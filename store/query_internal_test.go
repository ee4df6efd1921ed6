package store

import (
	"reflect"
	"testing"
)

// And and Or drop the constant that is neutral to them, stop at the one that decides them,
// flatten joins of their own kind, and give back a single part as it is.
func TestJoins(t *testing.T) {
	a, b, c := Compare("a", Eq, 1), Compare("b", Eq, 2), Compare("c", Eq, 3)
	for _, tc := range []struct {
		name      string
		got, want Filter
	}{
		{"And()", And(), All},
		{"Or()", Or(), None},
		{"And(All, All)", And(All, All), All},
		{"And(a)", And(a), a},
		{"And(All, a)", And(All, a), a},
		{"And(a, All)", And(a, All), a},
		{"And(a, None, b)", And(a, None, b), None},
		{"Or(a, All)", Or(a, All), All},
		{"Or(None, a, None)", Or(None, a, None), a},
		{"And(a, b)", And(a, b), Filter{kind: kindAnd, parts: []Filter{a, b}}},
		{"And(And(a, b), c)", And(And(a, b), c), Filter{kind: kindAnd, parts: []Filter{a, b, c}}},
		{"And(All, And(a, b))", And(All, And(a, b)), Filter{kind: kindAnd, parts: []Filter{a, b}}},
		{"And(Or(a, b), c)", And(Or(a, b), c), Filter{kind: kindAnd, parts: []Filter{Or(a, b), c}}},
		{"Or(a, Or(b, c))", Or(a, Or(b, c)), Filter{kind: kindOr, parts: []Filter{a, b, c}}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %+v, want %+v", tc.name, tc.got, tc.want)
		}
	}
}
