package tenant

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	"github.com/google/cel-go/parser"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// Access says who may read, create, update and delete a table's records. Each rule is a
// preset or a CEL expression; an empty rule means the default, authenticated.
//
// A CEL rule sees auth (the caller's verified claims, null without a token), record (the
// stored record, for read, update and delete: its fields plus uid, _owner, createdAt and
// updatedAt) and data (the fields sent, for create and update), and must yield a bool.
type Access struct {
	Read   string `json:"read,omitempty"`
	Create string `json:"create,omitempty"`
	Update string `json:"update,omitempty"`
	Delete string `json:"delete,omitempty"`
}

// The presets.
const (
	RulePublic        = "public"
	RuleAuthenticated = "authenticated"
	RuleOwner         = "owner"
	RuleNobody        = "nobody"
)

// MaxRuleBytes bounds one rule's source.
const MaxRuleBytes = 4096

// maxRuleCost bounds the work of one rule evaluation (CEL's cost units, about one per
// operation), so a rule looping over a large list cannot stall a request.
const maxRuleCost = 100_000

var operations = []gql.Operation{gql.Read, gql.Create, gql.Update, gql.Delete}

func (a Access) rule(op gql.Operation) string {
	switch op {
	case gql.Read:
		return a.Read
	case gql.Create:
		return a.Create
	case gql.Update:
		return a.Update
	default:
		return a.Delete
	}
}

// presetSource is the CEL a preset stands for. The creator of a record becomes its owner,
// so owner on create means any signed-in caller.
func presetSource(op gql.Operation, rule string) (string, bool) {
	switch rule {
	case RulePublic:
		return "true", true
	case RuleAuthenticated:
		return "auth != null", true
	case RuleOwner:
		if op == gql.Create {
			return "auth != null", true
		}
		return "auth != null && record._owner == auth.sub", true
	case RuleNobody:
		return "false", true
	}
	return "", false
}

// check returns what is wrong with the rules of a table whose fields have the given types,
// with paths relative to "access".
func (a Access) check(fields map[string]store.FieldType) []Problem {
	var out []Problem
	for _, op := range operations {
		err := neverHolds(op, a.rule(op), fields)
		if _, cerr := compileRule(op, a.rule(op), nil); cerr != nil {
			err = cerr
		}
		if err != nil {
			out = append(out, Problem{Path: string(op), Message: err.Error()})
		}
	}
	return out
}

// neverHolds refuses a rule with a comparison that never holds, whatever the record: a field
// compared with a literal of another kind (a Float with "3", a DateTime with a string, any
// field with null), which CEL finds never equal and cannot order, or a field "in" a list
// with no element of its kind. That is never what the rule's author meant. Rules applied
// before this check still compile, to filters as exact as any other; it is made when a
// document is applied.
func neverHolds(op gql.Operation, src string, fields map[string]store.FieldType) error {
	if _, preset := presetSource(op, src); preset || src == "" {
		return nil
	}
	envs, err := ruleEnvs()
	if err != nil {
		return err
	}
	parsed, iss := envs[op].Parse(src)
	if iss.Err() != nil {
		return nil // compileRule says what is wrong
	}
	native := parsed.NativeRep()
	var problem error
	ast.PostOrderVisit(native.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if problem != nil || e.Kind() != ast.CallKind {
			return
		}
		if problem = kindClash(e.AsCall(), fields); problem != nil {
			if text, err := parser.Unparse(e, native.SourceInfo()); err == nil {
				problem = fmt.Errorf("%s never holds: %w", text, problem)
			}
		}
	}))
	return problem
}

// kindClash says why a comparison of a field with a literal never holds (nil if it may).
func kindClash(c ast.CallExpr, fields map[string]store.FieldType) error {
	args := c.Args()
	if len(args) != 2 {
		return nil
	}
	switch fn := c.FunctionName(); fn {
	case operators.Equals, operators.Less, operators.LessEquals, operators.Greater, operators.GreaterEquals:
		for _, side := range [][2]ast.Expr{{args[0], args[1]}, {args[1], args[0]}} {
			f, t, ok := typedField(side[0], fields)
			if !ok || t.List {
				continue
			}
			lit, kind, ok := literalKind(side[1])
			switch {
			case !ok || kind == scalarKind(t.Scalar):
				continue
			case lit == "null" && fn == operators.Equals:
				return fmt.Errorf("CEL fails where %s is missing, which refuses, and a stored value is never null; write !has(%s)", f, f)
			}
			return clash(f+" is "+article(string(t.Scalar)), lit, kind, t.Scalar)
		}
	case operators.In:
		if f, t, ok := typedField(args[0], fields); ok && !t.List && args[1].Kind() == ast.ListKind {
			if len(args[1].AsList().Elements()) == 0 {
				return errors.New("the list is empty")
			}
			for _, el := range args[1].AsList().Elements() {
				if _, kind, ok := literalKind(el); !ok || kind == scalarKind(t.Scalar) {
					return nil
				}
			}
			return fmt.Errorf("%s is %s and the list holds no %s: CEL finds values of different kinds never equal", f, article(string(t.Scalar)), t.Scalar)
		}
		if f, t, ok := typedField(args[1], fields); ok && t.List {
			if lit, kind, ok := literalKind(args[0]); ok && kind != scalarKind(t.Scalar) {
				return clash(f+" holds "+string(t.Scalar)+" values", lit, kind, t.Scalar)
			}
		}
	}
	return nil
}

func clash(field, lit string, kind valueKind, s store.Scalar) error {
	hint := ""
	if s == store.DateTime && kind == stringKind {
		hint = `; compare with timestamp("2026-01-01T00:00:00Z")`
	}
	return fmt.Errorf("%s and %s is %s: CEL finds values of different kinds never equal and cannot order them%s", field, lit, kindNames[kind], hint)
}

func article(s string) string {
	if strings.ContainsRune("AEIOU", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

var kindNames = map[valueKind]string{
	otherKind: "null or a list", stringKind: "a string", numberKind: "a number", boolKind: "a bool", timeKind: "a timestamp",
}

// typedField recognises record.f (a declared field or one the service keeps) and data.f (a
// declared field) when f holds values of one kind (not JSON), and returns how the rule
// writes it and its type.
func typedField(e ast.Expr, fields map[string]store.FieldType) (string, store.FieldType, bool) {
	for _, v := range []string{"record", "data"} {
		f, ok := fieldOf(e, v)
		if !ok {
			continue
		}
		t, declared := fields[f]
		if v == "record" {
			t, declared = keyType(f, fields)
		}
		return v + "." + f, t, declared && t.Scalar != store.JSON
	}
	return "", store.FieldType{}, false
}

// literalKind returns a literal as the rule writes it and its kind: a scalar, null, a list
// or timestamp("...").
func literalKind(e ast.Expr) (string, valueKind, bool) {
	if e.Kind() == ast.CallKind && e.AsCall().FunctionName() == overloads.TypeConvertTimestamp && len(e.AsCall().Args()) == 1 {
		if _, ok := literal(e.AsCall().Args()[0]); ok {
			return "timestamp(...)", timeKind, true
		}
	}
	v, ok := literal(e)
	if !ok {
		return "", otherKind, false
	}
	switch x := v.(type) {
	case nil:
		return "null", otherKind, true
	case string:
		return quote(x), stringKind, true
	case []any:
		return "a list", otherKind, true
	}
	return fmt.Sprint(v), kindOf(v), true
}

// ruleEnvs are the CEL environments of the four operations, which differ in the variables
// they declare: a read rule that names data fails to type-check. They are immutable once
// built, and building them takes milliseconds, so it happens once.
var ruleEnvs = sync.OnceValues(func() (map[gql.Operation]*cel.Env, error) {
	recordType := cel.MapType(cel.StringType, cel.DynType)
	vars := map[gql.Operation][]string{
		gql.Read:   {"auth", "record"},
		gql.Create: {"auth", "data"},
		gql.Update: {"auth", "record", "data"},
		gql.Delete: {"auth", "record"},
	}
	envs := map[gql.Operation]*cel.Env{}
	for op, names := range vars {
		opts := []cel.EnvOption{
			cel.CrossTypeNumericComparisons(true),
			cel.ParserExpressionSizeLimit(MaxRuleBytes),
			cel.ParserRecursionLimit(64),
		}
		for _, n := range names {
			if n == "auth" {
				opts = append(opts, cel.Variable(n, cel.DynType))
			} else {
				opts = append(opts, cel.Variable(n, recordType))
			}
		}
		env, err := cel.NewEnv(opts...)
		if err != nil {
			return nil, fmt.Errorf("access rule environment for %s: %w", op, err)
		}
		envs[op] = env
	}
	return envs, nil
})

// rule is one compiled access rule.
type rule struct {
	prg cel.Program
	src string
	// filter is the part of the rule a store filter expresses (nil for create), and
	// complete whether it is the whole rule.
	filter   []pushdown
	complete bool
	// anonymous: a caller without a token may pass; anyone: some caller may pass.
	anonymous, anyone bool
}

// presetKey names a preset compiled for one operation.
type presetKey struct {
	op     gql.Operation
	preset string
}

// presetRules are the presets compiled once for all projects: they name no declared field,
// so they compile the same for every table, and a compiled rule is immutable.
var presetRules = sync.OnceValues(func() (map[presetKey]*rule, error) {
	out := map[presetKey]*rule{}
	for _, op := range operations {
		for _, preset := range []string{RulePublic, RuleAuthenticated, RuleOwner, RuleNobody} {
			src, _ := presetSource(op, preset)
			r, err := compileSource(op, src, nil)
			if err != nil {
				return nil, fmt.Errorf("preset %s for %s: %w", preset, op, err)
			}
			out[presetKey{op, preset}] = r
		}
	}
	return out, nil
})

// compileRule type-checks a rule (a preset or CEL) for op, on a table whose fields have the
// given types (nil when only checking the rule).
func compileRule(op gql.Operation, src string, fields map[string]store.FieldType) (*rule, error) {
	if src == "" {
		src = RuleAuthenticated
	}
	if _, ok := presetSource(op, src); ok {
		presets, err := presetRules()
		if err != nil {
			return nil, err
		}
		return presets[presetKey{op, src}], nil
	}
	return compileSource(op, src, fields)
}

// compileSource compiles CEL source for op.
func compileSource(op gql.Operation, src string, fields map[string]store.FieldType) (*rule, error) {
	if len(src) > MaxRuleBytes {
		return nil, fmt.Errorf("rule longer than %d bytes", MaxRuleBytes)
	}
	envs, err := ruleEnvs()
	if err != nil {
		return nil, err
	}
	env := envs[op]
	checked, iss := env.Compile(src)
	if iss.Err() != nil {
		return nil, fmt.Errorf("invalid CEL rule (or use public, authenticated, owner or nobody): %v", iss.Err())
	}
	if t := checked.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("the rule yields %s; it must yield a bool", t)
	}
	// Without cel.OptOptimize: it folds "x in []" to false even where x fails (a missing
	// field), so the rule would admit records CEL refuses.
	prg, err := env.Program(checked, cel.CostLimit(maxRuleCost))
	if err != nil {
		return nil, fmt.Errorf("invalid CEL rule: %w", err)
	}
	r := &rule{prg: prg, src: src}
	native := checked.NativeRep()
	if op != gql.Create {
		tr := translator{env: env, ast: native, fields: fields}
		r.filter, r.complete = tr.conjunction(native.Expr())
	}
	// Evaluated with the caller unknown too, a rule such as nobody shows it refuses everyone.
	if r.anyone, err = mayPass(env, checked, map[string]any{}, "auth", "record", "data"); err != nil {
		return nil, err
	}
	if r.anonymous, err = mayPass(env, checked, map[string]any{"auth": types.NullValue}, "record", "data"); err != nil {
		return nil, err
	}
	return r, nil
}

// mayPass reports whether a rule can yield true when the variables in known have their
// values and those named unknown may have any: partial evaluation yields true, false or
// "depends on the unknowns".
func mayPass(env *cel.Env, checked *cel.Ast, known map[string]any, unknown ...string) (bool, error) {
	prg, err := env.Program(checked, cel.EvalOptions(cel.OptPartialEval), cel.CostLimit(maxRuleCost))
	if err != nil {
		return false, fmt.Errorf("invalid CEL rule: %w", err)
	}
	patterns := make([]*cel.AttributePatternType, len(unknown))
	for i, u := range unknown {
		patterns[i] = cel.AttributePattern(u)
	}
	act, err := cel.PartialVars(known, patterns...)
	if err != nil {
		return false, fmt.Errorf("access rule activation: %w", err)
	}
	out, _, err := prg.Eval(act)
	return err == nil && (out == types.True || types.IsUnknown(out)), nil
}

// Rules are a project's compiled access rules, built once per project version and shared by
// all its requests.
type Rules struct {
	tables map[string]*tableRules
	// anonymous: some rule may let a caller without a token through; signedIn: some rule
	// may let a caller with one through.
	anonymous, signedIn bool
	// nobody is the guard of every caller without a token; the others' guards are kept
	// with their verified tokens (guardFor).
	nobody *guard
	// logger receives the rules that failed to evaluate (nil: slog.Default()); the registry
	// gives the project's.
	logger *slog.Logger
}

type tableRules struct {
	ops map[gql.Operation]*rule
}

// CompileAccess compiles the access rules of every table. Documents that passed
// ParseDocument compile without error.
func CompileAccess(tables map[string]TableDoc) (*Rules, error) {
	rs := &Rules{tables: make(map[string]*tableRules, len(tables))}
	var errs []error
	for name, t := range tables {
		tr := &tableRules{ops: make(map[gql.Operation]*rule, len(operations))}
		fields := make(map[string]store.FieldType, len(t.Fields))
		for fname, fd := range t.Fields {
			fields[fname], _ = fd.fieldType() // validated by ParseDocument
		}
		for _, op := range operations {
			r, err := compileRule(op, t.Access.rule(op), fields)
			if err != nil {
				errs = append(errs, fmt.Errorf("tables.%s.access.%s: %w", name, op, err))
				continue
			}
			tr.ops[op] = r
			rs.anonymous = rs.anonymous || r.anonymous
			rs.signedIn = rs.signedIn || r.anyone
		}
		rs.tables[name] = tr
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	rs.nobody = rs.Guard(nil).(*guard)
	return rs, nil
}

// NeedsToken reports whether every rule refuses a caller without a token while some rule
// may let a signed-in caller through, so that a request without a token can be answered 401
// before it runs. A project whose rules refuse everyone answers such a request as it would
// any other.
func (rs *Rules) NeedsToken() bool { return !rs.anonymous && rs.signedIn }

// Guard returns the gql.Guard of one request whose caller has the verified claims (nil: no
// token).
func (rs *Rules) Guard(claims map[string]any) gql.Guard {
	g := &guard{rules: rs, caller: caller{claims: claims, auth: types.NullValue}}
	if claims != nil {
		g.auth = types.DefaultTypeAdapter.NativeToValue(claims)
		g.sub, _ = claims["sub"].(string)
	}
	return g
}

// guardFor is Guard for a caller whose verified token gave claims (nil: no token), entry its
// place in the verified-token cache (nil: not kept). Claims follow from the token, so the
// guard of a token seen lately is used again, with the filters it already resolved.
func (rs *Rules) guardFor(entry *verifiedToken, claims map[string]any) gql.Guard {
	switch {
	case claims == nil:
		return rs.nobody
	case entry == nil:
		return rs.Guard(claims)
	}
	// A verifier serves one project version, whose rules these are; the check costs nothing
	// and keeps a guard from ever crossing rules.
	if g := entry.guard.Load(); g != nil && g.rules == rs {
		return g
	}
	g := rs.Guard(claims).(*guard)
	entry.guard.Store(g)
	return g
}

type guard struct {
	rules *Rules
	caller
	sub string
	// filters remembers what Filter answered, by table and operation: it depends only on
	// the rules and the claims, and requests sending the same token share the guard.
	mu      sync.Mutex
	filters map[filterKey]resolved
}

type filterKey struct {
	table string
	op    gql.Operation
}

type resolved struct {
	filter store.Filter
	check  bool
	err    error
}

func (g *guard) rule(table string, op gql.Operation) (*rule, error) {
	t, ok := g.rules.tables[table]
	if !ok {
		return nil, fmt.Errorf("access rules: unknown table %q", table)
	}
	return t.ops[op], nil
}

func (g *guard) Owner() string { return g.sub }

func (g *guard) Filter(table string, op gql.Operation) (store.Filter, bool, error) {
	k := filterKey{table, op}
	g.mu.Lock()
	res, ok := g.filters[k]
	g.mu.Unlock()
	if ok {
		return res.filter, res.check, res.err
	}
	res.filter, res.check, res.err = g.filter(table, op)
	g.mu.Lock()
	if g.filters == nil {
		g.filters = map[filterKey]resolved{}
	}
	g.filters[k] = res
	g.mu.Unlock()
	return res.filter, res.check, res.err
}

func (g *guard) filter(table string, op gql.Operation) (store.Filter, bool, error) {
	r, err := g.rule(table, op)
	if err != nil {
		return store.None, false, err
	}
	f, err := and(r.filter, g.caller)
	if err != nil {
		return store.None, false, g.failed(table, op, r, err)
	}
	if f.IsNone() {
		return store.None, false, g.refusal(table, op)
	}
	return f, !r.complete, nil
}

func (g *guard) Allow(table string, op gql.Operation, record, data map[string]any) error {
	r, err := g.rule(table, op)
	if err != nil {
		return err
	}
	act := &activation{auth: g.auth, record: types.NullValue, data: types.NullValue}
	if record != nil {
		act.record = types.DefaultTypeAdapter.NativeToValue(record)
	}
	if data != nil {
		act.data = types.DefaultTypeAdapter.NativeToValue(data)
	}
	switch ok, err := evalBool(r.prg, act); {
	case err != nil:
		return g.failed(table, op, r, err)
	case !ok:
		return g.refusal(table, op)
	}
	return nil
}

// failed logs a rule that could not be evaluated and returns the error the caller gets:
// neither a refusal, which would hide the failure (a list would answer [] for records the
// rule may well allow), nor INTERNAL, since the records and the claims decide it.
func (g *guard) failed(table string, op gql.Operation, r *rule, err error) error {
	logger := g.rules.logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.Warn("access rule failed", "table", table, "operation", op, "rule", r.src, "err", err)
	return &gql.Error{
		Code:    CodeRuleFailed,
		Message: fmt.Sprintf("the %s rule of table %q could not be evaluated: %v (the limit is %d CEL cost units); the project's rule must do less work", op, table, err, maxRuleCost),
		Extra:   map[string]any{"reason": "rule_cost_limit"},
	}
}

func (g *guard) refusal(table string, op gql.Operation) error {
	if g.claims == nil {
		return fmt.Errorf("%w: the %s rule of table %q refuses callers without a token; send Authorization: Bearer <token>", gql.ErrForbidden, op, table)
	}
	return fmt.Errorf("%w: the %s rule of table %q does not allow this caller", gql.ErrForbidden, op, table)
}

// evalBool runs a rule: anything but true, including an error such as a missing claim or
// field, refuses. The error is that of a rule stopped at its cost limit, which decided
// nothing.
func evalBool(prg cel.Program, act *activation) (bool, error) {
	out, _, err := prg.Eval(act)
	var cancelled interpreter.EvalCancelledError
	if errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded {
		return false, err
	}
	return err == nil && out == types.True, nil
}

// activation binds a rule's variables without the map an ordinary activation allocates.
type activation struct {
	auth, record, data ref.Val
}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case "auth":
		return a.auth, true
	case "record":
		return a.record, true
	case "data":
		return a.data, true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

// refersTo reports whether e names the variable v.
func refersTo(e ast.Expr, v string) bool {
	found := false
	ast.PostOrderVisit(e, ast.NewExprVisitor(func(x ast.Expr) {
		if x.Kind() == ast.IdentKind && x.AsIdent() == v {
			found = true
		}
	}))
	return found
}

// fieldOf recognises v.field and v["field"] and returns field.
func fieldOf(e ast.Expr, v string) (string, bool) {
	switch e.Kind() {
	case ast.SelectKind:
		s := e.AsSelect()
		if s.IsTestOnly() || s.Operand().Kind() != ast.IdentKind || s.Operand().AsIdent() != v {
			return "", false
		}
		return s.FieldName(), true
	case ast.CallKind:
		c := e.AsCall()
		if c.FunctionName() != operators.Index || len(c.Args()) != 2 {
			return "", false
		}
		obj, key := c.Args()[0], c.Args()[1]
		if obj.Kind() != ast.IdentKind || obj.AsIdent() != v || key.Kind() != ast.LiteralKind {
			return "", false
		}
		s, ok := key.AsLiteral().Value().(string)
		return s, ok
	}
	return "", false
}

// claimPath recognises auth.a.b (or auth["a"]) and returns [a b].
func claimPath(e ast.Expr) ([]string, bool) {
	var path []string
	for {
		switch e.Kind() {
		case ast.IdentKind:
			if e.AsIdent() != "auth" || len(path) == 0 {
				return nil, false
			}
			slices.Reverse(path)
			return path, true
		case ast.SelectKind:
			s := e.AsSelect()
			if s.IsTestOnly() {
				return nil, false
			}
			path = append(path, s.FieldName())
			e = s.Operand()
		case ast.CallKind:
			c := e.AsCall()
			if c.FunctionName() != operators.Index || len(c.Args()) != 2 || c.Args()[1].Kind() != ast.LiteralKind {
				return nil, false
			}
			k, ok := c.Args()[1].AsLiteral().Value().(string)
			if !ok {
				return nil, false
			}
			path = append(path, k)
			e = c.Args()[0]
		default:
			return nil, false
		}
	}
}

// pushdown is a condition on records that becomes part of a store filter once the caller's
// claims are known.
type pushdown interface {
	resolve(c caller) (store.Filter, error)
}

// caller is who sends a request: the verified claims (nil without a token) and the same as
// a CEL value.
type caller struct {
	claims map[string]any
	auth   ref.Val
}

// translator turns the parts of a rule that a store filter expresses exactly into
// pushdowns. Where the store and CEL disagree it leaves the part to the per-record check: a
// store equality matches a list holding the value, a JSON field may hold anything, so
// comparisons are pushed only on scalar fields, and "x in record.f" only on list fields.
type translator struct {
	env    *cel.Env
	ast    *ast.AST
	fields map[string]store.FieldType
}

// conjunction splits a rule into its top-level conjuncts and translates those a filter can
// express; complete says whether that was all of them. The filter is then implied by the
// rule, so it may be applied before the rest is checked per record.
func (tr translator) conjunction(e ast.Expr) ([]pushdown, bool) {
	var out []pushdown
	complete := true
	for _, c := range conjuncts(e) {
		if p, ok := tr.expr(c); ok {
			out = append(out, p)
		} else {
			complete = false
		}
	}
	return out, complete
}

func conjuncts(e ast.Expr) []ast.Expr {
	if e.Kind() == ast.CallKind && e.AsCall().FunctionName() == operators.LogicalAnd {
		var out []ast.Expr
		for _, arg := range e.AsCall().Args() {
			out = append(out, conjuncts(arg)...)
		}
		return out
	}
	return []ast.Expr{e}
}

// scalar reports whether record.f holds one comparable value: a declared scalar field other
// than JSON, or one the service sets (uid, _owner, createdAt, updatedAt). An undeclared field
// is missing from every record, which filters and rules treat alike.
func (tr translator) scalar(f string) bool {
	t, declared := tr.fields[f]
	return !declared || !t.List && t.Scalar != store.JSON
}

// cond compares the field f with v.
func (tr translator) cond(f string, op store.Op, v operand) fieldCond {
	t, declared := keyType(f, tr.fields)
	return fieldCond{key: f, op: op, val: v, kind: scalarKind(t.Scalar), undeclared: !declared}
}

// keyType is the type of the record key f: a declared field's, or that of a key the service
// keeps; false for a key the table does not have.
func keyType(f string, fields map[string]store.FieldType) (store.FieldType, bool) {
	switch f {
	case store.KeyUID, store.KeyOwner:
		return store.FieldType{Scalar: store.ID}, true
	case store.KeyCreatedAt, store.KeyUpdatedAt:
		return store.FieldType{Scalar: store.DateTime}, true
	}
	t, ok := fields[f]
	return t, ok
}

func (tr translator) list(f string) bool {
	t, declared := tr.fields[f]
	return declared && t.List && t.Scalar != store.JSON
}

func (tr translator) expr(e ast.Expr) (pushdown, bool) {
	if !refersTo(e, "record") {
		// A condition on the caller alone: evaluate it per request.
		if refersTo(e, "data") {
			return nil, false
		}
		src, err := parser.Unparse(e, tr.ast.SourceInfo())
		if err != nil {
			return nil, false
		}
		checked, iss := tr.env.Compile(src)
		if iss.Err() != nil {
			return nil, false
		}
		prg, err := tr.env.Program(checked, cel.CostLimit(maxRuleCost))
		if err != nil {
			return nil, false
		}
		return callerCond{prg: prg}, true
	}
	if f, ok := fieldOf(e, "record"); ok && tr.scalar(f) {
		// A bare boolean field.
		return tr.cond(f, store.Eq, operand{lit: true}), true
	}
	if e.Kind() == ast.SelectKind && e.AsSelect().IsTestOnly() {
		s := e.AsSelect()
		if s.Operand().Kind() == ast.IdentKind && s.Operand().AsIdent() == "record" {
			return tr.cond(s.FieldName(), store.IsNull, operand{lit: false}), true
		}
		return nil, false
	}
	if e.Kind() != ast.CallKind {
		return nil, false
	}
	c := e.AsCall()
	args := c.Args()
	switch fn := c.FunctionName(); fn {
	case operators.LogicalAnd, operators.LogicalOr:
		parts := make([]pushdown, 0, len(args))
		for _, arg := range args {
			p, ok := tr.expr(arg)
			if !ok {
				return nil, false
			}
			parts = append(parts, p)
		}
		return logicCond{or: fn == operators.LogicalOr, parts: parts}, true
	case operators.Equals, operators.NotEquals, operators.Less, operators.LessEquals, operators.Greater, operators.GreaterEquals:
		if f, ok := fieldOf(args[0], "record"); ok && tr.scalar(f) {
			if v, ok := operandOf(args[1]); ok {
				return tr.cond(f, comparisons[fn], v), true
			}
		}
		if f, ok := fieldOf(args[1], "record"); ok && tr.scalar(f) {
			if v, ok := operandOf(args[0]); ok {
				return tr.cond(f, comparisons[mirrored[fn]], v), true
			}
		}
	case operators.In:
		// record.f in [list] or record.f in auth.list: f is one of them.
		if f, ok := fieldOf(args[0], "record"); ok && tr.scalar(f) {
			if v, ok := operandOf(args[1]); ok {
				return tr.cond(f, store.In, v), true
			}
		}
		// x in record.list: the list holds x.
		if f, ok := fieldOf(args[1], "record"); ok && tr.list(f) {
			if v, ok := operandOf(args[0]); ok {
				return tr.cond(f, store.Has, v), true
			}
		}
	}
	return nil, false
}

var comparisons = map[string]store.Op{
	operators.Equals: store.Eq, operators.NotEquals: store.Ne,
	operators.Less: store.Lt, operators.LessEquals: store.Lte,
	operators.Greater: store.Gt, operators.GreaterEquals: store.Gte,
}

// mirrored turns "x < record.f" into "record.f > x".
var mirrored = map[string]string{
	operators.Equals: operators.Equals, operators.NotEquals: operators.NotEquals,
	operators.Less: operators.Greater, operators.LessEquals: operators.GreaterEquals,
	operators.Greater: operators.Less, operators.GreaterEquals: operators.LessEquals,
}

// operand is a value a filter compares with: a literal, or a claim of the caller.
type operand struct {
	lit   any
	claim []string
}

func (o operand) value(claims map[string]any) (any, bool) {
	if o.claim == nil {
		return o.lit, true
	}
	var v any = claims
	for _, k := range o.claim {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func operandOf(e ast.Expr) (operand, bool) {
	if path, ok := claimPath(e); ok {
		return operand{claim: path}, true
	}
	v, ok := literal(e)
	return operand{lit: v}, ok
}

// literal returns the Go value of a constant scalar or a list of them. A timestamp("...")
// counts when it has whole milliseconds, as stored times do: a store compares times to the
// millisecond.
func literal(e ast.Expr) (any, bool) {
	switch e.Kind() {
	case ast.CallKind:
		c := e.AsCall()
		if c.FunctionName() != overloads.TypeConvertTimestamp || len(c.Args()) != 1 || c.Args()[0].Kind() != ast.LiteralKind {
			return nil, false
		}
		s, ok := c.Args()[0].AsLiteral().(types.String)
		if !ok {
			return nil, false
		}
		t, err := time.Parse(time.RFC3339, string(s)) // as CEL reads it
		if err != nil || !t.Equal(t.Truncate(time.Millisecond)) {
			return nil, false
		}
		return t.UTC(), true
	case ast.LiteralKind:
		switch v := e.AsLiteral().(type) {
		case types.Null:
			return nil, true
		case types.String, types.Int, types.Double, types.Bool:
			return v.Value(), true
		case types.Uint:
			return float64(v), true
		}
	case ast.ListKind:
		elems := e.AsList().Elements()
		out := make([]any, 0, len(elems))
		for _, el := range elems {
			v, ok := literal(el)
			if !ok {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	}
	return nil, false
}

// callerCond is a condition on the caller only.
type callerCond struct{ prg cel.Program }

func (cc callerCond) resolve(c caller) (store.Filter, error) {
	ok, err := evalBool(cc.prg, &activation{auth: c.auth, record: types.NullValue, data: types.NullValue})
	if ok {
		return store.All, err
	}
	return store.None, err
}

// fieldCond compares a stored field with an operand.
type fieldCond struct {
	key string
	op  store.Op
	val operand
	// kind is that of the field's values (of its elements, for a list).
	kind valueKind
	// undeclared: the table has no such field, so every record lacks it, and CEL refuses
	// every record for a rule that reads it.
	undeclared bool
}

// valueKind groups values as CEL compares them: values of different kinds are never equal
// and have no order (Int and Float are both numbers). The stores compare some of them all
// the same (SQLite reads true as 1, and orders every number before every string), so a
// filter never compares a field with a value of another kind.
type valueKind uint8

const (
	otherKind valueKind = iota // null, lists, objects, and the values of JSON fields
	stringKind
	numberKind
	boolKind
	timeKind
)

func scalarKind(s store.Scalar) valueKind {
	switch s {
	case store.String, store.ID:
		return stringKind
	case store.Int, store.Float:
		return numberKind
	case store.Boolean:
		return boolKind
	case store.DateTime:
		return timeKind
	}
	return otherKind
}

func kindOf(v any) valueKind {
	switch v.(type) {
	case string:
		return stringKind
	case int, int32, int64, uint64, float64:
		return numberKind
	case bool:
		return boolKind
	case time.Time:
		return timeKind
	}
	return otherKind
}

// serviceKey reports whether key is one the service sets on every record, so never missing.
func serviceKey(key string) bool {
	switch key {
	case store.KeyUID, store.KeyOwner, store.KeyCreatedAt, store.KeyUpdatedAt:
		return true
	}
	return false
}

func (f fieldCond) resolve(c caller) (store.Filter, error) {
	return f.filter(c), nil
}

// filter is the store filter of the records for which the comparison yields true in CEL.
// CEL fails on a field the record does not have, and a failing rule refuses, while the
// store matches a missing value for Ne and takes a missing String for "": every comparison
// but has() also asks for the field to be present.
func (f fieldCond) filter(c caller) store.Filter {
	v, ok := f.val.value(c.claims)
	if !ok || f.undeclared {
		// The rule would fail on a missing claim, and a failing rule refuses.
		return store.None
	}
	if f.op == store.IsNull {
		return store.Compare(f.key, store.IsNull, v)
	}
	present := store.All
	if !serviceKey(f.key) {
		present = store.Compare(f.key, store.IsNull, false)
	}
	switch f.op {
	case store.In:
		// record.f in v: v is a list holding the value, or an object with it as a key.
		var list []any
		switch x := v.(type) {
		case []any:
			list = x
		case map[string]any:
			list = make([]any, 0, len(x))
			for _, k := range slices.Sorted(maps.Keys(x)) {
				list = append(list, k)
			}
		default:
			// in takes a list or a map: the rule fails.
			return store.None
		}
		same := make([]any, 0, len(list))
		for _, e := range list {
			if kindOf(e) == f.kind {
				same = append(same, number(e))
			}
		}
		return store.And(store.Compare(f.key, store.In, same), present)
	case store.Has:
		if kindOf(v) != f.kind {
			return store.None
		}
		return store.And(store.Compare(f.key, store.Has, number(v)), present)
	}
	if kindOf(v) != f.kind {
		switch f.op {
		case store.Eq:
			return store.None
		case store.Ne:
			return present
		}
		// No order across kinds: the rule fails.
		return store.None
	}
	if f.kind == boolKind {
		return boolOrder(f.key, f.op, v.(bool), present)
	}
	return store.And(store.Compare(f.key, f.op, number(v)), present)
}

// boolOrder is the comparison of a Boolean field with b, CEL ordering false before true,
// in the terms of equality, which every store compares alike.
func boolOrder(key string, op store.Op, b bool, present store.Filter) store.Filter {
	eq := func(v bool) store.Filter { return store.And(store.Compare(key, store.Eq, v), present) }
	switch {
	case op == store.Eq:
		return eq(b)
	case op == store.Ne:
		return eq(!b)
	case op == store.Lt && b, op == store.Lte && !b:
		return eq(false)
	case op == store.Gt && !b, op == store.Gte && b:
		return eq(true)
	case op == store.Lte, op == store.Gte:
		return present
	}
	return store.None // < false, > true
}

// number gives claim and literal numbers the types store filters take: int64 or float64.
func number(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint64:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = number(e)
		}
		return out
	}
	return v
}

// logicCond is && or || of conditions.
type logicCond struct {
	or    bool
	parts []pushdown
}

func (l logicCond) resolve(c caller) (store.Filter, error) {
	if !l.or {
		return and(l.parts, c)
	}
	parts, err := resolveAll(l.parts, c)
	if err != nil {
		return store.None, err
	}
	return store.Or(parts...), nil
}

// and resolves the conjunction of parts; none of them is every record.
func and(parts []pushdown, c caller) (store.Filter, error) {
	out, err := resolveAll(parts, c)
	if err != nil {
		return store.None, err
	}
	return store.And(out...), nil
}

func resolveAll(parts []pushdown, c caller) ([]store.Filter, error) {
	out := make([]store.Filter, len(parts))
	for i, p := range parts {
		f, err := p.resolve(c)
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

// quote writes s as a double-quoted string in messages.
func quote(s string) string { return strconv.Quote(s) }
