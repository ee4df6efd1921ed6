package gql

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	gast "github.com/graph-gophers/graphql-go/ast"
	gqlerrors "github.com/graph-gophers/graphql-go/errors"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/platform-dev/platform/store"
)

// The executor runs every operation on tables: queries (lists, fetches, connections,
// counts, aggregates), mutations and subscription events, with relations at any depth,
// those that close a cycle included (cutCycles), which the record types graph-gophers binds
// leave out though the schema it validates and introspects has them (bind). graph-gophers
// parses and validates the document once, when its execution plan is made; each
// request checks its variables as graph-gophers would (checkVariable; graph-gophers says
// what is wrong with those that do not fit). The plan then runs each root field with the
// resolvers' code (rootOf), reads each selected relation level by level with the loaders
// of relations.go (one store query per relation selection per level, whatever the number
// of parents, under the related table's read rule), writes a list without relations
// straight from the stored JSON (planField.list), and writes the answer graph-gophers
// writes for the same records: the same bytes, a failed field null with its error at its
// path, a null in a non-null place making its parent null up to the nearest nullable
// field. graph-gophers' own executor answers only introspection (__schema, __type) and
// the few documents it reads differently (docs/architecture.md), and stays in the tests
// as the oracle (oracle_test.go). A subscription is validated by
// graph-gophers when it starts (newSubscription), and each of its events answered by its
// plan, for its subscriber (answer).
type plan struct {
	// refusal, when set, is the one error a document that validates answers; tooMany: it
	// is graph-gophers' selection limit, answered as graph-gophers does, with data null.
	refusal string
	tooMany bool
	// invalid: the document does not validate, whatever its variables; each request
	// answers graph-gophers' validation errors.
	invalid bool
	// vars are the variables of every operation of the document: graph-gophers checks
	// them all, whichever operation runs.
	vars     []planVar
	typename string // of the operation's root
	defaults map[string]any
	fields   []planField
	// doc and op are the document and the operation, for expand; directives: a @skip or
	// @include of op takes a variable; expanded: the selections op expands to, directives
	// aside, at most planSlack times maxSelections, graph-gophers' limit.
	doc           *ast.QueryDocument
	op            *ast.OperationDefinition
	directives    bool
	expanded      int
	maxSelections int
}

// newPlan makes the execution plan of the operation opName selects in query, a query or
// a mutation sent to the endpoint; nil when graph-gophers runs it (introspection).
func (a *API) newPlan(query, opName string) *plan {
	if a.schema == nil {
		return nil
	}
	// Validation without variables finds every error but those of the variables' values,
	// which each request checks (checkVariable).
	for _, e := range a.schema.Validate(query) {
		if e.Rule != "VariablesOfCorrectType" {
			return &plan{invalid: true}
		}
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, a.cfg.MaxQueryBytes)
	if err != nil || strings.Contains(query, `\`) && !unescapeAsGraphGophers(doc, query) {
		return nil
	}
	op := operationOf(doc, opName)
	switch {
	case op == nil && opName != "":
		return &plan{refusal: fmt.Sprintf("no operation with name %q", opName)}
	case op == nil:
		return &plan{refusal: "more than one operation in query document and no operation name given"}
	case op.Operation == ast.Subscription:
		return &plan{refusal: "graphql-ws protocol header is missing"}
	}
	n := a.plan(doc, op)
	if n == nil {
		return nil
	}
	types := a.schema.AST()
	for _, o := range doc.Operations {
		for _, v := range o.VariableDefinitions {
			// Validation has checked that the schema has the type.
			n.vars = append(n.vars, planVar{name: v.Variable, typ: schemaType(types, v.Type)})
		}
	}
	return n
}

// unescapeAsGraphGophers sets the string literals of doc, parsed from query, to what
// graph-gophers reads from them: the Go string literal's value (strconv.Unquote), where
// gqlparser unescapes by GraphQL's rules (which have \/ and lack \x). false when one is not
// a Go string literal: graph-gophers fails to read it, and runs the document itself. Block
// strings are read alike by both, by the spec's algorithm.
func unescapeAsGraphGophers(doc *ast.QueryDocument, query string) bool {
	runes := []rune(query)
	ok := true
	var value func(v *ast.Value)
	value = func(v *ast.Value) {
		if v == nil {
			return
		}
		if v.Kind == ast.StringValue && v.Position != nil && v.Position.End <= len(runes) {
			s, err := strconv.Unquote(string(runes[v.Position.Start:v.Position.End]))
			ok = ok && err == nil
			v.Raw = s
		}
		for _, c := range v.Children {
			value(c.Value)
		}
	}
	directives := func(dirs ast.DirectiveList) {
		for _, d := range dirs {
			for _, arg := range d.Arguments {
				value(arg.Value)
			}
		}
	}
	var set func(ss ast.SelectionSet)
	set = func(ss ast.SelectionSet) {
		for _, sel := range ss {
			switch s := sel.(type) {
			case *ast.Field:
				for _, arg := range s.Arguments {
					value(arg.Value)
				}
				directives(s.Directives)
				set(s.SelectionSet)
			case *ast.InlineFragment:
				directives(s.Directives)
				set(s.SelectionSet)
			case *ast.FragmentSpread:
				directives(s.Directives)
			}
		}
	}
	for _, op := range doc.Operations {
		for _, v := range op.VariableDefinitions {
			value(v.DefaultValue)
		}
		directives(op.Directives)
		set(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		directives(f.Directives)
		set(f.SelectionSet)
	}
	return ok
}

// plan makes the execution plan of op, an operation of doc; nil when graph-gophers runs it
// (introspection).
func (a *API) plan(doc *ast.QueryDocument, op *ast.OperationDefinition) *plan {
	field := a.cutField(doc, op)
	b := planBuilder{a: a, doc: doc, op: op.Operation, keys: map[string]bool{}, cutField: field}
	if !b.root(op.SelectionSet, nil) {
		if field == "" && (!b.tooMany || hasConditions(doc)) {
			// Introspection; or more selections than a plan holds before directives skip
			// any, which graph-gophers refuses or runs.
			return nil
		}
		return &plan{refusal: cmp.Or(b.why, "the document cannot be run"), tooMany: b.tooMany}
	}
	for i := range b.fields {
		f := &b.fields[i]
		if f.t != nil && !conditional(f.sels) {
			f.fixed = f.selected(nil)
		}
		// A File is written from its decoded value, as a relation's record is.
		f.related = slices.ContainsFunc(f.sels, func(s planSel) bool { return s.rel != nil || s.file })
	}
	n := &plan{typename: capitalized(string(op.Operation)), defaults: defaultsOf(op), fields: b.fields, doc: doc, op: op,
		expanded: b.expanded, maxSelections: a.cfg.MaxSelections}
	// Without variables, each directive that takes one has a null argument.
	errs, _ := n.expand(nil, math.MaxInt)
	n.directives = len(errs) > 0
	return n
}

// hasConditions reports whether a selection of doc, as written, has @skip or @include.
func hasConditions(doc *ast.QueryDocument) bool {
	var in func(set ast.SelectionSet) bool
	in = func(set ast.SelectionSet) bool {
		for _, sel := range set {
			var dirs ast.DirectiveList
			var sub ast.SelectionSet
			switch s := sel.(type) {
			case *ast.Field:
				dirs, sub = s.Directives, s.SelectionSet
			case *ast.InlineFragment:
				dirs, sub = s.Directives, s.SelectionSet
			case *ast.FragmentSpread:
				dirs = s.Directives
			}
			if dirs.ForName("skip") != nil || dirs.ForName("include") != nil || in(sub) {
				return true
			}
		}
		return false
	}
	for _, op := range doc.Operations {
		if in(op.SelectionSet) {
			return true
		}
	}
	for _, f := range doc.Fragments {
		if in(f.SelectionSet) {
			return true
		}
	}
	return false
}

// expand expands the operation as graph-gophers does before it executes it, with vars
// deciding @skip and @include: it answers the errors of the directives whose argument is
// not a Boolean (one for each as it expands the operation, a fragment's at each spread,
// where the selection stays), or, past limit selections, tooMany.
func (n *plan) expand(vars map[string]any, limit int) (errs []*gqlerrors.QueryError, tooMany bool) {
	count := 0
	skip := func(dirs ast.DirectiveList) bool {
		for _, name := range []string{"skip", "include"} {
			d := dirs.ForName(name)
			if d == nil || d.Arguments.ForName("if") == nil {
				continue
			}
			v := literal(d.Arguments.ForName("if").Value, vars)
			b, ok := v.(bool)
			switch {
			case v == nil:
				errs = append(errs, gqlerrors.Errorf("graphql: got null for non-null"))
			case !ok:
				errs = append(errs, gqlerrors.Errorf("could not unmarshal %#v (%T) into bool: incompatible type: %T", v, v, v))
			case b == (name == "skip"):
				return true
			}
		}
		return false
	}
	var walk func(set ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			if count++; count > limit {
				tooMany = true
				return
			}
			switch s := sel.(type) {
			case *ast.Field:
				if !skip(s.Directives) {
					walk(s.SelectionSet)
				}
			case *ast.InlineFragment:
				if !skip(s.Directives) {
					walk(s.SelectionSet)
				}
			case *ast.FragmentSpread:
				if fd := n.doc.Fragments.ForName(s.Name); fd != nil && !skip(s.Directives) {
					walk(fd.SelectionSet)
				}
			}
		}
	}
	walk(n.op.SelectionSet)
	return errs, tooMany
}

// newSubscriptionPlan makes the execution plan of a subscription's operation, which
// newSubscription validates; nil when the document cannot be parsed.
func (a *API) newSubscriptionPlan(query, opName string) *plan {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, a.cfg.MaxQueryBytes)
	if err != nil {
		return nil
	}
	op := operationOf(doc, opName)
	if op == nil {
		return nil
	}
	return a.plan(doc, op)
}

// rootField is how the executor resolves a root field: records answers its records (a
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
	// stream: the field is a query's list, written straight from the stored records when
	// it selects no relation (planField.list).
	stream bool
	// creates, set for a single create, answers a run of them in a row as createEach
	// does (records answers each alone).
	creates func(context.Context, []args) []created
}

// rootOf is how the executor runs the root field name of an operation of kind op, with
// the resolvers graph-gophers calls for it; false for one it does not run.
func (a *API) rootOf(op ast.Operation, name string) (*table, rootField, bool) {
	for _, t := range a.lists {
		n := t.names
		creates, updates, dels := batchNames(t.def)
		agg, _, _, _ := aggregateNames(t.def)
		switch {
		case op == ast.Query && name == n.list:
			return t, rootField{records: noted(a, "list", t.decoded), list: true, stream: true}, true
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
			clock := a.clock("create")
			return t, rootField{records: oneOf(noted(a, "create", t.create)), creates: func(ctx context.Context, calls []args) []created {
				began := clock.begin(ctx)
				defer clock.end(began)
				return t.createEach(ctx, calls)
			}, nullable: true}, true
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
func (n *plan) run(ctx context.Context, a *API, query string, vars map[string]any) response {
	if n.invalid || !n.fit(vars) {
		if errs := a.schema.ValidateWithVariables(query, vars); len(errs) > 0 {
			return response{Errors: errs}
		}
	}
	if n.refusal != "" {
		res := response{Errors: []*gqlerrors.QueryError{{Message: n.refusal}}}
		if n.tooMany {
			res.Data = json.RawMessage("null")
		}
		return res
	}
	return n.answer(ctx, a, vars)
}

// fit reports whether vars fit the variables of the document as graph-gophers' validation
// checks them.
func (n *plan) fit(vars map[string]any) bool {
	for _, v := range n.vars {
		if !checkVariable(vars[v.name], v.typ) {
			return false
		}
	}
	return true
}

// answer answers the plan's document, validated with vars and not refused, for vars. It
// writes the data where the answer's body has it, so that encode has nothing to copy.
func (n *plan) answer(ctx context.Context, a *API, vars map[string]any) response {
	vars = n.withDefaults(vars)
	w := execution{ctx: ctx, a: a, vars: vars}
	if n.directives || n.expanded > n.maxSelections {
		var tooMany bool
		if w.errs, tooMany = n.expand(vars, n.maxSelections); tooMany {
			return response{Data: json.RawMessage("null"), Errors: []*gqlerrors.QueryError{{Message: tooManySelections(n.maxSelections)}}}
		}
	}
	out := append(make([]byte, 0, 512), dataMember+"{"...)
	null, written := false, 0
	for i := range n.fields {
		f := &n.fields[i]
		if skipped(f.cond, vars) {
			continue
		}
		if f.merged > 0 {
			if n.emitted(i, vars) {
				continue
			}
			f = &n.fields[f.merged-1]
		}
		if written++; written > 1 {
			out = append(out, ',')
		}
		out = appendKey(out, f.key)
		if f.root.creates != nil && w.created[f] == nil {
			w.createRun(n, i)
		}
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
		return response{Errors: []*gqlerrors.QueryError{gqlerrors.Errorf("%s", err)}}
	}
	if null {
		return response{Data: json.RawMessage("null"), Errors: w.errs}
	}
	body := append(out, "}}"...)
	return response{Data: body[len(dataMember) : len(body)-1], Errors: w.errs, body: body}
}

// emitted reports whether the root field that fields[i] stands for (merged) was written
// before i, under the directives vars decide.
func (n *plan) emitted(i int, vars map[string]any) bool {
	m := n.fields[i].merged
	if !skipped(n.fields[m-1].cond, vars) {
		return true
	}
	for _, f := range n.fields[m:i] {
		if f.merged == m && !skipped(f.cond, vars) {
			return true
		}
	}
	return false
}

// withDefaults are vars with the operation's defaults for those absent, as graph-gophers
// has them after validation.
func (n *plan) withDefaults(vars map[string]any) map[string]any {
	if len(n.defaults) == 0 {
		return vars
	}
	with := maps.Clone(n.defaults)
	maps.Copy(with, vars)
	return with
}

// subscribed are the table and the where filter of the root field of a subscription's plan
// (it has one, asQueryOf checked) for vars.
func (n *plan) subscribed(vars map[string]any) (*table, store.Filter, error) {
	f := &n.fields[0]
	// Validation has checked the arguments' names and types.
	in, _ := planArgs(f.args, n.withDefaults(vars))
	where, err := f.t.filter(in.Where)
	return f.t, where, err
}

// execution is one request of a plan.
type execution struct {
	ctx  context.Context
	a    *API
	vars map[string]any
	errs []*gqlerrors.QueryError
	// created are the answers of the single creates a run wrote together (createRun).
	created map[*planField]*created
}

// createRun writes the run of single creates of one table that starts at the mutation's
// root field i (the fields the directives skip left out) in one store write, when it has
// more than one: their answers go to w.created, for root to write. Nothing else runs
// between the calls of a run, so its answers are those of the calls one after another.
func (w *execution) createRun(n *plan, i int) {
	t := n.fields[i].t
	var run []*planField
	var calls []args
	for k := i; k < len(n.fields); k++ {
		f := &n.fields[k]
		if skipped(f.cond, w.vars) {
			continue
		}
		if f.merged > 0 || f.t != t || f.root.creates == nil {
			break
		}
		in, _ := planArgs(f.args, w.vars)
		run, calls = append(run, f), append(calls, in)
	}
	if len(run) < 2 {
		return
	}
	if w.created == nil {
		w.created = make(map[*planField]*created, len(run))
	}
	for k, c := range run[0].root.creates(w.ctx, calls) {
		w.created[run[k]] = &c
	}
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
func (w *execution) fail(err error, path []any) {
	w.errs = append(w.errs, fieldError(w.a.public(w.ctx, err), path))
}

// root writes a root field; false when it is null.
func (w *execution) root(out []byte, f *planField) ([]byte, bool) {
	in, _ := planArgs(f.args, w.vars)
	in.unmarked = searched(in) && !f.t.highlighted(f.sels, w.vars)
	if f.root.stream && !f.relates(w.vars) {
		return w.stream(out, f, in)
	}
	path := []any{f.key}
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
	var recs []reflect.Value
	var err error
	if c := w.created[f]; c != nil {
		if err = c.err; err == nil {
			recs = []reflect.Value{c.rec}
		}
	} else {
		recs, err = f.root.records(w.ctx, in)
	}
	var lvl *level
	if err == nil {
		lvl, err = w.load(f.t, recs, f.sels)
	}
	if err != nil {
		w.fail(err, path)
		return append(out, "null"...), false
	}
	switch {
	case f.root.list:
		return w.records(out, lvl, recs, path)
	case len(recs) == 0: // product(id) of none
		return append(out, "null"...), false
	}
	return w.record(out, lvl, recs[0], path)
}

// stream writes f, a list that selects no relation; false when it is null.
func (w *execution) stream(out []byte, f *planField, in args) ([]byte, bool) {
	written, err := f.list(w.ctx, in, w.vars, out)
	if err != nil {
		w.fail(err, []any{f.key})
		return append(out, "null"...), false
	}
	return written, true
}

// load reads the relations sels select for recs, records of t, and theirs, level by level.
// As the resolvers graph-gophers runs do, the records of a many-to-one relation are read
// with their parents: its error (or one of the many-to-one relations below it) is the
// error of the field that read the parents, answered. A one-to-many relation's error is
// its own, at each parent.
func (w *execution) load(t *table, recs []reflect.Value, sels []planSel) (*level, error) {
	lvl := &level{t: t, rels: map[*planSel]*related{}}
	lvl.sels = w.selected(sels)
	for _, many := range []bool{false, true} {
		for _, s := range lvl.sels {
			if s.rel == nil || s.rel.many() != many || len(recs) == 0 {
				continue
			}
			rel := &related{}
			lvl.rels[s] = rel
			var children []reflect.Value
			var err error
			if many {
				in, _ := planArgs(s.args, w.vars)
				if rel.many, children, err = t.readMany(w.ctx, *s.rel, uidsOf(recs), in); err == nil {
					rel.next, err = w.load(s.target, children, s.sels)
				}
				if err != nil {
					rel.err = w.a.public(w.ctx, err)
				}
				continue
			}
			if rel.one, children, err = t.readOne(w.ctx, *s.rel, recs); err == nil {
				rel.next, err = w.load(s.target, children, s.sels)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return lvl, nil
}

// records writes a list of records of lvl at path; false when it is null: one of them is.
func (w *execution) records(out []byte, lvl *level, recs []reflect.Value, path []any) ([]byte, bool) {
	return w.list(out, len(recs), path, func(out []byte, i int, path []any) ([]byte, bool) {
		return w.record(out, lvl, recs[i], path)
	})
}

// list writes a list of n elements at path, each by elem; false when it is null: an element
// is, and none may be. Every element is written, so that each failure is reported.
func (w *execution) list(out []byte, n int, path []any, elem func([]byte, int, []any) ([]byte, bool)) ([]byte, bool) {
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
func (w *execution) record(out []byte, lvl *level, v reflect.Value, path []any) ([]byte, bool) {
	return w.object(out, lvl.t.names.typ, lvl.sels, path, func(out []byte, s *planSel, path []any) ([]byte, bool) {
		return w.field(out, lvl, v, s, path)
	})
}

// object writes an object at path: its selections sels, __typename as typename, the others
// by value; false when it is null: a non-null field of it is. Every field is written, so
// that each failure below it is reported.
func (w *execution) object(out []byte, typename string, sels []*planSel, path []any, value func([]byte, *planSel, []any) ([]byte, bool)) ([]byte, bool) {
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
func (w *execution) connection(out []byte, f *planField, in args, path []any) ([]byte, bool) {
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
	// The nodes' relations are read with the page, as its resolver does.
	sels := w.selected(f.sels)
	levels := map[*planSel]*level{}
	for _, s := range sels {
		for _, e := range w.selected(s.sels) {
			if s.part == "edges" && e.part == "node" {
				if levels[e], err = w.load(t, nodes, e.sels); err != nil {
					w.fail(err, path)
					return append(out, "null"...), false
				}
			}
		}
	}
	return w.object(out, t.names.connType, sels, path, func(out []byte, s *planSel, path []any) ([]byte, bool) {
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

// event writes ev, an event of f's table, at path; its record's relations are read level by
// level, with the event, as its resolver does.
func (w *execution) event(out []byte, f *planField, ev reflect.Value, path []any) ([]byte, bool) {
	t, rec := f.t, ev.Field(2)
	sels := w.selected(f.sels)
	levels := map[*planSel]*level{}
	for _, s := range sels {
		if s.part == "record" && !rec.IsNil() {
			var err error
			if levels[s], err = w.load(t, []reflect.Value{rec.Elem()}, s.sels); err != nil {
				w.fail(err, path)
				return append(out, "null"...), false
			}
		}
	}
	return w.object(out, t.names.event, sels, path, func(out []byte, s *planSel, path []any) ([]byte, bool) {
		switch {
		case s.part == "op":
			return appendString(out, ev.Field(0).String()), true
		case s.part == "uid":
			return appendJSON(out, ev.Field(1).Interface()), true
		case rec.IsNil():
			return append(out, "null"...), true
		}
		// The record may be null: a null inside it stops there.
		out, _ = w.record(out, levels[s], rec.Elem(), path)
		return out, true
	})
}

// figures writes an aggregate of f's table at path: the figures its selections name,
// computed by the store.
func (w *execution) figures(out []byte, f *planField, in args, path []any) ([]byte, bool) {
	sels := w.selected(f.sels)
	var paths []string
	for _, s := range sels {
		for _, c := range w.selected(s.sels) {
			// Each figure once, as graph-gophers names the selected fields: the store
			// computes it, and the budget charges it, once whatever its aliases.
			if p := s.part + "." + c.part; !c.typename() && !slices.Contains(paths, p) {
				paths = append(paths, p)
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
func (w *execution) selected(all []planSel) []*planSel {
	return selectedOf(all, w.vars)
}

// appendJSON writes v as encoding/json does, as graph-gophers writes a scalar.
func appendJSON(out []byte, v any) []byte {
	js, _ := json.Marshal(v)
	return append(out, js...)
}

// parts adds the selections of an object the executor writes field by field (a connection,
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
func (w *execution) field(out []byte, lvl *level, v reflect.Value, s *planSel, path []any) ([]byte, bool) {
	mark := len(out)
	rel := lvl.rels[s]
	switch {
	case s.file:
		return w.file(out, v, s, path)
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
