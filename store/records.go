package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Record is one stored record as a JSON object: "uid", "_owner", "createdAt" and "updatedAt"
// (RFC 3339, UTC, milliseconds, see TimeLayout) and each field that is set. Both backends
// answer records in this form, so callers decode them once, whatever the database.
type Record []byte

// TimeLayout is how records write times; in UTC it sorts as the times do.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Doc is a record to write: the keys the service keeps, and the fields with values of the
// Go types a Filter uses (string, int64, float64, bool, time.Time, []any of those, and for
// JSON fields what encoding/json decodes).
type Doc struct {
	UID       string
	Owner     string
	CreatedAt time.Time
	UpdatedAt time.Time
	Fields    map[string]any
	// encoded is the record as encodeDoc writes it, when Insert made it already: a backend
	// that stores JSON takes it rather than encoding the record again.
	encoded Record
}

// record is d as stored JSON.
func (d Doc) record() (Record, error) {
	if d.encoded != nil {
		return d.encoded, nil
	}
	return encodeDoc(d)
}

// backend is what a database provides; Records does the rest (tables, bounds, decoding).
// Every method honours ctx: a cancelled request stops its database work.
type backend interface {
	// ensure creates the table, the platform's own indexes (uid unique, createdAt, _owner)
	// and those t declares, and drops the declared indexes t no longer has. It is
	// idempotent. A unique index that existing records break fails with an *IndexError.
	ensure(ctx context.Context, t *Table) error
	// find calls fn with each record q selects, in order, until fn answers false or an
	// error. It applies q.Filter, Order, After, Offset and Limit, not MaxBytes.
	find(ctx context.Context, t *Table, q Query, fn func(Record) (bool, error)) error
	count(ctx context.Context, t *Table, f Filter) (int64, error)
	// estimate counts the records of t as the database can cheaply: exactly on SQLite,
	// from the collection's metadata on MongoDB (which an unclean shutdown can leave off).
	estimate(ctx context.Context, t *Table) (int64, error)
	// insert writes docs, all or none; a unique index they break is a *ConflictError.
	insert(ctx context.Context, t *Table, docs []Doc) error
	// update sets and removes fields of the record uid if it also matches f, stamps
	// updatedAt with at, and answers the record after the change; ErrNotFound when nothing
	// matches. Concurrent updates of different fields of a record all take effect.
	update(ctx context.Context, t *Table, uid string, f Filter, set map[string]any, unset []string, at time.Time) (Record, error)
	// remove deletes the record uid if it also matches f; ErrNotFound when nothing matches.
	remove(ctx context.Context, t *Table, uid string, f Filter) error
	// updateWhere is update for every record f selects; it answers the changed records.
	updateWhere(ctx context.Context, t *Table, f Filter, set map[string]any, unset []string, at time.Time) ([]Record, error)
	// removeWhere deletes every record f selects and answers their uids.
	removeWhere(ctx context.Context, t *Table, f Filter) ([]string, error)
	// aggregate counts the records f selects and computes aggs over them (checked), in the
	// database's own types.
	aggregate(ctx context.Context, t *Table, f Filter, aggs []Aggregate) (Aggregated, error)
	// drop removes every table of the project and its files or database.
	drop(ctx context.Context) error
	// size is the bytes the project's database takes, indexes included.
	size(ctx context.Context) (int64, error)
	// tables lists the tables the database holds, for export.
	tables(ctx context.Context) ([]string, error)
	// rewrite calls fn with every record of t and sets the fields fn answers on it, leaving
	// updatedAt as it is; keep, asked once every record was seen, may undo it all where the
	// database can (see Records.Migrate). fields are those fn may set.
	rewrite(ctx context.Context, t *Table, fields []string, fn func(Record) (map[string]any, error), keep func() bool) error
	// dropTable removes t with its records and indexes; one that does not exist is no error.
	dropTable(ctx context.Context, t *Table) error
	// duplicate is a value of ix's fields that more than one record of t has (records
	// without one of the fields left out, as a unique index leaves them); nil when none.
	duplicate(ctx context.Context, t *Table, ix Index) ([]any, error)
	// stage creates staging, empty, for new records of t (see Replacement), dropping one
	// left by an interrupted replacement; unstage drops staging tables.
	stage(ctx context.Context, t, staging *Table) error
	unstage(ctx context.Context, staging []*Table) error
	// swap puts each staged table in place of its table, as one step where the database
	// allows it. Unless replace is set, a table that holds records is an ErrNotEmpty and
	// nothing is swapped.
	swap(ctx context.Context, tables []stagedTable, replace bool) error
}

// IndexError says that an index cannot be built on the records a table holds.
type IndexError struct {
	Table string
	Index Index
	Value []any // a value more than one record has, for a unique index
	Err   error
}

func (e *IndexError) Error() string {
	if e.Value != nil {
		return fmt.Sprintf("unique index on %s %v: more than one record has %v", e.Table, e.Index.Fields, e.Value)
	}
	return fmt.Sprintf("index on %s %v: %v", e.Table, e.Index.Fields, e.Err)
}

func (e *IndexError) Unwrap() error { return e.Err }

// Records reads and writes the records of one project's tables.
type Records struct {
	b       backend
	tables  map[string]*Table
	queries atomic.Int64  // see Queries
	guard   storageGuard  // see LimitStorage
	outbox  outboxBackend // nil where the database keeps no outbox (see HasOutbox)
	// files keep the bytes of the tables' File fields, which Stored counts; nil without.
	files Blobs
}

func newRecords(b backend, tables []Table) *Records {
	r := &Records{tables: make(map[string]*Table, len(tables))}
	r.b = countingBackend{backend: b, n: &r.queries}
	r.outbox, _ = b.(outboxBackend)
	for i := range tables {
		t := tables[i]
		t.index()
		r.tables[t.Name] = &t
	}
	return r
}

func (r *Records) table(name string) (*Table, error) {
	t, ok := r.tables[name]
	if !ok {
		return nil, fmt.Errorf("store: unknown table %q", name)
	}
	return t, nil
}

// Ensure creates every table and its indexes (see Table.Indexes), dropping indexes no longer
// declared. A unique index that existing records break is an *IndexError, and the other
// tables are left as they are.
func (r *Records) Ensure(ctx context.Context) error {
	for _, t := range r.tables {
		if err := r.b.ensure(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// Each calls fn with each record q selects, in order, until fn answers false or an error. A
// query with MaxBytes fails with a *TooLargeError as soon as the records read pass it.
func (r *Records) Each(ctx context.Context, table string, q Query, fn func(Record) (bool, error)) error {
	t, err := r.table(table)
	if err != nil {
		return err
	}
	// The callback captures what it needs of q, not the whole query.
	var size int64
	n, limit, maxBytes := int64(0), q.Limit, q.MaxBytes
	return r.b.find(ctx, t, q, func(rec Record) (bool, error) {
		size += int64(len(rec))
		if maxBytes > 0 && size > maxBytes {
			return false, &TooLargeError{Table: table, MaxBytes: maxBytes, Records: int(n)}
		}
		n++
		more, err := fn(rec)
		// The last record of the limit ends the read here, rather than with one more step
		// of the store's cursor to find there is none.
		return more && (limit <= 0 || n < limit), err
	})
}

// Find decodes the records q selects into out, a pointer to a slice whose elements
// encoding/json decodes a Record into (a struct with json tags, or a map).
func (r *Records) Find(ctx context.Context, table string, q Query, out any) error {
	sv := reflect.ValueOf(out)
	if sv.Kind() != reflect.Pointer || sv.Elem().Kind() != reflect.Slice {
		return fmt.Errorf("store: Find wants a pointer to a slice, got %T", out)
	}
	list := sv.Elem()
	elem := list.Type().Elem()
	return r.Each(ctx, table, q, func(rec Record) (bool, error) {
		v := reflect.New(elem)
		if err := json.Unmarshal(rec, v.Interface()); err != nil {
			return false, fmt.Errorf("decode %s record: %w", table, err)
		}
		list.Set(reflect.Append(list, v.Elem()))
		return true, nil
	})
}

// Get decodes the record uid into out if it also matches f; ErrNotFound when there is none.
func (r *Records) Get(ctx context.Context, table, uid string, f Filter, out any) error {
	var found Record
	err := r.Each(ctx, table, Query{Filter: And(Compare(KeyUID, Eq, uid), f), Limit: 1}, func(rec Record) (bool, error) {
		found = rec
		return false, nil
	})
	if err != nil {
		return err
	}
	if found == nil {
		return fmt.Errorf("%s %q: %w", table, uid, ErrNotFound)
	}
	return decodeInto(table, found, out)
}

// Count counts the records f selects.
func (r *Records) Count(ctx context.Context, table string, f Filter) (int64, error) {
	t, err := r.table(table)
	if err != nil {
		return 0, err
	}
	if f.IsNone() {
		return 0, nil
	}
	return r.b.count(ctx, t, f)
}

// Exists reports whether a record with uid exists, whatever rule applies; callers use it to
// tell a record they may not touch from one that is not there.
func (r *Records) Exists(ctx context.Context, table, uid string) (bool, error) {
	n, err := r.Count(ctx, table, Compare(KeyUID, Eq, uid))
	return n > 0, err
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

// Insert stores new records with the given fields, each with a new uid, the owner and equal
// createdAt and updatedAt, all or none, and decodes the stored records into out (a pointer to
// a slice, as Find takes, or for one record a pointer to one element).
func (r *Records) Insert(ctx context.Context, table, owner string, fields []map[string]any, out any) error {
	t, err := r.table(table)
	if err != nil {
		return err
	}
	at := now()
	docs := make([]Doc, len(fields))
	recs := make([]Record, len(fields))
	for i, f := range fields {
		uid, err := NewUID()
		if err != nil {
			return err
		}
		docs[i] = Doc{UID: uid, Owner: owner, CreatedAt: at, UpdatedAt: at, Fields: f}
		if recs[i], err = encodeDoc(docs[i]); err != nil {
			return err
		}
		docs[i].encoded = recs[i]
	}
	undo, err := r.admitWrite(ctx, int64(len(docs)))
	if err != nil {
		return err
	}
	if err := r.b.insert(ctx, t, docs); err != nil {
		undo()
		return err
	}
	return decodeAll(table, recs, out)
}

// Import writes records exported by Export, keeping their uid, owner and times; a record
// whose uid exists already is a *ConflictError and nothing of the batch is written.
func (r *Records) Import(ctx context.Context, table string, recs []Record) error {
	t, err := r.table(table)
	if err != nil {
		return err
	}
	docs := make([]Doc, len(recs))
	for i, rec := range recs {
		if docs[i], err = t.decodeDoc(rec); err != nil {
			return &RecordError{N: i + 1, Err: err}
		}
	}
	return r.b.insert(ctx, t, docs)
}

// Update sets and removes fields of the record uid if it also matches f, bumps its
// updatedAt and decodes the updated record into out; ErrNotFound when no record matches.
func (r *Records) Update(ctx context.Context, table, uid string, f Filter, set map[string]any, unset []string, out any) error {
	t, err := r.table(table)
	if err != nil {
		return err
	}
	if _, err := r.admitWrite(ctx, 0); err != nil {
		return err
	}
	rec, err := r.b.update(ctx, t, uid, f, set, unset, now())
	if err != nil {
		return err
	}
	return decodeInto(table, rec, out)
}

// Delete removes the record uid if it also matches f; ErrNotFound when no record matches.
func (r *Records) Delete(ctx context.Context, table, uid string, f Filter) error {
	t, err := r.table(table)
	if err != nil {
		return err
	}
	if err := r.b.remove(ctx, t, uid, f); err != nil {
		return err
	}
	r.removed(1)
	return nil
}

// Drop removes every table of the project with its records.
func (r *Records) Drop(ctx context.Context) error { return r.b.drop(ctx) }

// StoredTables lists the tables the database holds, declared or not (but not the staging
// tables of a Replacement).
func (r *Records) StoredTables(ctx context.Context) ([]string, error) {
	names, err := r.b.tables(ctx)
	return slices.DeleteFunc(names, func(n string) bool { return strings.Contains(n, stagingMark) }), err
}

func decodeInto(table string, rec Record, out any) error {
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(rec, out); err != nil {
		return fmt.Errorf("decode %s record: %w", table, err)
	}
	return nil
}

// decodeAll decodes recs into out: a pointer to a slice takes them all, a pointer to one
// value the first.
func decodeAll(table string, recs []Record, out any) error {
	if out == nil || len(recs) == 0 {
		return nil
	}
	sv := reflect.ValueOf(out)
	if sv.Kind() != reflect.Pointer || sv.Elem().Kind() != reflect.Slice {
		return decodeInto(table, recs[0], out)
	}
	list := sv.Elem()
	for _, rec := range recs {
		v := reflect.New(list.Type().Elem())
		if err := decodeInto(table, rec, v.Interface()); err != nil {
			return err
		}
		list.Set(reflect.Append(list, v.Elem()))
	}
	return nil
}

// encodeDoc writes a Doc as a Record.
func encodeDoc(d Doc) (Record, error) {
	var b bytes.Buffer
	b.WriteString(`{"uid":`)
	writeJSON(&b, d.UID)
	b.WriteString(`,"_owner":`)
	writeJSON(&b, d.Owner)
	b.WriteString(`,"createdAt":"`)
	b.WriteString(d.CreatedAt.UTC().Format(TimeLayout))
	b.WriteString(`","updatedAt":"`)
	b.WriteString(d.UpdatedAt.UTC().Format(TimeLayout))
	b.WriteByte('"')
	for _, k := range sortedFieldKeys(d.Fields) {
		b.WriteByte(',')
		writeJSON(&b, k)
		b.WriteByte(':')
		if err := writeValue(&b, d.Fields[k]); err != nil {
			return nil, fmt.Errorf("field %s: %w", k, err)
		}
	}
	b.WriteByte('}')
	return Record(b.Bytes()), nil
}

func writeJSON(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s) // a string always encodes
	b.Write(enc)
}

// writeValue writes a field value: times in TimeLayout, everything else as encoding/json
// does.
func writeValue(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case time.Time:
		b.WriteByte('"')
		b.WriteString(v.UTC().Format(TimeLayout))
		b.WriteByte('"')
		return nil
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeValue(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(enc)
	return nil
}

var errNotObject = errors.New("a record must be a JSON object")
