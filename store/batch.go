package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// UpdateWhere sets and removes fields of every record f selects, stamps their updatedAt with
// one time, and answers the records after the change, in no particular order.
//
// On SQLite it is one statement in one transaction: every record changes or, when a unique
// index refuses one, none (a *ConflictError). On MongoDB it is an updateMany over the uids f
// selected a moment before (ANDed with f again, so a record that stopped matching is left
// alone); MongoDB has no rollback without a replica-set transaction, so a unique index that
// refuses one record stops the update there and the records updated before it keep the
// change.
func (r *Records) UpdateWhere(ctx context.Context, table string, f Filter, set map[string]any, unset []string) ([]Record, error) {
	t, err := r.table(table)
	if err != nil {
		return nil, err
	}
	if f.IsNone() {
		return nil, nil
	}
	if _, err := r.admitWrite(ctx, 0); err != nil {
		return nil, err
	}
	return r.b.updateWhere(ctx, t, f, set, unset, now())
}

// DeleteWhere removes every record f selects and answers their uids. On SQLite it is one
// statement; on MongoDB a deleteMany over the uids f selected a moment before, ANDed with f.
func (r *Records) DeleteWhere(ctx context.Context, table string, f Filter) ([]string, error) {
	t, err := r.table(table)
	if err != nil {
		return nil, err
	}
	if f.IsNone() {
		return nil, nil
	}
	uids, err := r.b.removeWhere(ctx, t, f)
	r.removed(int64(len(uids)))
	return uids, err
}

func (p *sqliteProject) updateWhere(ctx context.Context, t *Table, flt Filter, set map[string]any, unset []string, at time.Time) ([]Record, error) {
	f, release, err := p.file()
	if err != nil {
		return nil, err
	}
	defer release()
	var args []any
	build := func(cols columns) (query string, err error) {
		query, args, err = updateSQL(t, cols, flt, set, unset, at)
		return query, err
	}
	var recs []Record
	err = f.write(ctx, t, build, func(stmt *sql.Stmt) error {
		recs = recs[:0]
		rows, err := stmt.QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var rec Record
			if err := rows.Scan(recordScanner{&rec}); err != nil {
				return err
			}
			recs = append(recs, rec)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, updateFailed(ctx, t, err, set)
	}
	return recs, nil
}

func (p *sqliteProject) removeWhere(ctx context.Context, t *Table, flt Filter) ([]string, error) {
	f, cols, release, err := p.fileFor(ctx, t)
	if err != nil {
		return nil, err
	}
	defer release()
	c := sqlCompiler{t: t, cols: cols}
	where, err := c.where(flt)
	if err != nil {
		return nil, err
	}
	stmt, err := f.stmt(ctx, true, `DELETE FROM `+sqlTable(t)+` WHERE `+where+` RETURNING uid`)
	if err != nil {
		return nil, sqlFailed(ctx, "delete from "+t.Name, err)
	}
	rows, err := stmt.QueryContext(ctx, c.args...)
	if err != nil {
		return nil, sqlFailed(ctx, "delete from "+t.Name, err)
	}
	defer rows.Close()
	var uids []string
	for rows.Next() {
		var uid string
		if err := rows.Scan(&uid); err != nil {
			return nil, sqlFailed(ctx, "delete from "+t.Name, err)
		}
		uids = append(uids, uid)
	}
	if err := rows.Err(); err != nil {
		return nil, sqlFailed(ctx, "delete from "+t.Name, err)
	}
	return uids, nil
}

// uids answers the uids of the records f selects.
func (b *mongoBackend) uids(ctx context.Context, t *Table, f bson.D) (bson.A, error) {
	cur, err := b.db.Collection(t.Name).Find(ctx, f, options.Find().SetProjection(bson.D{{Key: mongoID, Value: 1}}))
	if err != nil {
		return nil, mongoFail(ctx, "find in "+t.Name, err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var uids bson.A
	for cur.Next(ctx) {
		uid, ok := cur.Current.Lookup(mongoID).StringValueOK()
		if !ok {
			return nil, fmt.Errorf("read %s: a record's _id is not a string", t.Name)
		}
		uids = append(uids, uid)
	}
	if err := cur.Err(); err != nil {
		return nil, mongoFail(ctx, "read "+t.Name, err)
	}
	return uids, nil
}

// selected is the filter of the records among uids that still match f.
func selected(uids bson.A, f bson.D) bson.D {
	return bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: mongoID, Value: bson.D{{Key: "$in", Value: uids}}}}, f}}}
}

// matching answers f as a MongoDB filter and the uids of the records it selects.
func (b *mongoBackend) matching(ctx context.Context, t *Table, f Filter) (bson.D, bson.A, error) {
	filter, err := mongoFilter(t, f)
	if err != nil {
		return nil, nil, err
	}
	uids, err := b.uids(ctx, t, filter)
	return filter, uids, err
}

func (b *mongoBackend) updateWhere(ctx context.Context, t *Table, f Filter, set map[string]any, unset []string, at time.Time) ([]Record, error) {
	filter, uids, err := b.matching(ctx, t, f)
	if err != nil || len(uids) == 0 {
		return nil, err
	}
	coll := b.db.Collection(t.Name)
	if _, err := coll.UpdateMany(ctx, selected(uids, filter), mongoUpdate(set, unset, at)); err != nil {
		if isDuplicate(err) {
			return nil, b.conflict(ctx, t, err, nil, "")
		}
		return nil, mongoFail(ctx, "update "+t.Name, err)
	}
	// The records this update stamped: those of uids with its time.
	var recs []Record
	err = b.find(ctx, t, Query{Filter: And(Compare(KeyUID, In, []any(uids)), Compare(KeyUpdatedAt, Eq, at))}, func(rec Record) (bool, error) {
		recs = append(recs, rec)
		return true, nil
	})
	return recs, err
}

func (b *mongoBackend) removeWhere(ctx context.Context, t *Table, f Filter) ([]string, error) {
	filter, uids, err := b.matching(ctx, t, f)
	if err != nil || len(uids) == 0 {
		return nil, err
	}
	if _, err := b.db.Collection(t.Name).DeleteMany(ctx, selected(uids, filter)); err != nil {
		return nil, mongoFail(ctx, "delete from "+t.Name, err)
	}
	// A record deleted by someone else between the two calls is reported too: it is gone
	// either way.
	out := make([]string, len(uids))
	for i, u := range uids {
		out[i] = u.(string)
	}
	return out, nil
}
