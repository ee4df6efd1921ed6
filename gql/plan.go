package gql

// The executor's plan (exec.go) of an operation: its root fields and, below each, the
// selections of records, relations and the parts of connections, aggregates and events,
// flattened through fragments with the directives that decide them; and the writers of
// records straight from the store (a list without relations) or from decoded values.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"

	gast "github.com/graph-gophers/graphql-go/ast"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/platform-dev/platform/store"
)

// planVar is a variable of a document, with the type graph-gophers checks its value against.
type planVar struct {
	name string
	typ  gast.Type
}

// planField is a root field: one rootOf resolves, or __typename (t nil).
type planField struct {
	key  string // the response key, alias or name
	cond []condition
	// merged and branched: as planSel's.
	merged   int
	branched bool
	t        *table
	args     []planArg
	sels     []planSel
	// fixed are the selections written, one per response key, when no directive decides;
	// related: a selection of the records is a relation.
	fixed   []*planSel
	related bool
	root    rootField
	// clock times a list field.
	clock resolverClock
}

type planArg struct {
	name  string
	value *ast.Value
}

// planSel is one scalar of the record type: the record struct's field index, or
// __typename (index -1); or a relation (rel set, index -1), or a part of a connection, an
// aggregate or an event (part set, index -1).
type planSel struct {
	key  string
	cond []condition
	// merged, when set, is 1 + the index of the selection this one, another occurrence
	// under key with other directives, was merged into (branch); branched: this one had
	// others merged so.
	merged   int
	branched bool
	index    int
	list     bool
	// rel is the relation, target its table, args the field's arguments and sels the
	// related record's selections.
	rel    *Relation
	target *table
	args   []planArg
	sels   []planSel
	// part is the field of a connection, an edge or a page a selection of a connection
	// names (exec.go); sels are those of edges and pageInfo, and the record's of node.
	part string
	// file: the selection is a File field (index set), sels its File's (files.go).
	file bool
}

// typename: the selection is __typename.
func (s *planSel) typename() bool { return s.index < 0 && s.rel == nil && s.part == "" }

// condition is an @include or @skip of a selection or of a fragment around it.
type condition struct {
	include bool
	value   *ast.Value
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
// key, as graph-gophers merges them.
func (f *planField) selected(vars map[string]any) []*planSel {
	return selectedOf(f.sels, vars)
}

// selectedOf are the selections of all that vars do not skip, the first of each response
// key.
func selectedOf(all []planSel, vars map[string]any) []*planSel {
	sels := make([]*planSel, 0, len(all))
	seen := make(map[string]bool, len(all))
	for i := range all {
		s := &all[i]
		if !seen[s.key] && !skipped(s.cond, vars) {
			seen[s.key] = true
			if s.merged > 0 {
				s = &all[s.merged-1]
			}
			sels = append(sels, s)
		}
	}
	return sels
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

// planBuilder builds the executor's plan of an operation (exec.go): it flattens the
// selections through fragments as graph-gophers does, and says why when it gives up.
type planBuilder struct {
	a        *API
	doc      *ast.QueryDocument
	op       ast.Operation
	fields   []planField
	keys     map[string]bool
	expanded int
	why      string
	// cutField is the first relation closing a cycle the operation selects, as type.field.
	cutField string
	// tooMany: the operation expands to more selections than graph-gophers takes.
	tooMany bool
}

// planSlack bounds the selections a plan holds: graph-gophers' limit (MaxSelections) counts
// those directives leave, which each request decides (plan.expand), so a plan holds up
// to planSlack times as many before them. Plans are kept (documentsKept per API), so the
// slack is small: an operation that expands further before its directives, which few
// do, runs on graph-gophers, which refuses it or runs it.
const planSlack = 2

// tooManySelections is graph-gophers' message for an operation that expands to more than
// limit selections.
func tooManySelections(limit int) string {
	return fmt.Sprintf("query expands to too many selections (limit %d)", limit)
}

// expand counts one more selection; false past the plan's limit (planSlack).
func (b *planBuilder) expand() bool {
	b.expanded++
	b.tooMany = b.expanded > planSlack*b.a.cfg.MaxSelections
	if b.tooMany {
		b.why = tooManySelections(b.a.cfg.MaxSelections)
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

// root adds the root fields of set; false when one is neither __typename nor a field
// rootOf resolves (introspection).
func (b *planBuilder) root(set ast.SelectionSet, cond []condition) bool {
	return b.each(set, cond, func(s *ast.Field, cond []condition) bool {
		merged := b.keys[s.Alias]
		b.keys[s.Alias] = true
		f := planField{key: s.Alias, cond: cond}
		if s.Name != "__typename" {
			t, root, ok := b.a.rootOf(b.op, s.Name)
			if !ok {
				b.why = fmt.Sprintf("%s cannot be selected in the same operation as %s, which closes a cycle of relations: send it in an operation of its own", s.Name, b.cutField)
				return false
			}
			f.t, f.root, f.clock = t, root, b.a.clock("list")
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
		i := slices.IndexFunc(b.fields, func(p planField) bool { return p.key == f.key && p.merged == 0 })
		o := &b.fields[i]
		if !o.branched && sameConditions(o.cond, f.cond) {
			return b.mergeAll(s.Name, f.sels, &o.sels)
		}
		if !b.sameArgs(s.Name, f.key, o.args, f.args) {
			return false
		}
		branch(o.cond, &o.branched, o.sels, f.cond, f.sels)
		if !b.mergeAll(s.Name, f.sels, &o.sels) {
			return false
		}
		b.fields = append(b.fields, planField{key: f.key, cond: f.cond, merged: i + 1})
		return true
	})
}

// record adds the selections of a record of t: its scalars and relations.
func (b *planBuilder) record(t *table, idx map[string]int, set ast.SelectionSet, cond []condition, out *[]planSel) bool {
	return b.each(set, cond, func(s *ast.Field, cond []condition) bool {
		ps := planSel{key: s.Alias, cond: cond, index: -1}
		if s.Name != "__typename" {
			i, ok := idx[s.Name]
			if r, isRel := t.relation(s.Name); !ok && isRel {
				return b.relation(t, r, s, ps.cond, out)
			}
			if !ok {
				return false
			}
			ps.index = i
			if f, ok := t.def.Field(s.Name); ok {
				ps.list = f.Type.List
				if f.File != nil {
					return b.planFile(s, &ps) && b.merge(t.names.typ+"."+s.Name, ps, out)
				}
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
		if !o.branched && sameConditions(o.cond, ps.cond) {
			return b.mergeAll(name, ps.sels, &o.sels)
		}
		if !b.sameArgs(name, ps.key, o.args, ps.args) {
			return false
		}
		branch(o.cond, &o.branched, o.sels, ps.cond, ps.sels)
		if !b.mergeAll(name, ps.sels, &o.sels) {
			return false
		}
		*out = append(*out, planSel{key: ps.key, cond: ps.cond, index: -1, merged: i + 1})
		return true
	}
	*out = append(*out, ps)
	return true
}

// mergeAll adds sels, the selections of a field under a key already selected, to out, the
// selections of the first, as graph-gophers merges them.
func (b *planBuilder) mergeAll(name string, sels []planSel, out *[]planSel) bool {
	for _, c := range sels {
		switch {
		case c.merged > 0:
			// The selection it stands for is in out by now, merged.
			c.merged = 1 + slices.IndexFunc(*out, func(o planSel) bool { return o.key == c.key && o.merged == 0 && len(o.sels) > 0 })
			*out = append(*out, c)
		case len(c.sels) == 0:
			*out = append(*out, c)
		case !b.merge(name+"."+c.key, c, out):
			return false
		}
	}
	return true
}

// branch prepares a field selected under one key more than once with different @include or
// @skip to be merged, as graph-gophers decides each occurrence on its own: each
// occurrence's conditions (cond of the first, cond2 of the one merged in) go down to its own
// selections (sels, sels2), and the occurrence merged in leaves a stand-in at its place
// (merged), so that the field is written where its first occurrence that the request's
// directives keep is.
func branch(cond []condition, branched *bool, sels []planSel, cond2 []condition, sels2 []planSel) {
	if !*branched {
		*branched = true
		for i := range sels {
			sels[i].cond = append(slices.Clip(cond), sels[i].cond...)
		}
	}
	for i := range sels2 {
		sels2[i].cond = append(slices.Clip(cond2), sels2[i].cond...)
	}
}

// sameArgs reports whether two occurrences of the field name under key, with different
// directives, have the same arguments: graph-gophers lets them differ in variables and
// takes those of the occurrence the directives keep, which a plan does not follow.
func (b *planBuilder) sameArgs(name, key string, x, y []planArg) bool {
	same := slices.EqualFunc(x, y, func(p, q planArg) bool {
		return p.name == q.name && p.value.Kind == q.value.Kind && p.value.String() == q.value.String()
	})
	if !same {
		b.why = fmt.Sprintf("%s is selected under the key %q more than once with different arguments and @include or @skip: select it once", name, key)
	}
	return same
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
		if _, ok := t.def.Field(name); ok || name == fieldUID || name == fieldCreatedAt || name == fieldUpdatedAt || name == store.KeyHighlights {
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

// relates reports whether the records of f, a list, select a relation that vars do not
// skip.
func (f *planField) relates(vars map[string]any) bool {
	return f.related && slices.ContainsFunc(f.selected(vars), func(s *planSel) bool { return s.rel != nil || s.file })
}

// list writes a table's list field, each record straight from the stored JSON where it can
// (appendStored), else decoded.
func (f *planField) list(ctx context.Context, in args, vars map[string]any, out []byte) ([]byte, error) {
	// The selections are the same for every record: settle their directives once.
	sels := f.fixed
	if sels == nil {
		sels = f.selected(vars)
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
		if out, ok = appendStored(out, f.t, f.t.keys, rec, sels); ok {
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
		return nil, err
	}
	return append(out, ']'), nil
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
		case "search":
			in.Search = v
		default:
			return in, false
		}
	}
	return in, true
}

// skipped evaluates conditions as graph-gophers does: a condition whose argument is not a
// Boolean skips nothing (the request answers an error for it: directiveErrors).
func skipped(cond []condition, vars map[string]any) bool {
	for _, c := range cond {
		if b, ok := literal(c.value, vars).(bool); ok && b != c.include {
			return true
		}
	}
	return false
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
