package gql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	graphql "github.com/graph-gophers/graphql-go"

	"github.com/platform-dev/platform/store"
)

// Relation links the records of a table to records of another, as the project document
// declares it. With Field, it is many-to-one: each record's Field holds the uid of one
// record of Table (orders.product: {table: products, field: productId}). With ForeignField,
// one-to-many: the records of Table whose ForeignField holds the record's uid
// (products.orders: {table: orders, foreignField: productId}).
type Relation struct {
	Name         string
	Table        string
	Field        string
	ForeignField string
}

func (r Relation) many() bool { return r.ForeignField != "" }

// RelationError says why a relation cannot be served.
type RelationError struct {
	Table, Relation string
	Reason          string
}

func (e *RelationError) Error() string {
	return fmt.Sprintf("table %q: relation %q: %s", e.Table, e.Relation, e.Reason)
}

// CheckRelations reports, as a *RelationError, the first relation of tables that cannot be
// served: a name taken by a field, an unknown table or field, or a field that cannot hold a
// uid. Relations may lead back to where they start (orders.product with products.orders, or
// employees.manager): see cutCycles for how such a schema is executed.
func CheckRelations(tables []Table) error {
	byName := make(map[string]Table, len(tables))
	for _, t := range tables {
		byName[t.Name] = t
	}
	for _, t := range tables {
		seen := map[string]bool{}
		for _, r := range t.Relations {
			fail := func(format string, a ...any) error {
				return &RelationError{Table: t.Name, Relation: r.Name, Reason: fmt.Sprintf(format, a...)}
			}
			_, isField := t.Field(r.Name)
			switch {
			case !nameRE.MatchString(r.Name) || strings.HasPrefix(r.Name, "__"):
				return fail("the name must be a GraphQL name (letters, digits and _, not starting with a digit or __)")
			case isField || r.Name == fieldUID || r.Name == fieldID || r.Name == fieldCreatedAt || r.Name == fieldUpdatedAt || seen[r.Name],
				r.Name == store.KeyHighlights && t.Search != nil:
				return fail("the name is taken by a field or another relation of the table")
			case (r.Field == "") == (r.ForeignField == ""):
				return fail("give exactly one of field (this table's field holding the other record's uid) and foreignField (the other table's field holding this record's uid)")
			}
			seen[r.Name] = true
			target, ok := byName[r.Table]
			if !ok {
				return fail("no table %q", r.Table)
			}
			holder, key, where := t, r.Field, "field"
			if r.many() {
				holder, key, where = target, r.ForeignField, "foreignField"
			}
			f, ok := holder.Field(key)
			if !ok {
				return fail("%s %q: table %q has no such field", where, key, holder.Name)
			}
			if f.Type.List || (f.Type.Scalar != store.ID && f.Type.Scalar != store.String) {
				return fail("%s %q must be an ID or String field to hold a uid", where, key)
			}
		}
	}
	return nil
}

// cut are the relations that close a cycle, by table and relation name. graph-gophers binds
// every field of every type a schema reaches to a Go type when the schema is built, so a
// cycle of GraphQL types needs a cycle of Go types; records are Go types built at run time,
// which cannot contain themselves, and a distinct type per nesting level grows as
// (relations per type)^(levels). The record types graph-gophers binds therefore leave these
// relations out, while the schema it validates and introspects keeps them (bind); a query
// that selects one runs on the executor (exec.go), as every operation on tables does.
type cut map[string]map[string]bool

// cutCycles chooses the relations to cut: a depth-first walk in table and relation order
// cuts each relation that leads to a table on the walk's path, which leaves the others
// without a cycle.
func cutCycles(tables []Table) cut {
	byName := make(map[string]Table, len(tables))
	for _, t := range tables {
		byName[t.Name] = t
	}
	c := cut{}
	state := map[string]int{} // 1: on the path, 2: done
	var visit func(name string)
	visit = func(name string) {
		state[name] = 1
		for _, r := range byName[name].Relations {
			switch state[r.Table] {
			case 1:
				if c[name] == nil {
					c[name] = map[string]bool{}
				}
				c[name][r.Name] = true
			case 0:
				visit(r.Table)
			}
		}
		state[name] = 2
	}
	for _, t := range tables {
		if state[t.Name] == 0 {
			visit(t.Name)
		}
	}
	return c
}

// bound are the relations of t that its Go record type holds.
func (c cut) bound(t Table) []Relation {
	var out []Relation
	for _, r := range t.Relations {
		if !c[t.Name][r.Name] {
			out = append(out, r)
		}
	}
	return out
}

// relationOrder is tables in an order where every bound relation's target comes before the
// table that declares it, so that its record type exists when the table's is built.
func relationOrder(tables []Table, c cut) []Table {
	byName := make(map[string]Table, len(tables))
	for _, t := range tables {
		byName[t.Name] = t
	}
	done := map[string]bool{}
	var out []Table
	var add func(t Table)
	add = func(t Table) {
		if done[t.Name] {
			return
		}
		done[t.Name] = true
		for _, r := range c.bound(t) {
			add(byName[r.Table])
		}
		out = append(out, t)
	}
	for _, t := range tables {
		add(t)
	}
	return out
}

// writeRelationFields writes the relation fields of t's record type.
func writeRelationFields(b *strings.Builder, t Table, byName map[string]Table) {
	for _, r := range t.Relations {
		target := namesOf(byName[r.Table])
		if r.many() {
			fmt.Fprintf(b, "  %q\n  %s(where: %s, orderBy: [%s!], limit: Int): [%s!]!\n",
				fmt.Sprintf("The %s whose %s is this record's uid, matching where, in orderBy order, at most limit of them.", r.Table, r.ForeignField), r.Name, target.where, target.order, target.typ)
			continue
		}
		fmt.Fprintf(b, "  %q\n  %s: %s\n", fmt.Sprintf("The %s whose uid is this record's %s; null when there is none you may read.", target.typ, r.Field), r.Name, target.typ)
	}
}

// relationFields are the struct fields of a record type that hold its bound relations,
// loaded before the record is answered.
func relationFields(bound []Relation, related map[string]*table) []reflect.StructField {
	var out []reflect.StructField
	for i, r := range bound {
		rt := reflect.PointerTo(related[r.Table].rec)
		if r.many() {
			rt = manyFunc(related[r.Table])
		}
		out = append(out, reflect.StructField{Name: fmt.Sprintf("R%d", i), Type: rt, Tag: reflect.StructTag(fmt.Sprintf(`json:"-" graphql:%q`, r.Name))})
	}
	return out
}

// withRelations loads the relations the operation selects below the root field's path
// prefix into recs, addressable values of the record type.
func (t *table) withRelations(ctx context.Context, prefix string, recs ...reflect.Value) error {
	if len(t.bound) == 0 || len(recs) == 0 {
		return nil
	}
	selected := map[string]bool{}
	for _, p := range graphql.SelectedFieldNames(ctx) {
		selected[p] = true
	}
	return t.loadRelations(ctx, selected, prefix, recs)
}

// elems are the elements of a slice, addressable.
func elems(list reflect.Value) []reflect.Value {
	out := make([]reflect.Value, list.Len())
	for i := range out {
		out[i] = list.Index(i)
	}
	return out
}

// loadRelations fills the selected bound relations of recs (addressable record values), one
// store query per relation for all of them, then the relations of the related records, level
// by level: a level costs one query per relation, whatever the number of records.
func (t *table) loadRelations(ctx context.Context, selected map[string]bool, prefix string, recs []reflect.Value) error {
	if len(recs) == 0 {
		return nil
	}
	for i, r := range t.bound {
		target := t.related[r.Table]
		field := t.rec.NumField() - len(t.bound) + i
		if r.many() {
			// Every record gets its resolver, selected or not: graph-gophers calls it.
			t.attachMany(r, target, recs, field)
			continue
		}
		path := prefix + r.Name
		if !selected[path] {
			continue
		}
		byUID, children, err := t.readOne(ctx, r, recs)
		if err == nil {
			err = target.loadRelations(ctx, selected, path+".", children)
		}
		if err != nil {
			return err
		}
		key := t.fieldIndex(r.Field)
		for _, rec := range recs {
			k, ok := keyOf(rec.Field(key))
			if c, found := byUID[k]; ok && found {
				p := reflect.New(target.rec)
				p.Elem().Set(c)
				rec.Field(field).Set(p)
			}
		}
	}
	return nil
}

// readOne reads the records of a many-to-one relation r of recs (values of t's record
// type): those whose uid one of recs holds in r's field and that the caller may read, by
// uid and in the order read.
func (t *table) readOne(ctx context.Context, r Relation, recs []reflect.Value) (map[string]reflect.Value, []reflect.Value, error) {
	key := t.fieldIndex(r.Field)
	var uids []any
	refs := map[string]int64{} // parents holding each uid
	for _, rec := range recs {
		if k, ok := keyOf(rec.Field(key)); ok {
			if refs[k]++; refs[k] == 1 {
				uids = append(uids, k)
			}
		}
	}
	if len(uids) == 0 {
		return nil, nil, nil
	}
	target := t.related[r.Table]
	children, sizes, err := target.readAll(ctx, store.Query{Filter: store.Compare(store.KeyUID, store.In, uids)})
	if err != nil {
		return nil, nil, err
	}
	// A record is read once and answered under each parent that holds its uid: the budget
	// is charged for every time after the first, before any is answered.
	b := budgetFrom(ctx)
	byUID := make(map[string]reflect.Value, len(children))
	for i, c := range children {
		uid := c.Field(0).String()
		byUID[uid] = c
		if n := refs[uid]; n > 1 {
			if err := b.take(target, 0, sizes[i], n-1); err != nil {
				return nil, nil, err
			}
		}
	}
	return byUID, children, nil
}

// readMany reads the records of a one-to-many relation r of the parents (uids): those whose
// foreign field holds a parent's uid, that match the where of a and the caller may read, in
// a's orderBy order, at most a's limit per parent. It answers them by parent and all those
// kept, in the order read.
func (t *table) readMany(ctx context.Context, r Relation, parents []any, a args) (map[string][]reflect.Value, []reflect.Value, error) {
	target := t.related[r.Table]
	q, err := target.query(args{Where: a.Where, OrderBy: a.OrderBy})
	if err != nil {
		return nil, nil, prefixed(err, r.Name)
	}
	limit := int64(target.limits.defaultLimit)
	if a.Limit.set && a.Limit.v != nil {
		if limit, err = intArg(a.Limit, "limit", 0, int64(target.limits.maxLimit)); err != nil {
			return nil, nil, prefixed(err, r.Name)
		}
	}
	q.Filter = store.And(store.Compare(r.ForeignField, store.In, parents), q.Filter)
	q.Limit, q.Offset = 0, 0
	children, _, err := target.readAll(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	key := target.fieldIndex(r.ForeignField)
	byParent := map[string][]reflect.Value{}
	kept := children[:0]
	for _, c := range children {
		k, _ := keyOf(c.Field(key))
		if int64(len(byParent[k])) < limit {
			byParent[k] = append(byParent[k], c)
			kept = append(kept, c)
		}
	}
	return byParent, kept, nil
}

// manyFunc is the type of a one-to-many relation's field: a resolver that takes the
// relation's arguments.
func manyFunc(target *table) reflect.Type {
	return reflect.FuncOf([]reflect.Type{reflect.TypeFor[context.Context](), reflect.TypeFor[args]()}, []reflect.Type{target.recs, errorType}, false)
}

// manyLoader loads a one-to-many relation for a set of parent records at once: the first
// parent whose field is resolved loads the related records of every parent in one store
// query, and the others answer from it. Arguments are the same for every parent of one
// selection; an alias asking with other arguments loads once more.
type manyLoader struct {
	t, target *table
	r         Relation
	parents   []any // uids
	mu        sync.Mutex
	loaded    map[string]manyResult // by the arguments, as JSON
}

type manyResult struct {
	byParent map[string]reflect.Value
	err      error
}

// attachMany sets the relation field of recs to resolvers sharing one loader.
func (t *table) attachMany(r Relation, target *table, recs []reflect.Value, field int) {
	l := &manyLoader{t: t, target: target, r: r, loaded: map[string]manyResult{}}
	l.parents = uidsOf(recs)
	fn := manyFunc(target)
	empty := reflect.MakeSlice(target.recs, 0, 0)
	for _, rec := range recs {
		uid := rec.Field(0).String()
		rec.Field(field).Set(reflect.MakeFunc(fn, func(in []reflect.Value) []reflect.Value {
			ctx := in[0].Interface().(context.Context)
			res := l.load(ctx, in[1].Interface().(args))
			if res.err != nil {
				e := t.public(ctx, res.err)
				return []reflect.Value{empty, reflect.ValueOf(&e).Elem()}
			}
			list, ok := res.byParent[uid]
			if !ok {
				list = empty
			}
			return []reflect.Value{list, reflect.Zero(errorType)}
		}))
	}
}

// uidsOf are the uids of records.
func uidsOf(recs []reflect.Value) []any {
	out := make([]any, len(recs))
	for i, rec := range recs {
		out[i] = rec.Field(0).String()
	}
	return out
}

// load answers the related records of every parent for the arguments a, reading them on
// the first call with these arguments.
func (l *manyLoader) load(ctx context.Context, a args) manyResult {
	key, err := json.Marshal([]any{a.Where.v, a.OrderBy.v, a.Limit.v})
	if err != nil {
		return manyResult{err: err}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if res, ok := l.loaded[string(key)]; ok {
		return res
	}
	res := l.read(ctx, a)
	l.loaded[string(key)] = res
	return res
}

// read loads the related records of every parent, with their own selected relations.
func (l *manyLoader) read(ctx context.Context, a args) manyResult {
	groups, children, err := l.t.readMany(ctx, l.r, l.parents, a)
	if err != nil {
		return manyResult{err: err}
	}
	// This resolver's selections are those below the relation field.
	selected := map[string]bool{}
	for _, p := range graphql.SelectedFieldNames(ctx) {
		selected[p] = true
	}
	if err := l.target.loadRelations(ctx, selected, "", children); err != nil {
		return manyResult{err: err}
	}
	byParent := make(map[string]reflect.Value, len(groups))
	for k, cs := range groups {
		list := reflect.MakeSlice(l.target.recs, len(cs), len(cs))
		for i, c := range cs {
			list.Index(i).Set(c)
		}
		byParent[k] = list
	}
	return manyResult{byParent: byParent}
}

// readAll reads the records q selects that the caller may read (the table's read rule
// applies), decoded into addressable values of the record type, with their stored sizes.
func (t *table) readAll(ctx context.Context, q store.Query) ([]reflect.Value, []int64, error) {
	var out []reflect.Value
	var sizes []int64
	err := t.read(ctx, q, func(rec store.Record) (bool, error) {
		v, err := t.decode(rec)
		out = append(out, v)
		sizes = append(sizes, int64(len(rec)))
		return err == nil, err
	})
	return out, sizes, err
}

// fieldIndex is the index in the record type of the table's field name.
func (t *table) fieldIndex(name string) int {
	for i, f := range t.def.Fields {
		if f.Name == name {
			return i + 1 // after uid
		}
	}
	return -1
}

// keyOf reads a uid from a record's ID or String field; false when it is not set.
func keyOf(v reflect.Value) (string, bool) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "", false
		}
		v = v.Elem()
	}
	return v.String(), v.String() != ""
}

// prefixed names the relation path an argument error is about.
func prefixed(err error, path string) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	return &Error{Code: e.Code, Message: path + "." + e.Message, Extra: e.Extra}
}
