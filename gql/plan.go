package gql

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	gast "github.com/graph-gophers/graphql-go/ast"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/platform-dev/platform/store"
)

// A plan runs a document that only reads tables' scalar fields without graph-gophers, which
// parses, validates and walks the document with reflect on every request (v1.11.0 has no
// API to keep a prepared one). graph-gophers validates the document once, when the plan is
// made; each request then checks its variables as graph-gophers would, reads the records
// with the resolvers' own code (table.scan) and writes the answer graph-gophers would write,
// byte for byte. Whatever a plan does not cover falls back to graph-gophers: a document of
// another shape gets no plan, and a request that would answer any error (variables that do
// not fit, an argument the table refuses, a failed read) runs again there. Plans only read,
// so running a request twice changes nothing.
type plan struct {
	// vars are the variables of every operation of the document: graph-gophers checks
	// them all, whichever operation runs.
	vars []planVar
	// defaults are the default values of the running operation's variables.
	defaults map[string]any
	fields   []planField
}

type planVar struct {
	name string
	typ  gast.Type
}

// planField is a root field: a table's list, or __typename (t nil); in a nested plan, any
// root field of a table that root resolves.
type planField struct {
	key  string // the response key, alias or name
	cond []condition
	t    *table
	args []planArg
	sels []planSel
	// fixed are the selections written, one per response key, when no directive decides.
	fixed []*planSel
	keys  storedKeys
	root  rootField
	// clock times a list field.
	clock resolverClock
}

type planArg struct {
	name  string
	value *ast.Value
}

// planSel is one scalar of the record type: the record struct's field index, or
// __typename (index -1); or, in a nested plan (nested.go), a relation (rel set, index -1)
// or a part of a connection (part set, index -1).
type planSel struct {
	key   string
	cond  []condition
	index int
	list  bool
	// rel is the relation, target its table, args the field's arguments and sels the
	// related record's selections.
	rel    *Relation
	target *table
	args   []planArg
	sels   []planSel
	// part is the field of a connection, an edge or a page a selection of a connection
	// names (nested.go); sels are those of edges and pageInfo, and the record's of node.
	part string
}

// typename: the selection is __typename.
func (s *planSel) typename() bool { return s.index < 0 && s.rel == nil && s.part == "" }

// condition is an @include or @skip of a selection or of a fragment around it.
type condition struct {
	include bool
	value   *ast.Value
}

// newPlan makes the plan of the operation opName selects in query, or returns nil when the
// document is not one a plan runs exactly as graph-gophers does.
func (a *API) newPlan(query, opName string) *plan {
	// graph-gophers and gqlparser unescape string literals by different rules: a plan
	// reads only documents where both read the same text.
	if a.schema == nil || len(query) > a.cfg.MaxQueryBytes || strings.Contains(query, `\`) || strings.Contains(query, `"""`) {
		return nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, a.cfg.MaxQueryBytes)
	if err != nil {
		return nil
	}
	op := operationOf(doc, opName)
	if op == nil || op.Operation != ast.Query {
		return nil
	}
	// Validation without variables finds every error but those of the variables' values,
	// which each request checks (checkVariable); those say a required variable is null.
	for _, e := range a.schema.Validate(query) {
		if e.Rule != "VariablesOfCorrectType" {
			return nil
		}
	}
	p := &plan{defaults: map[string]any{}}
	types := a.schema.AST()
	for _, o := range doc.Operations {
		for _, v := range o.VariableDefinitions {
			t := schemaType(types, v.Type)
			if t == nil {
				return nil
			}
			p.vars = append(p.vars, planVar{name: v.Variable, typ: t})
		}
	}
	p.defaults = defaultsOf(op)
	b := planBuilder{a: a, doc: doc, op: op.Operation, keys: map[string]bool{}}
	if !b.root(op.SelectionSet, nil) {
		return nil
	}
	tables := 0
	for _, f := range b.fields {
		if f.t != nil {
			tables++
		}
	}
	if tables == 0 {
		// Only __typename: graph-gophers runs that on the meta schema.
		return nil
	}
	for i := range b.fields {
		f := &b.fields[i]
		if f.t != nil && !conditional(f.sels) {
			f.fixed, _ = f.selected(nil)
		}
	}
	p.fields = b.fields
	return p
}

// operationOf is the operation opName selects in doc as graph-gophers picks it; nil when
// there is none.
func operationOf(doc *ast.QueryDocument, opName string) *ast.OperationDefinition {
	switch {
	case opName != "":
		return doc.Operations.ForName(opName)
	case len(doc.Operations) == 1:
		return doc.Operations[0]
	}
	return nil
}

func conditional(sels []planSel) bool {
	for _, s := range sels {
		if len(s.cond) > 0 {
			return true
		}
	}
	return false
}

// selected are the record's selections that vars do not skip, the first of each response
// key, as graph-gophers merges them; ok is false when a directive's argument is not a
// Boolean.
func (f *planField) selected(vars map[string]any) (sels []*planSel, ok bool) {
	return selectedOf(f.sels, vars)
}

// selectedOf are the selections of all that vars do not skip, the first of each response
// key; ok is false when a directive's argument is not a Boolean.
func selectedOf(all []planSel, vars map[string]any) (sels []*planSel, ok bool) {
	sels = make([]*planSel, 0, len(all))
	seen := make(map[string]bool, len(all))
	for i := range all {
		s := &all[i]
		skip, ok := skipped(s.cond, vars)
		if !ok {
			return nil, false
		}
		if !skip && !seen[s.key] {
			seen[s.key] = true
			sels = append(sels, s)
		}
	}
	return sels, true
}

// defaultsOf are the default values of op's variables.
func defaultsOf(op *ast.OperationDefinition) map[string]any {
	out := map[string]any{}
	for _, v := range op.VariableDefinitions {
		if v.DefaultValue != nil {
			out[v.Variable] = literal(v.DefaultValue, nil)
		}
	}
	return out
}

// planBuilder flattens an operation's selections through fragments, as graph-gophers does.
// A nested one (nested.go) takes relations too, and says why when it gives up.
type planBuilder struct {
	a        *API
	doc      *ast.QueryDocument
	op       ast.Operation
	fields   []planField
	keys     map[string]bool
	expanded int
	nested   bool
	why      string
	// cutField is the relation that makes the plan nested, as type.field.
	cutField string
	// tooMany: the operation expands to more selections than graph-gophers takes.
	tooMany bool
}

// expand counts one more selection; false past the limit graph-gophers stops at.
func (b *planBuilder) expand() bool {
	b.expanded++
	b.tooMany = b.expanded > b.a.cfg.MaxSelections
	if b.tooMany {
		b.why = fmt.Sprintf("query expands to too many selections (limit %d)", b.a.cfg.MaxSelections)
	}
	return !b.tooMany
}

// each calls fn with each field of set, flattened through fragments, with the conditions
// around it; false when fn answers false, or at the selection limit, where graph-gophers
// stops expanding (fragments spread in fragments multiply).
func (b *planBuilder) each(set ast.SelectionSet, cond []condition, fn func(f *ast.Field, cond []condition) bool) bool {
	for _, sel := range set {
		if !b.expand() {
			return false
		}
		switch s := sel.(type) {
		case *ast.Field:
			if !fn(s, with(cond, s.Directives)) {
				return false
			}
		case *ast.InlineFragment:
			if !b.each(s.SelectionSet, with(cond, s.Directives), fn) {
				return false
			}
		case *ast.FragmentSpread:
			fd := b.doc.Fragments.ForName(s.Name)
			if fd == nil || !b.each(fd.SelectionSet, with(cond, s.Directives), fn) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// root adds the root fields of set; false when one is not a table's list or __typename (in
// a nested plan, a root field rootOf resolves).
func (b *planBuilder) root(set ast.SelectionSet, cond []condition) bool {
	return b.each(set, cond, func(s *ast.Field, cond []condition) bool {
		merged := b.keys[s.Alias]
		if merged && !b.nested {
			// Fields merged under one key: left to graph-gophers.
			return false
		}
		b.keys[s.Alias] = true
		f := planField{key: s.Alias, cond: cond}
		if s.Name != "__typename" {
			t := b.a.lists[s.Name]
			if b.nested {
				var ok bool
				if t, f.root, ok = b.a.rootOf(b.op, s.Name); !ok {
					b.why = fmt.Sprintf("%s cannot be selected in the same operation as %s, which closes a cycle of relations: send it in an operation of its own", s.Name, b.cutField)
					return false
				}
			}
			if t == nil {
				return false
			}
			f.t, f.keys, f.clock = t, newStoredKeys(t), b.a.clock("list")
			for _, arg := range s.Arguments {
				f.args = append(f.args, planArg{name: arg.Name, value: arg.Value})
			}
			if f.root.conn != nil || f.root.figures != nil || f.root.event != nil {
				if !b.parts(t, s.SelectionSet, &f.sels) {
					return false
				}
			} else if !b.record(t, t.scalarFields(), s.SelectionSet, nil, &f.sels) {
				return false
			}
		}
		if !merged {
			b.fields = append(b.fields, f)
			return true
		}
		// Validation has checked that the fields under one key are the same field, with
		// the same arguments.
		i := slices.IndexFunc(b.fields, func(p planField) bool { return p.key == f.key })
		if !sameConditions(b.fields[i].cond, f.cond) {
			b.why = fmt.Sprintf("%s is selected under the key %q more than once with different @include or @skip: select it once", s.Name, f.key)
			return false
		}
		return b.mergeAll(s.Name, f.sels, &b.fields[i].sels)
	})
}

// record adds the selections of a record of t; false when one is not a scalar of its own
// (in a nested plan, a relation).
func (b *planBuilder) record(t *table, idx map[string]int, set ast.SelectionSet, cond []condition, out *[]planSel) bool {
	return b.each(set, cond, func(s *ast.Field, cond []condition) bool {
		ps := planSel{key: s.Alias, cond: cond, index: -1}
		if s.Name != "__typename" {
			i, ok := idx[s.Name]
			if !ok && b.nested {
				if r, isRel := t.relation(s.Name); isRel {
					return b.relation(t, r, s, ps.cond, out)
				}
			}
			if !ok {
				return false
			}
			ps.index = i
			if f, ok := t.def.Field(s.Name); ok {
				ps.list = f.Type.List
			}
		}
		*out = append(*out, ps)
		return true
	})
}

// relation adds a relation field of a record of t, with the selections of the related
// record.
func (b *planBuilder) relation(t *table, r Relation, s *ast.Field, cond []condition, out *[]planSel) bool {
	target := t.related[r.Table]
	ps := planSel{key: s.Alias, cond: cond, index: -1, rel: &r, target: target}
	for _, arg := range s.Arguments {
		ps.args = append(ps.args, planArg{name: arg.Name, value: arg.Value})
	}
	return b.record(target, target.scalarFields(), s.SelectionSet, nil, &ps.sels) && b.merge(t.names.typ+"."+r.Name, ps, out)
}

// merge adds ps, a selection with selections of its own (a relation, or a part of a
// connection), to out; a second one under the same key adds its selections to the first,
// merging theirs in turn, as graph-gophers merges them.
func (b *planBuilder) merge(name string, ps planSel, out *[]planSel) bool {
	for i := range *out {
		o := &(*out)[i]
		if o.key != ps.key || len(o.sels) == 0 {
			continue
		}
		if !sameConditions(o.cond, ps.cond) {
			b.why = fmt.Sprintf("%s is selected under the key %q more than once with different @include or @skip: select it once", name, ps.key)
			return false
		}
		return b.mergeAll(name, ps.sels, &o.sels)
	}
	*out = append(*out, ps)
	return true
}

// mergeAll adds sels, the selections of a field under a key already selected, to out, the
// selections of the first, as graph-gophers merges them.
func (b *planBuilder) mergeAll(name string, sels []planSel, out *[]planSel) bool {
	for _, c := range sels {
		if len(c.sels) == 0 {
			*out = append(*out, c)
		} else if !b.merge(name+"."+c.key, c, out) {
			return false
		}
	}
	return true
}

func sameConditions(a, b []condition) bool {
	return slices.EqualFunc(a, b, func(x, y condition) bool {
		return x.include == y.include && x.value.Kind == y.value.Kind && x.value.Raw == y.value.Raw
	})
}

// relation is the relation of t named name.
func (t *table) relation(name string) (Relation, bool) {
	for _, r := range t.def.Relations {
		if r.Name == name {
			return r, true
		}
	}
	return Relation{}, false
}

// with is cond and the @include and @skip of dirs.
func with(cond []condition, dirs ast.DirectiveList) []condition {
	for _, d := range dirs {
		if d.Name != "include" && d.Name != "skip" {
			continue
		}
		arg := d.Arguments.ForName("if")
		if arg == nil {
			continue
		}
		cond = append(cond[:len(cond):len(cond)], condition{include: d.Name == "include", value: arg.Value})
	}
	return cond
}

// scalarFields maps the names of the record type's own scalars (not its relations) to their
// index in the record struct.
func (t *table) scalarFields() map[string]int {
	idx := map[string]int{}
	for i := range t.rec.NumField() {
		name := t.rec.Field(i).Tag.Get("graphql")
		if _, ok := t.def.Field(name); ok || name == fieldUID || name == fieldCreatedAt || name == fieldUpdatedAt {
			idx[name] = i
		}
	}
	idx[fieldID] = idx[fieldUID]
	return idx
}

// schemaType is graph-gophers' type of a variable, nil for a type the schema lacks.
func schemaType(s *gast.Schema, t *ast.Type) gast.Type {
	var out gast.Type
	if t.Elem != nil {
		elem := schemaType(s, t.Elem)
		if elem == nil {
			return nil
		}
		out = &gast.List{OfType: elem}
	} else {
		named, ok := s.Types[t.NamedType]
		if !ok {
			return nil
		}
		out = named
	}
	if t.NonNull {
		out = &gast.NonNull{OfType: out}
	}
	return out
}

// literal is a value of the document as graph-gophers hands it to resolvers: Int as int32
// (int64 beyond), Float as float64, enums as strings, a variable as its value in vars.
func literal(v *ast.Value, vars map[string]any) any {
	switch v.Kind {
	case ast.Variable:
		return vars[v.Raw]
	case ast.IntValue:
		n, err := strconv.ParseInt(v.Raw, 10, 64)
		if err != nil {
			// Validation refused the document before a plan could hold it.
			return nil
		}
		if n < -1<<31 || n > 1<<31-1 {
			return n
		}
		return int32(n)
	case ast.FloatValue:
		f, _ := strconv.ParseFloat(v.Raw, 64)
		return f
	case ast.StringValue, ast.BlockValue, ast.EnumValue:
		return v.Raw
	case ast.BooleanValue:
		return v.Raw == "true"
	case ast.ListValue:
		out := make([]any, len(v.Children))
		for i, c := range v.Children {
			out[i] = literal(c.Value, vars)
		}
		return out
	case ast.ObjectValue:
		out := make(map[string]any, len(v.Children))
		for _, c := range v.Children {
			out[c.Name] = literal(c.Value, vars)
		}
		return out
	}
	return nil
}

// checkVariable reports whether graph-gophers' validation accepts val for a variable of
// type t (its validateValue adds no error).
func checkVariable(val any, t gast.Type) bool {
	switch t := t.(type) {
	case *gast.NonNull:
		return val != nil && checkVariable(val, t.OfType)
	case *gast.List:
		l, ok := val.([]any)
		if !ok {
			return val == nil || checkVariable(val, t.OfType)
		}
		for _, e := range l {
			if !checkVariable(e, t.OfType) {
				return false
			}
		}
		return true
	case *gast.EnumTypeDefinition:
		if val == nil {
			return true
		}
		s, ok := val.(string)
		if !ok {
			return false
		}
		for _, v := range t.EnumValuesDefinition {
			if v.EnumValue == s {
				return true
			}
		}
		return false
	case *gast.InputObject:
		if val == nil {
			return true
		}
		in, ok := val.(map[string]any)
		if !ok || t.Directives.Get("oneOf") != nil {
			return false
		}
		for name := range in {
			if t.Values.Get(name) == nil {
				return false
			}
		}
		for _, f := range t.Values {
			if !checkVariable(in[f.Name.Name], f.Type) {
				return false
			}
		}
		return true
	}
	return true
}

// run appends the plan's data for vars to out; false when graph-gophers must answer
// instead, or the document has no plan (p nil).
func (p *plan) run(ctx context.Context, a *API, vars map[string]any, out []byte) ([]byte, bool) {
	if p == nil {
		return nil, false
	}
	for _, v := range p.vars {
		if !checkVariable(vars[v.name], v.typ) {
			return nil, false
		}
	}
	if len(p.defaults) > 0 {
		// As graph-gophers does after validation: a default stands for an absent variable.
		with := make(map[string]any, len(vars)+len(p.defaults))
		for k, v := range p.defaults {
			with[k] = v
		}
		for k, v := range vars {
			with[k] = v
		}
		vars = with
	}
	out = append(out, '{')
	n := 0
	for i := range p.fields {
		f := &p.fields[i]
		skip, ok := skipped(f.cond, vars)
		if !ok {
			return nil, false
		}
		if skip {
			continue
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = appendKey(out, f.key)
		if f.t == nil {
			out = append(out, `"Query"`...)
			continue
		}
		if out, ok = f.list(ctx, a, vars, out); !ok {
			return nil, false
		}
	}
	return append(out, '}'), ctx.Err() == nil
}

// list writes a table's list field.
func (f *planField) list(ctx context.Context, a *API, vars map[string]any, out []byte) ([]byte, bool) {
	in, ok := planArgs(f.args, vars)
	if !ok {
		return nil, false
	}
	// The selections are the same for every record: settle their directives once.
	sels := f.fixed
	if sels == nil {
		var ok bool
		if sels, ok = f.selected(vars); !ok {
			return nil, false
		}
	}
	out = append(out, '[')
	start := len(out)
	// As noted does for the list resolver, without wrapping a closure in another per request.
	began := f.clock.begin(ctx)
	err := f.t.scan(ctx, in, func(rec store.Record) (bool, error) {
		if len(out) > start {
			out = append(out, ',')
		}
		mark := len(out)
		var ok bool
		if out, ok = appendStored(out, f.t, f.keys, rec, sels); ok {
			return true, nil
		}
		v, err := f.t.decode(rec)
		if err != nil {
			return false, err
		}
		out, err = appendRecord(out[:mark], f.t, v, sels)
		return err == nil, err
	})
	f.clock.end(began)
	if err != nil {
		return nil, false
	}
	return append(out, ']'), true
}

// planArgs are a field's arguments as graph-gophers hands them to the resolvers; false for
// an argument no list, connection, relation or mutation takes.
func planArgs(list []planArg, vars map[string]any) (args, bool) {
	var in args
	for _, arg := range list {
		v := argValue{set: true, v: literal(arg.value, vars)}
		switch arg.name {
		case "uid":
			in.UID = v
		case "id":
			in.ID = v
		case "where":
			in.Where = v
		case "orderBy":
			in.OrderBy = v
		case "limit":
			in.Limit = v
		case "offset":
			in.Offset = v
		case "data":
			in.Data = v
		case "first":
			in.First = v
		case "after":
			in.After = v
		default:
			return in, false
		}
	}
	return in, true
}

// skipped evaluates conditions as graph-gophers does; ok is false when one is not a
// Boolean, which graph-gophers answers with an error.
func skipped(cond []condition, vars map[string]any) (skip, ok bool) {
	for _, c := range cond {
		b, isBool := literal(c.value, vars).(bool)
		if !isBool {
			return false, false
		}
		if b != c.include {
			skip = true
		}
	}
	return skip, true
}

// appendRecord writes the selected fields of rec, a value of t's record type, as
// graph-gophers writes them: each scalar as encoding/json marshals its Go value, a nil
// pointer as null, a list element by element.
func appendRecord(out []byte, t *table, rec reflect.Value, sels []*planSel) ([]byte, error) {
	var err error
	out, _ = appendObject(out, t.names.typ, sels, func(out []byte, s *planSel) ([]byte, bool) {
		out, err = appendField(out, rec, s)
		return out, err == nil
	})
	return out, err
}

// appendField writes the scalar s selects of rec as appendRecord does.
func appendField(out []byte, rec reflect.Value, s *planSel) ([]byte, error) {
	v := rec.Field(s.index)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return append(out, "null"...), nil
		}
		v = v.Elem()
	}
	if !s.list {
		return appendScalar(out, v)
	}
	out = append(out, '[')
	for j := range v.Len() {
		if j > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = appendScalar(out, v.Index(j)); err != nil {
			return out, err
		}
	}
	return append(out, ']'), nil
}

// appendObject writes one object's selections: __typename as typename, the others by value;
// false as soon as value answers false.
func appendObject(out []byte, typename string, sels []*planSel, value func([]byte, *planSel) ([]byte, bool)) ([]byte, bool) {
	out = append(out, '{')
	for i, s := range sels {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendKey(out, s.key)
		if s.typename() {
			out = appendString(out, typename)
			continue
		}
		var ok bool
		if out, ok = value(out, s); !ok {
			return out, false
		}
	}
	return append(out, '}'), true
}

func appendKey(out []byte, key string) []byte {
	out = append(out, '"')
	out = append(out, key...)
	return append(out, '"', ':')
}

// appendScalar writes one scalar as graph-gophers does, through encoding/json, with short
// cuts that write the same bytes without its allocations: strings that need no escape,
// numbers and booleans as encoding/json formats them, times as stamp does. v is addressable.
func appendScalar(out []byte, v reflect.Value) ([]byte, error) {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); plain(s) {
			return appendString(out, s), nil
		}
	case reflect.Int32:
		return strconv.AppendInt(out, v.Int(), 10), nil
	case reflect.Bool:
		return strconv.AppendBool(out, v.Bool()), nil
	case reflect.Float64:
		if f := v.Float(); !math.IsInf(f, 0) && !math.IsNaN(f) {
			return store.AppendJSONFloat(out, f), nil
		}
	case reflect.Struct:
		if s, ok := v.Addr().Interface().(*stamp); ok {
			return s.append(out), nil
		}
	}
	js, err := json.Marshal(v.Interface())
	return append(out, js...), err
}

// appendString quotes a string that plain accepts.
func appendString(out []byte, s string) []byte {
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"')
}

// plain reports whether s is printable ASCII that JSON writes without escapes: encoding/json
// escapes " \ < > & and control characters, and strconv.Quote (graphql.ID's MarshalJSON)
// escapes the same quote and backslash.
func plain[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
