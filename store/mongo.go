package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
)

// ControlDatabase is the MongoDB database that holds the project registry.
const ControlDatabase = "platform"

// mongoDatabases keeps the service's data in MongoDB (or anything that speaks its protocol,
// such as FerretDB): the control database ControlDatabase, and a database per project,
// ProjectDatabaseName, on the main cluster or on the project's own.
//
// Request deadlines reach the server: the driver sends every command whose context has a
// deadline with maxTimeMS set to the time left, so the server stops a query the request no
// longer waits for. Finds go through RunCommandCursor for that reason: Collection.Find
// leaves maxTimeMS out (DRIVERS-2722), and its cursor would keep the server busy after the
// request timed out.
type mongoDatabases struct {
	client *mongo.Client
	// updating is shared by every project's backend, see mongoBackend.update.
	updating *updateLocks

	mu      sync.Mutex
	clients map[string]*mongo.Client // dedicated clusters, by URI
}

// openMongo connects to the MongoDB at uri.
func openMongo(ctx context.Context, uri string) (*mongoDatabases, error) {
	c, err := connectMongo(ctx, uri)
	if err != nil {
		return nil, err
	}
	if err := ensureOperatorIndexes(ctx, c); err != nil {
		_ = c.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	if err := createUsageIndex(ctx, c); err != nil {
		_ = c.Disconnect(context.WithoutCancel(ctx))
		return nil, err
	}
	return &mongoDatabases{client: c, updating: new(updateLocks), clients: map[string]*mongo.Client{}}, nil
}

func connectMongo(ctx context.Context, uri string) (*mongo.Client, error) {
	// The URI's own options (serverSelectionTimeoutMS, ...) override these defaults.
	c, err := mongo.Connect(options.Client().SetServerSelectionTimeout(10 * time.Second).ApplyURI(uri))
	if err != nil {
		return nil, fmt.Errorf("connect mongodb: %w", err)
	}
	if err := c.Ping(ctx, readpref.Primary()); err != nil {
		_ = c.Disconnect(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("ping mongodb: %w", err)
	}
	return c, nil
}

func (m *mongoDatabases) projects() projectsBackend {
	db := m.client.Database(ControlDatabase)
	return mongoProjects{coll: db.Collection("projects"), history: db.Collection("project_versions"), quota: db.Collection("project_quotas"), docs: db.Collection("project_documents")}
}

// project serves a project's database. Clients of dedicated clusters are opened once and
// shared.
func (m *mongoDatabases) project(ctx context.Context, projectID, mongoURI string) (backend, error) {
	c := m.client
	if mongoURI != "" {
		m.mu.Lock()
		c = m.clients[mongoURI]
		m.mu.Unlock()
		if c == nil {
			nc, err := connectMongo(ctx, mongoURI)
			if err != nil {
				return nil, fmt.Errorf("project %q: %w", projectID, err)
			}
			m.mu.Lock()
			if c = m.clients[mongoURI]; c == nil {
				c = nc
				m.clients[mongoURI] = nc
			}
			m.mu.Unlock()
			if c != nc {
				_ = nc.Disconnect(ctx)
			}
		}
	}
	return &mongoBackend{db: c.Database(ProjectDatabaseName(projectID)), updating: m.updating}, nil
}

func (m *mongoDatabases) ping(ctx context.Context) error {
	if err := m.client.Ping(ctx, readpref.Primary()); err != nil {
		return fmt.Errorf("ping mongodb: %w", err)
	}
	return nil
}

func (m *mongoDatabases) close(ctx context.Context) error {
	var errs []error
	m.mu.Lock()
	for uri, c := range m.clients {
		errs = append(errs, c.Disconnect(ctx))
		delete(m.clients, uri)
	}
	m.mu.Unlock()
	errs = append(errs, m.client.Disconnect(ctx))
	return errors.Join(errs...)
}

// ProjectDatabaseName is the MongoDB database that holds a project's tables.
func ProjectDatabaseName(projectID string) string { return "p_" + projectID }

// mongoBackend keeps a project's tables as collections of one database.
type mongoBackend struct {
	db *mongo.Database
	// updating serializes the updates of one record in this process. MongoDB applies an
	// update atomically, but FerretDB reads the document, changes it and writes it back,
	// so two updates of different fields of one record at the same time could lose one of
	// them. Striped by a hash of database, table and uid: a fixed set of locks, shared by
	// every backend of one Stores, so that two versions of a project's API (before and
	// after a definition change) still serialize on the same record.
	updating *updateLocks
}

// updateLocks is a fixed set of mutexes, striped by record.
type updateLocks [64]sync.Mutex

func (b *mongoBackend) updateLock(table, uid string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(b.db.Name()))
	h.Write([]byte{0})
	h.Write([]byte(table))
	h.Write([]byte{0})
	h.Write([]byte(uid))
	return &b.updating[h.Sum32()%uint32(len(b.updating))]
}

// Batches of a find: the first is small, so that a query for a few large records does not
// buffer megabytes it may not use; the next ones hold about batchBytes of records.
const (
	firstBatch = 16
	batchBytes = 1 << 20
	maxBatch   = 10000
)

func (b *mongoBackend) find(ctx context.Context, t *Table, q Query, fn func(Record) (bool, error)) error {
	where := q.Where()
	if where.IsNone() {
		return nil
	}
	filter, err := mongoFilter(t, where)
	if err != nil {
		return err
	}
	cmd := bson.D{{Key: "find", Value: t.Name}, {Key: "filter", Value: filter}, {Key: "sort", Value: mongoSort(q.Order)}}
	if q.Offset > 0 {
		cmd = append(cmd, bson.E{Key: "skip", Value: q.Offset})
	}
	if q.Limit > 0 {
		cmd = append(cmd, bson.E{Key: "limit", Value: q.Limit})
	}
	first := int64(firstBatch)
	if q.Limit > 0 {
		first = min(first, q.Limit)
	}
	cmd = append(cmd, bson.E{Key: "batchSize", Value: int32(first)})
	cur, err := b.db.RunCommandCursor(ctx, cmd)
	if err != nil {
		return mongoFail(ctx, "find "+t.Name, err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	var n, size int64
	for cur.Next(ctx) {
		raw := cur.Current
		rec, err := appendRecord(make([]byte, 0, len(raw)+len(raw)/4+16), raw)
		if err != nil {
			return fmt.Errorf("read %s: %w", t.Name, err)
		}
		more, err := fn(Record(rec))
		if err != nil || !more {
			return err
		}
		n++
		size += int64(len(raw))
		if cur.RemainingBatchLength() == 0 {
			cur.SetBatchSize(int32(min(maxBatch, max(1, batchBytes*n/max(size, 1)))))
		}
	}
	if err := cur.Err(); err != nil {
		return mongoFail(ctx, "read "+t.Name, err)
	}
	return nil
}

func (b *mongoBackend) count(ctx context.Context, t *Table, f Filter) (int64, error) {
	if f.IsNone() {
		return 0, nil
	}
	filter, err := mongoFilter(t, f)
	if err != nil {
		return 0, err
	}
	n, err := b.db.Collection(t.Name).CountDocuments(ctx, filter)
	if err != nil {
		return 0, mongoFail(ctx, "count "+t.Name, err)
	}
	return n, nil
}

// estimate reads the count collStats answers: the collection's metadata on MongoDB and
// FerretDB alike, where FerretDB counts every document for EstimatedDocumentCount (as long
// as CountDocuments: 240 ms against 7 ms at 20,000 records).
func (b *mongoBackend) estimate(ctx context.Context, t *Table) (int64, error) {
	var st struct {
		Count float64 `bson:"count"`
	}
	err := b.db.RunCommand(ctx, bson.D{{Key: "collStats", Value: t.Name}}).Decode(&st)
	if ce, ok := errors.AsType[mongo.CommandError](err); ok && ce.Code == 26 { // NamespaceNotFound: no record yet
		return 0, nil
	}
	if err != nil {
		return 0, mongoFail(ctx, "estimate the count of "+t.Name, err)
	}
	return int64(st.Count), nil
}

// insert writes docs in one ordered insertMany. MongoDB writes the documents before the one
// that fails; those are removed again, so that a batch is written whole or not at all.
func (b *mongoBackend) insert(ctx context.Context, t *Table, docs []Doc) error {
	if len(docs) == 0 {
		return nil
	}
	all := make([]any, len(docs))
	for i, d := range docs {
		all[i] = mongoDoc(d)
	}
	coll := b.db.Collection(t.Name)
	_, err := coll.InsertMany(ctx, all)
	if err == nil {
		return nil
	}
	// The records before the one that failed were written. When the error does not say
	// which one (a timeout, a lost connection), any may have been: then only documents that
	// are exactly what this insert wrote (uid, owner, times) are removed, so that an import
	// never removes a record that was there before it.
	var undo bson.D
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && len(bwe.WriteErrors) > 0 && bwe.WriteConcernError == nil {
		uids := make(bson.A, bwe.WriteErrors[0].Index)
		for i := range uids {
			uids[i] = docs[i].UID
		}
		if len(uids) > 0 {
			undo = bson.D{{Key: mongoID, Value: bson.D{{Key: "$in", Value: uids}}}}
		}
	} else {
		mine := make(bson.A, len(docs))
		for i, d := range docs {
			mine[i] = mongoDoc(Doc{UID: d.UID, Owner: d.Owner, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt})
		}
		undo = bson.D{{Key: "$or", Value: mine}}
	}
	if undo != nil {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, derr := coll.DeleteMany(cleanup, undo); derr != nil {
			return fmt.Errorf("insert into %s: %w (and removing the records written before the failure: %w)", t.Name, err, derr)
		}
	}
	if isDuplicate(err) {
		// None of docs is stored now: a record with the values of one is another's.
		rows := make([]map[string]any, len(docs))
		for i, d := range docs {
			rows[i] = withUID(d.Fields, d.UID)
		}
		return b.conflict(ctx, t, err, rows, "")
	}
	return mongoFail(ctx, "insert into "+t.Name, err)
}

func withUID(fields map[string]any, uid string) map[string]any {
	m := make(map[string]any, len(fields)+1)
	for k, v := range fields {
		m[k] = v
	}
	m[KeyUID] = uid
	return m
}

func (b *mongoBackend) update(ctx context.Context, t *Table, uid string, f Filter, set map[string]any, unset []string, at time.Time) (Record, error) {
	filter, err := mongoFilter(t, And(Compare(KeyUID, Eq, uid), f))
	if err != nil {
		return nil, err
	}
	upd := mongoUpdate(set, unset, at)
	mu := b.updateLock(t.Name, uid)
	mu.Lock()
	defer mu.Unlock()
	raw, err := b.db.Collection(t.Name).FindOneAndUpdate(ctx, filter, upd,
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Raw()
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return nil, fmt.Errorf("%s %q: %w", t.Name, uid, ErrNotFound)
	case isDuplicate(err):
		// The record is as it was: the values it would have had are its own and set.
		cur, gerr := b.one(ctx, t, uid)
		if gerr != nil {
			return nil, fmt.Errorf("update %s %q: %w", t.Name, uid, err)
		}
		row := make(map[string]any, len(cur)+len(set))
		for k, v := range cur {
			row[k] = v
		}
		for k, v := range set {
			row[k] = v
		}
		for _, k := range unset {
			delete(row, k)
		}
		return nil, b.conflict(ctx, t, err, []map[string]any{row}, uid)
	case err != nil:
		return nil, mongoFail(ctx, fmt.Sprintf("update %s %q", t.Name, uid), err)
	}
	rec, err := appendRecord(make([]byte, 0, len(raw)+len(raw)/4+16), raw)
	if err != nil {
		return nil, fmt.Errorf("read %s %q: %w", t.Name, uid, err)
	}
	return rec, nil
}

// mongoUpdate is the update document that sets and removes fields and stamps updatedAt.
func mongoUpdate(set map[string]any, unset []string, at time.Time) bson.D {
	// A field set to nil is removed: a missing value and null are one, and a unique index
	// leaves out only records without the field.
	sets := make(bson.D, 0, len(set)+1)
	unset = slices.Clip(unset)
	for _, k := range sortedFieldKeys(set) {
		if set[k] == nil {
			unset = append(unset, k)
			continue
		}
		sets = append(sets, bson.E{Key: k, Value: set[k]})
	}
	sets = append(sets, bson.E{Key: KeyUpdatedAt, Value: at})
	upd := bson.D{{Key: "$set", Value: sets}}
	if len(unset) > 0 {
		u := make(bson.D, len(unset))
		for i, k := range unset {
			u[i] = bson.E{Key: k, Value: ""}
		}
		upd = append(upd, bson.E{Key: "$unset", Value: u})
	}
	return upd
}

// one reads the record uid as Values decodes it.
func (b *mongoBackend) one(ctx context.Context, t *Table, uid string) (map[string]any, error) {
	raw, err := b.db.Collection(t.Name).FindOne(ctx, bson.D{{Key: mongoID, Value: uid}}).Raw()
	if err != nil {
		return nil, err
	}
	rec, err := appendRecord(nil, raw)
	if err != nil {
		return nil, err
	}
	return t.Values(rec)
}

func (b *mongoBackend) remove(ctx context.Context, t *Table, uid string, f Filter) error {
	filter, err := mongoFilter(t, And(Compare(KeyUID, Eq, uid), f))
	if err != nil {
		return err
	}
	res, err := b.db.Collection(t.Name).DeleteOne(ctx, filter)
	if err != nil {
		return mongoFail(ctx, fmt.Sprintf("delete %s %q", t.Name, uid), err)
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("%s %q: %w", t.Name, uid, ErrNotFound)
	}
	return nil
}

func (b *mongoBackend) drop(ctx context.Context) error {
	if err := b.db.Drop(ctx); err != nil {
		return mongoFail(ctx, "drop database "+b.db.Name(), err)
	}
	return nil
}

func (b *mongoBackend) tables(ctx context.Context) ([]string, error) {
	names, err := b.db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return nil, mongoFail(ctx, "list the tables of "+b.db.Name(), err)
	}
	names = slices.DeleteFunc(names, func(n string) bool { return strings.HasPrefix(n, "system.") })
	slices.Sort(names)
	return names, nil
}

// isDuplicate reports whether err is a unique index's refusal. FerretDB answers a
// findAndModify that breaks one with an internal error carrying SQLite's message.
func isDuplicate(err error) bool {
	return mongo.IsDuplicateKeyError(err) || err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// mongoFail wraps err from the database. A request that ran out of time wraps its context's
// error (context.DeadlineExceeded when the server stopped the work at maxTimeMS first), so
// callers tell a timeout from a failure with errors.Is, on every backend.
func mongoFail(ctx context.Context, what string, err error) error {
	if cause := ctx.Err(); cause != nil {
		return fmt.Errorf("%s: %w (%w)", what, cause, err)
	}
	if mongo.IsTimeout(err) {
		return fmt.Errorf("%s: %w (%w)", what, context.DeadlineExceeded, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// rewrite sets fn's fields on each record with a compare-and-set on its updatedAt, in
// unordered batches; a record written meanwhile is read and converted again (see
// Records.Migrate). keep cannot undo what is written: it is not asked.
func (b *mongoBackend) rewrite(ctx context.Context, t *Table, _ []string, fn func(Record) (map[string]any, error), _ func() bool) error {
	coll := b.db.Collection(t.Name)
	type pending struct {
		uid string
		at  time.Time
		set map[string]any
	}
	// write applies a batch in one unordered bulk write and answers the uids to read again
	// when a concurrent write changed some of them meanwhile (those already rewritten convert
	// to what they hold, and are left alone).
	write := func(batch []pending) ([]any, error) {
		if len(batch) == 0 {
			return nil, nil
		}
		models := make([]mongo.WriteModel, len(batch))
		for i, p := range batch {
			sets := make(bson.D, 0, len(p.set))
			for _, k := range sortedFieldKeys(p.set) {
				sets = append(sets, bson.E{Key: k, Value: p.set[k]})
			}
			models[i] = mongo.NewUpdateOneModel().
				SetFilter(bson.D{{Key: mongoID, Value: p.uid}, {Key: KeyUpdatedAt, Value: p.at}}).
				SetUpdate(bson.D{{Key: "$set", Value: sets}})
		}
		res, err := coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		if err != nil {
			return nil, mongoFail(ctx, "migrate "+t.Name, err)
		}
		if res.MatchedCount == int64(len(batch)) {
			return nil, nil
		}
		missed := make([]any, len(batch))
		for i, p := range batch {
			missed[i] = p.uid
		}
		return missed, nil
	}
	// read converts the records filter selects, in batches of migratePage.
	read := func(filter Filter) ([]any, error) {
		var batch []pending
		var missed []any
		flush := func() error {
			m, err := write(batch)
			missed = append(missed, m...)
			batch = batch[:0]
			return err
		}
		err := b.find(ctx, t, Query{Filter: filter}, func(rec Record) (bool, error) {
			set, err := fn(rec)
			if err != nil || set == nil {
				return err == nil, err
			}
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(rec, &raw); err != nil {
				return false, err
			}
			var uid string
			_ = json.Unmarshal(raw[KeyUID], &uid)
			at, ok := recordTime(raw[KeyUpdatedAt])
			if !ok {
				return false, fmt.Errorf("migrate %s record %q: no updatedAt", t.Name, uid)
			}
			batch = append(batch, pending{uid, at, set})
			if len(batch) < migratePage {
				return true, nil
			}
			return true, flush()
		})
		if err == nil {
			err = flush()
		}
		return missed, err
	}
	missed, err := read(All)
	for try := 0; err == nil && len(missed) > 0; try++ {
		if try == 5 {
			return fmt.Errorf("migrate %s: %d records kept changing", t.Name, len(missed))
		}
		missed, err = read(Compare(KeyUID, In, missed))
	}
	return err
}

func (b *mongoBackend) dropTable(ctx context.Context, t *Table) error {
	if err := b.db.Collection(t.Name).Drop(ctx); err != nil {
		return mongoFail(ctx, "drop table "+t.Name, err)
	}
	return nil
}

func (b *mongoBackend) size(ctx context.Context) (int64, error) {
	var st struct {
		DataSize  float64 `bson:"dataSize"`
		IndexSize float64 `bson:"indexSize"`
	}
	if err := b.db.RunCommand(ctx, bson.D{{Key: "dbStats", Value: 1}}).Decode(&st); err != nil {
		return 0, mongoFail(ctx, "size of "+b.db.Name(), err)
	}
	return int64(st.DataSize + st.IndexSize), nil
}
