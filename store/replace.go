package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// stagingMark joins a table's name and the suffix of a table written for it beside it
// ("products~import"); no table name holds it.
const stagingMark = "~"

// ErrNotEmpty is a Replacement committed without replace over a table that holds records.
var ErrNotEmpty = errors.New("the table holds records")

// stagedTable is a table and the staging table of its new records.
type stagedTable struct{ table, staging *Table }

// Replacement writes new records for some tables of a project beside them, in staging
// tables the API does not read, and then puts them in place of the tables in one step
// (Commit) or drops them (Abort): a replacement that fails, or a process that dies half way,
// leaves the tables as they were. An import uses it.
type Replacement struct {
	r      *Records
	tables []stagedTable
	byName map[string]*Table // staging tables, by the name of the table they replace
}

// Replace starts replacing tables, each one of r's, with new records: it creates an empty
// staging table for each.
func (r *Records) Replace(ctx context.Context, tables []string) (*Replacement, error) {
	rp := &Replacement{r: r, byName: map[string]*Table{}}
	for _, name := range tables {
		t, err := r.table(name)
		if err != nil {
			return nil, err
		}
		st := *t
		st.Name = t.Name + stagingMark + "import"
		if err := r.b.stage(ctx, t, &st); err != nil {
			return nil, errors.Join(fmt.Errorf("stage %s: %w", name, err), rp.Abort(context.WithoutCancel(ctx)))
		}
		rp.tables = append(rp.tables, stagedTable{table: t, staging: &st})
		rp.byName[name] = &st
	}
	return rp, nil
}

// Import writes records exported by Export into table's staging table, as Records.Import
// writes them into the table: a uid written before is a *ConflictError, a record that is
// not one of the table a *RecordError.
func (rp *Replacement) Import(ctx context.Context, table string, recs []Record) error {
	st, ok := rp.byName[table]
	if !ok {
		return fmt.Errorf("store: table %q is not being replaced", table)
	}
	docs := make([]Doc, len(recs))
	for i, rec := range recs {
		var err error
		if docs[i], err = st.decodeDoc(rec); err != nil {
			return &RecordError{N: i + 1, Err: err}
		}
	}
	return rp.r.b.insert(ctx, st, docs)
}

// Commit puts every staged table in place of its table, with its declared indexes: on
// SQLite in one transaction; on MongoDB one renameCollection per table (see mongoBackend.swap).
// Unless replace is set, a table that holds records is an ErrNotEmpty. A unique index the
// new records break is an *IndexError. On any error the tables are as they were, and the
// staging tables are dropped.
func (rp *Replacement) Commit(ctx context.Context, replace bool) error {
	if err := rp.r.b.swap(ctx, rp.tables, replace); err != nil {
		return errors.Join(err, rp.Abort(context.WithoutCancel(ctx)))
	}
	return nil
}

// Abort drops the staging tables, leaving the tables as they were.
func (rp *Replacement) Abort(ctx context.Context) error {
	staging := make([]*Table, len(rp.tables))
	for i, s := range rp.tables {
		staging[i] = s.staging
	}
	return rp.r.b.unstage(ctx, staging)
}

// stage creates staging with a column for every field t declares and every column t has:
// a reader that still knows the columns of the table it replaces finds them all. It has no
// index but the unique uid; swap builds the declared ones.
func (p *sqliteProject) stage(ctx context.Context, t, staging *Table) error {
	return p.inWrite(ctx, false, func(tx *sql.Tx) error {
		for _, q := range []string{`DROP TABLE IF EXISTS ` + sqlTable(staging), createTable(sqlTable(staging))} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		cols, err := readColumns(ctx, tx, t)
		if err != nil {
			return err
		}
		for _, fld := range t.Fields {
			if !fld.Type.List && fld.Type.Scalar != JSON {
				cols[fld.Name] = true
			}
		}
		for _, name := range slices.Sorted(maps.Keys(cols)) {
			if _, err := tx.ExecContext(ctx, `ALTER TABLE `+sqlTable(staging)+` ADD COLUMN `+fieldColumn(name)); err != nil {
				return err
			}
		}
		return nil
	})
}

func (p *sqliteProject) unstage(ctx context.Context, staging []*Table) error {
	err := p.inWrite(ctx, false, func(tx *sql.Tx) error {
		for _, st := range staging {
			if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+sqlTable(st)); err != nil {
				return fmt.Errorf("drop %s: %w", st.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("drop staging tables: %w", err)
	}
	return nil
}

// swap drops each table and renames its staging table in its place, then builds its
// indexes, all in one transaction: readers see the old records until it commits, and the
// new ones from then on, in this process and in any other sharing the file (SQLite
// prepares their statements again when the schema changes).
func (p *sqliteProject) swap(ctx context.Context, tables []stagedTable, replace bool) error {
	err := p.inWrite(ctx, true, func(tx *sql.Tx) error {
		for _, s := range tables {
			if !replace {
				var n int64
				err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, sqlTablePrefix+s.table.Name).Scan(&n)
				if err == nil && n > 0 {
					err = tx.QueryRowContext(ctx, `SELECT count(*) FROM `+sqlTable(s.table)).Scan(&n)
					if err == nil && n > 0 {
						return fmt.Errorf("%s holds %d records: %w", s.table.Name, n, ErrNotEmpty)
					}
				}
				if err != nil {
					return fmt.Errorf("count %s: %w", s.table.Name, err)
				}
			}
			for _, q := range []string{
				`DROP TABLE IF EXISTS ` + sqlTable(s.table),
				`ALTER TABLE ` + sqlTable(s.staging) + ` RENAME TO ` + sqlTable(s.table),
			} {
				if _, err := tx.ExecContext(ctx, q); err != nil {
					return fmt.Errorf("swap %s: %w", s.table.Name, err)
				}
			}
			if err := ensureIn(ctx, tx, s.table); err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, ErrNotEmpty):
		return err
	case err != nil:
		return fmt.Errorf("swap tables: %w", err)
	}
	// A replaced table lost its search index's triggers: ensureIn made the index anew.
	for _, s := range tables {
		if err := p.fillSearch(ctx, s.table); err != nil {
			return err
		}
	}
	return nil
}

// stage creates staging with the indexes t declares, so that the records written into it
// are checked as they would be in t.
func (b *mongoBackend) stage(ctx context.Context, t, staging *Table) error {
	if err := b.unstage(ctx, []*Table{staging}); err != nil {
		return err
	}
	return b.ensure(ctx, staging)
}

func (b *mongoBackend) unstage(ctx context.Context, staging []*Table) error {
	for _, st := range staging {
		if err := b.db.Collection(st.Name).Drop(ctx); err != nil {
			return mongoFail(ctx, "drop "+st.Name, err)
		}
	}
	return nil
}

// swap renames each staging collection over its table with renameCollection and
// dropTarget: one atomic step per table on MongoDB, which keeps the indexes (their names do
// not name the table). Tables are swapped one after the other: a failure half way leaves
// the first ones new and the others as they were.
func (b *mongoBackend) swap(ctx context.Context, tables []stagedTable, replace bool) error {
	if !replace {
		for _, s := range tables {
			n, err := b.db.Collection(s.table.Name).EstimatedDocumentCount(ctx)
			if err == nil && n > 0 {
				n, err = b.db.Collection(s.table.Name).CountDocuments(ctx, bson.D{})
			}
			if err != nil {
				return mongoFail(ctx, "count "+s.table.Name, err)
			}
			if n > 0 {
				return fmt.Errorf("%s holds %d records: %w", s.table.Name, n, ErrNotEmpty)
			}
		}
	}
	for _, s := range tables {
		if err := b.rename(ctx, s.staging.Name, s.table.Name); err != nil {
			return err
		}
	}
	return nil
}

// rename renames collection from over to. FerretDB does not implement dropTarget
// (FerretDB#2565); there the table is renamed aside first and dropped after, and for the
// moment between the two renames it holds no records.
func (b *mongoBackend) rename(ctx context.Context, from, to string) error {
	admin := b.db.Client().Database("admin")
	cmd := func(from, to string, dropTarget bool) error {
		return admin.RunCommand(ctx, bson.D{
			{Key: "renameCollection", Value: b.db.Name() + "." + from},
			{Key: "to", Value: b.db.Name() + "." + to},
			{Key: "dropTarget", Value: dropTarget},
		}).Err()
	}
	err := cmd(from, to, true)
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 238 { // NotImplemented
		if err != nil {
			return mongoFail(ctx, fmt.Sprintf("rename %s to %s", from, to), err)
		}
		return nil
	}
	aside := to + stagingMark + "replaced"
	if err := b.db.Collection(aside).Drop(ctx); err != nil {
		return mongoFail(ctx, "drop "+aside, err)
	}
	if err := cmd(to, aside, false); err != nil && !(errors.As(err, &ce) && ce.Code == 26) { // NamespaceNotFound: no table yet
		return mongoFail(ctx, fmt.Sprintf("rename %s aside", to), err)
	}
	if err := cmd(from, to, false); err != nil {
		back := cmd(aside, to, false)
		if errors.As(back, &ce) && ce.Code == 26 {
			back = nil
		}
		return errors.Join(mongoFail(ctx, fmt.Sprintf("rename %s to %s", from, to), err), back)
	}
	if err := b.db.Collection(aside).Drop(ctx); err != nil {
		return mongoFail(ctx, "drop "+aside, err)
	}
	return nil
}

// RecordError is a record of an import that is not one of its table (not an object, no uid
// or createdAt, a value of the wrong type); N counts from 1 in its batch.
type RecordError struct {
	N   int
	Err error
}

func (e *RecordError) Error() string { return fmt.Sprintf("record %d: %v", e.N, e.Err) }
func (e *RecordError) Unwrap() error { return e.Err }
