package store

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Records reads and writes the records of one project's tables, one collection per table.
// Every condition a caller sets (where, access filters, uid) runs inside the database: nothing
// is filtered after reading.
type Records struct {
	db *mongo.Database
	// updating serializes the updates of one record in this process. MongoDB applies an
	// update atomically, but FerretDB (the embedded store) reads the document, changes it
	// and writes it back, so two updates of different fields of one record at the same time
	// could lose one of them. Striped by a hash of database, table and uid: a fixed set of
	// locks, shared by every Records of one Stores, so that two versions of a project's API
	// (before and after a definition change) still serialize on the same record.
	updating *updateLocks

	// FerretDB sorts in memory after reading every matching document, while it returns
	// unsorted documents in insertion order, which is uid order; lists without an order of
	// their own are then left unsorted. Found out with the first list.
	detect      sync.Once
	insertOrder bool
}

// updateLocks is a fixed set of mutexes, striped by record.
type updateLocks [64]sync.Mutex

// NewRecords serves the tables kept in db, with update locks of its own. A service that
// rebuilds a project's Records uses (*Stores).ProjectRecords instead, whose locks are shared.
func NewRecords(db *mongo.Database) *Records { return &Records{db: db, updating: new(updateLocks)} }

// ProjectRecords serves a project's tables (on its dedicated cluster when mongoURI is set).
func (s *Stores) ProjectRecords(ctx context.Context, projectID, mongoURI string) (*Records, error) {
	db, err := s.ProjectDatabase(ctx, projectID, mongoURI)
	if err != nil {
		return nil, err
	}
	return &Records{db: db, updating: s.updating}, nil
}

func (r *Records) updateLock(table, uid string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(r.db.Name()))
	h.Write([]byte{0})
	h.Write([]byte(table))
	h.Write([]byte{0})
	h.Write([]byte(uid))
	return &r.updating[h.Sum32()%uint32(len(r.updating))]
}

// Op is a comparison a Cond makes.
type Op string

// The comparisons. Contains matches strings holding Value (a string), case-sensitively; on a
// list field every comparison matches when one element matches, as MongoDB does.
const (
	Eq       Op = "eq"
	Ne       Op = "ne"
	Gt       Op = "gt"
	Gte      Op = "gte"
	Lt       Op = "lt"
	Lte      Op = "lte"
	In       Op = "in"
	Contains Op = "contains"
)

// Cond compares the stored value at Key with Value. Values have the Go types the driver
// stores (string, int32, float64, bool, time.Time); In takes a []any of them.
type Cond struct {
	Key   string
	Op    Op
	Value any
}

// Where is a condition tree: all of Conds and And, and at least one of Or when Or is not
// empty.
type Where struct {
	Conds []Cond
	And   []Where
	Or    []Where
}

// Order sorts by one key.
type Order struct {
	Key  string
	Desc bool
}

// Query selects records of a table.
type Query struct {
	UID    string // when set, only the record with this uid
	Where  *Where
	Access bson.D // an access filter ANDed with the rest
	Order  []Order
	Offset int64
	Limit  int64 // 0: no limit
}

// filter is the MongoDB filter for q.
func (q Query) filter() (bson.D, error) {
	var all bson.A
	if q.UID != "" {
		all = append(all, bson.D{{Key: KeyUID, Value: q.UID}})
	}
	if q.Where != nil {
		f, err := q.Where.filter()
		if err != nil {
			return nil, err
		}
		if len(f) > 0 {
			all = append(all, f)
		}
	}
	if len(q.Access) > 0 {
		all = append(all, q.Access)
	}
	switch len(all) {
	case 0:
		return bson.D{}, nil
	case 1:
		return all[0].(bson.D), nil
	}
	return bson.D{{Key: "$and", Value: all}}, nil
}

func (w *Where) filter() (bson.D, error) {
	var all bson.A
	for _, c := range w.Conds {
		f, err := c.filter()
		if err != nil {
			return nil, err
		}
		all = append(all, f)
	}
	for i := range w.And {
		f, err := w.And[i].filter()
		if err != nil {
			return nil, err
		}
		if len(f) > 0 {
			all = append(all, f)
		}
	}
	if len(w.Or) > 0 {
		var anyOf bson.A
		for i := range w.Or {
			f, err := w.Or[i].filter()
			if err != nil {
				return nil, err
			}
			anyOf = append(anyOf, f)
		}
		all = append(all, bson.D{{Key: "$or", Value: anyOf}})
	}
	switch len(all) {
	case 0:
		return nil, nil
	case 1:
		return all[0].(bson.D), nil
	}
	return bson.D{{Key: "$and", Value: all}}, nil
}

func (c Cond) filter() (bson.D, error) {
	var v any
	switch c.Op {
	case Eq:
		// Values are scalars, never documents that could be taken for operators, so the
		// bare value does; FerretDB reads by _id only with it.
		v = c.Value
	case Ne, Gt, Gte, Lt, Lte:
		v = bson.D{{Key: "$" + string(c.Op), Value: c.Value}}
	case In:
		list, ok := c.Value.([]any)
		if !ok {
			return nil, fmt.Errorf("%s in: want a list, got %T", c.Key, c.Value)
		}
		v = bson.D{{Key: "$in", Value: bson.A(list)}}
	case Contains:
		s, ok := c.Value.(string)
		if !ok {
			return nil, fmt.Errorf("%s contains: want a string, got %T", c.Key, c.Value)
		}
		v = bson.D{{Key: "$regex", Value: regexp.QuoteMeta(s)}}
	default:
		return nil, fmt.Errorf("%s: unknown comparison %q", c.Key, c.Op)
	}
	return bson.D{{Key: c.Key, Value: v}}, nil
}

// insertionOrdered reports whether the server returns unsorted documents in insertion order
// and sorts only in memory, as FerretDB does.
func (r *Records) insertionOrdered(ctx context.Context) bool {
	r.detect.Do(func() {
		var info bson.M
		err := r.db.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info)
		_, r.insertOrder = info["ferretdbVersion"]
		r.insertOrder = r.insertOrder && err == nil
	})
	return r.insertOrder
}

func (r *Records) findOptions(ctx context.Context, q Query) *options.FindOptionsBuilder {
	opts := options.Find()
	if q.Offset > 0 {
		opts.SetSkip(q.Offset)
	}
	if q.Limit > 0 {
		opts.SetLimit(q.Limit)
	}
	if q.UID != "" || (len(q.Order) == 0 && r.insertionOrdered(ctx)) {
		return opts
	}
	// The uid breaks ties, so that pages never overlap or skip records; uids are
	// time-ordered, so lists without an order come in creation order.
	sort := make(bson.D, 0, len(q.Order)+1)
	for _, o := range q.Order {
		dir := 1
		if o.Desc {
			dir = -1
		}
		sort = append(sort, bson.E{Key: o.Key, Value: dir})
		if o.Key == KeyUID {
			break
		}
	}
	if len(sort) == 0 || sort[len(sort)-1].Key != KeyUID {
		sort = append(sort, bson.E{Key: KeyUID, Value: 1})
	}
	return opts.SetSort(sort)
}

// Find decodes the records q selects into out, a pointer to a slice.
func (r *Records) Find(ctx context.Context, table string, q Query, out any) error {
	filter, err := q.filter()
	if err != nil {
		return err
	}
	opts := r.findOptions(ctx, q)
	if q.UID != "" {
		opts.SetLimit(1)
	}
	cur, err := r.db.Collection(table).Find(ctx, filter, opts)
	if err != nil {
		return fmt.Errorf("find %s: %w", table, err)
	}
	if err := cur.All(ctx, out); err != nil {
		return fmt.Errorf("read %s: %w", table, err)
	}
	return nil
}

// Each calls fn with each record q selects, in order, until fn answers false. It serves
// callers that must look at records one by one before deciding how many they need.
func (r *Records) Each(ctx context.Context, table string, q Query, fn func(bson.Raw) (bool, error)) error {
	filter, err := q.filter()
	if err != nil {
		return err
	}
	cur, err := r.db.Collection(table).Find(ctx, filter, r.findOptions(ctx, q))
	if err != nil {
		return fmt.Errorf("find %s: %w", table, err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	for cur.Next(ctx) {
		more, err := fn(cur.Current)
		if err != nil || !more {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("read %s: %w", table, err)
	}
	return nil
}

// Count counts the records q selects, ignoring its order, offset and limit.
func (r *Records) Count(ctx context.Context, table string, q Query) (int64, error) {
	filter, err := q.filter()
	if err != nil {
		return 0, err
	}
	n, err := r.db.Collection(table).CountDocuments(ctx, filter)
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", table, err)
	}
	return n, nil
}

// FindOne decodes a record q selects into out, ignoring q's order and paging: it serves
// lookups by uid. ErrNotFound when there is none.
func (r *Records) FindOne(ctx context.Context, table string, q Query, out any) error {
	filter, err := q.filter()
	if err != nil {
		return err
	}
	err = r.db.Collection(table).FindOne(ctx, filter).Decode(out)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("%s %q: %w", table, q.UID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("get %s %q: %w", table, q.UID, err)
	}
	return nil
}

// NewUID returns a new record identifier: a UUIDv7, so that identifiers sort in creation
// order.
func NewUID() (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("new uid: %w", err)
	}
	return id.String(), nil
}

// now is the time records are stamped with: MongoDB keeps milliseconds.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// Insert stores a new record with the given fields, a new uid, the owner and equal
// createdAt and updatedAt, and decodes the stored record into out.
func (r *Records) Insert(ctx context.Context, table, owner string, fields bson.D, out any) error {
	uid, err := NewUID()
	if err != nil {
		return err
	}
	t := now()
	doc := make(bson.D, 0, len(fields)+4)
	doc = append(doc, bson.E{Key: KeyUID, Value: uid})
	doc = append(doc, fields...)
	doc = append(doc,
		bson.E{Key: KeyOwner, Value: owner},
		bson.E{Key: KeyCreatedAt, Value: t},
		bson.E{Key: KeyUpdatedAt, Value: t})
	raw, err := bson.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode %s record: %w", table, err)
	}
	if _, err := r.db.Collection(table).InsertOne(ctx, bson.Raw(raw)); err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	if err := bson.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode %s record: %w", table, err)
	}
	return nil
}

// Update sets the given fields and removes the unset ones of the record with uid that also
// matches access, bumps its updatedAt, and decodes the updated record into out; ErrNotFound
// when no record matches. It is one findOneAndUpdate touching only the named fields, so
// concurrent updates of different fields of a record all take effect.
func (r *Records) Update(ctx context.Context, table, uid string, access bson.D, set bson.D, unset []string, out any) error {
	filter, err := Query{UID: uid, Access: access}.filter()
	if err != nil {
		return err
	}
	sets := make(bson.D, 0, len(set)+1)
	sets = append(sets, set...)
	sets = append(sets, bson.E{Key: KeyUpdatedAt, Value: now()})
	update := bson.D{{Key: "$set", Value: sets}}
	if len(unset) > 0 {
		u := make(bson.D, len(unset))
		for i, k := range unset {
			u[i] = bson.E{Key: k, Value: ""}
		}
		update = append(update, bson.E{Key: "$unset", Value: u})
	}
	mu := r.updateLock(table, uid)
	mu.Lock()
	defer mu.Unlock()
	err = r.db.Collection(table).FindOneAndUpdate(ctx, filter, update,
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(out)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return fmt.Errorf("%s %q: %w", table, uid, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("update %s %q: %w", table, uid, err)
	}
	return nil
}

// Delete removes the record with uid that also matches access; ErrNotFound when no record
// matches.
func (r *Records) Delete(ctx context.Context, table, uid string, access bson.D) error {
	filter, err := Query{UID: uid, Access: access}.filter()
	if err != nil {
		return err
	}
	res, err := r.db.Collection(table).DeleteOne(ctx, filter)
	if err != nil {
		return fmt.Errorf("delete %s %q: %w", table, uid, err)
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("%s %q: %w", table, uid, ErrNotFound)
	}
	return nil
}

// Exists reports whether a record with uid exists, whatever access filter applies; callers
// use it to tell a record they may not touch from one that is not there.
func (r *Records) Exists(ctx context.Context, table, uid string) (bool, error) {
	n, err := r.db.Collection(table).CountDocuments(ctx, bson.D{{Key: KeyUID, Value: uid}}, options.Count().SetLimit(1))
	if err != nil {
		return false, fmt.Errorf("look up %s %q: %w", table, uid, err)
	}
	return n > 0, nil
}
