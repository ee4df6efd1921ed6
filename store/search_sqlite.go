package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"modernc.org/sqlite"
)

// The embedded backend's full-text search: the table T that declares a Search has an FTS5
// table "s_T" over the columns of the searched fields, external content (it keeps the index,
// not the text, which it reads from t_T's columns when it highlights). Triggers on t_T keep
// it in step with every write, in the write's transaction. The bookkeeping table
// platform_search says, for each such table, which Search the index was built for
// (signature) and how far it is built: the rows up to rowid done are indexed. A declaration
// creates the index empty, with done 0, and fillSearch indexes the rows in pages of
// searchPage, one write transaction a page, so that writes go on between pages: the
// triggers index a write to a row the build has passed, and leave the others to the build.
// A build completes by setting done to the largest rowid, and the triggers then index every
// write.

const (
	searchPrefix = "s_"
	// searchPage is how many rows one transaction of a build indexes, and so how long the
	// build holds the write lock at a time: 13 ms for rows of 44 words (docs/performance.md).
	searchPage = 500
	// searchRank is the SQL of a record's rank in a ranked query (searchFindSQL).
	searchRank = "hit.score"
	// searchSnippet is how many words a highlight shows around the matches.
	searchSnippet = 32
	// searchDone is done once a build has indexed every row.
	searchDone = math.MaxInt64
	// searchTokenizer folds case and diacritics and stems English words (Porter).
	searchTokenizer = "porter unicode61 remove_diacritics 2"
)

func searchTable(t *Table) string { return quoteIdent(searchPrefix + t.Name) }

// searchTriggers are the names of the triggers that keep t's index in step.
func searchTriggers(t *Table) []string {
	return []string{"search:" + t.Name + ":insert", "search:" + t.Name + ":delete", "search:" + t.Name + ":update"}
}

// searchColumns are the columns the index holds, in its order.
func searchColumns(t *Table) []string {
	cols := make([]string, len(t.Search.Fields))
	for i, f := range t.Search.Fields {
		cols[i] = fieldColumn(f.Name)
	}
	return cols
}

// ensureSearchIn makes t's full-text index the one its Search declares, in the write
// transaction tx: it drops the index of a table that declares none, and creates an empty one
// (for fillSearch to build) where the declaration changed or where the triggers are gone,
// which a replaced table (swap) loses with the table it replaces.
func ensureSearchIn(ctx context.Context, tx *sql.Tx, t *Table) error {
	triggers := searchTriggers(t)
	var have int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name IN (?, ?, ?)`,
		triggers[0], triggers[1], triggers[2]).Scan(&have); err != nil {
		return fmt.Errorf("search index of %s: %w", t.Name, err)
	}
	signature, err := searchSignature(ctx, tx, t)
	if err != nil {
		return fmt.Errorf("search index of %s: %w", t.Name, err)
	}
	if t.Search != nil && have == len(triggers) && signature == t.Search.signature() {
		return nil
	}
	drop := []string{`DROP TABLE IF EXISTS ` + searchTable(t)}
	for _, name := range triggers {
		drop = append(drop, `DROP TRIGGER IF EXISTS `+quoteIdent(name))
	}
	if signature != "" {
		drop = append(drop, `DELETE FROM platform_search WHERE tbl = `+quoteString(t.Name))
	}
	if t.Search == nil {
		return execAll(ctx, tx, "drop the search index of "+t.Name, drop)
	}
	cols := strings.Join(searchColumns(t), ", ")
	var olds, news []string
	for _, c := range searchColumns(t) {
		olds = append(olds, "old."+c)
		news = append(news, "new."+c)
	}
	fts, table := searchTable(t), sqlTable(t)
	built := `(SELECT done FROM platform_search WHERE tbl = ` + quoteString(t.Name) + `)`
	insert := `INSERT INTO ` + fts + ` (rowid, ` + cols + `) VALUES (new.rowid, ` + strings.Join(news, ", ") + `);`
	remove := `INSERT INTO ` + fts + ` (` + fts + `, rowid, ` + cols + `) VALUES ('delete', old.rowid, ` + strings.Join(olds, ", ") + `);`
	create := append(drop,
		`CREATE TABLE IF NOT EXISTS platform_search (tbl TEXT NOT NULL PRIMARY KEY, signature TEXT NOT NULL, done INTEGER NOT NULL)`,
		`INSERT INTO platform_search (tbl, signature, done) VALUES (`+quoteString(t.Name)+`, `+quoteString(t.Search.signature())+`, 0)`,
		`CREATE VIRTUAL TABLE `+fts+` USING fts5(`+cols+`, content=`+quoteString(sqlTablePrefix+t.Name)+`, tokenize=`+quoteString(searchTokenizer)+`)`,
		`CREATE TRIGGER `+quoteIdent(triggers[0])+` AFTER INSERT ON `+table+` WHEN new.rowid <= `+built+` BEGIN `+insert+` END`,
		`CREATE TRIGGER `+quoteIdent(triggers[1])+` AFTER DELETE ON `+table+` WHEN old.rowid <= `+built+` BEGIN `+remove+` END`,
		`CREATE TRIGGER `+quoteIdent(triggers[2])+` AFTER UPDATE OF `+cols+` ON `+table+` WHEN old.rowid <= `+built+` BEGIN `+remove+` `+insert+` END`,
	)
	return execAll(ctx, tx, "create the search index of "+t.Name, create)
}

func execAll(ctx context.Context, tx *sql.Tx, what string, stmts []string) error {
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

// fillSearch builds t's index up to its last row, a page a transaction (see above). Several
// processes may build it at once: each page continues from the done the last one left.
func (p *sqliteProject) fillSearch(ctx context.Context, t *Table) error {
	if t.Search == nil {
		return nil
	}
	cols := strings.Join(searchColumns(t), ", ")
	page := `INSERT INTO ` + searchTable(t) + ` (rowid, ` + cols + `) SELECT rowid, ` + cols + ` FROM ` + sqlTable(t) +
		` WHERE rowid > ?1 ORDER BY rowid LIMIT ` + strconv.Itoa(searchPage)
	for {
		finished := false
		err := p.inWrite(ctx, false, func(tx *sql.Tx) error {
			var done int64
			if err := tx.QueryRowContext(ctx, `SELECT done FROM platform_search WHERE tbl = ?`, t.Name).Scan(&done); err != nil {
				return err
			}
			if done == searchDone {
				finished = true
				return nil
			}
			var last sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT max(rowid) FROM (SELECT rowid FROM `+sqlTable(t)+` WHERE rowid > ? ORDER BY rowid LIMIT `+strconv.Itoa(searchPage)+`)`, done).Scan(&last); err != nil {
				return err
			}
			next := int64(searchDone)
			if last.Valid {
				if _, err := tx.ExecContext(ctx, page, done); err != nil {
					return err
				}
				next = last.Int64
			}
			// A search matches more records now: a count that used it is not kept.
			if err := bumpGen(ctx, tx, t); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `UPDATE platform_search SET done = ? WHERE tbl = ?`, next, t.Name)
			return err
		})
		if err != nil {
			return sqlFailed(ctx, "build the search index of "+t.Name, err)
		}
		if finished {
			return nil
		}
	}
}

// searchSignature is the signature of the Search t's index was built for; "" for none.
func searchSignature(ctx context.Context, tx *sql.Tx, t *Table) (string, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'platform_search'`).Scan(&n); err != nil || n == 0 {
		return "", err
	}
	var signature string
	err := tx.QueryRowContext(ctx, `SELECT signature FROM platform_search WHERE tbl = ?`, t.Name).Scan(&signature)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return signature, err
}

// dropSearchIn removes t's index with t (its triggers go with the table).
func dropSearchIn(ctx context.Context, tx *sql.Tx, t *Table) error {
	signature, err := searchSignature(ctx, tx, t)
	if err != nil {
		return fmt.Errorf("drop the search index of %s: %w", t.Name, err)
	}
	stmts := []string{`DROP TABLE IF EXISTS ` + searchTable(t)}
	if signature != "" {
		stmts = append(stmts, `DELETE FROM platform_search WHERE tbl = `+quoteString(t.Name))
	}
	return execAll(ctx, tx, "drop the search index of "+t.Name, stmts)
}

// search compiles a Matches that is not a ranked query's own (searchFindSQL): the rows the
// index matches.
func (c *sqlCompiler) search(q searchQuery) (sqlCond, error) {
	if c.t.Search == nil {
		return sqlCond{}, fmt.Errorf("search %s: %w", c.t.Name, ErrNoSearch)
	}
	fts := searchTable(c.t)
	return sqlCond{sql: sqlTable(c.t) + ".rowid IN (SELECT rowid FROM " + fts + " WHERE " + fts + " MATCH " + c.arg(q.fts5()) + ")"}, nil
}

// searchFindSQL is findSQL for a query with the top-level search sq, where the rest of its
// condition with args, its parameters then the LIMIT's and OFFSET's: the index's matches,
// with their rank (bm25, with the declared weights), joined with the rows where selects,
// ordered and paged on the rows' columns and the rank; then each chosen row's record with
// its rank under KeyRank and, when asked, its highlights under KeyHighlights (computed for
// the chosen rows only).
func searchFindSQL(t *Table, cols columns, q Query, sq searchQuery, where string, args []any) (string, []any, error) {
	if t.Search == nil {
		return "", nil, fmt.Errorf("search %s: %w", t.Name, ErrNoSearch)
	}
	fts, table := searchTable(t), sqlTable(t)
	match := sq.fts5()
	weights := make([]string, len(t.Search.Fields))
	for i, f := range t.Search.Fields {
		weights[i] = strconv.FormatFloat(f.Weight, 'g', -1, 64)
	}
	// Parameters in the order of the text: the highlights' match, the ranked match, args.
	var params []any
	record := `json_set(r.data, '$.` + KeyRank + `', chosen.score`
	if sq.highlight {
		pairs := make([]string, len(t.Search.Fields))
		for i, f := range t.Search.Fields {
			pairs[i] = quoteString(f.Name) + `, platform_highlight(snippet(` + fts + `, ` + strconv.Itoa(i) + `, char(57344), char(57345), '…', ` + strconv.Itoa(searchSnippet) + `))`
		}
		record += `, '$.` + KeyHighlights + `', json((SELECT json_object(` + strings.Join(pairs, ", ") + `) FROM ` + fts + ` WHERE ` + fts + ` MATCH ? AND rowid = r.rowid))`
		params = append(params, match)
	}
	record += `)`
	query := `SELECT CAST(` + record + ` AS BLOB) FROM (SELECT ` + table + `.rowid AS id, ` + searchRank + ` AS score FROM (SELECT rowid AS id, bm25(` + fts + `, ` + strings.Join(weights, ", ") + `) AS score FROM ` + fts + ` WHERE ` + fts + ` MATCH ?) AS hit CROSS JOIN ` + table + ` ON ` + table + `.rowid = hit.id WHERE ` + where + orderBy(q.Order, cols) +
		` LIMIT ? OFFSET ?) AS chosen CROSS JOIN ` + table + ` AS r ON r.rowid = chosen.id`
	return query, append(append(params, match), args...), nil
}

func init() {
	// A snippet of the index, with the matches between U+E000 and U+E001: HTML-escaped,
	// with the marks as HTML; NULL when the field has no match.
	sqlite.MustRegisterDeterministicScalarFunction("platform_highlight", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		s, ok := args[0].(string)
		if !ok || !strings.ContainsRune(s, '\uE000') {
			return nil, nil
		}
		return strings.NewReplacer("\uE000", HighlightStart, "\uE001", HighlightEnd).Replace(html.EscapeString(s)), nil
	})
}
