package gql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	graphql "github.com/graph-gophers/graphql-go"
	gqlerrors "github.com/graph-gophers/graphql-go/errors"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/platform-dev/platform/store"
)

// Changes carries a project's record changes between the replicas that write them and the
// subscriptions that watch them (store.ProjectChanges).
type Changes interface {
	Publish(ctx context.Context, cs ...store.Change) error
	Watch(ctx context.Context, queue int) (*store.Watch, error)
}

// Realtime bounds the subscriptions of one project's API. Zero values take the defaults.
type Realtime struct {
	// MaxSubscriptions bounds the subscriptions one connection runs at once.
	MaxSubscriptions int
	// MaxMessageBytes bounds a message a client sends (a subscribe with its document).
	MaxMessageBytes int64
	// Queue bounds the changes waiting for one subscription; a subscriber that falls
	// further behind is ended with an error.
	Queue int
	// InitTimeout is how long a WebSocket client has to send connection_init.
	InitTimeout time.Duration
	// WriteTimeout bounds the sending of one message to a client.
	WriteTimeout time.Duration
	// Observe, when set, is told of every connection opened (+1) and closed (-1),
	// subscription started and ended, and event delivered or dropped.
	Observe func(Observation)
}

// Observation is one thing that happened to a realtime connection, for metrics.
type Observation struct {
	// Kind is "connection", "subscription", "delivered" or "dropped".
	Kind string
	// Transport is "websocket" or "sse".
	Transport string
	// Delta is +1 or -1 for connections and subscriptions, 1 for events.
	Delta int
}

// Defaults of the zero Realtime values.
const (
	DefaultMaxSubscriptions = 100
	DefaultMaxMessageBytes  = 64 << 10
	DefaultQueue            = 256
	DefaultInitTimeout      = 3 * time.Second
	DefaultWriteTimeout     = 10 * time.Second
)

func (r *Realtime) setDefaults() {
	if r.MaxSubscriptions <= 0 {
		r.MaxSubscriptions = DefaultMaxSubscriptions
	}
	if r.MaxMessageBytes <= 0 {
		r.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if r.Queue <= 0 {
		r.Queue = DefaultQueue
	}
	if r.InitTimeout <= 0 {
		r.InitTimeout = DefaultInitTimeout
	}
	if r.WriteTimeout <= 0 {
		r.WriteTimeout = DefaultWriteTimeout
	}
}

func (r Realtime) observe(kind, transport string, delta int) {
	if r.Observe != nil {
		r.Observe(Observation{Kind: kind, Transport: transport, Delta: delta})
	}
}

// ErrTokenExpired is the cause a realtime context ends with when the caller's token expires
// (see Authenticator).
var ErrTokenExpired = errors.New("the token expired: connect again with a fresh one")

// Authenticator turns the Authorization value a realtime client sent ("Bearer <token>", ""
// for none) into the context its subscriptions run in: the caller's Guard attached
// (WithGuard), and ending with the cause ErrTokenExpired when the token expires. Its error is
// shown to the client.
type Authenticator func(ctx context.Context, authorization string) (context.Context, context.CancelFunc, error)

// subscriptionSDL is the part of the schema subscriptions add: an event type per table and
// the Subscription root. The API's schema declares it as its subscription root, so that
// introspection and the SDL show it to tools, but never executes it there (bind leaves it
// out of the binding); the subscription schema, the same document with Subscription as its
// query root, runs the subscription's selection on each event (see newSubscription).
func subscriptionSDL(b *strings.Builder, tables []Table) {
	b.WriteString("\n" + subscriptionRoots + "\n")
	b.WriteString("\n\"What a write did to a record.\"\nenum EventOp { CREATE UPDATE DELETE }\n")
	for _, t := range tables {
		n := namesOf(t)
		fmt.Fprintf(b, "\n%q\ntype %s {\n  op: EventOp!\n  uid: ID!\n  \"The record after the change; null for DELETE.\"\n  record: %s\n}\n",
			"A change of "+withArticle(n.typ)+" that the subscriber may read.", n.event, n.typ)
	}
	b.WriteString("\ntype Subscription {\n")
	for _, t := range tables {
		n := namesOf(t)
		fmt.Fprintf(b, "  %q\n  %s(where: %s): %s!\n",
			"Every change of the "+t.Name+" the caller may read that match where, on any replica. A record that stops matching (or that the caller may no longer read) arrives as DELETE.",
			n.list, n.where, n.event)
	}
	b.WriteString("}\n")
}

// subscriptionRoots declares the API schema's roots; the subscription schema replaces it.
const subscriptionRoots = "schema { query: Query mutation: Mutation subscription: Subscription }"

// subscriptionState is what one subscription's resolver reads and writes: at setup it
// records the table, the where filter the document asks for and whether the event's record
// selects a relation; for each event it answers the event.
type subscriptionState struct {
	table *table
	where store.Filter
	// relations: the related records are read for each subscriber under its own read rule,
	// so its events cannot be rendered once for all the subscribers of the document.
	relations bool
	event     reflect.Value // invalid during setup
}

type subscriptionKey struct{}

// errSetup ends the setup run of a subscription document once its arguments are read; an
// *Error, so that it is not logged as a failure.
var errSetup = userError(CodeInternal, "subscription set up")

// subscriptionRoot is the root resolver of the subscription schema: one field per table,
// answering the event of the state in the context.
func (a *API) subscriptionRoot(tables []*table) any {
	ctxType, argsType := reflect.TypeFor[context.Context](), reflect.TypeFor[args]()
	fields := make([]reflect.StructField, len(tables))
	values := make([]reflect.Value, len(tables))
	for i, t := range tables {
		fn := reflect.FuncOf([]reflect.Type{ctxType, argsType}, []reflect.Type{t.event, errorType}, false)
		fields[i] = reflect.StructField{Name: fmt.Sprintf("S%d", i), Type: fn, Tag: reflect.StructTag(fmt.Sprintf(`graphql:%q`, t.names.list))}
		values[i] = a.resolver(fn, func(ctx context.Context, in args) (reflect.Value, error) {
			st := ctx.Value(subscriptionKey{}).(*subscriptionState)
			if st.event.IsValid() {
				if rec := st.event.Field(2); st.relations && !rec.IsNil() {
					if err := t.withRelations(ctx, "record.", rec.Elem()); err != nil {
						return reflect.Value{}, err
					}
				}
				return st.event, nil
			}
			f, err := t.filter(in.Where)
			if err != nil {
				return reflect.Value{}, err
			}
			st.table, st.where, st.relations = t, f, selectsRelation(ctx, t)
			return reflect.Value{}, errSetup
		})
	}
	root := reflect.New(reflect.StructOf(fields))
	for i, v := range values {
		root.Elem().Field(i).Set(v)
	}
	return root.Interface()
}

// selectsRelation reports whether the event's record selects a relation of t that
// graph-gophers answers (in the tests' reference, which runs events on graph-gophers).
func selectsRelation(ctx context.Context, t *table) bool {
	for _, p := range graphql.SelectedFieldNames(ctx) {
		name, ok := strings.CutPrefix(p, "record.")
		if ok && slices.ContainsFunc(t.bound, func(r Relation) bool { return r.Name == name }) {
			return true
		}
	}
	return false
}

// eventType is the Go type of a table's event: op, uid and the record after the change.
func eventType(rec reflect.Type) reflect.Type {
	return reflect.StructOf([]reflect.StructField{
		{Name: "Op", Type: reflect.TypeFor[string](), Tag: `graphql:"op"`},
		{Name: "UID", Type: reflect.TypeFor[graphql.ID](), Tag: `graphql:"uid"`},
		{Name: "Record", Type: reflect.PointerTo(rec), Tag: `graphql:"record"`},
	})
}

// published tells the project's subscribers, on every replica, of writes that succeeded
// (one change, or a batch write's). The writes stand whatever happens here: changes Redis
// did not take are logged, and the subscribers whose replica lost Redis are told so by
// their Watch.
func (t *table) published(ctx context.Context, chs ...store.Change) {
	if t.changes == nil || len(chs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if err := t.changes.Publish(ctx, chs...); err != nil {
		t.logger.ErrorContext(ctx, "publish record changes to subscribers", "table", t.def.Name, "changes", len(chs), "err", err)
	}
}

// change is the change of one record: after is the record once written (nil when deleted),
// before the record as it was (nil when created).
func (t *table) change(op store.ChangeOp, uid string, after, before json.RawMessage) store.Change {
	return store.Change{Table: t.def.Name, Op: op, UID: uid, Record: store.Record(after), Before: store.Record(before)}
}

// beforeWhere reads the records a batch update or delete is about to change, by uid, for
// the subscribers to tell whether each leaves their view; nil when nobody can subscribe.
func (t *table) beforeWhere(ctx context.Context, f store.Filter, need bool) (map[string]json.RawMessage, error) {
	if t.changes == nil && !need {
		return nil, nil
	}
	var recs []json.RawMessage
	if err := t.records.Find(ctx, t.def.Name, store.Query{Filter: f}, &recs); err != nil {
		return nil, err
	}
	before := make(map[string]json.RawMessage, len(recs))
	for _, r := range recs {
		uid, err := t.uidOf(r)
		if err != nil {
			return nil, err
		}
		before[uid] = r
	}
	return before, nil
}

// uidOf reads the uid of a stored record.
func (t *table) uidOf(rec json.RawMessage) (string, error) {
	var id struct {
		UID string `json:"uid"`
	}
	if err := json.Unmarshal(rec, &id); err != nil {
		return "", fmt.Errorf("decode %s record: %w", t.def.Name, err)
	}
	return id.UID, nil
}

// before reads the record a write is about to change, for the subscribers to tell whether
// it leaves their view, or when need is set (the files it holds); nil otherwise.
func (t *table) before(ctx context.Context, uid string, access store.Filter, need bool) (json.RawMessage, error) {
	if t.changes == nil && !need {
		return nil, nil
	}
	var raw json.RawMessage
	if err := t.records.Get(ctx, t.def.Name, uid, access, &raw); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return raw, nil
}

// subscription is one running subscription: its document, rewritten to run on the
// subscription schema, and the state its resolver reads.
type subscription struct {
	api   *API
	query string
	op    string
	vars  map[string]any
	// doc identifies the document and variables: subscriptions with the same doc render a
	// change the same way.
	doc   string
	state *subscriptionState
	guard Guard
	// plan answers the events; nil in the tests' reference (NewReference).
	plan *plan
	// shape is the document's estimate and what each event's budget charges per record.
	shape shape
}

// fanout holds the work done for the change being delivered, so that its subscribers on
// this replica decode its records once and render each document once, however many they
// are: a change reaches them all at about the same time.
type fanout struct {
	mu     sync.Mutex
	seq    uint64
	shared map[fanoutKey]*fanoutEntry
}

type fanoutKey struct {
	doc  string // "" for the decoded records
	op   store.ChangeOp
	part string
}

type fanoutEntry struct {
	once  sync.Once
	value any
}

// do returns what fn makes for key and the change seq, calling fn once for all callers.
func (f *fanout) do(seq uint64, key fanoutKey, fn func() any) any {
	f.mu.Lock()
	if f.seq != seq {
		f.seq, f.shared = seq, map[fanoutKey]*fanoutEntry{}
	}
	e, ok := f.shared[key]
	if !ok {
		e = &fanoutEntry{}
		f.shared[key] = e
	}
	f.mu.Unlock()
	e.once.Do(func() { e.value = fn() })
	return e.value
}

// newSubscription checks a subscription request and reads its arguments. A request that is
// not one subscription operation of one root field, or that does not validate, answers the
// errors to send the client.
func (a *API) newSubscription(ctx context.Context, query, opName string, vars map[string]any) (*subscription, []*gqlerrors.QueryError) {
	fail := func(code, msg string) []*gqlerrors.QueryError {
		return []*gqlerrors.QueryError{{Message: msg, Extensions: map[string]any{"code": code}}}
	}
	switch {
	case a.subscriptions == nil:
		return nil, fail(CodeBadRequest, "this project's API has no subscriptions")
	case len(query) > a.cfg.MaxQueryBytes:
		return nil, fail(CodeBadRequest, fmt.Sprintf("the query is %d bytes long, more than the limit of %d", len(query), a.cfg.MaxQueryBytes))
	}
	if msg := a.unregistered(query); msg != "" {
		return nil, fail(CodePersistedQueryOnly, msg)
	}
	rewritten, msg := asQueryOf(query, opName, a.cfg.MaxQueryBytes)
	if msg != "" {
		return nil, fail(CodeValidation, msg)
	}
	varsJSON, _ := json.Marshal(vars)
	s := &subscription{shape: a.shapeOf(query, opName), api: a, query: rewritten, op: opName, vars: vars, state: &subscriptionState{}, guard: guardFrom(ctx),
		doc: rewritten + "\x00" + opName + "\x00" + string(varsJSON)}
	var errs []*gqlerrors.QueryError
	if a.docs.plan != nil {
		// An API without plans (the tests' reference, NewReference) runs the events on
		// graph-gophers.
		s.plan = a.newSubscriptionPlan(query, opName)
	}
	if s.plan == nil {
		errs = a.subscriptions.Exec(context.WithValue(ctx, subscriptionKey{}, s.state), rewritten, opName, vars).Errors
	} else if errs = a.subscriptions.ValidateWithVariables(rewritten, vars); len(errs) == 0 {
		// graph-gophers validates; the plan reads the arguments and answers each event.
		if s.plan.refusal != "" {
			return nil, fail(CodeValidation, s.plan.refusal)
		}
		t, where, err := s.plan.subscribed(vars)
		if err != nil {
			return nil, []*gqlerrors.QueryError{fieldError(a.public(ctx, err), []any{s.plan.fields[0].key})}
		}
		s.state.table, s.state.where, s.state.relations = t, where, true
	}
	if s.state.table == nil {
		for _, e := range errs {
			readable(e)
			setCode(e)
		}
		return nil, errs
	}
	if cost := a.costOf(s.shape, vars); cost > a.cfg.MaxCost {
		return nil, []*gqlerrors.QueryError{a.tooComplex(cost)}
	}
	return s, nil
}

// asQueryOf checks that opName selects a subscription with one root field and returns the
// document with that operation's keyword written as query, at the same offsets so that
// error locations stay right; a message when it is not.
func asQueryOf(query, opName string, maxTokens int) (string, string) {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, maxTokens)
	if err != nil {
		return "", err.Error()
	}
	var op *ast.OperationDefinition
	switch {
	case opName != "":
		op = doc.Operations.ForName(opName)
		if op == nil {
			return "", fmt.Sprintf("the document has no operation %q", opName)
		}
	case len(doc.Operations) == 1:
		op = doc.Operations[0]
	default:
		return "", "the document has several operations: name the one to run in operationName"
	}
	if op.Operation != ast.Subscription {
		return "", fmt.Sprintf("a %s is sent with POST to /api/v1/graphql; this connection runs subscriptions", op.Operation)
	}
	var fields []*ast.Field
	collectFields(doc, op.SelectionSet, map[string]bool{}, &fields)
	if len(fields) != 1 || strings.HasPrefix(fields[0].Name, "__") {
		return "", "a subscription selects exactly one root field, a table's changes"
	}
	runes := []rune(query)
	start := op.Position.Start
	const keyword = "subscription"
	if start+len(keyword) > len(runes) || string(runes[start:start+len(keyword)]) != keyword {
		return "", "the subscription keyword was not found where the parser put it"
	}
	return string(runes[:start]) + "query" + strings.Repeat(" ", len(keyword)-len("query")) + string(runes[start+len(keyword):]), ""
}

// watch starts watching the project's changes: every change made after it returns reaches
// run.
func (s *subscription) watch(ctx context.Context) (*store.Watch, error) {
	w, err := s.api.cfg.Changes.Watch(ctx, s.api.cfg.Realtime.Queue)
	if err != nil {
		return nil, fmt.Errorf("watch the project's changes: %w", err)
	}
	return w, nil
}

// run delivers the changes of w the subscriber may see to send until ctx ends (nil) or the
// changes stop reaching this replica (the Watch's error). It closes w.
func (s *subscription) run(ctx context.Context, w *store.Watch, send func(response) error) error {
	lim := s.api.cfg.Realtime
	defer w.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ch, ok := <-w.C():
			if !ok {
				if errors.Is(w.Err(), store.ErrSlowConsumer) {
					lim.observe("dropped", "", 1)
				}
				return w.Err()
			}
			op, ok := s.view(ch)
			if !ok {
				continue
			}
			var res response
			if s.state.relations {
				res = s.render(ctx, ch, op)
			} else {
				// Rendered once per document: the result depends on the change and the
				// document alone, the caller's rules having decided op.
				res = s.api.fanout.do(ch.Seq, fanoutKey{doc: s.doc, op: op}, func() any {
					return s.render(ctx, ch, op)
				}).(response)
			}
			if err := send(res); err != nil {
				return err
			}
			lim.observe("delivered", "", 1)
		}
	}
}

// render runs the subscription's document on the change as op, in ctx: the related records
// it selects are read under the read rules of ctx's caller, within the time a request has.
func (s *subscription) render(ctx context.Context, ch store.Change, op store.ChangeOp) response {
	ctx, cancel := context.WithTimeout(ctx, s.api.cfg.Timeout)
	defer cancel()
	st := &subscriptionState{table: s.state.table, where: s.state.where, relations: s.state.relations, event: s.event(ch, op)}
	ctx = context.WithValue(ctx, subscriptionKey{}, st)
	// Each event has a budget of its own, as a request has, its record charged first.
	b := &budget{}
	b.start(&s.api.cfg, s.shape)
	ctx = context.WithValue(ctx, budgetKey{}, b)
	if op != store.Deleted {
		if err := b.take(st.table, 1, int64(len(ch.Record)), 1); err != nil {
			return b.settle(response{})
		}
	}
	if s.plan != nil {
		return b.settle(s.plan.answer(ctx, s.api, s.vars))
	}
	res := s.api.subscriptions.Exec(ctx, s.query, s.op, s.vars)
	return b.settle(response{Data: res.Data, Errors: res.Errors})
}

// view is what the subscriber sees of a change: nothing when the record is out of its view
// before and after; DELETE when it leaves the view.
func (s *subscription) view(ch store.Change) (store.ChangeOp, bool) {
	t := s.state.table
	if ch.Table != t.def.Name {
		return "", false
	}
	switch {
	case s.visible(ch, "record", ch.Record):
		return ch.Op, true
	case s.visible(ch, "before", ch.Before):
		return store.Deleted, true
	}
	return "", false
}

// event is the value of the change's event as op.
func (s *subscription) event(ch store.Change, op store.ChangeOp) reflect.Value {
	t := s.state.table
	ev := reflect.New(t.event).Elem()
	ev.Field(0).SetString(string(op))
	ev.Field(1).Set(reflect.ValueOf(graphql.ID(ch.UID)))
	if op != store.Deleted {
		// A stored record decodes; one that does not shows as null.
		if rec, err := t.decode(ch.Record); err == nil {
			p := reflect.New(t.rec)
			p.Elem().Set(rec)
			ev.Field(2).Set(p)
		}
	}
	return ev
}

// visible reports whether the subscriber may read rec and it matches the subscription's
// where; false for no record. The decoded record is shared by the change's subscribers,
// which only read it.
func (s *subscription) visible(ch store.Change, part string, rec store.Record) bool {
	if len(rec) == 0 {
		return false
	}
	t := s.state.table
	values, _ := s.api.fanout.do(ch.Seq, fanoutKey{part: part}, func() any {
		values, err := t.def.Values(rec)
		if err != nil {
			return nil
		}
		return values
	}).(map[string]any)
	if values == nil {
		return false
	}
	if s.guard != nil && s.guard.Allow(t.def.Name, Read, values, nil) != nil {
		return false
	}
	return t.def.Match(s.state.where, values)
}
