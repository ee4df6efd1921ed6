package store

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// mongoID is where the mongo backend keeps a record's uid.
const mongoID = "_id"

// mongoKey is the document key of a record key.
func mongoKey(key string) string {
	if key == KeyUID {
		return mongoID
	}
	return key
}

// mongoFilter compiles f into a MongoDB query with the meaning the Op doc gives it. MongoDB's
// own comparisons already match it in most respects (numbers compare by value across int and
// double, $gt and friends match only present values of the same kind, strings compare by
// code point, $ne and $nin match missing values, an equality on an array matches an element);
// what it adds is the missing String that reads as "".
func mongoFilter(t *Table, f Filter) (bson.D, error) {
	switch f.kind {
	case kindAll:
		return bson.D{}, nil
	case kindNone:
		return bson.D{{Key: mongoID, Value: bson.D{{Key: "$in", Value: bson.A{}}}}}, nil
	case kindCmp:
		return mongoCompare(t, f)
	case kindSearch:
		// FerretDB, which the mongo backend is tested on, has no $text.
		return nil, ErrSearchUnsupported
	case kindNot:
		p, err := mongoFilter(t, f.parts[0])
		if err != nil {
			return nil, err
		}
		// $nor of one condition is its complement: MongoDB has no top-level $not.
		return bson.D{{Key: "$nor", Value: bson.A{p}}}, nil
	}
	op := "$and"
	if f.kind == kindOr {
		op = "$or"
	}
	parts := make(bson.A, len(f.parts))
	for i, p := range f.parts {
		d, err := mongoFilter(t, p)
		if err != nil {
			return nil, err
		}
		parts[i] = d
	}
	return bson.D{{Key: op, Value: parts}}, nil
}

func mongoCompare(t *Table, f Filter) (bson.D, error) {
	ft, ok := t.KeyType(f.key)
	if !ok {
		return nil, fmt.Errorf("store: table %s has no field %q", t.Name, f.key)
	}
	key := mongoKey(f.key)
	v, op := f.value, f.op
	if tm, ok := v.(time.Time); ok {
		v = tm.UTC()
	}
	if v == nil && (op == Eq || op == Ne) {
		op, v = IsNull, op == Eq
	}
	var cond any
	switch op {
	case Eq, Has:
		// The bare value: FerretDB looks up by _id only in this form. Values are scalars,
		// never documents that could read as operators.
		cond = v
	case Ne, Gt, Gte, Lt, Lte:
		cond = bson.D{{Key: "$" + string(f.op), Value: v}}
	case In, Nin:
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("store: %s %s wants a list, got %T", f.key, f.op, v)
		}
		cond = bson.D{{Key: "$" + string(f.op), Value: bson.A(list)}}
	case Contains, StartsWith, IContains:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("store: %s %s wants a string, got %T", f.key, f.op, v)
		}
		re := regexp.QuoteMeta(s)
		if f.op == StartsWith {
			re = "^" + re
		}
		r := bson.D{{Key: "$regex", Value: re}}
		if f.op == IContains {
			r = append(r, bson.E{Key: "$options", Value: "i"})
		}
		cond = r
	case IsNull:
		isNull, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("store: %s isNull wants a boolean, got %T", f.key, v)
		}
		switch {
		case ft.List || ft.Scalar == JSON:
			// {key: null} and $ne: null look into arrays, and would take a list holding a
			// null for a missing value. The backend stores no null (a field set to nil is
			// removed), so a missing value is one the document lacks.
			cond = bson.D{{Key: "$exists", Value: !isNull}}
		case isNull:
			// The form an index answers.
			cond = nil
		default:
			cond = bson.D{{Key: "$ne", Value: nil}}
		}
	default:
		return nil, fmt.Errorf("store: %s: unknown comparison %q", f.key, f.op)
	}
	d := bson.D{{Key: key, Value: cond}}
	if f.exact && (op == Gt || op == Lt) && !serviceKey(f.key) {
		// The keys the service keeps hold one kind only: their pages keep their one range.
		return keysetAcrossKinds(key, d, op, v, ft), nil
	}
	if ft.Scalar != String || ft.List || f.exact || op == IsNull {
		return d, nil
	}
	// A String never set reads as "": it matches where "" does.
	missing := bson.D{{Key: key, Value: nil}}
	switch wantMissing, hasMissing := emptyMatches(f.op, v), mongoMatchesMissing(f.op, v); {
	case wantMissing && !hasMissing:
		return bson.D{{Key: "$or", Value: bson.A{d, missing}}}, nil
	case !wantMissing && hasMissing:
		return bson.D{{Key: "$and", Value: bson.A{d, bson.D{{Key: key, Value: bson.D{{Key: "$ne", Value: nil}}}}}}}, nil
	}
	return d, nil
}

// mongoKinds are the kinds of value the backend stores, in the order MongoDB sorts them
// (null, which keyset pages ask for apart, sorts before them all).
var mongoKinds = []string{"number", "string", "object", "array", "bool", "date"}

// mongoKind is the $type alias of a cursor's value.
func mongoKind(v any) string {
	switch v.(type) {
	case int64, float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "bool"
	case time.Time:
		return "date"
	}
	return ""
}

// keysetAcrossKinds widens a keyset page's $gt (or $lt) on key, of type ft, to the values of
// the kinds MongoDB sorts after (before) v's: a page continues the sort, which orders values
// of every kind, but $gt and $lt match only values of v's own kind (type bracketing). A record
// that stores another kind than its field's (written under an earlier definition) is then
// still on the next page instead of lost. Dates count only on a DateTime field: elsewhere a
// stored date reads back, and so enters a cursor, as text, which sorts before it, and a page
// after it would come back to it again and again.
func keysetAcrossKinds(key string, d bson.D, op Op, v any, ft FieldType) bson.D {
	kinds := mongoKinds
	if ft.Scalar != DateTime || ft.List {
		kinds = kinds[:len(kinds)-1]
	}
	i := slices.Index(kinds, mongoKind(v))
	if i < 0 {
		return d
	}
	if op == Lt {
		kinds = kinds[:i]
	} else {
		kinds = kinds[i+1:]
	}
	if len(kinds) == 0 {
		return d
	}
	types := make(bson.A, len(kinds))
	for j, k := range kinds {
		types[j] = k
	}
	return bson.D{{Key: "$or", Value: bson.A{d, bson.D{{Key: key, Value: bson.D{{Key: "$type", Value: types}}}}}}}
}

// emptyMatches reports whether "" compares so with v.
func emptyMatches(op Op, v any) bool {
	if l, ok := v.([]any); ok {
		return slices.Contains(l, any("")) == (op == In)
	}
	s, ok := v.(string)
	if !ok {
		return false
	}
	switch op {
	case Eq, Gte:
		return s == ""
	case Ne, Lt:
		return s != ""
	case Lte:
		return true
	case Contains, StartsWith, IContains:
		return strings.Contains("", s)
	}
	return false
}

// mongoMatchesMissing reports whether MongoDB's condition for op and v matches a document
// without the key.
func mongoMatchesMissing(op Op, v any) bool {
	switch op {
	case Ne:
		return v != nil
	case Nin:
		return true
	case In:
		l, _ := v.([]any)
		return slices.Contains(l, nil)
	}
	return false
}

// mongoSort is the sort of NormalOrder(order).
func mongoSort(order []Order) bson.D {
	norm := NormalOrder(order)
	s := make(bson.D, len(norm))
	for i, o := range norm {
		dir := 1
		if o.Desc {
			dir = -1
		}
		s[i] = bson.E{Key: mongoKey(o.Key), Value: dir}
	}
	return s
}
