package store

import (
	"bytes"
	"database/sql/driver"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"modernc.org/sqlite"
)

// A table T of the API is the SQLite table "t_T": real columns for the keys the service
// keeps (uid, _owner, createdAt, updatedAt; times as TimeLayout text, which sorts as the
// times do) and the whole Record as JSON text in data, which a read answers as it is. Each
// scalar field also has a column "f:field" of its own, a copy of its value that every write
// keeps in step; declared indexes are on those columns, and filters and orders read them.
// Reading json_extract(data, '$.field') instead would parse every record a scan visits, and
// SQLite reads every record that an index on such an expression selects (so a count of
// half the table, which an index on a column answers alone, would read every record).
// Lists and JSON fields are read from data. The scan index (scanIndex) holds uid and the
// fields' columns, so that a filter, order or count that no declared index answers reads it
// rather than the table, whose pages are mostly the records' JSON; a find reads the data
// of the rows it chose only (findSQL).

const sqlTablePrefix = "t_"

func sqlTable(t *Table) string { return quoteIdent(sqlTablePrefix + t.Name) }

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteString(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// serviceKey reports whether key is one of the columns the service keeps; they are never
// NULL.
func serviceKey(key string) bool {
	switch key {
	case KeyUID, KeyOwner, KeyCreatedAt, KeyUpdatedAt:
		return true
	}
	return false
}

// columns is the set of fields that have a column of their own in a table.
type columns map[string]bool

// fieldColumn is the column of its own a scalar field has.
func fieldColumn(field string) string { return quoteIdent("f:" + field) }

// fieldFromColumn is the field whose column is name, if it is one.
func fieldFromColumn(name string) (string, bool) { return strings.CutPrefix(name, "f:") }

// keyExpr is the SQL expression of a record key.
func keyExpr(key string, cols columns) string {
	switch {
	case serviceKey(key):
		return quoteIdent(key)
	case key == KeyRank:
		return searchRank
	case cols[key]:
		return fieldColumn(key)
	}
	return jsonExtract("data", key)
}

func jsonExtract(json, field string) string {
	return "json_extract(" + json + ", " + quoteString(jsonPath(field)) + ")"
}

// jsonPath is the JSON path of a top-level field: plain for names made of letters, digits
// and underscores (how fields are named), quoted otherwise.
func jsonPath(field string) string {
	for i, r := range field {
		if !(r == '_' || r < utf8.RuneSelf && (unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r))) {
			return `$."` + field + `"`
		}
	}
	return "$." + field
}

// sqlCond is a compiled condition: SQL text, or a constant when the condition is decided
// without reading a record (SQLite's planner uses indexes less well through "x OR 0").
type sqlCond struct {
	sql   string
	konst int8 // 0: sql; 1: always true; -1: always false
}

var (
	sqlTrue  = sqlCond{konst: 1}
	sqlFalse = sqlCond{konst: -1}
)

// sqlCompiler turns a Filter into SQL with ? parameters.
type sqlCompiler struct {
	t    *Table
	cols columns
	args []any
}

func (c *sqlCompiler) arg(v any) string {
	c.args = append(c.args, sqlValue(v))
	return "?"
}

// sqlValue is a Filter value as SQLite compares it with what json_extract reads: times as
// Record text, the rest as they are (booleans bind as 1 and 0, as json_extract reads them).
func sqlValue(v any) any {
	if t, ok := v.(time.Time); ok {
		return t.UTC().Format(TimeLayout)
	}
	return v
}

// where compiles f; the zero Filter is "1".
func (c *sqlCompiler) where(f Filter) (string, error) {
	cond, err := c.filter(f)
	if err != nil {
		return "", err
	}
	switch cond.konst {
	case 1:
		return "1", nil
	case -1:
		return "0", nil
	}
	return cond.sql, nil
}

func (c *sqlCompiler) filter(f Filter) (sqlCond, error) {
	switch f.kind {
	case kindAll:
		return sqlTrue, nil
	case kindNone:
		return sqlFalse, nil
	case kindCmp:
		return c.compare(f)
	case kindSearch:
		return c.search(f.value.(searchQuery))
	case kindNot:
		in, err := c.filter(f.parts[0])
		if err != nil || in.konst != 0 {
			return sqlCond{konst: -in.konst}, err
		}
		// A comparison with a missing value is NULL, which every other operator treats as
		// false; NOT must too.
		return sqlCond{sql: "(" + in.sql + ") IS NOT TRUE"}, nil
	}
	sep, absorbing := " AND ", int8(-1)
	if f.kind == kindOr {
		sep, absorbing = " OR ", 1
	}
	var parts []string
	args := len(c.args)
	for _, p := range f.parts {
		cond, err := c.filter(p)
		if err != nil {
			return sqlCond{}, err
		}
		switch cond.konst {
		case absorbing:
			// The parts compiled so far are dropped, and their parameters with them.
			c.args = c.args[:args]
			return cond, nil
		case 0:
			parts = append(parts, cond.sql)
		}
	}
	switch len(parts) {
	case 0:
		return sqlCond{konst: -absorbing}, nil
	case 1:
		return sqlCond{sql: parts[0]}, nil
	}
	var b strings.Builder
	writeBalanced(&b, parts, sep)
	return sqlCond{sql: b.String()}, nil
}

// writeBalanced writes parts joined by sep as a balanced tree of parenthesised halves.
// SQLite parses "a OR b OR c" into a chain as deep as its terms, and refuses an expression
// deeper than 1000 (SQLITE_MAX_EXPR_DEPTH); halves keep the depth of n terms near log2(n),
// so every filter Bounds allow compiles.
func writeBalanced(b *strings.Builder, parts []string, sep string) {
	if len(parts) == 1 {
		b.WriteString(parts[0])
		return
	}
	half := len(parts) / 2
	b.WriteByte('(')
	writeBalanced(b, parts[:half], sep)
	b.WriteString(sep)
	writeBalanced(b, parts[half:], sep)
	b.WriteByte(')')
}

// compare compiles one comparison so that a missing value behaves as the Op doc says. A
// comparison may be NULL on a missing value: that is false for AND, OR and WHERE, and Not
// takes care of it. Where an index may answer, the expression stays the bare indexed one.
func (c *sqlCompiler) compare(f Filter) (sqlCond, error) {
	ft, ok := c.t.KeyType(f.key)
	if !ok {
		return sqlCond{}, fmt.Errorf("store: table %s has no field %q", c.t.Name, f.key)
	}
	x := keyExpr(f.key, c.cols)
	notNull := serviceKey(f.key)
	op, v := f.op, f.value
	switch {
	case op == Eq && v == nil:
		op, v = IsNull, true
	case op == Ne && v == nil:
		op, v = IsNull, false
	}
	if op == IsNull {
		isNull, _ := v.(bool)
		switch {
		case notNull && isNull:
			return sqlFalse, nil
		case notNull:
			return sqlTrue, nil
		case isNull:
			return sqlCond{sql: x + " IS NULL"}, nil
		}
		return sqlCond{sql: x + " IS NOT NULL"}, nil
	}
	if ft.List {
		return c.compareList(f.key, op, v)
	}
	// A String never set compares as "" (except in exact comparisons); the other types'
	// missing values compare with nothing.
	return c.scalar(x, op, v, notNull, ft.Scalar == String && !f.exact && !notNull)
}

// scalar compiles the comparison of the value x, which is NULL when missing unless notNull,
// and is "" when missing if missingEmpty.
func (c *sqlCompiler) scalar(x string, op Op, v any, notNull, missingEmpty bool) (sqlCond, error) {
	missing := func(matches bool, cond string) sqlCond {
		switch {
		case notNull || !matches:
			return sqlCond{sql: cond}
		}
		return sqlCond{sql: "(" + cond + " OR " + x + " IS NULL)"}
	}
	empty := func(v any) bool { s, ok := v.(string); return ok && s == "" }
	switch op {
	case Eq, Has:
		return missing(missingEmpty && empty(v), x+" = "+c.arg(v)), nil
	case Ne:
		// A missing value matches Ne v, unless it reads as "" and v is "".
		if missingEmpty && empty(v) {
			return sqlCond{sql: x + " <> ''"}, nil
		}
		return missing(true, x+" <> "+c.arg(v)), nil
	case Gt:
		return sqlCond{sql: x + " > " + c.arg(v)}, nil
	case Gte:
		if missingEmpty && empty(v) {
			return sqlTrue, nil
		}
		return sqlCond{sql: x + " >= " + c.arg(v)}, nil
	case Lt:
		if missingEmpty && empty(v) {
			return sqlFalse, nil
		}
		return missing(missingEmpty, x+" < "+c.arg(v)), nil
	case Lte:
		return missing(missingEmpty, x+" <= "+c.arg(v)), nil
	case In, Nin:
		list, ok := v.([]any)
		if !ok {
			return sqlCond{}, fmt.Errorf("store: %s wants a list, got %T", op, v)
		}
		var vals []any
		missingIn := false
		for _, e := range list {
			if e == nil || missingEmpty && empty(e) {
				missingIn = true
			}
			if e != nil {
				vals = append(vals, e)
			}
		}
		if len(vals) == 0 {
			switch {
			case !missingIn && op == In:
				return sqlFalse, nil
			case !missingIn:
				return sqlTrue, nil
			case op == In:
				return sqlCond{sql: x + " IS NULL"}, nil
			}
			return sqlCond{sql: x + " IS NOT NULL"}, nil
		}
		set, err := c.set(vals)
		if err != nil {
			return sqlCond{}, err
		}
		if op == In {
			return missing(missingIn, x+" IN "+set), nil
		}
		return missing(!missingIn, x+" NOT IN "+set), nil
	case Contains, IContains, StartsWith:
		s, ok := v.(string)
		if !ok {
			return sqlCond{}, fmt.Errorf("store: %s wants a string, got %T", op, v)
		}
		if s == "" {
			if missingEmpty {
				return sqlTrue, nil
			}
			return sqlCond{sql: "typeof(" + x + ") = 'text'"}, nil
		}
		switch op {
		case Contains:
			return sqlCond{sql: "instr(" + x + ", " + c.arg(s) + ") > 0"}, nil
		case IContains:
			return sqlCond{sql: "platform_icontains(" + x + ", " + c.arg(s) + ")"}, nil
		}
		// A range on the value, which an index answers: the strings that start with s are
		// those from s up to s with its last byte raised by one (UTF-8 never has a 0xFF
		// byte, so that byte never overflows).
		upper := []byte(s)
		upper[len(upper)-1]++
		return sqlCond{sql: "(" + x + " >= " + c.arg(s) + " AND " + x + " < " + c.arg(string(upper)) + ")"}, nil
	}
	return sqlCond{}, fmt.Errorf("store: unknown comparison %q", op)
}

// compareList compiles a comparison of a list field: it holds an element that compares so
// (Ne and Nin: it holds none that equals). A missing list holds nothing.
func (c *sqlCompiler) compareList(key string, op Op, v any) (sqlCond, error) {
	negate := false
	switch op {
	case Ne:
		op, negate = Eq, true
	case Nin:
		op, negate = In, true
	}
	elem, err := c.scalar("value", op, v, true, false)
	if err != nil || elem.konst == -1 {
		return sqlCond{konst: elem.konst}, err
	}
	cond := "EXISTS (SELECT 1 FROM json_each(data, " + quoteString(jsonPath(key)) + ")"
	if elem.konst == 0 {
		cond += " WHERE " + elem.sql
	}
	cond += ")"
	if negate {
		cond = "NOT " + cond
	}
	return sqlCond{sql: cond}, nil
}

// set is a list of values as a subquery of one parameter, so that lists of every length
// share one prepared statement.
func (c *sqlCompiler) set(vals []any) (string, error) {
	var b bytes.Buffer
	if err := writeValue(&b, vals); err != nil {
		return "", err
	}
	c.args = append(c.args, b.String())
	return "(SELECT value FROM json_each(?))", nil
}

// orderBy is the ORDER BY clause of order as NormalOrder completes it.
func orderBy(order []Order, cols columns) string {
	var b strings.Builder
	b.WriteString(" ORDER BY ")
	for i, o := range NormalOrder(order) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(keyExpr(o.Key, cols))
		if o.Desc {
			b.WriteString(" DESC")
		}
	}
	return b.String()
}

func init() {
	// SQLite folds only ASCII letters; IContains folds every Unicode letter.
	sqlite.MustRegisterDeterministicScalarFunction("platform_icontains", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		s, ok1 := args[0].(string)
		sub, ok2 := args[1].(string)
		if !ok1 || !ok2 {
			return int64(0), nil
		}
		if strings.Contains(strings.Map(foldRune, s), strings.Map(foldRune, sub)) {
			return int64(1), nil
		}
		return int64(0), nil
	})
}

// foldRune maps r to the smallest rune of its simple case folding orbit, so that two runes
// fold to the same one exactly when Unicode simple case folding equates them.
func foldRune(r rune) rune {
	low := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		low = min(low, f)
	}
	return low
}
