package tenant_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// The access property test holds the read filters compiled from CEL rules to CEL itself.
// It generates records of every field type (fields missing, nulls and lists inside JSON,
// values of every kind) and rules over claims and fields, evaluates each rule record by
// record with cel-go, and requires the filter the rule compiles to to select on SQLite and on
// the mongo backend (FerretDB) exactly the records CEL admits when the rule says the filter
// is the whole rule, and at least them when the rest is checked per record. The service's own
// per-record check (Guard.Allow) must agree with cel-go too. Rules that ParseDocument
// refuses (a comparison that never holds) are compared as well: documents applied before it
// refused them still compile.
//
// A run in CI takes a few seconds; ACCESS_PROPERTY_ROUNDS=n runs n rounds of new records
// and rules (seeds 1..n) for a longer search, ACCESS_PROPERTY_SEED=s one round of seed s.

// propFields are the fields of the generated table: every scalar and a list of each.
var propFields = map[string]string{
	"s": "String", "t": "String", "ref": "ID", "n": "Int", "x": "Float", "b": "Boolean",
	"at": "DateTime", "j": "JSON",
	"ls": "[String]", "lid": "[ID]", "ln": "[Int]", "lx": "[Float]", "lb": "[Boolean]",
	"lat": "[DateTime]", "lj": "[JSON]",
}

const (
	propRecords = 60
	propRules   = 250
	propClaims  = 5 // claim sets per rule, besides a caller without a token
)

var (
	propStrings = []string{"", "a", "b", "ab", "ba", "A", "3", "true", "alice", "é", "a b", "2026-01-02T00:00:00.000Z"}
	propIDs     = []string{"alice", "bob", "u1", "3"}
	propInts    = []int64{-2, 0, 1, 2, 3}
	propFloats  = []float64{-1.5, 0, 0.5, 1, 2, 2.5, 3}
	propTimes   = []time.Time{
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 2, 10, 4, 5, 123e6, time.UTC),
	}
	propClaimKeys = []string{"sub", "role", "level", "flag", "roles", "org", "perms", "nul", "when", "any"}
)

// propGen draws values, records, claims and rules from one seeded source.
type propGen struct{ r *rand.Rand }

func (g propGen) pick(n int) int        { return g.r.IntN(n) }
func (g propGen) chance(p float64) bool { return g.r.Float64() < p }

// scalar draws a value of the scalar type as the store keeps it.
func (g propGen) scalar(typ string) any {
	switch typ {
	case "String":
		return propStrings[g.pick(len(propStrings))]
	case "ID":
		return propIDs[g.pick(len(propIDs))]
	case "Int":
		return propInts[g.pick(len(propInts))]
	case "Float":
		return propFloats[g.pick(len(propFloats))]
	case "Boolean":
		return g.chance(0.5)
	case "DateTime":
		return propTimes[g.pick(len(propTimes))]
	}
	return g.jsonIn(2, true)
}

// json draws any JSON value, nulls included, but no list directly in a list: FerretDB, which
// runs the mongo backend in tests, does not store nested arrays.
func (g propGen) json(depth int) any { return g.jsonIn(depth, false) }

func (g propGen) jsonIn(depth int, inList bool) any {
	k := g.pick(7)
	switch {
	case depth == 0:
		k = g.pick(5)
	case inList && k == 5:
		k = 6
	}
	switch k {
	case 0:
		return nil
	case 1:
		return propStrings[g.pick(len(propStrings))]
	case 2:
		return propFloats[g.pick(len(propFloats))]
	case 3:
		return g.chance(0.5)
	case 4:
		return float64(propInts[g.pick(len(propInts))])
	case 5:
		out := make([]any, g.pick(3))
		for i := range out {
			out[i] = g.jsonIn(depth-1, true)
		}
		return out
	}
	return map[string]any{"k": g.json(depth - 1), "id": propStrings[g.pick(len(propStrings))]}
}

// record draws the fields of a record as a create sends them: a field left out or sent as
// null is missing from the stored record (the API stores no top-level null).
func (g propGen) record() map[string]any {
	out := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(propFields)) {
		typ := propFields[name]
		if g.chance(0.3) {
			continue
		}
		if strings.HasPrefix(typ, "[") {
			list := make([]any, g.pick(4))
			for i := range list {
				list[i] = g.scalar(strings.Trim(typ, "[]"))
			}
			out[name] = list
			continue
		}
		if v := g.scalar(typ); v != nil {
			out[name] = v
		}
	}
	return out
}

// claims draws the claims of a verified token, as JSON decodes them.
func (g propGen) claims() map[string]any {
	natural := map[string]func() any{
		"sub":   func() any { return propIDs[g.pick(len(propIDs))] },
		"role":  func() any { return propStrings[g.pick(len(propStrings))] },
		"level": func() any { return propFloats[g.pick(len(propFloats))] },
		"flag":  func() any { return g.chance(0.5) },
		"roles": func() any {
			out := make([]any, g.pick(3))
			for i := range out {
				out[i] = propStrings[g.pick(len(propStrings))]
			}
			return out
		},
		"org":   func() any { return map[string]any{"id": propStrings[g.pick(len(propStrings))]} },
		"perms": func() any { return map[string]any{propStrings[g.pick(len(propStrings))]: true, "a": false} },
		"nul":   func() any { return nil },
		"when":  func() any { return propTimes[g.pick(len(propTimes))].Format(time.RFC3339) },
		"any":   func() any { return g.json(2) },
	}
	c := map[string]any{}
	for _, k := range propClaimKeys {
		switch {
		case g.chance(0.15):
		case g.chance(0.2):
			c[k] = g.json(2)
		default:
			c[k] = natural[k]()
		}
	}
	raw, _ := json.Marshal(c)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// literal writes a CEL literal of any kind.
func (g propGen) literal() string {
	switch g.pick(9) {
	case 0:
		return "null"
	case 1:
		return strconv.FormatBool(g.chance(0.5))
	case 2:
		return strconv.FormatInt(propInts[g.pick(len(propInts))], 10)
	case 3:
		s := strconv.FormatFloat(propFloats[g.pick(len(propFloats))], 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	case 4:
		return strconv.Itoa(g.pick(4)) + "u"
	case 5:
		return g.list()
	case 6:
		return strconv.Quote(propIDs[g.pick(len(propIDs))])
	}
	return strconv.Quote(propStrings[g.pick(len(propStrings))])
}

func (g propGen) list() string {
	items := make([]string, g.pick(4))
	for i := range items {
		if g.chance(0.15) {
			items[i] = "null"
			continue
		}
		items[i] = g.scalarLiteral()
	}
	return "[" + strings.Join(items, ", ") + "]"
}

func (g propGen) scalarLiteral() string {
	for {
		if l := g.literal(); !strings.HasPrefix(l, "[") && l != "null" {
			return l
		}
	}
}

// claim writes a claim: auth.k, auth["k"] or a path into an object claim.
func (g propGen) claim() string {
	k := propClaimKeys[g.pick(len(propClaimKeys))]
	switch g.pick(6) {
	case 0:
		return `auth["` + k + `"]`
	case 1:
		return "auth.org.id"
	}
	return "auth." + k
}

func (g propGen) operand() string {
	switch g.pick(5) {
	case 0, 1:
		return g.claim()
	case 2:
		at := propTimes[g.pick(len(propTimes))]
		if g.chance(0.2) {
			// Finer than the millisecond that records keep.
			at = at.Add(500 * time.Microsecond)
		}
		if g.chance(0.2) {
			at = at.In(time.FixedZone("", 2*3600))
		}
		return `timestamp("` + at.Format(time.RFC3339Nano) + `")`
	}
	return g.literal()
}

// field writes a reference to a record key: a declared field, one the service keeps, or
// one the table does not have.
func (g propGen) field() string {
	var name string
	switch k := g.pick(20); {
	case k < 14:
		keys := slices.Sorted(maps.Keys(propFields))
		name = keys[g.pick(len(keys))]
	case k < 18:
		name = []string{"uid", "_owner", "createdAt", "updatedAt"}[g.pick(4)]
	default:
		name = "zz"
	}
	if g.chance(0.15) {
		return `record["` + name + `"]`
	}
	return "record." + name
}

var propComparisons = []string{"==", "!=", "<", "<=", ">", ">="}

// atom writes one condition: the shapes the compiler pushes into filters and some it
// leaves to the per-record check.
func (g propGen) atom() string {
	k := g.pick(16)
	if k >= 8 && k <= 11 && g.chance(0.6) {
		// Fewer of the shapes left to the per-record check, so that most rules push a
		// filter that must be exact.
		k = g.pick(8)
	}
	switch k {
	case 0, 1, 2, 3:
		op := propComparisons[g.pick(len(propComparisons))]
		if g.chance(0.3) {
			return g.operand() + " " + op + " " + g.field()
		}
		return g.field() + " " + op + " " + g.operand()
	case 4:
		if g.chance(0.5) {
			return g.field() + " in " + g.list()
		}
		return g.field() + " in " + g.claim()
	case 5:
		return g.operand() + " in " + g.field()
	case 6:
		f := g.field()
		if strings.HasPrefix(f, `record[`) {
			f = "record." + strings.Trim(strings.TrimPrefix(f, "record["), `"]`)
		}
		return "has(" + f + ")"
	case 7:
		return g.field()
	case 8:
		return g.field() + "." + []string{"startsWith", "endsWith", "contains"}[g.pick(3)] + "(" + strconv.Quote(propStrings[g.pick(len(propStrings))]) + ")"
	case 9:
		return "size(" + g.field() + ") " + propComparisons[g.pick(len(propComparisons))] + " " + strconv.Itoa(g.pick(3))
	case 10:
		return g.field() + " " + propComparisons[g.pick(2)] + " " + g.field()
	case 11:
		return "record.j.k == " + g.literal()
	case 12:
		return g.claim() + " " + propComparisons[g.pick(len(propComparisons))] + " " + g.literal()
	case 13:
		return []string{"auth != null", "auth == null", "has(auth.role)", `"a" in auth.roles`}[g.pick(4)]
	case 14:
		return "record._owner == auth.sub"
	}
	return g.field() + " " + propComparisons[g.pick(len(propComparisons))] + " " + g.claim()
}

func (g propGen) rule(depth int) string {
	if depth == 0 || g.chance(0.35) {
		return g.atom()
	}
	switch g.pick(8) {
	case 0:
		return "!(" + g.rule(depth-1) + ")"
	case 1, 2, 3:
		return "(" + g.rule(depth-1) + " || " + g.rule(depth-1) + ")"
	}
	return g.rule(depth-1) + " && " + g.rule(depth-1)
}

// propBackend is one backend holding the generated records.
type propBackend struct {
	name    string
	records *store.Records
	seen    map[string][]int // by filter
}

// find lists the records (by index) f selects. Callers often resolve a rule to the same
// filter, which is read once.
func (b propBackend) find(t *testing.T, f store.Filter, byUID map[string]int) []int {
	t.Helper()
	key := fmt.Sprintf("%#v", f) // String writes 3 and "3" alike
	if got, ok := b.seen[key]; ok {
		return got
	}
	var recs []struct{ UID string }
	if err := b.records.Find(t.Context(), "t", store.Query{Filter: f}, &recs); err != nil {
		t.Fatalf("filter %v on %s: %v", f, b.name, err)
	}
	got := []int{}
	for _, r := range recs {
		got = append(got, byUID[r.UID])
	}
	b.seen[key] = got
	return got
}

// openPropBackends opens the stores of both backends.
func openPropBackends(t *testing.T) []*store.Stores {
	t.Helper()
	ctx := t.Context()
	sqlite, err := store.Open(ctx, store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlite.Close(context.Background()) })
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	uri, stop, err := store.StartFerretDB(ctx, dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop(context.Background()) })
	mongo, err := store.Open(ctx, store.Config{DataDir: dir, MongoURI: uri, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mongo.Close(context.Background()) })
	return []*store.Stores{sqlite, mongo}
}

// propDocument is the project document of the generated table with a read rule.
func propDocument(read string) []byte {
	fields := map[string]any{}
	for name, typ := range propFields {
		fields[name] = map[string]any{"type": typ}
	}
	doc, _ := json.Marshal(map[string]any{"id": "prop", "tables": map[string]any{"t": map[string]any{
		"fields": fields, "access": map[string]any{"read": read},
	}}})
	return doc
}

// celOracle evaluates rules with cel-go directly, in the environment the documentation gives
// rules: auth dynamic, record a map, numbers compared across types.
type celOracle struct{ env *cel.Env }

func newCELOracle(t *testing.T) celOracle {
	env, err := cel.NewEnv(
		cel.Variable("auth", cel.DynType),
		cel.Variable("record", cel.MapType(cel.StringType, cel.DynType)),
		cel.CrossTypeNumericComparisons(true),
	)
	if err != nil {
		t.Fatal(err)
	}
	return celOracle{env: env}
}

// admits lists the records (by index) the rule lets the caller read: those for which it
// yields true, an error refusing.
func (o celOracle) admits(t *testing.T, rule string, claims map[string]any, records []map[string]any) []int {
	t.Helper()
	checked, iss := o.env.Compile(rule)
	if iss.Err() != nil {
		t.Fatalf("rule %s: %v", rule, iss.Err())
	}
	prg, err := o.env.Program(checked)
	if err != nil {
		t.Fatal(err)
	}
	var auth any = types.NullValue
	if claims != nil {
		auth = claims
	}
	var out []int
	for i, rec := range records {
		v, _, err := prg.Eval(map[string]any{"auth": auth, "record": rec})
		if err == nil && v == types.True {
			out = append(out, i)
		}
	}
	return out
}

// propMismatch is a rule whose filter and CEL disagree for a caller.
type propMismatch struct {
	seed     uint64
	index    int
	rule     string
	claims   map[string]any
	backend  string
	check    bool
	extra    []map[string]any // selected by the filter, refused by CEL
	missing  []map[string]any // admitted by CEL, left out by the filter
	allowBad []map[string]any // where Guard.Allow disagrees with cel-go
}

func (m propMismatch) String() string {
	c, _ := json.Marshal(m.claims)
	show := func(recs []map[string]any) string {
		if len(recs) > 2 {
			recs = recs[:2]
		}
		b, _ := json.Marshal(recs)
		return string(b)
	}
	return fmt.Sprintf("seed %d rule #%d %s (check %v) for claims %s on %s: %d extra %s, %d missing %s, %d Allow disagreeing %s",
		m.seed, m.index, m.rule, m.check, c, m.backend, len(m.extra), show(m.extra), len(m.missing), show(m.missing), len(m.allowBad), show(m.allowBad))
}

func TestAccessFiltersMatchCEL(t *testing.T) {
	seeds := []uint64{1}
	if n, err := strconv.Atoi(os.Getenv("ACCESS_PROPERTY_ROUNDS")); err == nil && n > 0 {
		seeds = seeds[:0]
		for s := range n {
			seeds = append(seeds, uint64(s+1))
		}
	}
	if s, err := strconv.ParseUint(os.Getenv("ACCESS_PROPERTY_SEED"), 10, 64); err == nil {
		seeds = []uint64{s}
	}
	base, err := tenant.ParseDocument(propDocument(tenant.RulePublic))
	if err != nil {
		t.Fatal(err)
	}
	tables := base.StoreTables()
	def := &tables[0]
	stores := openPropBackends(t)
	oracle := newCELOracle(t)

	var mismatches []propMismatch
	fieldDocs := map[string]tenant.FieldDoc{}
	for name, typ := range propFields {
		fieldDocs[name] = tenant.FieldDoc{Type: typ}
	}
	var refusedSome []string
	var rules, invalid, refused, checked, pairs, forbidden, exact, checkedPairs int
	for _, seed := range seeds {
		g := propGen{r: rand.New(rand.NewPCG(seed, 0x5eed))}
		fields := make([]map[string]any, propRecords)
		for i := range fields {
			fields[i] = g.record()
		}
		// Every backend holds the same records (Import keeps their uids); CEL sees them as
		// the service reads them.
		project := fmt.Sprintf("prop%d", seed)
		var backends []propBackend
		for _, s := range stores {
			recs, err := s.ProjectRecords(t.Context(), project, "", tables)
			if err != nil {
				t.Fatal(err)
			}
			if err := recs.Ensure(t.Context()); err != nil {
				t.Fatal(err)
			}
			backends = append(backends, propBackend{name: s.Backend, records: recs, seen: map[string][]int{}})
		}
		var stored []store.Record
		for i, f := range fields {
			var raw []json.RawMessage
			owner := []string{"alice", "bob", ""}[i%3]
			if err := backends[0].records.Insert(t.Context(), "t", owner, []map[string]any{f}, &raw); err != nil {
				t.Fatal(err)
			}
			stored = append(stored, store.Record(raw[0]))
		}
		if err := backends[1].records.Import(t.Context(), "t", stored); err != nil {
			t.Fatal(err)
		}
		var records []map[string]any
		byUID := map[string]int{}
		for i, raw := range stored {
			v, err := def.Values(raw)
			if err != nil {
				t.Fatal(err)
			}
			records = append(records, v)
			byUID[v[store.KeyUID].(string)] = i
		}
		callers := []map[string]any{nil}
		for range propClaims {
			callers = append(callers, g.claims())
		}
		for i := range propRules {
			rule := g.rule(g.pick(4))
			rules++
			// The compiler must be exact for every rule it compiles, including those
			// ParseDocument now refuses (applied before it did).
			_, perr := tenant.ParseDocument(propDocument(rule))
			compiled, err := tenant.CompileAccess(map[string]tenant.TableDoc{"t": {Fields: fieldDocs, Access: tenant.Access{Read: rule}}})
			switch {
			case err != nil && perr == nil:
				t.Fatalf("rule %s passed ParseDocument but not CompileAccess: %v", rule, err)
			case err != nil:
				invalid++
				continue
			case perr != nil:
				if len(refusedSome) < 2 {
					refusedSome = append(refusedSome, firstLine(perr.Error()))
				}
				refused++
			}
			checked++
			for _, claims := range callers {
				want := oracle.admits(t, rule, claims, records)
				guard := compiled.Guard(claims)
				var allowBad []map[string]any
				for ri, rec := range records {
					allowed := guard.Allow("t", gql.Read, rec, nil) == nil
					if allowed != slices.Contains(want, ri) {
						allowBad = append(allowBad, rec)
					}
				}
				f, check, ferr := guard.Filter("t", gql.Read)
				pairs++
				switch {
				case errors.Is(ferr, gql.ErrForbidden):
					forbidden++
				case ferr != nil:
					t.Fatalf("rule %s: filter: %v", rule, ferr)
				case check:
					checkedPairs++
				default:
					exact++
				}
				for _, b := range backends {
					var got []int
					if ferr == nil {
						got = b.find(t, f, byUID)
					}
					m := propMismatch{seed: seed, index: i, rule: rule, claims: claims, backend: b.name, check: check, allowBad: allowBad}
					for _, ri := range got {
						if !check && !slices.Contains(want, ri) {
							m.extra = append(m.extra, records[ri])
						}
					}
					for _, ri := range want {
						if !slices.Contains(got, ri) {
							m.missing = append(m.missing, records[ri])
						}
					}
					if len(m.extra)+len(m.missing)+len(m.allowBad) > 0 {
						mismatches = append(mismatches, m)
					}
				}
			}
		}
	}
	t.Logf("%d rules: %d do not type-check; %d compiled, of which ParseDocument refuses %d (%q ...); %d caller-rule pairs: %d refused every record, %d filters exact, %d filters with a per-record check",
		rules, invalid, checked, refused, refusedSome, pairs, forbidden, exact, checkedPairs)
	if exact == 0 || forbidden == 0 || checkedPairs == 0 {
		t.Errorf("the generated rules no longer reach every outcome (%d exact filters, %d refusing every record, %d with a per-record check)", exact, forbidden, checkedPairs)
	}
	byRule := map[string]bool{}
	var extra, missing, allow int
	for _, m := range mismatches {
		if len(m.extra) > 0 {
			extra++
		}
		if len(m.missing) > 0 {
			missing++
		}
		if len(m.allowBad) > 0 {
			allow++
		}
		if !byRule[m.rule] {
			byRule[m.rule] = true
			t.Error(m)
		}
	}
	if len(mismatches) > 0 {
		t.Errorf("%d rules disagree with CEL in %d caller-backend pairs: %d select records CEL refuses, %d leave out records CEL admits, %d where Guard.Allow differs from cel-go",
			len(byRule), len(mismatches), extra, missing, allow)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
