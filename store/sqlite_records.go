package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteProject is one project's file. It opens the file for each call, so that a project
// nobody uses does not hold it open.
type sqliteProject struct {
	dbs *sqliteDatabases
	id  string
}

func (p *sqliteProject) file() (*sqliteFile, func(), error) {
	f, release, err := p.dbs.acquire(p.id)
	if err != nil {
		return nil, nil, fmt.Errorf("open project %q: %w", p.id, err)
	}
	return f, release, nil
}

// indexName names a declared index after its definition, so that ensure recognizes the
// ones that exist.
func indexName(t *Table, ix Index) string {
	name := "ix:" + t.Name + ":" + strings.Join(ix.Fields, ",")
	if ix.Unique {
		name += ":unique"
	}
	return name
}

// indexColumns are the expressions a declared index holds: its fields, then, unless it is
// unique, uid, which orders ties the way every query does (see NormalOrder).
func indexColumns(ix Index) string {
	cols := make([]string, 0, len(ix.Fields)+1)
	for _, f := range ix.Fields {
		cols = append(cols, keyExpr(f))
	}
	if !ix.Unique {
		cols = append(cols, keyExpr(KeyUID))
	}
	return strings.Join(cols, ", ")
}

func (p *sqliteProject) ensure(ctx context.Context, t *Table) error {
	f, release, err := p.file()
	if err != nil {
		return err
	}
	defer release()
	tx, err := f.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("ensure %s: %w", t.Name, err)
	}
	defer func() { _ = tx.Rollback() }()
	table := sqlTable(t)
	ddl := []string{
		`CREATE TABLE IF NOT EXISTS ` + table + ` (
			uid TEXT NOT NULL UNIQUE,
			_owner TEXT NOT NULL,
			createdAt TEXT NOT NULL,
			updatedAt TEXT NOT NULL,
			data TEXT NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS ` + quoteIdent("platform:"+t.Name+":createdAt") + ` ON ` + table + ` (createdAt, uid)`,
		`CREATE INDEX IF NOT EXISTS ` + quoteIdent("platform:"+t.Name+":_owner") + ` ON ` + table + ` (_owner, uid)`,
	}
	for _, q := range ddl {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("ensure %s: %w", t.Name, err)
		}
	}
	want := map[string]Index{}
	for _, ix := range t.Indexes {
		want[indexName(t, ix)] = ix
	}
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND name LIKE 'ix:%'`, sqlTablePrefix+t.Name)
	if err != nil {
		return fmt.Errorf("ensure %s: list indexes: %w", t.Name, err)
	}
	have := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("ensure %s: list indexes: %w", t.Name, err)
		}
		have[name] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("ensure %s: list indexes: %w", t.Name, err)
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			if _, err := tx.ExecContext(ctx, `DROP INDEX `+quoteIdent(name)); err != nil {
				return fmt.Errorf("ensure %s: drop index %s: %w", t.Name, name, err)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if have[name] {
			continue
		}
		ix := want[name]
		for _, field := range ix.Fields {
			if ft, ok := t.KeyType(field); !ok || ft.List || ft.Scalar == JSON {
				return &IndexError{Table: t.Name, Index: ix, Err: fmt.Errorf("%q is not a scalar field of the table", field)}
			}
		}
		unique := ""
		if ix.Unique {
			unique = "UNIQUE "
		}
		_, err := tx.ExecContext(ctx, `CREATE `+unique+`INDEX `+quoteIdent(name)+` ON `+table+` (`+indexColumns(ix)+`)`)
		if err != nil && ix.Unique && isUniqueViolation(err) {
			return p.duplicateError(ctx, tx, t, ix, err)
		}
		if err != nil {
			return &IndexError{Table: t.Name, Index: ix, Err: err}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("ensure %s: %w", t.Name, err)
	}
	return nil
}

// duplicateError finds a value that more than one record has for the fields of ix.
func (p *sqliteProject) duplicateError(ctx context.Context, tx *sql.Tx, t *Table, ix Index, cause error) error {
	cols := make([]string, len(ix.Fields))
	for i, f := range ix.Fields {
		cols[i] = keyExpr(f)
	}
	list := strings.Join(cols, ", ")
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	err := tx.QueryRowContext(ctx, `SELECT `+list+` FROM `+sqlTable(t)+` GROUP BY `+list+` HAVING count(*) > 1 LIMIT 1`).Scan(ptrs...)
	if err != nil {
		return &IndexError{Table: t.Name, Index: ix, Err: cause}
	}
	for i, f := range ix.Fields {
		vals[i] = fromSQL(t, f, vals[i])
	}
	return &IndexError{Table: t.Name, Index: ix, Value: vals, Err: cause}
}

// fromSQL converts what json_extract read for key back to the key's Go type.
func fromSQL(t *Table, key string, v any) any {
	ft, _ := t.KeyType(key)
	switch x := v.(type) {
	case int64:
		switch ft.Scalar {
		case Float:
			return float64(x)
		case Boolean:
			return x != 0
		}
	case []byte:
		v = string(x)
	}
	if s, ok := v.(string); ok && ft.Scalar == DateTime {
		if tm, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return tm.UTC()
		}
	}
	return v
}

func isUniqueViolation(err error) bool {
	switch sqliteError(err) {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return true
	}
	return false
}

// conflict turns a unique violation into a *ConflictError naming the index's fields (SQLite
// names the index or the column) and, when value knows them, the values that broke it.
func conflict(t *Table, err error, value func(field string) (any, bool)) error {
	if !isUniqueViolation(err) {
		return nil
	}
	e := &ConflictError{Table: t.Name, Fields: []string{KeyUID}}
	msg := err.Error()
	for _, ix := range t.Indexes {
		if ix.Unique && strings.Contains(msg, "'"+indexName(t, ix)+"'") {
			e.Fields = slices.Clone(ix.Fields)
		}
	}
	for _, f := range e.Fields {
		v, ok := value(f)
		if !ok {
			e.Value = nil
			break
		}
		e.Value = append(e.Value, v)
	}
	return e
}

// recordScanner reads the data column into a Record. The driver hands over a []byte it
// allocated for this one value (modernc.org/sqlite copies every blob out of SQLite), so the
// Record keeps it instead of copying it again; the query casts data to a BLOB for that,
// since text would arrive as a string and be copied twice more.
type recordScanner struct{ rec *Record }

func (s recordScanner) Scan(src any) error {
	switch v := src.(type) {
	case []byte:
		*s.rec = v
	case string:
		*s.rec = Record(v)
	default:
		return fmt.Errorf("record data is %T", src)
	}
	return nil
}

func (p *sqliteProject) find(ctx context.Context, t *Table, q Query, fn func(Record) (bool, error)) error {
	c := sqlCompiler{t: t}
	where, err := c.where(And(q.Where(), keysetBound(q)))
	if err != nil {
		return err
	}
	if where == "0" {
		return nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = -1
	}
	query := `SELECT CAST(data AS BLOB) FROM ` + sqlTable(t) + ` WHERE ` + where + orderBy(q.Order) + ` LIMIT ? OFFSET ?`
	f, release, err := p.file()
	if err != nil {
		return err
	}
	defer release()
	stmt, err := f.stmt(ctx, false, query)
	if err != nil {
		return fmt.Errorf("find %s: %w", t.Name, err)
	}
	rows, err := stmt.QueryContext(ctx, append(c.args, limit, q.Offset)...)
	if err != nil {
		return fmt.Errorf("find %s: %w", t.Name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var rec Record
		if err := rows.Scan(recordScanner{&rec}); err != nil {
			return fmt.Errorf("find %s: %w", t.Name, err)
		}
		more, err := fn(rec)
		if err != nil || !more {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("find %s: %w", t.Name, err)
	}
	return nil
}

// keysetBound is a condition that q.Where() implies and that an index on the first key of
// the order answers as a range: the keyset condition is an OR, which SQLite's planner does
// not turn into a starting point of the index, and without it page 1,000 would read the
// 999 pages before it.
func keysetBound(q Query) Filter {
	if q.After == nil {
		return All
	}
	o := NormalOrder(q.Order)[0]
	v := q.After.Values[0]
	switch {
	case !o.Desc && v != nil:
		return Filter{kind: kindCmp, key: o.Key, op: Gte, value: v, exact: true}
	case o.Desc && v == nil:
		return Compare(o.Key, IsNull, true)
	case o.Desc && serviceKey(o.Key):
		return Filter{kind: kindCmp, key: o.Key, op: Lte, value: v, exact: true}
	}
	return All
}

func (p *sqliteProject) count(ctx context.Context, t *Table, flt Filter) (int64, error) {
	c := sqlCompiler{t: t}
	where, err := c.where(flt)
	if err != nil {
		return 0, err
	}
	f, release, err := p.file()
	if err != nil {
		return 0, err
	}
	defer release()
	stmt, err := f.stmt(ctx, false, `SELECT count(*) FROM `+sqlTable(t)+` WHERE `+where)
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", t.Name, err)
	}
	var n int64
	if err := stmt.QueryRowContext(ctx, c.args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", t.Name, err)
	}
	return n, nil
}

func (p *sqliteProject) insert(ctx context.Context, t *Table, docs []Doc) error {
	if len(docs) == 0 {
		return nil
	}
	f, release, err := p.file()
	if err != nil {
		return err
	}
	defer release()
	stmt, err := f.stmt(ctx, true, `INSERT INTO `+sqlTable(t)+` (uid, _owner, createdAt, updatedAt, data) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("insert into %s: %w", t.Name, err)
	}
	tx, err := f.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("insert into %s: %w", t.Name, err)
	}
	defer func() { _ = tx.Rollback() }()
	ins := tx.StmtContext(ctx, stmt)
	for i, d := range docs {
		rec, err := encodeDoc(d)
		if err != nil {
			return fmt.Errorf("insert into %s: record %d: %w", t.Name, i+1, err)
		}
		_, err = ins.ExecContext(ctx, d.UID, d.Owner, d.CreatedAt.UTC().Format(TimeLayout), d.UpdatedAt.UTC().Format(TimeLayout), string(rec))
		if err != nil {
			if cerr := conflict(t, err, d.value); cerr != nil {
				return cerr
			}
			return fmt.Errorf("insert into %s: %w", t.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("insert into %s: %w", t.Name, err)
	}
	return nil
}

func (p *sqliteProject) update(ctx context.Context, t *Table, uid string, flt Filter, set map[string]any, unset []string, at time.Time) (Record, error) {
	c := sqlCompiler{t: t}
	where, err := c.where(And(Compare(KeyUID, Eq, uid), flt))
	if err != nil {
		return nil, err
	}
	stamp := at.UTC().Format(TimeLayout)
	// data is rebuilt inside SQLite, in the statement that checks the filter: the record
	// cannot change between the check and the write, and concurrent updates of different
	// fields each keep the other's.
	expr := "data"
	var removed []string
	var setArgs []any
	for _, k := range unset {
		removed = append(removed, quoteString(jsonPath(k)))
	}
	setExpr := []string{`'$.updatedAt', ?`}
	setArgs = append(setArgs, stamp)
	for _, k := range sortedFieldKeys(set) {
		v := set[k]
		if v == nil {
			removed = append(removed, quoteString(jsonPath(k)))
			continue
		}
		var b bytes.Buffer
		if err := writeValue(&b, v); err != nil {
			return nil, fmt.Errorf("update %s: field %s: %w", t.Name, k, err)
		}
		setExpr = append(setExpr, quoteString(jsonPath(k))+", json(?)")
		setArgs = append(setArgs, b.String())
	}
	if len(removed) > 0 {
		sort.Strings(removed)
		expr = "json_remove(data, " + strings.Join(removed, ", ") + ")"
	}
	expr = "json_set(" + expr + ", " + strings.Join(setExpr, ", ") + ")"
	query := `UPDATE ` + sqlTable(t) + ` SET data = ` + expr + `, updatedAt = ? WHERE ` + where + ` RETURNING CAST(data AS BLOB)`
	f, release, err := p.file()
	if err != nil {
		return nil, err
	}
	defer release()
	stmt, err := f.stmt(ctx, true, query)
	if err != nil {
		return nil, fmt.Errorf("update %s: %w", t.Name, err)
	}
	var rec Record
	err = stmt.QueryRowContext(ctx, append(append(setArgs, stamp), c.args...)...).Scan(recordScanner{&rec})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("%s %q: %w", t.Name, uid, ErrNotFound)
	case err != nil:
		if cerr := conflict(t, err, func(f string) (any, bool) { v, ok := set[f]; return v, ok }); cerr != nil {
			return nil, cerr
		}
		return nil, fmt.Errorf("update %s: %w", t.Name, err)
	}
	return rec, nil
}

func (p *sqliteProject) remove(ctx context.Context, t *Table, uid string, flt Filter) error {
	c := sqlCompiler{t: t}
	where, err := c.where(And(Compare(KeyUID, Eq, uid), flt))
	if err != nil {
		return err
	}
	f, release, err := p.file()
	if err != nil {
		return err
	}
	defer release()
	stmt, err := f.stmt(ctx, true, `DELETE FROM `+sqlTable(t)+` WHERE `+where)
	if err != nil {
		return fmt.Errorf("delete from %s: %w", t.Name, err)
	}
	res, err := stmt.ExecContext(ctx, c.args...)
	if err != nil {
		return fmt.Errorf("delete from %s: %w", t.Name, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("%s %q: %w", t.Name, uid, ErrNotFound)
	}
	return nil
}

func (p *sqliteProject) drop(context.Context) error {
	if err := p.dbs.remove(p.id); err != nil {
		return fmt.Errorf("drop project %q: %w", p.id, err)
	}
	return nil
}

func (p *sqliteProject) tables(ctx context.Context) ([]string, error) {
	f, release, err := p.file()
	if err != nil {
		return nil, err
	}
	defer release()
	rows, err := f.reader.QueryContext(ctx, `SELECT substr(name, 3) FROM sqlite_schema WHERE type = 'table' AND name LIKE 't\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list tables of project %q: %w", p.id, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("list tables of project %q: %w", p.id, err)
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// value is the value d has for a key, if any.
func (d Doc) value(key string) (any, bool) {
	switch key {
	case KeyUID:
		return d.UID, true
	case KeyOwner:
		return d.Owner, true
	}
	v, ok := d.Fields[key]
	return v, ok
}
