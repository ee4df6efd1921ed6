package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
)

// A count (or the aggregates of Records.Aggregate) of a large range costs what stepping its
// index entries costs: half a million of them take 30 ms or more, however well indexed.
// Each file keeps the answers of its last counts, keyed by the statement, its parameters
// and the generation of the table they read. The generation is a random number in
// platform_gen that triggers on the table draw anew at every row written, so it changes in
// the transaction of any write, whichever connection or process makes it and whatever
// path (one create, a batch, an update by filter, an import, a migration). It is random
// rather than a counter because a restore brings back an older generation with the rows it
// describes, which a counter would reach again with other rows. The generation is read in the
// same statement as the count, so an answer is stored under the generation of the rows it
// counted, and it is served only while a fresh read of the generation finds it unchanged.
// A count that reads another table (a full-text match) is covered too: the search index
// changes with its table, and its build bumps the generation (see fillSearch).
const (
	genTable = "platform_gen"
	// rowCacheEntries bounds the answers a project file keeps: the shapes of the counts an
	// API sends are few, but each caller's access rule gives its counts parameters of their
	// own.
	rowCacheEntries = 256
	// rowCacheKeyBytes is the longest statement with its parameters whose answer is kept,
	// so that a file's cache holds at most rowCacheEntries times that (512 KiB).
	rowCacheKeyBytes = 2048
)

const createGenTable = `CREATE TABLE IF NOT EXISTS ` + genTable + ` (tbl TEXT NOT NULL PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID`

// genDDL makes t's generation and the triggers that change it, and draws a new one: ensure
// may have changed what t holds (its swap replaced it, or a column was filled).
func genDDL(t *Table) []string {
	table, name := sqlTable(t), quoteString(t.Name)
	bump := ` BEGIN UPDATE ` + genTable + ` SET n = random() WHERE tbl = ` + name + `; END`
	trigger := func(op string) string { return quoteIdent("gen:" + t.Name + ":" + op) }
	return []string{
		createGenTable,
		`INSERT INTO ` + genTable + ` (tbl, n) VALUES (` + name + `, random()) ON CONFLICT (tbl) DO UPDATE SET n = random()`,
		`CREATE TRIGGER IF NOT EXISTS ` + trigger("insert") + ` AFTER INSERT ON ` + table + bump,
		`CREATE TRIGGER IF NOT EXISTS ` + trigger("update") + ` AFTER UPDATE ON ` + table + bump,
		`CREATE TRIGGER IF NOT EXISTS ` + trigger("delete") + ` AFTER DELETE ON ` + table + bump,
	}
}

// bumpGen draws a new generation for t in the write transaction tx, for a change that no
// trigger sees; ensure made t's generation before.
func bumpGen(ctx context.Context, tx *sql.Tx, t *Table) error {
	_, err := tx.ExecContext(ctx, `UPDATE `+genTable+` SET n = random() WHERE tbl = ?`, t.Name)
	return err
}

// dropGen forgets t's generation with t, in the transaction that drops it: no count of t
// is served from a cache until ensure makes its generation anew.
func dropGen(ctx context.Context, tx *sql.Tx, t *Table) error {
	return execAll(ctx, tx, "drop the generation of "+t.Name, []string{
		createGenTable,
		`DELETE FROM ` + genTable + ` WHERE tbl = ` + quoteString(t.Name),
	})
}

// genExpr reads t's generation: NULL when it has none, or when its table is gone. A table
// dropped under the store (by hand, or a file restored from elsewhere) takes its triggers
// with it but leaves its generation, and a count of it must then fail, not be remembered.
func genExpr(t *Table) string {
	return `(SELECT n FROM ` + genTable + ` WHERE tbl = ` + quoteString(t.Name) +
		` AND EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ` + quoteString(sqlTablePrefix+t.Name) + `))`
}

type rowKey struct {
	gen   int64
	query string
	args  string
}

func newRowCache() *lru.Cache[rowKey, []any] {
	c, _ := lru.New[rowKey, []any](rowCacheEntries) // a positive size never fails
	return c
}

// row answers the one row that query (SELECT ...) reads from t, with args: from the cache
// while t's generation is the one it was read at, else from the database. cache false
// reads the database only, for a query that costs no more than reading the generation.
func (f *sqliteFile) row(ctx context.Context, t *Table, query string, args []any, cache bool) ([]any, error) {
	var key rowKey
	if cache {
		key.query, key.args = query, argsKey(args)
		cache = len(key.query)+len(key.args) <= rowCacheKeyBytes
	}
	if cache {
		gen, err := f.gen(ctx, t)
		// A file whose tables this version has not ensured yet has no generations: its
		// counts are not kept.
		cache = err == nil && gen.Valid
		if cache {
			key.gen = gen.Int64
			if vals, ok := f.rows.Get(key); ok {
				return slices.Clone(vals), nil
			}
			query = "SELECT " + genExpr(t) + ", " + strings.TrimPrefix(query, "SELECT ")
		}
	}
	stmt, err := f.stmt(ctx, false, query)
	if err != nil {
		return nil, err
	}
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(names))
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, sql.ErrNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if !cache {
		return vals, nil
	}
	// The table may have been dropped since the generation was read: then it has none.
	if gen, ok := vals[0].(int64); ok {
		key.gen = gen
		f.rows.Add(key, slices.Clone(vals[1:]))
	}
	return vals[1:], nil
}

// gen reads t's generation.
func (f *sqliteFile) gen(ctx context.Context, t *Table) (sql.NullInt64, error) {
	var gen sql.NullInt64
	stmt, err := f.stmt(ctx, false, `SELECT `+genExpr(t))
	if err == nil {
		err = stmt.QueryRowContext(ctx).Scan(&gen)
	}
	return gen, err
}

// argsKey writes a statement's parameters with their types: SQLite compares the integer 1
// and the text '1' differently.
func argsKey(args []any) string {
	var b strings.Builder
	for _, a := range args {
		fmt.Fprintf(&b, "%T %#v\x00", a, a)
	}
	return b.String()
}
