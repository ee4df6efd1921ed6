package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
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
func indexColumns(ix Index, cols columns) string {
	list := make([]string, 0, len(ix.Fields)+1)
	for _, f := range ix.Fields {
		list = append(list, keyExpr(f, cols))
	}
	if !ix.Unique {
		list = append(list, keyExpr(KeyUID, cols))
	}
	return strings.Join(list, ", ")
}

// columns returns the fields of t that have a column of their own in the file, as this
// process last saw them. Reads may use an older set (columns are never dropped, and a field
// without its column is read from data, only slower); writes must fill every column, so they
// take writeColumns instead.
func (f *sqliteFile) columns(ctx context.Context, t *Table) (columns, error) {
	f.mu.Lock()
	cols, ok := f.cols[t.Name]
	f.mu.Unlock()
	if ok {
		return cols, nil
	}
	cols, err := readColumns(ctx, f.reader, t)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.cols[t.Name] = cols
	f.mu.Unlock()
	return cols, nil
}

// writeColumns returns the columns of t as they are in the write transaction tx: another
// process sharing the file (a second replica on the data folder) may have added some since
// this one read them. SQLite's schema version tells.
func (f *sqliteFile) writeColumns(ctx context.Context, tx *sql.Tx, t *Table) (columns, error) {
	var version int64
	if err := tx.QueryRowContext(ctx, `PRAGMA schema_version`).Scan(&version); err != nil {
		return nil, fmt.Errorf("schema version: %w", err)
	}
	f.mu.Lock()
	if f.schema != version {
		f.schema = version
		clear(f.writeCols)
	}
	cols, ok := f.writeCols[t.Name]
	f.mu.Unlock()
	if ok {
		return cols, nil
	}
	// tx holds the write lock: the schema cannot change before it ends.
	cols, err := readColumns(ctx, tx, t)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.writeCols[t.Name] = cols
	f.mu.Unlock()
	return cols, nil
}

// write runs one write transaction of table t: build makes the statement for the columns
// t has, and run executes it in tx. The statement is prepared before the transaction (the
// writer has one connection, which the transaction holds); if the columns changed in
// between (another process added one), it is built again.
func (f *sqliteFile) write(ctx context.Context, t *Table, build func(columns) (string, error), run func(*sql.Stmt) error) error {
	for range 3 {
		f.mu.Lock()
		cols, ok := f.writeCols[t.Name]
		f.mu.Unlock()
		if !ok {
			var err error
			if cols, err = readColumns(ctx, f.reader, t); err != nil {
				return err
			}
		}
		query, err := build(cols)
		if err != nil {
			return err
		}
		stmt, err := f.stmt(ctx, true, query)
		if err != nil {
			return err
		}
		tx, err := f.writer.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		fresh, err := f.writeColumns(ctx, tx, t)
		if err == nil && !maps.Equal(fresh, cols) {
			_ = tx.Rollback()
			continue
		}
		if err == nil {
			err = run(tx.StmtContext(ctx, stmt))
		}
		if err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	}
	return fmt.Errorf("the columns of %s kept changing", t.Name)
}

func readColumns(ctx context.Context, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, t *Table) (columns, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, sqlTablePrefix+t.Name)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", t.Name, err)
	}
	defer rows.Close()
	cols := columns{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("columns of %s: %w", t.Name, err)
		}
		if field, ok := fieldFromColumn(name); ok {
			cols[field] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("columns of %s: %w", t.Name, err)
	}
	return cols, nil
}

func (p *sqliteProject) ensure(ctx context.Context, t *Table) error {
	if err := p.inWrite(ctx, true, func(tx *sql.Tx) error { return ensureIn(ctx, tx, t) }); err != nil {
		return fmt.Errorf("ensure %s: %w", t.Name, err)
	}
	return p.fillSearch(ctx, t)
}

// inWrite runs fn in one write transaction on the project's file, committed when fn
// succeeds. schema says fn changes tables or columns: reads then see the new columns at
// once, and writes see that the schema version changed.
func (p *sqliteProject) inWrite(ctx context.Context, schema bool, fn func(tx *sql.Tx) error) error {
	f, release, err := p.file()
	if err != nil {
		return err
	}
	defer release()
	tx, err := f.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if schema {
		f.mu.Lock()
		clear(f.cols)
		f.mu.Unlock()
	}
	return nil
}

// createTable is the statement that creates a table of records named table (quoted).
func createTable(table string) string {
	return `CREATE TABLE IF NOT EXISTS ` + table + ` (
			uid TEXT NOT NULL UNIQUE,
			_owner TEXT NOT NULL,
			createdAt TEXT NOT NULL,
			updatedAt TEXT NOT NULL,
			data TEXT NOT NULL)`
}

// ensureIn is ensure in the write transaction tx.
func ensureIn(ctx context.Context, tx *sql.Tx, t *Table) error {
	table := sqlTable(t)
	ddl := []string{
		createTable(table),
		`CREATE INDEX IF NOT EXISTS ` + quoteIdent("platform:"+t.Name+":createdAt") + ` ON ` + table + ` (createdAt, uid)`,
		`CREATE INDEX IF NOT EXISTS ` + quoteIdent("platform:"+t.Name+":_owner") + ` ON ` + table + ` (_owner, uid)`,
	}
	ddl = append(ddl, outboxDDL(t)...)
	for _, q := range append(ddl, genDDL(t)...) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("ensure %s: %w", t.Name, err)
		}
	}
	want := map[string]Index{}
	for _, ix := range t.Indexes {
		for _, field := range ix.Fields {
			if ft, ok := t.KeyType(field); !ok || ft.List || ft.Scalar == JSON {
				return &IndexError{Table: t.Name, Index: ix, Err: fmt.Errorf("%q is not a scalar field of the table", field)}
			}
		}
		want[indexName(t, ix)] = ix
	}
	// Each scalar field gets its column, filled from the records: indexes hold the column,
	// and a filter that no index answers reads it instead of parsing every record's JSON.
	// A column stays when its field goes: a Records of the previous
	// definition may be reading it right now, and writes keep every column in step.
	cols, err := readColumns(ctx, tx, t)
	if err != nil {
		return err
	}
	for _, fld := range t.Fields {
		if cols[fld.Name] || fld.Type.List || fld.Type.Scalar == JSON {
			continue
		}
		col := fieldColumn(fld.Name)
		if _, err := tx.ExecContext(ctx, `ALTER TABLE `+table+` ADD COLUMN `+col); err != nil {
			return fmt.Errorf("ensure %s: add column for %s: %w", t.Name, fld.Name, err)
		}
		value := jsonExtract("data", fld.Name)
		if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET `+col+` = `+value+` WHERE `+value+` IS NOT NULL`); err != nil {
			return fmt.Errorf("ensure %s: fill column for %s: %w", t.Name, fld.Name, err)
		}
		cols[fld.Name] = true
	}
	scan := scanIndex(t)
	want[scan.name] = Index{}
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND (name LIKE 'ix:%' OR name LIKE 'scan:%')`, sqlTablePrefix+t.Name)
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
		if name == scan.name {
			if _, err := tx.ExecContext(ctx, `CREATE INDEX `+quoteIdent(name)+` ON `+table+` (`+scan.columns+`)`); err != nil {
				return fmt.Errorf("ensure %s: scan index: %w", t.Name, err)
			}
			continue
		}
		ix := want[name]
		unique := ""
		if ix.Unique {
			unique = "UNIQUE "
		}
		_, err := tx.ExecContext(ctx, `CREATE `+unique+`INDEX `+quoteIdent(name)+` ON `+table+` (`+indexColumns(ix, cols)+`)`)
		if err != nil && ix.Unique && isUniqueViolation(err) {
			return duplicateError(ctx, tx, t, cols, ix, err)
		}
		if err != nil {
			return &IndexError{Table: t.Name, Index: ix, Err: err}
		}
	}
	return ensureSearchIn(ctx, tx, t)
}

// scanIndex is the index that holds uid and every scalar field's column: a filter, order or
// count on fields that no declared index answers reads it (about a quarter of the table's
// pages, which carry each record's JSON) to choose its rows, and reads the JSON of the
// chosen rows only (see findSQL). uid comes first: every order ends with it, and most
// orders are uid alone, so such a scan reads the index in order, sorts nothing and stops at
// its limit. The other keys the service keeps have indexes of their own and stay out, since
// every byte of an entry is read by every scan (the entry of the peer benchmark's table is
// half as long without them, and its scans half as costly). Named after its fields, so that
// ensure replaces it when they change.
func scanIndex(t *Table) (idx struct{ name, columns string }) {
	var fields []string
	list := []string{quoteIdent(KeyUID)}
	for _, fld := range t.Fields {
		if !fld.Type.List && fld.Type.Scalar != JSON {
			fields = append(fields, fld.Name)
			list = append(list, fieldColumn(fld.Name))
		}
	}
	idx.name = "scan:" + t.Name + ":" + strings.Join(fields, ",")
	idx.columns = strings.Join(list, ", ")
	return idx
}

func (p *sqliteProject) duplicate(ctx context.Context, t *Table, ix Index) ([]any, error) {
	f, cols, release, err := p.fileFor(ctx, t)
	if err != nil {
		return nil, err
	}
	defer release()
	vals, err := findDuplicate(ctx, f.reader, t, cols, ix)
	if err != nil {
		return nil, sqlFailed(ctx, "find duplicates in "+t.Name, err)
	}
	return vals, nil
}

// duplicateError finds a value that more than one record has for the fields of ix.
func duplicateError(ctx context.Context, tx *sql.Tx, t *Table, cols columns, ix Index, cause error) error {
	vals, err := findDuplicate(ctx, tx, t, cols, ix)
	if err != nil || vals == nil {
		return &IndexError{Table: t.Name, Index: ix, Err: cause}
	}
	return &IndexError{Table: t.Name, Index: ix, Value: vals, Err: cause}
}

// findDuplicate is a value of ix's fields that more than one record of t has, leaving out
// records without one of them (a unique index does); nil when none.
func findDuplicate(ctx context.Context, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, t *Table, cols columns, ix Index) ([]any, error) {
	exprs := make([]string, len(ix.Fields))
	present := make([]string, len(ix.Fields))
	for i, field := range ix.Fields {
		exprs[i] = keyExpr(field, cols)
		present[i] = exprs[i] + " IS NOT NULL"
	}
	list := strings.Join(exprs, ", ")
	vals := make([]any, len(exprs))
	ptrs := make([]any, len(exprs))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	err := db.QueryRowContext(ctx, `SELECT `+list+` FROM `+sqlTable(t)+` WHERE `+strings.Join(present, " AND ")+
		` GROUP BY `+list+` HAVING count(*) > 1 LIMIT 1`).Scan(ptrs...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	for i, field := range ix.Fields {
		vals[i] = fromSQL(t, field, vals[i])
	}
	return vals, nil
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
	// SQLite names an index on columns by its columns ("UNIQUE constraint failed:
	// t_items.f:sku (2067)"), one on expressions by its name.
	for _, ix := range t.Indexes {
		cols := make([]string, len(ix.Fields))
		for i, f := range ix.Fields {
			cols[i] = sqlTablePrefix + t.Name + ".f:" + f
		}
		named := ": " + strings.Join(cols, ", ")
		if ix.Unique && (strings.Contains(msg, named+" (") || strings.HasSuffix(msg, named) || strings.Contains(msg, "'"+indexName(t, ix)+"'")) {
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

// findSQL is the statement that answers q, and its parameters; "" when q selects nothing.
// With a cut (see orderCut) its rows also carry the first order key's value, and a cut
// with a value bounds the rows the page is chosen from.
func findSQL(t *Table, cols columns, q Query, cut *orderCut) (string, []any, error) {
	c := sqlCompiler{t: t, cols: cols}
	bound, exact := c.keyset(q)
	cond := q.Filter
	if !exact {
		cond = q.Where()
	}
	// A top-level search is the ranked query's own (searchFindSQL); the rest is its where.
	sq, cond, searching := cond.search()
	where, err := c.where(cond)
	if err != nil || where == "0" {
		return "", nil, err
	}
	if bound != "" {
		// The bound's parameters come first, as its text does.
		where = bound + " AND " + where
	}
	limit := q.Limit
	if limit <= 0 {
		limit = -1
	}
	if searching {
		return searchFindSQL(t, cols, q, sq, where, append(c.args, limit, q.Offset))
	}
	table := sqlTable(t)
	if q.Filter.oneUID() {
		// The unique index on uid finds the one row, which is read once.
		return `SELECT CAST(data AS BLOB) FROM ` + table + ` WHERE ` + where + orderBy(q.Order, cols) + ` LIMIT ? OFFSET ?`, append(c.args, limit, q.Offset), nil
	}
	// Rows are chosen, ordered and paged on their columns alone, in a subquery that an
	// index answers (a declared one, or the scan index), and only the chosen rows' data is
	// read: a scan never reads the JSON of a row that does not match, nor sorts it. The
	// subquery's LIMIT keeps SQLite from flattening it into the join, and CROSS JOIN keeps
	// it the outer loop, so rows come in its order.
	outer, inner := `CAST(r.data AS BLOB)`, `rowid AS id`
	if cut != nil {
		x := keyExpr(cut.key, cols)
		outer, inner = outer+`, chosen.k`, inner+`, `+x+` AS k`
		if cut.value != nil {
			where = "(" + where + ") AND " + cut.bound(x, c.arg(cut.value))
		}
	}
	chosen := `SELECT ` + inner + ` FROM ` + table + ` WHERE ` + where + orderBy(q.Order, cols) + ` LIMIT ? OFFSET ?`
	if cut != nil && cut.value != nil {
		// Every row says how many the bound left, so the first tells whether they fill the
		// page, before a record is handed out.
		outer, chosen = outer+`, chosen.n`, `SELECT id, k, count(*) OVER () AS n FROM (`+chosen+`)`
	}
	query := `SELECT ` + outer + ` FROM (` + chosen + `) AS chosen CROSS JOIN ` + table + ` AS r ON r.rowid = chosen.id`
	return query, append(c.args, limit, q.Offset), nil
}

// countSQL is the statement that counts the records f selects, and its parameters.
func countSQL(t *Table, cols columns, f Filter) (string, []any, error) {
	c := sqlCompiler{t: t, cols: cols}
	where, err := c.where(f)
	if err != nil {
		return "", nil, err
	}
	return `SELECT count(*) FROM ` + sqlTable(t) + ` WHERE ` + where, c.args, nil
}

// fileFor opens the project's file with the columns of t, which callers release when done.
func (p *sqliteProject) fileFor(ctx context.Context, t *Table) (*sqliteFile, columns, func(), error) {
	f, release, err := p.file()
	if err != nil {
		return nil, nil, nil, err
	}
	cols, err := f.columns(ctx, t)
	if err != nil {
		release()
		return nil, nil, nil, err
	}
	return f, cols, release, nil
}

func (p *sqliteProject) find(ctx context.Context, t *Table, q Query, fn func(Record) (bool, error)) error {
	f, cols, release, err := p.fileFor(ctx, t)
	if err != nil {
		return err
	}
	defer release()
	if cut := cutOf(t, q); cut != nil {
		return f.findCut(ctx, t, cols, q, cut, fn)
	}
	query, args, err := findSQL(t, cols, q, nil)
	if err != nil || query == "" {
		return err
	}
	stmt, err := f.stmt(ctx, false, query)
	if err != nil {
		return sqlFailed(ctx, "find "+t.Name, err)
	}
	run := ctx
	if q.After == nil && q.Filter.oneUID() {
		// The unique index on uid reads at most that one row, so the query ends long
		// before a deadline could matter; database/sql and the driver would each start a
		// goroutine to watch ctx for it. ctx still decides whether it starts.
		if err := ctx.Err(); err != nil {
			return sqlFailed(ctx, "find "+t.Name, err)
		}
		run = context.WithoutCancel(ctx)
	}
	_, err = scanRecords(ctx, run, t, stmt, args, nil, fn)
	return err
}

// scanRecords runs the find statement stmt with args in run and hands fn each record until
// it answers false; done says that every row was read. The columns after the record (see
// findSQL) are scanned into extra before fn gets the record.
func scanRecords(ctx, run context.Context, t *Table, stmt *sql.Stmt, args []any, extra []any, fn func(Record) (bool, error)) (done bool, err error) {
	rows, err := stmt.QueryContext(run, args...)
	if err != nil {
		return false, sqlFailed(ctx, "find "+t.Name, err)
	}
	defer rows.Close()
	var rec Record
	dest := append([]any{recordScanner{&rec}}, extra...)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return false, sqlFailed(ctx, "find "+t.Name, err)
		}
		more, err := fn(rec)
		if err != nil || !more {
			return false, err
		}
	}
	if err := rows.Err(); err != nil {
		return false, sqlFailed(ctx, "find "+t.Name, err)
	}
	return true, nil
}

// keyset compiles the condition of q's keyset page as a range that an index on the order's
// keys answers: the condition q.Where() builds is an OR, which SQLite's planner does not turn
// into a starting point in the index, and without a range page 1,000 would read the 999
// pages before it. With one key and uid, and a cursor value, the condition is exactly the
// row value (key, uid) > (v, u) (< descending), and replaces the OR; with more keys, a bound
// on the first key is added to it. A missing value sorts first, so a bound that excludes
// missing values exists only where they come before the cursor (ascending), or cannot exist
// (the service's keys).
func (c *sqlCompiler) keyset(q Query) (bound string, exact bool) {
	if q.After == nil {
		return "", false
	}
	norm := NormalOrder(q.Order)
	o, v := norm[0], q.After.Values[0]
	x := keyExpr(o.Key, c.cols)
	switch {
	case v == nil && o.Desc:
		return x + " IS NULL", false
	case v == nil || o.Desc && !serviceKey(o.Key):
		return "", false
	case len(norm) == 2:
		cmp := " > "
		if o.Desc {
			cmp = " < "
		}
		return "(" + x + ", " + keyExpr(KeyUID, c.cols) + ")" + cmp + "(" + c.arg(v) + ", " + c.arg(q.After.Values[1]) + ")", true
	case o.Desc:
		return x + " <= " + c.arg(v), false
	}
	return x + " >= " + c.arg(v), false
}

// estimate is count: SQLite keeps no count of a table's rows, and counting them reads the
// smallest index, which is cheap enough.
func (p *sqliteProject) estimate(ctx context.Context, t *Table) (int64, error) {
	return p.count(ctx, t, Filter{})
}

func (p *sqliteProject) count(ctx context.Context, t *Table, flt Filter) (int64, error) {
	f, cols, release, err := p.fileFor(ctx, t)
	if err != nil {
		return 0, err
	}
	defer release()
	query, args, err := countSQL(t, cols, flt)
	if err != nil {
		return 0, err
	}
	// A count of one uid reads one index entry: no cheaper from the cache.
	vals, err := f.row(ctx, t, query, args, !flt.oneUID())
	if err != nil {
		return 0, sqlFailed(ctx, "count "+t.Name, err)
	}
	n, ok := vals[0].(int64)
	if !ok {
		return 0, fmt.Errorf("count %s: SQLite answered %T", t.Name, vals[0])
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
	// One statement inserts every record of a JSON array: a batch costs one statement, not
	// one per record.
	build := func(cols columns) (string, error) {
		names := "uid, _owner, createdAt, updatedAt, data"
		values := jsonExtract("value", KeyUID) + ", " + jsonExtract("value", KeyOwner) + ", " +
			jsonExtract("value", KeyCreatedAt) + ", " + jsonExtract("value", KeyUpdatedAt) + ", value"
		for _, field := range slices.Sorted(maps.Keys(cols)) {
			names += ", " + fieldColumn(field)
			values += ", " + jsonExtract("value", field)
		}
		return `INSERT INTO ` + sqlTable(t) + ` (` + names + `) SELECT ` + values + ` FROM json_each(?1)`, nil
	}
	recs := make([]Record, len(docs))
	var all bytes.Buffer
	all.WriteByte('[')
	for i, d := range docs {
		rec, err := d.record()
		if err != nil {
			return fmt.Errorf("record %d: %w", i+1, err)
		}
		if i > 0 {
			all.WriteByte(',')
		}
		all.Write(rec)
		recs[i] = rec
	}
	all.WriteByte(']')
	err = f.write(ctx, t, build, func(ins *sql.Stmt) error {
		_, err := ins.ExecContext(ctx, all.String())
		if err == nil || !isUniqueViolation(err) {
			return err
		}
		// The statement changed nothing; inserting the records one by one finds the one a
		// unique index refuses, to name its values. The transaction is rolled back anyway.
		for i, d := range docs {
			_, err := ins.ExecContext(ctx, "["+string(recs[i])+"]")
			if cerr := conflict(t, err, d.value); cerr != nil {
				return cerr
			}
			if err != nil {
				return err
			}
		}
		return err
	})
	var ce *ConflictError
	if err != nil && !errors.As(err, &ce) {
		return sqlFailed(ctx, "insert into "+t.Name, err)
	}
	return err
}

func (p *sqliteProject) update(ctx context.Context, t *Table, uid string, flt Filter, set map[string]any, unset []string, at time.Time) (Record, error) {
	recs, err := p.updateWhere(ctx, t, And(Compare(KeyUID, Eq, uid), flt), set, unset, at)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s %q: %w", t.Name, uid, ErrNotFound)
	}
	return recs[0], nil
}

// updateFailed wraps the error of an update: a unique index's refusal as a *ConflictError
// naming the values set.
func updateFailed(ctx context.Context, t *Table, err error, set map[string]any) error {
	if cerr := conflict(t, err, func(f string) (any, bool) { v, ok := set[f]; return v, ok }); cerr != nil {
		return cerr
	}
	return sqlFailed(ctx, "update "+t.Name, err)
}

// updateSQL is the statement that sets and removes fields of the records flt selects,
// stamps their updatedAt with at and returns them, and its parameters. data is rebuilt
// inside SQLite, in the statement that checks the filter: a record cannot change between the
// check and the write, and concurrent updates of different fields each keep the other's.
func updateSQL(t *Table, cols columns, flt Filter, set map[string]any, unset []string, at time.Time) (string, []any, error) {
	var args []any
	// The SET clause numbers its parameters, so that a field's column reads the same one
	// as data; the WHERE clause's follow.
	param := func(v any) string {
		args = append(args, v)
		return "?" + strconv.Itoa(len(args))
	}
	stamp := param(at.UTC().Format(TimeLayout))
	var removed, assign, setColumns []string
	for _, k := range unset {
		removed = append(removed, quoteString(jsonPath(k)))
		if cols[k] {
			setColumns = append(setColumns, fieldColumn(k)+" = NULL")
		}
	}
	assign = append(assign, `'$.updatedAt', `+stamp)
	for _, k := range sortedFieldKeys(set) {
		v := set[k]
		if v == nil {
			removed = append(removed, quoteString(jsonPath(k)))
			if cols[k] {
				setColumns = append(setColumns, fieldColumn(k)+" = NULL")
			}
			continue
		}
		var b bytes.Buffer
		if err := writeValue(&b, v); err != nil {
			return "", nil, fmt.Errorf("field %s: %w", k, err)
		}
		value := param(b.String())
		assign = append(assign, quoteString(jsonPath(k))+", json("+value+")")
		if cols[k] {
			setColumns = append(setColumns, fieldColumn(k)+" = json_extract("+value+", '$')")
		}
	}
	data := "data"
	if len(removed) > 0 {
		data = "json_remove(data, " + strings.Join(removed, ", ") + ")"
	}
	assignments := append([]string{
		"data = json_set(" + data + ", " + strings.Join(assign, ", ") + ")",
		"updatedAt = " + stamp,
	}, setColumns...)
	c := sqlCompiler{t: t, cols: cols}
	where, err := c.where(flt)
	if err != nil {
		return "", nil, err
	}
	args = append(args, c.args...)
	return `UPDATE ` + sqlTable(t) + ` SET ` + strings.Join(assignments, ", ") + ` WHERE ` + where + ` RETURNING CAST(data AS BLOB)`, args, nil
}

func (p *sqliteProject) remove(ctx context.Context, t *Table, uid string, flt Filter) error {
	f, cols, release, err := p.fileFor(ctx, t)
	if err != nil {
		return err
	}
	defer release()
	c := sqlCompiler{t: t, cols: cols}
	where, err := c.where(And(Compare(KeyUID, Eq, uid), flt))
	if err != nil {
		return err
	}
	stmt, err := f.stmt(ctx, true, `DELETE FROM `+sqlTable(t)+` WHERE `+where)
	if err != nil {
		return sqlFailed(ctx, "delete from "+t.Name, err)
	}
	res, err := stmt.ExecContext(ctx, c.args...)
	if err != nil {
		return sqlFailed(ctx, "delete from "+t.Name, err)
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

// sqlFailed wraps the error of a statement; one that a cancelled or expired ctx interrupted
// wraps ctx's error, which is what the caller asks about.
func sqlFailed(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	return fmt.Errorf("%s: %w", what, err)
}

// migratePage is how many records rewrite reads at a time, inside its transaction.
const migratePage = 1000

func (p *sqliteProject) rewrite(ctx context.Context, t *Table, fields []string, fn func(Record) (map[string]any, error), keep func() bool) error {
	f, release, err := p.file()
	if err != nil {
		return err
	}
	defer release()
	tx, err := f.writer.BeginTx(ctx, nil)
	if err != nil {
		return sqlFailed(ctx, "migrate "+t.Name, err)
	}
	defer func() { _ = tx.Rollback() }()
	table := sqlTable(t)
	// One statement a field and page sets the values of a JSON array of {"u": uid, "v":
	// value}: a page costs a statement, not one per record.
	sets := map[string]*sql.Stmt{}
	for _, k := range fields {
		if sets[k], err = tx.PrepareContext(ctx, `UPDATE `+table+` SET data = json_set(data, `+quoteString(jsonPath(k))+`, json(j.value -> '$.v'))
			FROM json_each(?1) AS j WHERE `+table+`.uid = j.value ->> '$.u'`); err != nil {
			return sqlFailed(ctx, "migrate "+t.Name, err)
		}
	}
	// Pages in uid order: the rows a page rewrites are never those the next one reads.
	after := ""
	for {
		rows, err := tx.QueryContext(ctx, `SELECT uid, CAST(data AS BLOB) FROM `+table+` WHERE uid > ? ORDER BY uid LIMIT ?`, after, migratePage)
		if err != nil {
			return sqlFailed(ctx, "migrate "+t.Name, err)
		}
		type change struct {
			uid string
			set map[string]any
		}
		var page []change
		n := 0
		for rows.Next() {
			var rec Record
			if err := rows.Scan(&after, recordScanner{&rec}); err != nil {
				rows.Close()
				return sqlFailed(ctx, "migrate "+t.Name, err)
			}
			n++
			set, err := fn(rec)
			if err != nil {
				rows.Close()
				return fmt.Errorf("migrate %s record %q: %w", t.Name, after, err)
			}
			if set != nil {
				page = append(page, change{after, set})
			}
		}
		if err := rows.Err(); err != nil {
			return sqlFailed(ctx, "migrate "+t.Name, err)
		}
		for _, k := range fields {
			var b bytes.Buffer
			b.WriteByte('[')
			for _, c := range page {
				v, ok := c.set[k]
				if !ok {
					continue
				}
				if b.Len() > 1 {
					b.WriteByte(',')
				}
				b.WriteString(`{"u":`)
				writeJSON(&b, c.uid)
				b.WriteString(`,"v":`)
				if err := writeValue(&b, v); err != nil {
					return fmt.Errorf("migrate %s record %q: %s: %w", t.Name, c.uid, k, err)
				}
				b.WriteByte('}')
			}
			if b.Len() == 1 {
				continue
			}
			b.WriteByte(']')
			if _, err := sets[k].ExecContext(ctx, b.String()); err != nil {
				return sqlFailed(ctx, "migrate "+t.Name, err)
			}
		}
		if n < migratePage {
			break
		}
	}
	if !keep() {
		return nil
	}
	// The fields' columns follow their values, and with them the indexes on them.
	cols, err := readColumns(ctx, tx, t)
	if err != nil {
		return err
	}
	for _, k := range fields {
		if cols[k] {
			if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET `+fieldColumn(k)+` = `+jsonExtract("data", k)); err != nil {
				return sqlFailed(ctx, "migrate "+t.Name, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return sqlFailed(ctx, "migrate "+t.Name, err)
	}
	return nil
}

func (p *sqliteProject) dropTable(ctx context.Context, t *Table) error {
	f, release, err := p.file()
	if err != nil {
		return err
	}
	defer release()
	err = p.inWrite(ctx, false, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+sqlTable(t)); err != nil {
			return err
		}
		if err := dropGen(ctx, tx, t); err != nil {
			return err
		}
		return dropSearchIn(ctx, tx, t)
	})
	if err != nil {
		return sqlFailed(ctx, "drop table "+t.Name, err)
	}
	f.mu.Lock()
	delete(f.cols, t.Name)
	f.mu.Unlock()
	return nil
}

func (p *sqliteProject) size(ctx context.Context) (int64, error) {
	f, release, err := p.file()
	if err != nil {
		return 0, err
	}
	defer release()
	var n int64
	// Pages on the free list are space the file keeps but no record takes.
	if err := f.reader.QueryRowContext(ctx, `SELECT (c.page_count - fl.freelist_count) * s.page_size FROM pragma_page_count() c, pragma_freelist_count() fl, pragma_page_size() s`).Scan(&n); err != nil {
		return 0, fmt.Errorf("size of project %q: %w", p.id, err)
	}
	return n, nil
}
