package store

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// Cursor is a position in an order: the values that one record has for each key of the
// order as NormalOrder completes it (so the last is its uid). A keyset page continues after
// it with a condition on those keys, which an index on them answers without reading the
// records before it: page 1,000 costs what page 1 costs.
type Cursor struct {
	Values []any
}

// ErrBadCursor is wrapped by the errors of ParseCursor.
var ErrBadCursor = errors.New("bad cursor")

// NormalOrder is the order records come in: order up to its first uid key, then by uid in
// the direction of the last key when order does not sort by uid (ascending when order is
// empty). Both backends sort so. Ties go the way of the last key so that an index on the
// keys, which holds uid after them, reads in this order forwards or backwards: with ties
// always ascending, a descending order would sort every run of equal values.
func NormalOrder(order []Order) []Order {
	out := make([]Order, 0, len(order)+1)
	for _, o := range order {
		out = append(out, o)
		if o.Key == KeyUID {
			return out
		}
	}
	last := Order{Key: KeyUID}
	if len(order) > 0 {
		last.Desc = order[len(order)-1].Desc
	}
	return append(out, last)
}

// CursorOf returns the position of rec in order.
func (t *Table) CursorOf(rec Record, order []Order) (Cursor, error) {
	vals, err := t.Values(rec)
	if err != nil {
		return Cursor{}, err
	}
	norm := NormalOrder(order)
	c := Cursor{Values: make([]any, len(norm))}
	for i, o := range norm {
		c.Values[i] = vals[o.Key]
	}
	return c, nil
}

// Encode writes c as an opaque string for q's order (ParseCursor refuses it for another
// order or table, and, when the order ranks by relevance, for another search).
func (t *Table) Encode(c Cursor, q Query) string {
	parts := make([]any, 0, len(c.Values)+1)
	parts = append(parts, t.cursorSignature(q))
	norm := NormalOrder(q.Order)
	for i, v := range c.Values {
		if tm, ok := v.(time.Time); ok {
			v = tm.UTC().Format(TimeLayout)
		} else if ft, _ := t.KeyType(norm[i].Key); v != nil && !scalarOf(ft.Scalar, v) {
			// A stored value of another type than its field's (see Values) is marked as
			// such, so that ParseCursor tells it from a forged value of the wrong type.
			v = storedValue{v}
		}
		parts = append(parts, v)
	}
	js, _ := json.Marshal(parts) // strings, numbers, bools and nulls always encode
	return base64.RawURLEncoding.EncodeToString(js)
}

// ParseCursor reads a cursor Encode wrote for a query of the same table and order as q (and
// the same search, when it ranks by it); anything else (a forged, truncated or foreign
// cursor) is an error wrapping ErrBadCursor.
func (t *Table) ParseCursor(s string, q Query) (*Cursor, error) {
	bad := func(why string) error { return fmt.Errorf("%w: %s", ErrBadCursor, why) }
	if len(s) > 4096 {
		return nil, bad("longer than any cursor this API writes")
	}
	js, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad("not a cursor this API wrote")
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(js, &parts); err != nil || len(parts) == 0 {
		return nil, bad("not a cursor this API wrote")
	}
	var sig string
	if want := t.cursorSignature(q); json.Unmarshal(parts[0], &sig) != nil || sig != want {
		if order, _, _ := strings.Cut(sig, "."); order == t.orderSignature(q.Order) {
			return nil, bad("it was taken with another search, and a page ranked by relevance continues only the search it was taken in; use a cursor of the same query")
		}
		return nil, bad("it was written for another table, orderBy or search; use a cursor of the same query")
	}
	norm := NormalOrder(q.Order)
	if len(parts)-1 != len(norm) {
		return nil, bad("not a cursor this API wrote")
	}
	c := &Cursor{Values: make([]any, len(norm))}
	for i, o := range norm {
		ft, ok := t.KeyType(o.Key)
		if !ok || ft.List || ft.Scalar == JSON {
			return nil, bad("it orders by " + strconv.Quote(o.Key) + ", which cannot be ordered by")
		}
		v, err := decodeValue(ft, parts[i+1])
		if err != nil || !scalarOf(ft.Scalar, v) {
			var sv storedValue
			if json.Unmarshal(parts[i+1], &sv) != nil || sv.Stored == nil {
				return nil, bad("its value for " + strconv.Quote(o.Key) + " has the wrong type")
			}
			v = sv.Stored
		}
		c.Values[i] = v
	}
	if uid, ok := c.Values[len(norm)-1].(string); !ok || uid == "" && norm[len(norm)-1].Key == KeyUID {
		return nil, bad("it has no uid")
	}
	return c, nil
}

// storedValue is a cursor's value of another type than its key's: the value a record
// stored under an earlier definition holds, which continues the order as it is.
type storedValue struct {
	Stored any `json:"stored"`
}

// UnmarshalJSON keeps only a single value (string, number, boolean).
func (s *storedValue) UnmarshalJSON(b []byte) error {
	var v struct{ Stored any }
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v.Stored.(type) {
	case string, float64, bool:
		s.Stored = v.Stored
	}
	return nil
}

// scalarOf reports whether v (nil allowed) is a value of scalar s as Values decodes it.
func scalarOf(s Scalar, v any) bool {
	switch v.(type) {
	case nil:
		return true
	case string:
		return s == String || s == ID
	case int64:
		return s == Int
	case float64:
		return s == Float || s == Int
	case bool:
		return s == Boolean
	case time.Time:
		return s == DateTime
	}
	return false
}

// orderSignature ties a cursor to its table and order.
func (t *Table) orderSignature(order []Order) string {
	var b strings.Builder
	b.WriteString("c1|")
	b.WriteString(t.Name)
	for _, o := range NormalOrder(order) {
		b.WriteByte('|')
		b.WriteString(o.Key)
		if o.Desc {
			b.WriteString(" desc")
		}
	}
	return hash36(b.String())
}

// cursorSignature names what a cursor of q continues: q's table and order, and, after a dot,
// the search a rank is of when the order ranks by relevance (one search's rank orders
// nothing in another's, whose next page would skip or repeat records).
func (t *Table) cursorSignature(q Query) string {
	sig := t.orderSignature(q.Order)
	if len(q.Order) == 0 || q.Order[0].Key != KeyRank {
		return sig
	}
	s, _, _ := q.Filter.search()
	return sig + "." + hash36("s1|"+s.fts5())
}

// hash36 is a short hash of s.
func hash36(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 36)
}

// Where is the whole condition of q: its Filter, and after q.After in q's order. Backends
// apply it; they never see a Cursor.
func (q Query) Where() Filter {
	if q.After == nil {
		return q.Filter
	}
	return And(q.Filter, keyset(NormalOrder(q.Order), q.After.Values))
}

// keyset matches the records that come after the position vals in order: for some key, equal
// on every key before it and after on it. Missing values sort first, so they are last in a
// descending order.
func keyset(order []Order, vals []any) Filter {
	var any []Filter
	for i, o := range order {
		var terms []Filter
		for j := range i {
			terms = append(terms, exactEq(order[j].Key, vals[j]))
		}
		terms = append(terms, after(o, vals[i]))
		any = append(any, And(terms...))
	}
	return Or(any...)
}

func exactEq(key string, v any) Filter {
	if v == nil {
		return Compare(key, IsNull, true)
	}
	return Filter{kind: kindCmp, key: key, op: Eq, value: v, exact: true}
}

func after(o Order, v any) Filter {
	switch {
	case !o.Desc && v == nil:
		return Compare(o.Key, IsNull, false)
	case !o.Desc:
		return Filter{kind: kindCmp, key: o.Key, op: Gt, value: v, exact: true}
	case v == nil:
		return None
	}
	return Or(Filter{kind: kindCmp, key: o.Key, op: Lt, value: v, exact: true}, Compare(o.Key, IsNull, true))
}
