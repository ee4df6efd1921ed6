package gql

import (
	"math"
	"strings"

	gast "github.com/graph-gophers/graphql-go/ast"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// DefaultMaxCost bounds the records a document may answer by its estimate, before it runs:
// the node limit GitHub's GraphQL API sets. Four lists of 1,000 records, each with a to-many
// relation of the default page size, estimate 404,000; a few aliased lists of 1,000 records
// with their to-one relations, a few thousand. The budget then bounds what they answer.
const DefaultMaxCost = 500_000

// DefaultMaxRecords bounds the records one request reads (lists, connections, relations,
// the records mutations answer).
const DefaultMaxRecords = 100_000

// CheapCost is the estimate up to which a document runs even when the process is under
// memory pressure (Config.Pressure): a fetch by uid, or a list of up to the default page
// size of 100 records.
const CheapCost = 100

// shape is what the endpoint reads of a document before running it: the cost estimate, the
// records it may answer (each list counts its limit, or the default page size, times the
// records it hangs from; a to-one relation or another object 1 per parent; a root field at
// least 1; no field more than the records a request may read), and what the budget charges
// per record (budget.scale, budget.over).
type shape struct {
	cost        int64
	scale, over int64
	// doc and op are kept when the estimate depends on the request's variables (a limit
	// given by a variable), so that a request whose worst case passes a bound is estimated
	// again with its own.
	doc *ast.QueryDocument
	op  *ast.OperationDefinition
}

// shapeOf is the shape of the operation opName selects in query, variables at their worst;
// the zero shape for a document that does not parse or names no operation (graph-gophers
// then says why, before anything runs).
func (a *API) shapeOf(query, opName string) shape {
	if a.schema == nil {
		return shape{}
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, a.cfg.MaxQueryBytes)
	if err != nil {
		return shape{}
	}
	op := operationOf(doc, opName)
	if op == nil {
		return shape{}
	}
	w := costWalk{a: a, schema: a.schema.AST(), doc: doc}
	s := w.shape(op, nil)
	if w.varies {
		s.doc, s.op = doc, op
	}
	return s
}

// costOf is the estimate of s for a request with vars.
func (a *API) costOf(s shape, vars map[string]any) int64 {
	if s.doc == nil {
		return s.cost
	}
	with := defaultsOf(s.op)
	for k, v := range vars {
		with[k] = v
	}
	w := costWalk{a: a, schema: a.schema.AST(), doc: s.doc}
	return w.shape(s.op, with).cost
}

// costWalk walks an operation's selections through fragments, as executors merge them.
type costWalk struct {
	a      *API
	schema *gast.Schema
	doc    *ast.QueryDocument
	// vars are the request's; nil: every variable at its worst, and varies notes that one
	// was met.
	vars   map[string]any
	varies bool
	steps  int
	cost   int64
	scale  int64
	over   int64
}

func (w *costWalk) shape(op *ast.OperationDefinition, vars map[string]any) shape {
	w.vars = vars
	w.scale = 1
	// The schema names its roots Query, Mutation and Subscription.
	root := capitalized(string(op.Operation))
	w.set([]ast.SelectionSet{op.SelectionSet}, root, 1, -1, 1, true)
	return shape{cost: w.cost, scale: w.scale, over: w.over}
}

// keyed is the fields of a selection set under one response key.
type keyed struct {
	key    string
	fields []*ast.Field
}

// set walks the merged selection sets sets of an object of type typ, placed parents times;
// first is the page size of a connection's edges (in a connection or an edge; -1 elsewhere),
// mult the times a record here may be answered per charge of its ancestors.
func (w *costWalk) set(sets []ast.SelectionSet, typ string, parents, first, mult int64, root bool) {
	obj, _ := w.schema.Types[typ].(*gast.ObjectTypeDefinition)
	var groups []*keyed
	byKey := map[string]*keyed{}
	for _, s := range sets {
		w.flatten(s, map[string]bool{}, func(f *ast.Field) {
			g := byKey[f.Alias]
			if g == nil {
				g = &keyed{key: f.Alias}
				byKey[f.Alias] = g
				groups = append(groups, g)
			}
			g.fields = append(g.fields, f)
		})
	}
	keys := map[string]int64{} // field name -> response keys
	var over, dup int64
	for _, g := range groups {
		name := g.fields[0].Name
		over += int64(len(g.key)) + 4
		if name == "__typename" {
			over += 32
		}
		keys[name]++
		dup = max(dup, keys[name])
	}
	if !root {
		// The root's keys are written once; a record's, once per record.
		w.over = max(w.over, over)
		mult = sat(mult, dup)
		w.scale = max(w.scale, mult)
	}
	for _, g := range groups {
		f := g.fields[0]
		if strings.HasPrefix(f.Name, "__") || obj == nil {
			continue
		}
		fd := obj.Fields.Get(f.Name)
		if fd == nil {
			continue
		}
		child, list := unwrap(fd.Type)
		if _, isObj := w.schema.Types[child].(*gast.ObjectTypeDefinition); !isObj {
			if root {
				w.cost = satAdd(w.cost, 1)
			}
			continue
		}
		n := int64(1)
		switch {
		case first >= 0 && f.Name == "edges":
			n = first
		case list:
			n = w.listSize(f)
		}
		// No field places more records than a request may read: past that the budget stops
		// it, whatever the estimate.
		placed := min(sat(parents, n), w.a.cfg.MaxRecords)
		if first < 0 || f.Name != "node" {
			// An edge of a connection and its node are one record.
			w.cost = satAdd(w.cost, max(placed, 1))
		}
		// A connection's page size holds in it and its edges, not in the records below.
		childFirst := int64(-1)
		switch {
		case fd.Arguments.Get("first") != nil:
			childFirst = w.intArg(f, "first", int64(w.a.cfg.DefaultLimit))
		case first >= 0 && f.Name == "edges":
			childFirst = first
		}
		subs := make([]ast.SelectionSet, len(g.fields))
		for i, gf := range g.fields {
			subs[i] = gf.SelectionSet
		}
		w.set(subs, child, placed, childFirst, mult, false)
	}
}

// listSize is how many records a list field f may answer: one for a uid; the records of a
// batch's data; else its limit or the default page size.
func (w *costWalk) listSize(f *ast.Field) int64 {
	if uid := f.Arguments.ForName("uid"); uid != nil {
		if v := w.value(uid.Value); v != nil {
			return 1
		}
	}
	if data := f.Arguments.ForName("data"); data != nil {
		switch v := w.value(data.Value).(type) {
		case []any:
			return int64(len(v))
		case nil:
			return MaxBatch
		}
		return 1
	}
	return w.intArg(f, "limit", int64(w.a.cfg.DefaultLimit))
}

// intArg is f's Int argument name, between 0 and the largest limit; def when it is absent
// or null, the largest limit for a variable not known yet.
func (w *costWalk) intArg(f *ast.Field, name string, def int64) int64 {
	arg := f.Arguments.ForName(name)
	if arg == nil {
		return def
	}
	switch v := w.value(arg.Value).(type) {
	case int32:
		return min(max(int64(v), 0), int64(w.a.cfg.MaxLimit))
	case float64:
		if v >= 0 && v <= math.MaxInt32 {
			return min(int64(v), int64(w.a.cfg.MaxLimit))
		}
	case nil:
		if arg.Value.Kind == ast.Variable && w.vars == nil {
			return int64(w.a.cfg.MaxLimit)
		}
		return def
	}
	return def
}

// value is v as resolvers get it; nil for a variable when the request's are not known yet
// (varies notes it).
func (w *costWalk) value(v *ast.Value) any {
	if v.Kind == ast.Variable && w.vars == nil {
		w.varies = true
		return nil
	}
	return literal(v, w.vars)
}

// flatten calls fn with each field of set through fragments, at most as many as the
// operation may expand to (graph-gophers refuses more).
func (w *costWalk) flatten(set ast.SelectionSet, spreading map[string]bool, fn func(*ast.Field)) {
	for _, sel := range set {
		if w.steps++; w.steps > w.a.cfg.MaxSelections {
			return
		}
		switch s := sel.(type) {
		case *ast.Field:
			fn(s)
		case *ast.InlineFragment:
			w.flatten(s.SelectionSet, spreading, fn)
		case *ast.FragmentSpread:
			fd := w.doc.Fragments.ForName(s.Name)
			if fd == nil || spreading[s.Name] {
				continue
			}
			spreading[s.Name] = true
			w.flatten(fd.SelectionSet, spreading, fn)
			delete(spreading, s.Name)
		}
	}
}

// unwrap is the name of the type t wraps, and whether a list wraps it.
func unwrap(t gast.Type) (string, bool) {
	list := false
	for {
		switch u := t.(type) {
		case *gast.NonNull:
			t = u.OfType
		case *gast.List:
			list, t = true, u.OfType
		case gast.NamedType:
			return u.TypeName(), list
		default:
			return "", list
		}
	}
}

// costCap keeps estimates and scales far from overflow: past it, any limit is passed.
const costCap = 1 << 40

func sat(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > costCap/b {
		return costCap
	}
	return a * b
}

func satAdd(a, b int64) int64 { return min(a+b, costCap) }
