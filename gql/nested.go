package gql

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"

	graphql "github.com/graph-gophers/graphql-go"
	gast "github.com/graph-gophers/graphql-go/ast"
	gqlerrors "github.com/graph-gophers/graphql-go/errors"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/platform-dev/platform/store"
)

// A nested plan runs a query or mutation that selects a relation closing a cycle
// (cutCycles), which the record types graph-gophers executes with leave out though the
// schema it validates and introspects has it (bind). graph-gophers validates each request's
// document with its variables, as it would before executing it; the plan then runs each root
// field with the resolvers graph-gophers would call (rootOf), reads each selected relation
// level by level with the loaders of relations.go (one store query per relation selection
// per level, whatever the number of parents, under the related table's read rule), and
// writes the answer graph-gophers writes for the same records: the same bytes, a failed
// field null with its error at its path, a null in a non-null place making its parent null
// up to the nearest nullable field. A subscription that selects such a relation is
// validated by graph-gophers when it starts (newSubscription), and each of its events then
// answered by the plan, for its subscriber (answer).
type nested struct {
	// refusal, when set, is the one error a document that validates answers; tooMany: it
	// is graph-gophers' selection limit, answered as graph-gophers does, with data null.
	refusal  string
	tooMany  bool
	typename string // of the operation's root
	defaults map[string]any
	fields   []planField
}

// newNested makes the nested plan of the operation opName selects in query; nil when it
// selects no cut relation (graph-gophers runs it, or says why it cannot).
func (a *API) newNested(query, opName string) *nested {
	if len(a.cut) == 0 || a.schema == nil {
		return nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, a.cfg.MaxQueryBytes)
	if err != nil {
		return nil
	}
	op := operationOf(doc, opName)
	if op == nil {
		return nil
	}
	field := a.cutField(doc, op)
	if field == "" {
		return nil
	}
	b := planBuilder{a: a, doc: doc, op: op.Operation, keys: map[string]bool{}, nested: true, cutField: field}
	if !b.root(op.SelectionSet, nil) {
		return &nested{refusal: cmp.Or(b.why, "the document cannot be run"), tooMany: b.tooMany}
	}
	return &nested{typename: capitalized(string(op.Operation)), defaults: defaultsOf(op), fields: b.fields}
}

// rootField is how a nested plan resolves a root field: records answers its records (a
// list when list is set; else one, or none for null), scalar the value of a field without
// selections, conn a connection (a value of the table's conn type), figures an aggregate's
// (a value of its result type) for the paths selected, event a subscription's event (a
// value of the table's event type). nullable: its null does not null data (every mutation
// field's).
type rootField struct {
	records  func(context.Context, args) ([]reflect.Value, error)
	list     bool
	scalar   func(context.Context, args) (any, error)
	conn     func(context.Context, args) (reflect.Value, error)
	figures  func(context.Context, args, []string) (reflect.Value, error)
	event    func(context.Context) reflect.Value
	nullable bool
}

// rootOf is how a nested plan runs the root field name of an operation of kind op, with
// the resolvers graph-gophers calls for it; false for one it does not run.
func (a *API) rootOf(op ast.Operation, name string) (*table, rootField, bool) {
	for _, t := range a.lists {
		n := t.names
		creates, updates, dels := batchNames(t.def)
		agg, _, _, _ := aggregateNames(t.def)
		switch {
		case op == ast.Query && name == n.list:
			return t, rootField{records: noted(a, "list", t.decoded), list: true}, true
		case op == ast.Query && name == n.one && n.one != "":
			return t, rootField{records: noted(a, "list", t.byID), nullable: true}, true
		case op == ast.Subscription && name == n.list:
			// The where was read when the subscription started; the event is the change's.
			return t, rootField{event: func(ctx context.Context) reflect.Value {
				return ctx.Value(subscriptionKey{}).(*subscriptionState).event
			}}, true
		case op == ast.Query && name == n.connection:
			return t, rootField{conn: noted(a, "list", t.connection)}, true
		case op == ast.Query && name == agg:
			at := newAggTypes(t.def)
			return t, rootField{figures: func(ctx context.Context, in args, paths []string) (reflect.Value, error) {
				return noted(a, "aggregate", func(ctx context.Context, in args) (reflect.Value, error) {
					return t.aggregated(ctx, at, in, paths)
				})(ctx, in)
			}}, true
		case op == ast.Query && name == n.count:
			return t, rootField{scalar: anyOf(noted(a, "count", t.count))}, true
		case op == ast.Mutation && (name == n.create || name == n.createCamel):
			return t, rootField{records: oneOf(noted(a, "create", t.create)), nullable: true}, true
		case op == ast.Mutation && (name == n.update || name == n.updateCamel):
			return t, rootField{records: oneOf(noted(a, "update", t.update)), nullable: true}, true
		case op == ast.Mutation && name == n.del:
			return t, rootField{scalar: anyOf(noted(a, "delete", t.remove)), nullable: true}, true
		case op == ast.Mutation && name == n.delCamel:
			return t, rootField{records: oneOf(noted(a, "delete", t.removeRecord)), nullable: true}, true
		case op == ast.Mutation && slices.Contains(creates, name):
			many := noted(a, "create", t.createMany)
			return t, rootField{records: func(ctx context.Context, in args) ([]reflect.Value, error) {
				list, err := many(ctx, in)
				if err != nil {
					return nil, err
				}
				return elems(list.Elem()), nil
			}, list: true, nullable: true}, true
		case op == ast.Mutation && slices.Contains(updates, name):
			return t, rootField{scalar: anyOf(noted(a, "update", t.updateMany)), nullable: true}, true
		case op == ast.Mutation && slices.Contains(dels, name):
			return t, rootField{scalar: anyOf(noted(a, "delete", t.deleteMany)), nullable: true}, true
		}
	}
	return nil, rootField{}, false
}

// oneOf answers the record a create or update resolver answers, as a list of one.
func oneOf(resolve func(context.Context, args) (reflect.Value, error)) func(context.Context, args) ([]reflect.Value, error) {
	return func(ctx context.Context, in args) ([]reflect.Value, error) {
		v, err := resolve(ctx, in)
		if err != nil {
			return nil, err
		}
		return []reflect.Value{v.Elem()}, nil
	}
}

// anyOf answers a scalar resolver's value as any.
func anyOf[T any](resolve func(context.Context, args) (T, error)) func(context.Context, args) (any, error) {
	return func(ctx context.Context, in args) (any, error) {
		return resolve(ctx, in)
	}
}

// cutField is the first cut relation op selects, as type.field; "" when it selects none.
func (a *API) cutField(doc *ast.QueryDocument, op *ast.OperationDefinition) string {
	schema := a.schema.AST()
	// Fragments spread in fragments multiply: stop where graph-gophers stops expanding.
	steps := 0
	var walk func(set ast.SelectionSet, typ string, spreading map[string]bool) string
	walk = func(set ast.SelectionSet, typ string, spreading map[string]bool) string {
		obj, _ := schema.Types[typ].(*gast.ObjectTypeDefinition)
		for _, sel := range set {
			if steps++; steps > a.cfg.MaxSelections {
				return ""
			}
			var found string
			switch s := sel.(type) {
			case *ast.Field:
				if a.cut[typ][s.Name] {
					return typ + "." + s.Name
				}
				if fd := fieldDef(obj, s.Name); fd != nil {
					found = walk(s.SelectionSet, namedType(fd.Type), spreading)
				}
			case *ast.InlineFragment:
				found = walk(s.SelectionSet, cmp.Or(s.TypeCondition, typ), spreading)
			case *ast.FragmentSpread:
				fd := doc.Fragments.ForName(s.Name)
				if fd == nil || spreading[s.Name] {
					continue
				}
				spreading[s.Name] = true
				found = walk(fd.SelectionSet, fd.TypeCondition, spreading)
				delete(spreading, s.Name)
			}
			if found != "" {
				return found
			}
		}
		return ""
	}
	// The schema names its roots Query, Mutation and Subscription; the subscription schema
	// runs the last as its query.
	return walk(op.SelectionSet, capitalized(string(op.Operation)), map[string]bool{})
}

func fieldDef(obj *gast.ObjectTypeDefinition, name string) *gast.FieldDefinition {
	if obj == nil {
		return nil
	}
	return obj.Fields.Get(name)
}

// namedType is the name of the type t wraps in lists and non-nulls.
func namedType(t gast.Type) string {
	for {
		switch w := t.(type) {
		case *gast.NonNull:
			t = w.OfType
		case *gast.List:
			t = w.OfType
		case gast.NamedType:
			return w.TypeName()
		default:
			return ""
		}
	}
}

// run answers query, the document the plan was made of, for vars.
func (n *nested) run(ctx context.Context, a *API, query string, vars map[string]any) *graphql.Response {
	if errs := a.schema.ValidateWithVariables(query, vars); len(errs) > 0 {
		return &graphql.Response{Errors: errs}
	}
	if n.refusal != "" {
		res := &graphql.Response{Errors: []*gqlerrors.QueryError{{Message: n.refusal}}}
		if n.tooMany {
			res.Data = json.RawMessage("null")
		}
		return res
	}
	return n.answer(ctx, a, vars)
}

// answer answers the plan's document, validated with vars and not refused, for vars.
func (n *nested) answer(ctx context.Context, a *API, vars map[string]any) *graphql.Response {
	vars = n.withDefaults(vars)
	w := nestedRun{ctx: ctx, a: a, vars: vars}
	out := append(make([]byte, 0, 1024), '{')
	null, written := false, 0
	for i := range n.fields {
		f := &n.fields[i]
		if skip, _ := skipped(f.cond, vars); skip {
			continue
		}
		if written++; written > 1 {
			out = append(out, ',')
		}
		out = appendKey(out, f.key)
		if f.t == nil {
			out = appendString(out, n.typename)
			continue
		}
		var ok bool
		out, ok = w.root(out, f)
		// A null where the field may not be null nulls data.
		null = null || !ok && !f.root.nullable
	}
	if err := ctx.Err(); err != nil {
		return &graphql.Response{Errors: []*gqlerrors.QueryError{gqlerrors.Errorf("%s", err)}}
	}
	out = append(out, '}')
	if null {
		out = []byte("null")
	}
	return &graphql.Response{Data: out, Errors: w.errs}
}

// withDefaults are vars with the operation's defaults for those absent, as graph-gophers
// has them after validation.
func (n *nested) withDefaults(vars map[string]any) map[string]any {
	if len(n.defaults) == 0 {
		return vars
	}
	with := maps.Clone(n.defaults)
	maps.Copy(with, vars)
	return with
}

// subscribed are the table and the where filter of the root field of a subscription's plan
// (it has one, asQueryOf checked) for vars.
func (n *nested) subscribed(vars map[string]any) (*table, store.Filter, error) {
	f := &n.fields[0]
	// Validation has checked the arguments' names and types.
	in, _ := planArgs(f.args, n.withDefaults(vars))
	where, err := f.t.filter(in.Where)
	return f.t, where, err
}

// nestedRun is one request of a nested plan.
type nestedRun struct {
	ctx  context.Context
	a    *API
	vars map[string]any
	errs []*gqlerrors.QueryError
}

// level is the records of one table that one selection read: the selections written for
// each, and what their relations read.
type level struct {
	t    *table
	sels []*planSel
	rels map[*planSel]*related
}

// related is what one relation selection read for every record of a level.
type related struct {
	err  error                      // the caller's error, for every record
	one  map[string]reflect.Value   // many-to-one: by uid
	many map[string][]reflect.Value // one-to-many: by the parent's uid
	next *level
}

// fail notes the error of the field at path.
func (w *nestedRun) fail(err error, path []any) {
	w.errs = append(w.errs, fieldError(w.a.public(w.ctx, err), path))
}

// root writes a root field; false when it is null.
func (w *nestedRun) root(out []byte, f *planField) ([]byte, bool) {
	path := []any{f.key}
	in, _ := planArgs(f.args, w.vars)
	if f.root.scalar != nil {
		v, err := f.root.scalar(w.ctx, in)
		if err == nil {
			var js []byte
			if js, err = json.Marshal(v); err == nil {
				return append(out, js...), string(js) != "null"
			}
		}
		w.fail(err, path)
		return append(out, "null"...), false
	}
	switch {
	case f.root.event != nil:
		return w.event(out, f, f.root.event(w.ctx), path)
	case f.root.conn != nil:
		return w.connection(out, f, in, path)
	case f.root.figures != nil:
		return w.figures(out, f, in, path)
	}
	recs, err := f.root.records(w.ctx, in)
	if err != nil {
		w.fail(err, path)
		return append(out, "null"...), false
	}
	lvl := w.load(f.t, recs, f.sels)
	switch {
	case f.root.list:
		return w.records(out, lvl, recs, path)
	case len(recs) == 0: // product(id) of none
		return append(out, "null"...), false
	}
	return w.record(out, lvl, recs[0], path)
}

// load reads the relations sels select for recs, records of t, and theirs, level by level.
func (w *nestedRun) load(t *table, recs []reflect.Value, sels []planSel) *level {
	lvl := &level{t: t, rels: map[*planSel]*related{}}
	lvl.sels = w.selected(sels)
	for _, s := range lvl.sels {
		if s.rel == nil || len(recs) == 0 {
			continue
		}
		rel := &related{}
		lvl.rels[s] = rel
		var children []reflect.Value
		var err error
		if s.rel.many() {
			in, _ := planArgs(s.args, w.vars)
			rel.many, children, err = t.readMany(w.ctx, *s.rel, uidsOf(recs), in)
		} else {
			rel.one, children, err = t.readOne(w.ctx, *s.rel, recs)
		}
		if err != nil {
			rel.err = w.a.public(w.ctx, err)
			continue
		}
		rel.next = w.load(s.target, children, s.sels)
	}
	return lvl
}

// records writes a list of records of lvl at path; false when it is null: one of them is.
func (w *nestedRun) records(out []byte, lvl *level, recs []reflect.Value, path []any) ([]byte, bool) {
	return w.list(out, len(recs), path, func(out []byte, i int, path []any) ([]byte, bool) {
		return w.record(out, lvl, recs[i], path)
	})
}

// list writes a list of n elements at path, each by elem; false when it is null: an element
// is, and none may be. Every element is written, so that each failure is reported.
func (w *nestedRun) list(out []byte, n int, path []any, elem func([]byte, int, []any) ([]byte, bool)) ([]byte, bool) {
	mark := len(out)
	whole := true
	out = append(out, '[')
	for i := range n {
		if i > 0 {
			out = append(out, ',')
		}
		var ok bool
		out, ok = elem(out, i, append(path[:len(path):len(path)], i))
		whole = whole && ok
	}
	if !whole {
		return append(out[:mark], "null"...), false
	}
	return append(out, ']'), true
}

// record writes one record of lvl at path; false when it is null.
func (w *nestedRun) record(out []byte, lvl *level, v reflect.Value, path []any) ([]byte, bool) {
	return w.object(out, lvl.t.names.typ, lvl.sels, path, func(out []byte, s *planSel, path []any) ([]byte, bool) {
		return w.field(out, lvl, v, s, path)
	})
}

// object writes an object at path: its selections sels, __typename as typename, the others
// by value; false when it is null: a non-null field of it is. Every field is written, so
// that each failure below it is reported.
func (w *nestedRun) object(out []byte, typename string, sels []*planSel, path []any, value func([]byte, *planSel, []any) ([]byte, bool)) ([]byte, bool) {
	mark := len(out)
	whole := true
	out, _ = appendObject(out, typename, sels, func(out []byte, s *planSel) ([]byte, bool) {
		var ok bool
		out, ok = value(out, s, append(path[:len(path):len(path)], s.key))
		whole = whole && ok
		return out, true
	})
	if !whole {
		return append(out[:mark], "null"...), false
	}
	return out, true
}

// connection writes a connection of f's table at path: the nodes of its edges are read once
// for each node selection, their relations level by level.
func (w *nestedRun) connection(out []byte, f *planField, in args, path []any) ([]byte, bool) {
	conn, err := f.root.conn(w.ctx, in)
	if err != nil {
		w.fail(err, path)
		return append(out, "null"...), false
	}
	t, edges := f.t, conn.Field(0)
	nodes := make([]reflect.Value, edges.Len())
	for i := range nodes {
		nodes[i] = edges.Index(i).Field(1)
	}
	return w.object(out, t.names.connType, w.selected(f.sels), path, func(out []byte, s *planSel, path []any) ([]byte, bool) {
		switch s.part {
		case "totalCount":
			n, err := conn.Field(2).Interface().(func(context.Context) (int32, error))(w.ctx)
			if err != nil {
				w.fail(err, path)
				return append(out, "null"...), false
			}
			return strconv.AppendInt(out, int64(n), 10), true
		case "pageInfo":
			info := conn.Field(1).Interface().(pageInfo)
			return w.object(out, "PageInfo", w.selected(s.sels), path, func(out []byte, p *planSel, _ []any) ([]byte, bool) {
				if p.part == "hasNextPage" {
					return strconv.AppendBool(out, info.HasNextPage), true
				}
				return appendJSON(out, info.EndCursor), true
			})
		}
		edgeSels := w.selected(s.sels)
		levels := map[*planSel]*level{}
		for _, e := range edgeSels {
			if e.part == "node" {
				levels[e] = w.load(t, nodes, e.sels)
			}
		}
		return w.list(out, len(nodes), path, func(out []byte, i int, path []any) ([]byte, bool) {
			return w.object(out, t.names.edgeType, edgeSels, path, func(out []byte, e *planSel, path []any) ([]byte, bool) {
				if e.part == "cursor" {
					return appendJSON(out, edges.Index(i).Field(0).String()), true
				}
				return w.record(out, levels[e], nodes[i], path)
			})
		})
	})
}

// event writes ev, an event of f's table, at path; its record is read level by level.
func (w *nestedRun) event(out []byte, f *planField, ev reflect.Value, path []any) ([]byte, bool) {
	t, rec := f.t, ev.Field(2)
	return w.object(out, t.names.event, w.selected(f.sels), path, func(out []byte, s *planSel, path []any) ([]byte, bool) {
		switch {
		case s.part == "op":
			return appendString(out, ev.Field(0).String()), true
		case s.part == "uid":
			return appendJSON(out, ev.Field(1).Interface()), true
		case rec.IsNil():
			return append(out, "null"...), true
		}
		// The record may be null: a null inside it stops there.
		out, _ = w.record(out, w.load(t, []reflect.Value{rec.Elem()}, s.sels), rec.Elem(), path)
		return out, true
	})
}

// figures writes an aggregate of f's table at path: the figures its selections name,
// computed by the store.
func (w *nestedRun) figures(out []byte, f *planField, in args, path []any) ([]byte, bool) {
	sels := w.selected(f.sels)
	var paths []string
	for _, s := range sels {
		for _, c := range w.selected(s.sels) {
			if !c.typename() {
				paths = append(paths, s.part+"."+c.part)
			}
		}
	}
	v, err := f.root.figures(w.ctx, in, paths)
	if err != nil {
		w.fail(err, path)
		return append(out, "null"...), false
	}
	_, result, numbers, bounds := aggregateNames(f.t.def)
	var write func(out []byte, v reflect.Value, typename string, sels []*planSel, path []any) ([]byte, bool)
	write = func(out []byte, v reflect.Value, typename string, sels []*planSel, path []any) ([]byte, bool) {
		return w.object(out, typename, sels, path, func(out []byte, s *planSel, path []any) ([]byte, bool) {
			i := fieldIndex(v.Type(), s.part)
			if len(s.sels) == 0 {
				out, err := appendField(out, v, &planSel{index: i})
				return out, err == nil
			}
			typ := bounds
			if s.part == "sum" || s.part == "avg" {
				typ = numbers
			}
			return write(out, v.Field(i), typ, w.selected(s.sels), path)
		})
	}
	return write(out, v, result, sels, path)
}

// selected are the selections of all that the request's variables do not skip, the first
// of each response key.
func (w *nestedRun) selected(all []planSel) []*planSel {
	// Validation has checked that directives' arguments are Booleans.
	s, _ := selectedOf(all, w.vars)
	return s
}

// appendJSON writes v as encoding/json does, as graph-gophers writes a scalar.
func appendJSON(out []byte, v any) []byte {
	js, _ := json.Marshal(v)
	return append(out, js...)
}

// parts adds the selections of an object a nested plan writes field by field (a connection,
// an edge, a page, an aggregate's figures, an event) to out: a field with selections is an
// object of the same kind, but an edge's node and an event's record, records of t.
func (b *planBuilder) parts(t *table, set ast.SelectionSet, out *[]planSel) bool {
	return b.each(set, nil, func(s *ast.Field, cond []condition) bool {
		ps := planSel{key: s.Alias, cond: cond, index: -1, part: s.Name}
		var ok bool
		switch {
		case s.Name == "__typename":
			ps.part = ""
			fallthrough
		case len(s.SelectionSet) == 0:
			*out = append(*out, ps)
			return true
		case s.Name == "node" || s.Name == "record":
			ok = b.record(t, t.scalarFields(), s.SelectionSet, nil, &ps.sels)
		default:
			ok = b.parts(t, s.SelectionSet, &ps.sels)
		}
		return ok && b.merge(t.names.typ+"."+s.Name, ps, out)
	})
}

// field writes the selection s of v, a record of lvl; false when it is null though its
// type is non-null.
func (w *nestedRun) field(out []byte, lvl *level, v reflect.Value, s *planSel, path []any) ([]byte, bool) {
	mark := len(out)
	rel := lvl.rels[s]
	switch {
	case s.rel == nil:
		out, err := appendField(out, v, s)
		if err != nil {
			w.fail(err, path)
			return append(out[:mark], "null"...), false
		}
		return out, true
	case rel.err != nil:
		w.errs = append(w.errs, fieldError(rel.err, path))
		return append(out, "null"...), !s.rel.many()
	case s.rel.many():
		return w.records(out, rel.next, rel.many[v.Field(0).String()], path)
	}
	k, ok := keyOf(v.Field(lvl.t.fieldIndex(s.rel.Field)))
	c, found := rel.one[k]
	if !ok || !found {
		return append(out, "null"...), true
	}
	// A many-to-one field is nullable: a null record stops there.
	out, _ = w.record(out, rel.next, c, path)
	return out, true
}
