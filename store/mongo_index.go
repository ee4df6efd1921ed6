package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Indexes the mongo backend manages are named for what they index, so that ensure finds
// them again: "idx_" and the fields joined by "_", then "_unique" for a unique index.
// Indexes of other names (made by an operator) are left alone.
const mongoIndexPrefix = "idx_"

func mongoIndexName(ix Index) string {
	name := mongoIndexPrefix + strings.Join(ix.Fields, "_")
	if ix.Unique {
		name += "_unique"
	}
	return name
}

// platformIndexes are the indexes every table has besides the unique uid (MongoDB's _id):
// createdAt, which lists without an order of their own use, and the owner, which owner
// rules filter on.
var platformIndexes = []Index{{Fields: []string{KeyCreatedAt}}, {Fields: []string{KeyOwner}}}

// wantedIndexes are the indexes t declares and the platform's own, by name (a declared index
// on createdAt or _owner is the platform's).
func wantedIndexes(t *Table) map[string]Index {
	want := make(map[string]Index, len(t.Indexes)+len(platformIndexes))
	for _, ix := range append(slices.Clone(t.Indexes), platformIndexes...) {
		want[mongoIndexName(ix)] = ix
	}
	return want
}

// mongoIndexKeys are the keys of ix: its fields, then, unless it is unique, _id. Records
// come in order of their keys, then uid in the direction of the last key (NormalOrder), so
// with _id in the index MongoDB reads an order, and a keyset page's $or branches, straight
// from the index (forwards or backwards) instead of sorting what the filter selects; an
// owner's records in uid order, the default, come from idx__owner alone.
func mongoIndexKeys(ix Index) bson.D {
	keys := make(bson.D, 0, len(ix.Fields)+1)
	for _, f := range ix.Fields {
		keys = append(keys, bson.E{Key: mongoKey(f), Value: int32(1)})
	}
	if !ix.Unique && !slices.Contains(ix.Fields, KeyUID) {
		keys = append(keys, bson.E{Key: mongoID, Value: int32(1)})
	}
	return keys
}

// ensure creates the collection and the indexes t wants, then drops the platform's indexes
// it no longer wants: a unique index that the records break fails before anything is
// dropped, and the table keeps its indexes as they were.
func (b *mongoBackend) ensure(ctx context.Context, t *Table) error {
	err := b.db.CreateCollection(ctx, t.Name)
	var ce mongo.CommandError
	if err != nil && !(errors.As(err, &ce) && ce.Code == 48) { // NamespaceExists
		return mongoFail(ctx, "create table "+t.Name, err)
	}
	coll := b.db.Collection(t.Name)
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		return mongoFail(ctx, "list the indexes of "+t.Name, err)
	}
	want := wantedIndexes(t)
	have := make(map[string]bool, len(specs))
	for _, s := range specs {
		ix, ok := want[s.Name]
		if ok && !sameIndex(s, ix) {
			// Made under the platform's name with other keys (by hand, or by a version
			// that indexed otherwise): made again as this version wants it.
			if err := coll.Indexes().DropOne(ctx, s.Name); err != nil {
				return mongoFail(ctx, fmt.Sprintf("drop index %s of %s", s.Name, t.Name), err)
			}
			continue
		}
		have[s.Name] = ok
	}
	var created []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if have[name] {
			continue
		}
		ix := want[name]
		err := b.createIndex(ctx, coll, name, ix)
		if err != nil {
			err = b.indexError(ctx, t, ix, err)
			// The table keeps the indexes it had.
			for _, name := range created {
				_ = coll.Indexes().DropOne(context.WithoutCancel(ctx), name)
			}
			return err
		}
		created = append(created, name)
	}
	for _, s := range specs {
		if _, ok := want[s.Name]; ok || !strings.HasPrefix(s.Name, mongoIndexPrefix) {
			continue
		}
		if err := coll.Indexes().DropOne(ctx, s.Name); err != nil {
			return mongoFail(ctx, fmt.Sprintf("drop index %s of %s", s.Name, t.Name), err)
		}
	}
	return nil
}

// sameIndex reports whether the index s has the keys and uniqueness ix wants.
func sameIndex(s mongo.IndexSpecification, ix Index) bool {
	if (s.Unique != nil && *s.Unique) != ix.Unique {
		return false
	}
	have, err := s.KeysDocument.Elements()
	want := mongoIndexKeys(ix)
	if err != nil || len(have) != len(want) {
		return false
	}
	for i, e := range have {
		// A direction comes back as an int32, an int64 or a double.
		dir, ok := e.Value().AsFloat64OK()
		if e.Key() != want[i].Key || !ok || dir != 1 {
			return false
		}
	}
	return true
}

// createIndex creates ix. A unique index holds only the records that have every one of
// its fields, as in SQL, where NULLs are distinct: records without the field do not collide
// (MongoDB would index them as null, and take two for duplicates). FerretDB, whose unique
// indexes already leave missing values out, does not implement partial indexes; there the
// plain unique index does.
func (b *mongoBackend) createIndex(ctx context.Context, coll *mongo.Collection, name string, ix Index) error {
	opts := options.Index().SetName(name)
	if ix.Unique {
		opts.SetUnique(true).SetPartialFilterExpression(mongoPresent(ix.Fields))
	}
	_, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: mongoIndexKeys(ix), Options: opts})
	var ce mongo.CommandError
	if ix.Unique && errors.As(err, &ce) && ce.Code == 238 { // NotImplemented
		_, err = coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: mongoIndexKeys(ix), Options: options.Index().SetName(name).SetUnique(true)})
	}
	return err
}

// mongoPresent matches the records that have every one of fields.
func mongoPresent(fields []string) bson.D {
	d := make(bson.D, len(fields))
	for i, f := range fields {
		d[i] = bson.E{Key: mongoKey(f), Value: bson.D{{Key: "$exists", Value: true}}}
	}
	return d
}

// indexError explains why index ix could not be built: for a unique one, by a value that
// more than one record has.
func (b *mongoBackend) indexError(ctx context.Context, t *Table, ix Index, err error) error {
	ie := &IndexError{Table: t.Name, Index: ix, Err: mongoFail(ctx, "create index "+mongoIndexName(ix), err)}
	if !ix.Unique || ctx.Err() != nil {
		return ie
	}
	if vals, derr := b.duplicate(ctx, t, ix); derr == nil {
		ie.Value = vals
	}
	return ie
}

// duplicate is a value of ix's fields that more than one record of t has; nil when none.
func (b *mongoBackend) duplicate(ctx context.Context, t *Table, ix Index) ([]any, error) {
	group := make(bson.D, len(ix.Fields))
	for i, f := range ix.Fields {
		group[i] = bson.E{Key: fmt.Sprintf("k%d", i), Value: "$" + mongoKey(f)}
	}
	cur, err := b.db.Collection(t.Name).Aggregate(ctx, bson.A{
		bson.D{{Key: "$match", Value: mongoPresent(ix.Fields)}},
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: group}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		bson.D{{Key: "$match", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$gt", Value: 1}}}}}},
		bson.D{{Key: "$limit", Value: 1}},
	})
	if err != nil {
		return nil, mongoFail(ctx, "find duplicates in "+t.Name, err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	if !cur.Next(ctx) {
		return nil, cur.Err()
	}
	key, ok := cur.Current.Lookup("_id").DocumentOK()
	if !ok {
		return nil, nil
	}
	vals := make([]any, len(ix.Fields))
	for i := range ix.Fields {
		vals[i] = goValue(key.Lookup(fmt.Sprintf("k%d", i)))
	}
	return vals, nil
}

// conflict turns a duplicate key error into a *ConflictError naming the unique index the
// write breaks. MongoDB names it in the error (keyPattern, keyValue); FerretDB does not, and
// then the index is the one on which a record of rows (the records as the write would have
// left them, with their uid) has the values of another one: of another of rows, or of a
// stored record other than self.
func (b *mongoBackend) conflict(ctx context.Context, t *Table, err error, rows []map[string]any, self string) error {
	ce := &ConflictError{Table: t.Name}
	if fields, values, ok := duplicateKey(err); ok {
		ce.Fields, ce.Value = fields, values
		return ce
	}
	uniques := []Index{{Fields: []string{KeyUID}, Unique: true}}
	for _, ix := range t.Indexes {
		if ix.Unique {
			uniques = append(uniques, ix)
		}
	}
	for _, ix := range uniques {
		seen := map[string]bool{}
		for _, row := range rows {
			vals := make([]any, len(ix.Fields))
			filter := make(bson.D, 0, len(ix.Fields)+1)
			for i, f := range ix.Fields {
				vals[i] = row[f]
				filter = append(filter, bson.E{Key: mongoKey(f), Value: vals[i]})
			}
			if slices.Contains(vals, nil) {
				continue // a unique index leaves the record out
			}
			if self != "" {
				filter = append(filter, bson.E{Key: mongoID, Value: bson.D{{Key: "$ne", Value: self}}})
			}
			key := fmt.Sprintf("%#v", vals)
			n, cerr := b.db.Collection(t.Name).CountDocuments(ctx, filter, options.Count().SetLimit(1))
			if seen[key] || cerr == nil && n > 0 {
				ce.Fields, ce.Value = ix.Fields, vals
				return ce
			}
			seen[key] = true
		}
	}
	return ce
}

// duplicateKey reads the index keys and values a duplicate key error names, as MongoDB
// reports them (keyPattern and keyValue, in the write error or the command's reply).
func duplicateKey(err error) (fields []string, values []any, ok bool) {
	var raws []bson.Raw
	var we mongo.WriteException
	if errors.As(err, &we) {
		for _, e := range we.WriteErrors {
			raws = append(raws, e.Raw)
		}
	}
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) {
		for _, e := range bwe.WriteErrors {
			raws = append(raws, e.Raw)
		}
	}
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		raws = append(raws, ce.Raw)
	}
	for _, raw := range raws {
		pattern, ok := raw.Lookup("keyPattern").DocumentOK()
		if !ok {
			continue
		}
		keyValue, _ := raw.Lookup("keyValue").DocumentOK()
		elems, err := pattern.Elements()
		if err != nil || len(elems) == 0 {
			continue
		}
		for _, e := range elems {
			k := e.Key()
			if k == mongoID {
				k = KeyUID
			}
			fields = append(fields, k)
			values = append(values, goValue(keyValue.Lookup(e.Key())))
		}
		return fields, values, true
	}
	return nil, nil, false
}
