package gql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	graphql "github.com/graph-gophers/graphql-go"

	"github.com/platform-dev/platform/store"
)

// Table is a table as the API shows it: its store definition and the name of its record
// type (the singular of the table's name unless the project names it).
type Table struct {
	store.Table
	TypeName string
	// Relations are the table's links to records of other tables.
	Relations []Relation
}

// table serves one table's root fields. Its record type is a struct built at run time with
// one field per column, tagged for both encoding/json (the form the store answers records
// in) and graph-gophers, so a stored record is decoded once, straight into what the
// resolvers return.
type table struct {
	def     Table
	names   tableNames
	rec     reflect.Type // the record struct
	recs    reflect.Type // []rec
	edge    reflect.Type // {cursor, node}
	conn    reflect.Type // {edges, pageInfo, totalCount}
	records *store.Records
	limits  limits
	// related are the tables t's relations lead to, by name; bound are the relations its
	// record type holds (cut).
	related map[string]*table
	bound   []Relation
	// public turns a resolver error into what the caller sees (API.public); resolvers
	// that graph-gophers calls directly, not through API.root, use it.
	public func(context.Context, error) error
	// event is the type of a subscription's changes; changes, when set, is told of every
	// write (subscription.go).
	event   reflect.Type
	changes Changes
	logger  *slog.Logger
	// keys are the record type's keys as stored, made once: every plan that writes the
	// table's records from their stored JSON reads them.
	keys storedKeys
	// files keep the bytes of the table's File fields; nil when it has none (files.go).
	files *files
}

type limits struct {
	defaultLimit, maxLimit int
	bounds                 store.Bounds
}

func newTable(def Table, bound []Relation, records *store.Records, lim limits, related map[string]*table) *table {
	t := &table{def: def, names: namesOf(def), records: records, limits: lim, related: related, bound: bound}
	fields := []reflect.StructField{{Name: "UID", Type: reflect.TypeFor[graphql.ID](), Tag: `json:"uid" graphql:"uid"`}}
	for i, f := range def.Fields {
		fields = append(fields, reflect.StructField{
			Name: "F" + strconv.Itoa(i),
			Type: goType(f),
			Tag:  reflect.StructTag(fmt.Sprintf(`json:%q graphql:%q`, f.Name, f.Name)),
		})
	}
	fields = append(fields,
		reflect.StructField{Name: "CreatedAt", Type: reflect.TypeFor[stamp](), Tag: `json:"createdAt" graphql:"createdAt"`},
		reflect.StructField{Name: "UpdatedAt", Type: reflect.TypeFor[stamp](), Tag: `json:"updatedAt" graphql:"updatedAt"`},
		// Set from UID by decode; the executor writes id from uid (scalarFields).
		reflect.StructField{Name: "ID", Type: reflect.TypeFor[graphql.ID](), Tag: `json:"-" graphql:"id"`})
	fields = append(fields, highlightFields(def)...)
	fields = append(fields, relationFields(bound, related)...)
	t.rec = reflect.StructOf(fields)
	t.recs = reflect.SliceOf(t.rec)
	t.keys = newStoredKeys(t)
	t.event = eventType(t.rec)
	t.edge = reflect.StructOf([]reflect.StructField{
		{Name: "Cursor", Type: reflect.TypeFor[string](), Tag: `graphql:"cursor"`},
		{Name: "Node", Type: t.rec, Tag: `graphql:"node"`},
	})
	t.conn = reflect.StructOf([]reflect.StructField{
		{Name: "Edges", Type: reflect.SliceOf(t.edge), Tag: `graphql:"edges"`},
		{Name: "PageInfo", Type: reflect.TypeFor[pageInfo](), Tag: `graphql:"pageInfo"`},
		{Name: "TotalCount", Type: reflect.TypeFor[func(context.Context) (int32, error)](), Tag: `graphql:"totalCount"`},
	})
	return t
}

// pageInfo is a connection's PageInfo.
type pageInfo struct {
	HasNextPage bool    `graphql:"hasNextPage"`
	EndCursor   *string `graphql:"endCursor"`
}

// goType is the Go type a field's values are decoded into; it matches outputType.
func goType(f store.Field) reflect.Type {
	if f.File != nil {
		return fileType(f)
	}
	var rt reflect.Type
	switch f.Type.Scalar {
	case store.String:
		rt = reflect.TypeFor[string]()
	case store.Int:
		rt = reflect.TypeFor[int32]()
	case store.Float:
		rt = reflect.TypeFor[float64]()
	case store.Boolean:
		rt = reflect.TypeFor[bool]()
	case store.ID:
		rt = reflect.TypeFor[graphql.ID]()
	case store.DateTime:
		rt = reflect.TypeFor[stamp]()
	default: // JSON
		rt = reflect.TypeFor[jsonValue]()
	}
	if f.Type.List {
		rt = reflect.SliceOf(rt)
	}
	if !f.Required && (f.Type.List || f.Type.Scalar != store.String) {
		rt = reflect.PointerTo(rt)
	}
	return rt
}

// key checks that the table has the key the API names name (a field, uid, createdAt or
// updatedAt) and returns its type.
func (t *table) key(name string) (ft store.FieldType, ok bool) {
	if name == store.KeyOwner {
		return ft, false
	}
	return t.def.KeyType(name)
}

// list answers products(uid, where, orderBy, limit, offset).
func (t *table) list(ctx context.Context, a args) (reflect.Value, error) {
	recs, err := t.decoded(ctx, a)
	if err != nil {
		return reflect.Value{}, err
	}
	list := reflect.MakeSlice(t.recs, len(recs), len(recs))
	for i, v := range recs {
		list.Index(i).Set(v)
	}
	if err := t.withRelations(ctx, "", elems(list)...); err != nil {
		return reflect.Value{}, err
	}
	return list, nil
}

// one answers product(id): the record with that uid, or null.
func (t *table) one(ctx context.Context, a args) (reflect.Value, error) {
	recs, err := t.byID(ctx, a)
	if err != nil || len(recs) == 0 {
		return reflect.Zero(reflect.PointerTo(t.rec)), err
	}
	return recs[0].Addr(), t.withRelations(ctx, "", recs[0])
}

// byID are the records (none or one) product(id) answers.
func (t *table) byID(ctx context.Context, a args) ([]reflect.Value, error) {
	if !a.ID.set || a.ID.v == nil {
		return nil, userError(CodeBadUserInput, "id is required")
	}
	return t.decoded(ctx, args{UID: a.ID})
}

// decoded are the records a list's arguments select that the caller may read, in order,
// as addressable values of the record type.
func (t *table) decoded(ctx context.Context, a args) ([]reflect.Value, error) {
	var recs []reflect.Value
	err := t.scan(ctx, a, func(rec store.Record) (bool, error) {
		v, err := t.decode(rec)
		recs = append(recs, v)
		return err == nil, err
	})
	return recs, err
}

// scan calls fn with each record a list's arguments select that the caller may read, in
// order, until fn answers false or an error: the list resolver and the executor (plan.go) read
// through it alike.
func (t *table) scan(ctx context.Context, a args, fn func(store.Record) (bool, error)) error {
	q, err := t.query(a)
	if err != nil || q.Limit == 0 {
		return err
	}
	return t.read(ctx, q, fn)
}

// connection answers productsConnection(where, orderBy, first, after): a keyset page.
func (t *table) connection(ctx context.Context, a args) (reflect.Value, error) {
	q, err := t.query(args{Where: a.Where, OrderBy: a.OrderBy, Search: a.Search, unmarked: a.unmarked})
	if err != nil {
		return reflect.Value{}, err
	}
	first := int64(t.limits.defaultLimit)
	if a.First.set && a.First.v != nil {
		if first, err = intArg(a.First, "first", 0, int64(t.limits.maxLimit)); err != nil {
			return reflect.Value{}, err
		}
	}
	if a.After.set && a.After.v != nil {
		s, ok := a.After.v.(string)
		if !ok {
			return reflect.Value{}, userError(CodeBadUserInput, "after: want the endCursor or an edge's cursor of an earlier page, got "+describe(a.After.v))
		}
		c, err := t.def.ParseCursor(s, q)
		if err != nil {
			return reflect.Value{}, userError(CodeBadUserInput, "after: "+err.Error())
		}
		q.After = c
	}
	edges := reflect.MakeSlice(reflect.SliceOf(t.edge), 0, int(min(first, 64)))
	var info pageInfo
	if first > 0 {
		// One record more than the page tells whether there is a next page.
		q.Limit = first + 1
		err = t.read(ctx, q, func(rec store.Record) (bool, error) {
			if int64(edges.Len()) == first {
				info.HasNextPage = true
				return false, nil
			}
			node, err := t.decode(rec)
			if err != nil {
				return false, err
			}
			c, err := t.def.CursorOf(rec, q.Order)
			if err != nil {
				return false, err
			}
			edge := reflect.New(t.edge).Elem()
			edge.Field(0).SetString(t.def.Encode(c, q))
			edge.Field(1).Set(node)
			edges = reflect.Append(edges, edge)
			return true, nil
		})
		if err != nil {
			return reflect.Value{}, err
		}
	}
	nodes := make([]reflect.Value, edges.Len())
	for i := range nodes {
		nodes[i] = edges.Index(i).Field(1)
	}
	if err := t.withRelations(ctx, "edges.node.", nodes...); err != nil {
		return reflect.Value{}, err
	}
	if n := edges.Len(); n > 0 {
		end := edges.Index(n - 1).Field(0).String()
		info.EndCursor = &end
	}
	conn := reflect.New(t.conn).Elem()
	conn.Field(0).Set(edges)
	conn.Field(1).Set(reflect.ValueOf(info))
	where, search := a.Where, a.Search
	conn.Field(2).Set(reflect.ValueOf(func(ctx context.Context) (int32, error) {
		n, err := t.count(ctx, args{Where: where, Search: search})
		if err != nil {
			return 0, t.public(ctx, err)
		}
		return n, nil
	}))
	return conn, nil
}

// read calls fn with the records q selects that the caller may read, in order, until fn
// answers false. The read rule's filter is part of the query; when the rule needs each
// record, the store is asked for every record the filter lets through and the rule decides
// one by one, paging in Go. Either way each record is charged to the request's budget
// before fn gets it, and the read stops when the budget is spent (the refused ones count
// as read, and cost time, bounded by the request's, not memory).
func (t *table) read(ctx context.Context, q store.Query, fn func(store.Record) (bool, error)) error {
	access, check, err := t.readAccess(ctx)
	if errors.Is(err, ErrForbidden) {
		return nil
	}
	if err != nil {
		return err
	}
	q.Filter = store.And(q.Filter, access)
	b := budgetFrom(ctx)
	each := func(rec store.Record) (bool, error) {
		if err := b.take(t, 1, int64(len(rec)), 1); err != nil {
			return false, err
		}
		return fn(rec)
	}
	if check {
		g := guardFrom(ctx)
		offset, limit := q.Offset, q.Limit
		q.Offset, q.Limit = 0, 0
		kept := 0
		each = func(rec store.Record) (bool, error) {
			ok, err := t.allowed(g, Read, rec, nil)
			if err != nil || !ok {
				if err == nil {
					err = b.take(t, 1, 0, 0)
				}
				return err == nil, err
			}
			if offset > 0 {
				offset--
				err := b.take(t, 1, 0, 0)
				return err == nil, err
			}
			if err := b.take(t, 1, int64(len(rec)), 1); err != nil {
				return false, err
			}
			kept++
			more, err := fn(rec)
			return more && (limit == 0 || int64(kept) < limit), err
		}
	}
	return t.records.Each(ctx, t.def.Name, q, each)
}

// decode turns a stored record into the record type. A value of another type than its
// field's (stored under an earlier definition) reads converted where that loses nothing,
// and as no value otherwise (store.Table.Fit): a read never fails on it.
func (t *table) decode(rec store.Record) (reflect.Value, error) {
	v := reflect.New(t.rec)
	if err := json.Unmarshal(rec, v.Interface()); err != nil {
		fit, ferr := t.def.Fit(rec)
		v = reflect.New(t.rec)
		if ferr != nil || json.Unmarshal(fit, v.Interface()) != nil {
			return reflect.Value{}, fmt.Errorf("decode %s record: %w", t.def.Name, err)
		}
	}
	v = v.Elem()
	v.Field(len(t.def.Fields) + 3).Set(v.Field(0))
	t.locate(v)
	return v, nil
}

// count answers productsCount(where).
func (t *table) count(ctx context.Context, a args) (int32, error) {
	f, err := t.selection(a)
	if err != nil {
		return 0, err
	}
	access, check, err := t.readAccess(ctx)
	if errors.Is(err, ErrForbidden) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	f = store.And(f, access)
	var n int64
	if !check {
		if n, err = t.records.Count(ctx, t.def.Name, f); err != nil {
			return 0, err
		}
	} else {
		g := guardFrom(ctx)
		err = t.records.Each(ctx, t.def.Name, store.Query{Filter: f}, func(rec store.Record) (bool, error) {
			ok, err := t.allowed(g, Read, rec, nil)
			if ok {
				n++
			}
			return err == nil, err
		})
		if err != nil {
			return 0, err
		}
	}
	if n > math.MaxInt32 {
		return 0, userError(CodeBadUserInput, fmt.Sprintf("%s matches %d records, more than an Int can hold: narrow where", t.names.count, n))
	}
	return int32(n), nil
}

// readAccess is the Guard's read filter, All without a Guard.
func (t *table) readAccess(ctx context.Context) (store.Filter, bool, error) {
	g := guardFrom(ctx)
	if g == nil {
		return store.All, false, nil
	}
	f, check, err := g.Filter(t.def.Name, Read)
	if err != nil && !errors.Is(err, ErrForbidden) {
		return store.None, false, fmt.Errorf("read rule of %s: %w", t.def.Name, err)
	}
	return f, check, err
}

// allowed asks the Guard about one stored record; false for a record a rule refuses.
func (t *table) allowed(g Guard, op Operation, rec store.Record, data map[string]any) (bool, error) {
	record, err := t.def.Values(rec)
	if err != nil {
		return false, err
	}
	switch err := g.Allow(t.def.Name, op, record, data); {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrForbidden):
		return false, nil
	default:
		return false, fmt.Errorf("%s rule of %s: %w", op, t.def.Name, err)
	}
}

// create answers createproduct(data).
func (t *table) create(ctx context.Context, a args) (reflect.Value, error) {
	set, err := t.checkCreate(ctx, a)
	if err != nil {
		return reflect.Value{}, err
	}
	stored, err := t.storeFiles(ctx, set)
	if err != nil {
		return reflect.Value{}, err
	}
	recs, raw, err := t.insert(ctx, []map[string]any{set})
	if err != nil {
		t.dropFiles(ctx, stored)
		return reflect.Value{}, err
	}
	if err := budgetFrom(ctx).take(t, 1, int64(len(raw[0])), 1); err != nil {
		return reflect.Value{}, err
	}
	return recs[0].Addr(), t.withRelations(ctx, "", recs[0])
}

// checkCreate reads the data of createproduct(data) and asks the create rule: the fields to
// store.
func (t *table) checkCreate(ctx context.Context, a args) (map[string]any, error) {
	set, _, data, err := t.input(a.Data, true)
	if err != nil {
		return nil, err
	}
	if g := guardFrom(ctx); g != nil {
		if err := t.allowCreate(g, data); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// insert stores the checked fields of new records, all or none, in one store call, owned by
// the caller, and tells subscribers: the records as the API answers them, and as stored.
func (t *table) insert(ctx context.Context, sets []map[string]any) ([]reflect.Value, []json.RawMessage, error) {
	var owner string
	if g := guardFrom(ctx); g != nil {
		owner = g.Owner()
	}
	// A slice: Insert takes a pointer to a slice for every record it wrote.
	var raw []json.RawMessage
	if err := t.records.Insert(ctx, t.def.Name, owner, sets, &raw); err != nil {
		return nil, nil, t.conflict(err)
	}
	recs := make([]reflect.Value, len(raw))
	var chs []store.Change
	for i, r := range raw {
		rec, err := t.decode(store.Record(r))
		if err != nil {
			return nil, nil, err
		}
		recs[i] = rec
		if t.changes != nil {
			chs = append(chs, t.change(store.Created, string(rec.Field(0).Interface().(graphql.ID)), r, nil))
		}
	}
	t.published(ctx, chs...)
	return recs, raw, nil
}

// created is the answer to one createproduct(data) of createEach.
type created struct {
	rec reflect.Value
	err error
}

// createEach answers createproduct(data) called several times in a row in one mutation (a
// client seeding records with aliased calls), one answer per call. Each record is checked
// as create checks it, then those allowed are written in one transaction: one commit
// instead of one per record. When that write fails, each is written on its own as create
// writes it, so that the error (a unique value taken, a quota reached) is the one record's
// and the others stand, as when the calls run one after another.
func (t *table) createEach(ctx context.Context, calls []args) []created {
	out := make([]created, len(calls))
	var sets []map[string]any
	var at []int
	// stored are the keys of the files each call uploaded, dropped when its record is not
	// written.
	stored := make([][]string, len(calls))
	for i, a := range calls {
		set, err := t.checkCreate(ctx, a)
		if err == nil {
			stored[i], err = t.storeFiles(ctx, set)
		}
		if err != nil {
			out[i].err = err
			continue
		}
		sets, at = append(sets, set), append(at, i)
	}
	write := func(sets []map[string]any, at []int) error {
		recs, raw, err := t.insert(ctx, sets)
		if err != nil {
			return err
		}
		b := budgetFrom(ctx)
		for k, i := range at {
			out[i] = created{rec: recs[k], err: b.take(t, 1, int64(len(raw[k])), 1)}
		}
		return nil
	}
	if len(sets) == 0 || write(sets, at) == nil {
		return out
	}
	for k, i := range at {
		if err := write(sets[k:k+1], at[k:k+1]); err != nil {
			out[i].err = err
			t.dropFiles(ctx, stored[i])
		}
	}
	return out
}

// allowCreate asks the Guard whether the caller may create a record of data.
func (t *table) allowCreate(g Guard, data map[string]any) error {
	switch err := g.Allow(t.def.Name, Create, nil, data); {
	case errors.Is(err, ErrForbidden):
		return userError(CodeForbidden, fmt.Sprintf("you may not create %s: %v", t.def.Name, err))
	case err != nil:
		return fmt.Errorf("create rule of %s: %w", t.def.Name, err)
	}
	return nil
}

// update answers updateproduct(uid, data).
func (t *table) update(ctx context.Context, a args) (reflect.Value, error) {
	uid, err := t.uid(a.UID)
	if err != nil {
		return reflect.Value{}, err
	}
	set, unset, data, err := t.input(a.Data, false)
	if err != nil {
		return reflect.Value{}, err
	}
	access, err := t.writeAccess(ctx, Update, uid, data)
	if err != nil {
		return reflect.Value{}, err
	}
	touched := t.touchedFiles(set, unset)
	before, err := t.before(ctx, uid, access, touched != nil)
	if err != nil {
		return reflect.Value{}, err
	}
	stored, err := t.storeFiles(ctx, set)
	if err != nil {
		return reflect.Value{}, err
	}
	var raw json.RawMessage
	err = t.records.Update(ctx, t.def.Name, uid, access, set, unset, &raw)
	if err != nil {
		t.dropFiles(ctx, stored)
	}
	if errors.Is(err, store.ErrNotFound) {
		return reflect.Value{}, t.missing(ctx, Update, uid, access)
	}
	if err != nil {
		return reflect.Value{}, t.conflict(err)
	}
	if touched != nil {
		t.dropFiles(ctx, t.replaced(before, raw, touched))
	}
	out, err := t.decode(store.Record(raw))
	if err != nil {
		return reflect.Value{}, err
	}
	t.published(ctx, t.change(store.Updated, uid, raw, before))
	if err := budgetFrom(ctx).take(t, 1, int64(len(raw)), 1); err != nil {
		return reflect.Value{}, err
	}
	return out.Addr(), t.withRelations(ctx, "", out)
}

// conflict answers a write that breaks a unique index as CONFLICT, naming the fields, and
// one past a storage quota as QUOTA_EXCEEDED, naming the quota.
func (t *table) conflict(err error) error {
	var q *store.QuotaError
	if errors.As(err, &q) {
		e := userError(CodeQuotaExceeded, fmt.Sprintf("%s quota exceeded: %v", q.Quota, q))
		e.Extra = map[string]any{"quota": q.Quota, "limit": q.Limit}
		return e
	}
	var c *store.ConflictError
	if !errors.As(err, &c) {
		return err
	}
	msg := fmt.Sprintf("another %s has the same %s, which must be unique", t.names.typ, strings.Join(c.Fields, " and "))
	if len(c.Value) > 0 {
		vals := make([]string, len(c.Value))
		for i, v := range c.Value {
			js, _ := json.Marshal(v)
			vals[i] = string(js)
		}
		msg = fmt.Sprintf("another %s has %s %s, which must be unique", t.names.typ, strings.Join(c.Fields, " and "), strings.Join(vals, " and "))
	}
	e := userError(CodeConflict, msg)
	e.Extra = map[string]any{"fields": c.Fields}
	return e
}

// deleted is what delete answers, as the seed shows.
const deleted = "Document Deleted"

// remove answers deleteproduct(uid), the seed's form.
func (t *table) remove(ctx context.Context, a args) (*string, error) {
	if _, err := t.deleteOne(ctx, a, false); err != nil {
		return nil, err
	}
	s := deleted
	return &s, nil
}

// removeRecord answers deleteProduct(uid): the record as it was just before the delete, so
// that a client cache can evict it by its id.
func (t *table) removeRecord(ctx context.Context, a args) (reflect.Value, error) {
	raw, err := t.deleteOne(ctx, a, true)
	if err != nil {
		return reflect.Value{}, err
	}
	out, err := t.decode(store.Record(raw))
	if err != nil {
		return reflect.Value{}, err
	}
	if err := budgetFrom(ctx).take(t, 1, int64(len(raw)), 1); err != nil {
		return reflect.Value{}, err
	}
	return out.Addr(), t.withRelations(ctx, "", out)
}

// deleteOne deletes the record a.UID and answers it as it was when keep is set, or when
// subscribers need it (nil otherwise).
func (t *table) deleteOne(ctx context.Context, a args, keep bool) (json.RawMessage, error) {
	uid, err := t.uid(a.UID)
	if err != nil {
		return nil, err
	}
	access, err := t.writeAccess(ctx, Delete, uid, nil)
	if err != nil {
		return nil, err
	}
	var before json.RawMessage
	if keep {
		err = t.records.Get(ctx, t.def.Name, uid, access, &before)
	} else {
		before, err = t.before(ctx, uid, access, t.files != nil)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, t.missing(ctx, Delete, uid, access)
	}
	if err != nil {
		return nil, err
	}
	err = t.records.Delete(ctx, t.def.Name, uid, access)
	if errors.Is(err, store.ErrNotFound) {
		return nil, t.missing(ctx, Delete, uid, access)
	}
	if err != nil {
		return nil, err
	}
	if t.files != nil {
		t.dropFiles(ctx, t.fileKeys(before, nil))
	}
	t.published(ctx, t.change(store.Deleted, uid, nil, before))
	return before, nil
}

// writeAccess asks the Guard about an update or delete of the record uid and returns the
// filter the write must also match.
func (t *table) writeAccess(ctx context.Context, op Operation, uid string, data map[string]any) (store.Filter, error) {
	g := guardFrom(ctx)
	if g == nil {
		return store.All, nil
	}
	access, check, err := g.Filter(t.def.Name, op)
	if errors.Is(err, ErrForbidden) {
		return store.None, t.refused(ctx, op, uid)
	}
	if err != nil {
		return store.None, fmt.Errorf("%s rule of %s: %w", op, t.def.Name, err)
	}
	if !check {
		return access, nil
	}
	var raw json.RawMessage
	err = t.records.Get(ctx, t.def.Name, uid, access, &raw)
	if errors.Is(err, store.ErrNotFound) {
		return store.None, t.missing(ctx, op, uid, access)
	}
	if err != nil {
		return store.None, err
	}
	ok, err := t.allowed(g, op, store.Record(raw), data)
	if err != nil {
		return store.None, err
	}
	if !ok {
		return store.None, t.forbidden(op, uid)
	}
	return access, nil
}

// missing is the error for a write that matched no record: without an access filter the
// record is not there; with one, it may be there but out of the caller's reach.
func (t *table) missing(ctx context.Context, op Operation, uid string, access store.Filter) error {
	if !access.IsAll() {
		return t.refused(ctx, op, uid)
	}
	return t.notFound(uid)
}

// refused is the error for a write a rule refuses: FORBIDDEN, or NOT_FOUND when there is
// no such record anyway.
func (t *table) refused(ctx context.Context, op Operation, uid string) error {
	ok, err := t.records.Exists(ctx, t.def.Name, uid)
	if err != nil {
		return err
	}
	if !ok {
		return t.notFound(uid)
	}
	return t.forbidden(op, uid)
}

func (t *table) forbidden(op Operation, uid string) error {
	return userError(CodeForbidden, fmt.Sprintf("you may not %s the %s %q", op, t.names.typ, uid))
}

func (t *table) notFound(uid string) error {
	return userError(CodeNotFound, fmt.Sprintf("no %s has uid %q", t.names.typ, uid))
}

func (t *table) uid(a argValue) (string, error) {
	switch v := a.v.(type) {
	case string:
		if v != "" {
			return v, nil
		}
		return "", userError(CodeBadUserInput, "uid must not be empty")
	case int32:
		return strconv.Itoa(int(v)), nil
	case nil:
		return "", userError(CodeBadUserInput, "uid is required: say which "+t.names.typ+" to change")
	}
	return "", userError(CodeBadUserInput, "uid: want an ID (a string), got "+describe(a.v))
}

// query reads the list arguments.
func (t *table) query(a args) (store.Query, error) {
	q := store.Query{Limit: int64(t.limits.defaultLimit)}
	var byUID store.Filter
	if a.UID.set && a.UID.v != nil {
		uid, err := t.uid(a.UID)
		if err != nil {
			return q, err
		}
		byUID = store.Compare(store.KeyUID, store.Eq, uid)
	}
	f, err := t.selection(a)
	if err != nil {
		return q, err
	}
	q.Filter = store.And(byUID, f)
	if a.OrderBy.set && a.OrderBy.v != nil {
		for i, o := range asList(a.OrderBy.v) {
			m, _ := o.(map[string]any)
			name, _ := m["field"].(string)
			ft, ok := t.key(name)
			if !ok || ft.List || ft.Scalar == store.JSON {
				return q, userError(CodeBadUserInput, fmt.Sprintf("orderBy[%d].field: %s cannot be sorted on", i, describeName(name)))
			}
			dir, _ := m["direction"].(string)
			q.Order = append(q.Order, store.Order{Key: name, Desc: dir == "DESC"})
		}
	}
	if q.Order == nil && searched(a) {
		q.Order = []store.Order{{Key: store.KeyRank}}
	}
	if q.Offset, err = intArg(a.Offset, "offset", 0, math.MaxInt32); err != nil {
		return q, err
	}
	if a.Limit.set && a.Limit.v != nil {
		if q.Limit, err = intArg(a.Limit, "limit", 0, int64(t.limits.maxLimit)); err != nil {
			return q, err
		}
	}
	if a.UID.set && a.UID.v != nil && q.Limit > 1 {
		// A uid names one record: the store stops at it instead of looking for a second.
		q.Limit = 1
	}
	return q, nil
}

func describeName(s string) string {
	if s == "" {
		return "no field"
	}
	return strconv.Quote(s)
}

// intArg reads an Int argument that must lie between lo and hi; 0 when absent.
func intArg(a argValue, name string, lo, hi int64) (int64, error) {
	if !a.set || a.v == nil {
		return 0, nil
	}
	// A literal arrives as int32; a variable as the float64 its JSON decoded to.
	var n int64
	switch v := a.v.(type) {
	case int32:
		n = int64(v)
	case float64:
		if v != math.Trunc(v) || v < math.MinInt32 || v > math.MaxInt32 {
			return 0, userError(CodeBadUserInput, fmt.Sprintf("%s must be an Int, got %v", name, v))
		}
		n = int64(v)
	default:
		return 0, userError(CodeBadUserInput, name+" must be an Int")
	}
	if n < lo || n > hi {
		return 0, userError(CodeBadUserInput, fmt.Sprintf("%s must be between %d and %d, got %d", name, lo, hi, n))
	}
	return n, nil
}

// filter reads a where argument into a store filter, within the limits.
func (t *table) filter(a argValue) (store.Filter, error) {
	if !a.set || a.v == nil {
		return store.All, nil
	}
	f, err := t.where(a.v, "where", 0)
	if err != nil {
		return store.None, err
	}
	if err := f.Check(t.limits.bounds); err != nil {
		return store.None, userError(CodeBadUserInput, "where: "+err.Error())
	}
	return f, nil
}

// where reads a where argument, nested depth levels of and/or deep, into a filter. The
// nesting is checked as it is read, so a deep argument is refused before it is walked.
func (t *table) where(v any, path string, depth int) (store.Filter, error) {
	if depth > t.limits.bounds.MaxDepth {
		return store.None, userError(CodeBadUserInput, fmt.Sprintf("%s: and/or nest more than %d levels deep", path, t.limits.bounds.MaxDepth))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return store.None, userError(CodeBadUserInput, fmt.Sprintf("%s: want an object, got %s", path, describe(v)))
	}
	var all []store.Filter
	for _, k := range sortedKeys(m) {
		switch k {
		case "not":
			if m[k] == nil {
				continue
			}
			sf, err := t.where(m[k], path+".not", depth+1)
			if err != nil {
				return store.None, err
			}
			all = append(all, store.Not(sf))
			continue
		case "and", "or":
			if m[k] == nil {
				continue
			}
			var parts []store.Filter
			for i, sub := range asList(m[k]) {
				sf, err := t.where(sub, fmt.Sprintf("%s.%s[%d]", path, k, i), depth+1)
				if err != nil {
					return store.None, err
				}
				parts = append(parts, sf)
			}
			if k == "and" {
				all = append(all, store.And(parts...))
			} else {
				all = append(all, store.Or(parts...))
			}
			continue
		}
		ft, ok := t.key(k)
		if !ok || ft.Scalar == store.JSON {
			return store.None, userError(CodeBadUserInput, fmt.Sprintf("%s: %s has no condition %q", path, t.names.where, k))
		}
		ops, ok := m[k].(map[string]any)
		if !ok {
			if m[k] == nil {
				continue
			}
			return store.None, userError(CodeBadUserInput, fmt.Sprintf("%s.%s: want an object of comparisons, got %s", path, k, describe(m[k])))
		}
		for _, op := range sortedKeys(ops) {
			f, err := t.compare(k, ft, store.Op(op), ops[op], path+"."+k+"."+op)
			if err != nil {
				return store.None, err
			}
			all = append(all, f)
		}
	}
	return store.And(all...), nil
}

// compare reads one comparison of a where argument, at path, on the key k of type ft.
func (t *table) compare(k string, ft store.FieldType, o store.Op, val any, path string) (store.Filter, error) {
	if !slices.Contains(filterOps(ft), o) {
		return store.None, userError(CodeBadUserInput, fmt.Sprintf("%s: %s has no comparison %q", path, filterName(ft), o))
	}
	switch {
	case val == nil && (o == store.Eq || o == store.Ne):
		return store.Compare(k, o, nil), nil
	case val == nil:
		return store.All, nil
	case o == store.IsNull:
		b, ok := val.(bool)
		if !ok {
			return store.None, userError(CodeBadUserInput, fmt.Sprintf("%s: want a Boolean, got %s", path, describe(val)))
		}
		return store.Compare(k, o, b), nil
	case o == store.In || o == store.Nin:
		list := []any{}
		for i, e := range asList(val) {
			cv, err := scalarValue(ft.Scalar, e)
			if err != nil {
				return store.None, userError(CodeBadUserInput, fmt.Sprintf("%s[%d]: %v", path, i, err))
			}
			list = append(list, cv)
		}
		return store.Compare(k, o, list), nil
	}
	cv, err := scalarValue(ft.Scalar, val)
	if err != nil {
		return store.None, userError(CodeBadUserInput, fmt.Sprintf("%s: %v", path, err))
	}
	return store.Compare(k, o, cv), nil
}

// input reads the data argument of create (every required field present) or update (any
// field; null removes an optional one). It returns the fields to set, those to remove, and
// the same values as the Guard sees them.
func (t *table) input(a argValue, create bool) (set map[string]any, unset []string, data map[string]any, err error) {
	m, ok := a.v.(map[string]any)
	if !ok {
		return nil, nil, nil, userError(CodeBadUserInput, fmt.Sprintf("data: want %s object, got %s", withArticle(t.names.input), describe(a.v)))
	}
	for k := range m {
		if _, ok := t.def.Field(k); !ok {
			return nil, nil, nil, userError(CodeBadUserInput, fmt.Sprintf("data: %s has no field %q", t.names.input, k))
		}
	}
	data = make(map[string]any, len(m))
	set = make(map[string]any, len(m))
	for _, f := range t.def.Fields {
		v, present := m[f.Name]
		if create && (!present || v == nil) && f.Default != nil {
			v, present = f.Default, true
		}
		switch {
		case !present && create && f.Required:
			return nil, nil, nil, userError(CodeBadUserInput, fmt.Sprintf("data.%s is required to create %s", f.Name, withArticle(t.names.typ)))
		case !present:
			continue
		case v == nil && f.Required:
			return nil, nil, nil, userError(CodeBadUserInput, fmt.Sprintf("data.%s is required and cannot be null", f.Name))
		case v == nil:
			data[f.Name] = nil
			if !create {
				unset = append(unset, f.Name)
			}
			continue
		}
		if f.File != nil {
			if set[f.Name], data[f.Name], err = t.fileInput(f, v); err != nil {
				return nil, nil, nil, err
			}
			continue
		}
		cv, err := fieldValue(f.Type, v)
		if err != nil {
			return nil, nil, nil, userError(CodeBadUserInput, fmt.Sprintf("data.%s: %v", f.Name, err))
		}
		set[f.Name] = cv
		data[f.Name] = cv
	}
	return set, unset, data, nil
}

// fieldValue checks a value given for a field and converts it to what is stored.
func fieldValue(ft store.FieldType, v any) (any, error) {
	if !ft.List {
		return scalarValue(ft.Scalar, v)
	}
	in := asList(v)
	out := make([]any, len(in))
	for i, e := range in {
		if e == nil {
			return nil, fmt.Errorf("element %d is null", i)
		}
		cv, err := scalarValue(ft.Scalar, e)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out[i] = cv
	}
	return out, nil
}

// scalarValue checks one scalar value, as graph-gophers decoded it from a literal (Int as
// int32) or from JSON variables (numbers as float64), and converts it to what is stored.
func scalarValue(s store.Scalar, v any) (any, error) {
	switch s {
	case store.String:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case store.ID:
		switch v := v.(type) {
		case string:
			return v, nil
		case int32:
			return strconv.Itoa(int(v)), nil
		case float64:
			if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
				return strconv.FormatInt(int64(v), 10), nil
			}
		}
	case store.Int:
		switch v := v.(type) {
		case int32:
			return int64(v), nil
		case float64:
			if v == math.Trunc(v) && v >= math.MinInt32 && v <= math.MaxInt32 {
				return int64(v), nil
			}
			return nil, fmt.Errorf("want a 32-bit integer, got %v", v)
		}
	case store.Float:
		switch v := v.(type) {
		case float64:
			return v, nil
		case int32:
			return float64(v), nil
		}
	case store.Boolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case store.DateTime:
		return parseTime(v)
	case store.JSON:
		if err := storableJSON(v); err != nil {
			return nil, err
		}
		return v, nil
	}
	return nil, fmt.Errorf("want %s, got %s", withArticle(string(s)), describe(v))
}

// withArticle puts "a" or "an" before a word as English says it: an item, an order, an
// update, an Int, an ID, but a user, a unit, a String, a JSON value.
func withArticle(word string) string {
	if word == "" {
		return word
	}
	lower := strings.ToLower(word)
	var an bool
	switch {
	case len(word) > 1 && word == strings.ToUpper(word):
		// An acronym is read letter by letter: an ID, an SQL table, a UID.
		an = strings.ContainsRune("aefhilmnorsx", rune(lower[0]))
	case strings.HasPrefix(lower, "hour"), strings.HasPrefix(lower, "honest"), strings.HasPrefix(lower, "heir"):
		an = true
	case strings.HasPrefix(lower, "eu"), strings.HasPrefix(lower, "one"):
		an = false
	case lower[0] == 'u' && len(lower) > 2 && !isVowel(lower[1]) && isVowel(lower[2]):
		// "u" sounds like "you" before one consonant and a vowel: user, unit, utility.
		an = false
	default:
		an = isVowel(lower[0])
	}
	if an {
		return "an " + word
	}
	return "a " + word
}

func isVowel(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }

// asList applies GraphQL's list coercion: a single value stands for a list of one.
func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// storableJSON refuses object keys MongoDB would take for operators.
func storableJSON(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if strings.HasPrefix(k, "$") {
				return fmt.Errorf("the key %q: keys may not start with $", k)
			}
			if err := storableJSON(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := storableJSON(e); err != nil {
				return err
			}
		}
	}
	return nil
}
