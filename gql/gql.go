// Package gql generates a project's GraphQL API from its table definitions and serves it over
// HTTP.
//
// The schema is written from the tables (see docs/graphql.md); graph-gophers/graphql-go
// parses and validates every document against it and answers introspection. Every operation
// on tables (queries, mutations, subscription events) runs on the package's own executor
// (exec.go) over the validated document: one builder of its plan, one loader for
// relations, one writer of the answer. Records are structs built with reflect at run time,
// so no code is generated per project. New does all of that once per definition; ServeHTTP
// only decodes, executes and encodes. graph-gophers' own executor, bound to resolvers that
// are struct fields of function type in a root struct, answers introspection and is the
// tests' oracle (NewReference in export_test.go).
package gql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	graphql "github.com/graph-gophers/graphql-go"
	gast "github.com/graph-gophers/graphql-go/ast"
	gqlerrors "github.com/graph-gophers/graphql-go/errors"
	"go.opentelemetry.io/otel/trace"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/telemetry"
)

// Defaults of the zero Config values.
const (
	DefaultLimit         = 100
	DefaultMaxLimit      = 1000
	DefaultMaxBodyBytes  = 1 << 20
	DefaultMaxQueryBytes = 32 << 10
	DefaultMaxDepth      = 10
	DefaultMaxSelections = 2000
	DefaultTimeout       = 10 * time.Second
	// DefaultMaxResultBytes bounds what one request answers, across the whole answer: 10 MB,
	// the largest response the MCP side allows too.
	DefaultMaxResultBytes = 10 << 20
)

// metaMaxDepth bounds the nesting of an operation that asks only for __schema, __type and
// __typename: graphql-js's getIntrospectionQuery nests 13 deep (its TypeRef follows ofType
// nine times). The cost stays bounded by MaxSelections and the schema's size.
const metaMaxDepth = 24

// Config is what one project's API is built from. Zero limits take the defaults above.
type Config struct {
	Tables  []Table
	Records *store.Records
	// Introspection allows __schema and __type queries.
	Introspection bool
	// DefaultLimit is the page size of a list without limit; MaxLimit the largest limit a
	// caller may ask for (more is an error, never a silent cut).
	DefaultLimit int
	MaxLimit     int
	// MaxBodyBytes bounds the request body, MaxQueryBytes the query text, MaxDepth the
	// nesting of fields and MaxSelections the fields an operation expands to.
	MaxBodyBytes  int64
	MaxQueryBytes int
	MaxDepth      int
	MaxSelections int
	// Timeout bounds the execution of one request; the database work stops with it.
	Timeout time.Duration
	// MaxResultBytes and MaxRecords are the budget of one request (or one subscription
	// event), counted across the whole answer (budget.go): the bytes it answers, each record
	// counted each time the answer holds it, and the records it reads. A request that spends
	// either stops with RESULT_TOO_LARGE. MaxCost bounds the estimate of a document before
	// it runs (cost.go): past it, QUERY_TOO_COMPLEX.
	MaxResultBytes int64
	MaxRecords     int64
	MaxCost        int64
	// Pressure, when set, says whether the process is short of memory: a document whose
	// estimate is above CheapCost is then refused with 503 and Retry-After (OVERLOADED),
	// while cheap ones and introspection still run. nil: never under pressure.
	Pressure func() bool
	// Where bounds the where argument.
	Where  store.Bounds
	Logger *slog.Logger
	// Tracer, when set, gets a span for each execution; nil costs nothing.
	Tracer trace.Tracer
	// ObserveResolver, when set, returns the function told how long each root field of a
	// kind (list, count, aggregate, create, update, delete) took to resolve: the store call
	// and the record conversion. It is asked once per kind when the API is built, so that
	// timing a field looks nothing up.
	ObserveResolver func(op string) func(took time.Duration)
	// Changes, when set, carries the project's record changes: every write publishes one,
	// and the schema offers a Subscription field per table fed by them (subscription.go).
	Changes  Changes
	Realtime Realtime
	// Answered, when set, is told of every query and mutation the HTTP transport ran:
	// whether it was a mutation (it ran a create, update or delete field), and whether it
	// answered errors with status 200 (a request refused with an error status is seen by
	// whoever sees the status). For metering.
	Answered func(mutation, failed bool)
	// Persisted, when set, keeps the documents clients send by hash (persisted.go).
	// Registered are the project's registered documents by DocumentHash; with
	// RegisteredOnly, no other document runs.
	Persisted      PersistedQueries
	Registered     map[string]string
	RegisteredOnly bool
	// Files keep the bytes of File fields, required when a table has one (files.go);
	// FileKey signs their signed URLs (nil: signedUrl fails). MaxFileBytes bounds one file
	// a request carries, MaxUploadBytes a multipart request's body, MaxUploadFiles its
	// files, and MaxImagePixels the images a thumbnail is made of (their decoded size).
	Files          store.Blobs
	FileKey        []byte
	MaxFileBytes   int64
	MaxUploadBytes int64
	MaxUploadFiles int
	MaxImagePixels int64
	// BaseURL is the address (scheme, host and path prefix) a request reached the project
	// at, which File.url starts with; nil: the request's own scheme and Host. The caller
	// decides which forwarded headers to believe: gql believes none.
	BaseURL func(*http.Request) string
}

// API is one project's GraphQL endpoint. It is immutable and safe for concurrent use; a
// changed definition gets a new API.
type API struct {
	cfg    Config
	sdl    string
	schema *graphql.Schema // nil when the project has no tables
	docs   documents
	// lists are the tables by the name of their list field, for the executor.
	lists map[string]*table
	// cut are the relation fields left out of the record types graph-gophers binds, by
	// record type name; the executor runs them.
	cut map[string]map[string]bool
	// subscriptions runs subscription documents on each event; nil without Config.Changes.
	subscriptions *graphql.Schema
	fanout        fanout
	// files serve the File fields; nil when no table has one.
	files *files
	// meta is the schema that runs operations asking only for __schema, __type and
	// __typename, with a depth limit that fits introspection queries; built on first use,
	// since most projects' APIs are never introspected.
	meta func() *graphql.Schema
}

// SDL returns the project's GraphQL schema in the schema definition language; "" for a
// project without tables.
func (a *API) SDL() string { return a.sdl }

// New builds a project's API: it checks that the tables make a valid schema (an error names
// the table and the generated name that collides), generates it, and binds the resolvers.
func New(cfg Config) (*API, error) {
	setDefaults(&cfg)
	if cfg.DefaultLimit > cfg.MaxLimit {
		return nil, fmt.Errorf("default page size %d is larger than the maximum %d", cfg.DefaultLimit, cfg.MaxLimit)
	}
	if err := checkNames(cfg.Tables); err != nil {
		return nil, err
	}
	if err := CheckRelations(cfg.Tables); err != nil {
		return nil, err
	}
	a := &API{cfg: cfg}
	if len(cfg.Tables) == 0 {
		return a, nil
	}
	if cfg.Records == nil {
		return nil, errors.New("gql: Config.Records is required")
	}
	lim := limits{defaultLimit: cfg.DefaultLimit, maxLimit: cfg.MaxLimit, bounds: cfg.Where}
	tables := make([]*table, len(cfg.Tables))
	byName := make(map[string]*table, len(cfg.Tables))
	a.lists = make(map[string]*table, len(cfg.Tables))
	if hasFiles(cfg.Tables) {
		if cfg.Files == nil {
			return nil, errors.New("gql: Config.Files is required for File fields")
		}
		a.files = &files{blobs: cfg.Files, key: cfg.FileKey, maxFile: cfg.MaxFileBytes, maxUpload: cfg.MaxUploadBytes,
			maxFiles: cfg.MaxUploadFiles, maxPixels: cfg.MaxImagePixels, now: time.Now, base: cfg.BaseURL}
		if a.files.base == nil {
			a.files.base = requestBase
		}
	}
	cut := cutCycles(cfg.Tables)
	a.cut = map[string]map[string]bool{}
	for _, def := range cfg.Tables {
		if c := cut[def.Name]; c != nil {
			a.cut[def.TypeName] = c
		}
	}
	for i, def := range relationOrder(cfg.Tables, cut) {
		tables[i] = newTable(def, cut.bound(def), cfg.Records, lim, byName)
		tables[i].public = a.public
		tables[i].changes, tables[i].logger = cfg.Changes, cfg.Logger
		if hasFiles([]Table{def}) {
			tables[i].files = a.files
		}
		byName[def.Name] = tables[i]
		a.lists[tables[i].names.list] = tables[i]
	}
	opts := []graphql.SchemaOpt{
		graphql.UseFieldResolvers(),
		graphql.UseStringDescriptions(),
		// ServeHTTP enforces MaxQueryBytes on the document as sent; a response key added
		// to a mutation field at most doubles the length of its name.
		graphql.MaxQueryLength(3 * cfg.MaxQueryBytes),
		graphql.MaxSelections(cfg.MaxSelections),
		graphql.Logger(panicLogger{cfg.Logger}),
		graphql.PanicHandler(panicHandler{}),
	}
	if !cfg.Introspection {
		opts = append(opts, graphql.RestrictIntrospection(func(context.Context) bool { return false }))
	}
	a.sdl = sdl(cfg.Tables, cfg.Changes != nil)
	root := a.root(tables)
	schema, err := bind(a.sdl, root, cfg.Tables, cut, append(opts, graphql.MaxDepth(cfg.MaxDepth))...)
	if err != nil {
		return nil, fmt.Errorf("generate the GraphQL schema: %w", err)
	}
	a.schema = schema
	if cfg.Changes != nil {
		subSDL := strings.Replace(a.sdl, subscriptionRoots, "schema { query: Subscription }", 1)
		if a.subscriptions, err = bind(subSDL, a.subscriptionRoot(tables), cfg.Tables, cut, append(opts, graphql.MaxDepth(cfg.MaxDepth))...); err != nil {
			return nil, fmt.Errorf("generate the GraphQL subscription schema: %w", err)
		}
	}
	a.meta = sync.OnceValue(func() *graphql.Schema {
		// The same document and resolvers bound a moment ago: it cannot fail.
		s, err := bind(a.sdl, root, cfg.Tables, cut, append(opts, graphql.MaxDepth(metaMaxDepth))...)
		if err != nil {
			panic(err)
		}
		return s
	})
	// A token is at least one byte, so the query length limit bounds tokens too.
	a.docs = newDocuments(newResponseKeys(tables, cfg.MaxQueryBytes), a.newPlan, a.shapeOf)
	return a, nil
}

// bind parses sdl and binds root to it with the relations c cuts left out of the binding, not
// out of the schema: graph-gophers validates documents against the whole schema and
// introspects it, both directions of every relation. The cut fields are taken out of the
// parsed schema only while Clone, which shares it, binds the resolvers; a document that
// selects one never reaches graph-gophers' executor (exec.go runs it). The subscription
// root is left out of the binding the same way: subscriptions run on a schema of their own
// (subscriptionSDL), and graph-gophers would otherwise want resolvers answering channels.
func bind(sdl string, root any, tables []Table, c cut, opts ...graphql.SchemaOpt) (*graphql.Schema, error) {
	whole, err := graphql.ParseSchema(sdl, nil, opts...)
	if err != nil {
		return nil, err
	}
	roots := whole.AST().RootOperationTypes
	if sub, ok := roots["subscription"]; ok && roots["query"] != sub {
		delete(roots, "subscription")
		defer func() { roots["subscription"] = sub }()
	}
	types := whole.AST().Types
	kept := map[*gast.ObjectTypeDefinition]gast.FieldsDefinition{}
	for _, t := range tables {
		obj, ok := types[t.TypeName].(*gast.ObjectTypeDefinition)
		if !ok || len(c[t.Name]) == 0 {
			continue
		}
		kept[obj] = obj.Fields
		obj.Fields = slices.DeleteFunc(slices.Clone(obj.Fields), func(f *gast.FieldDefinition) bool { return c[t.Name][f.Name] })
	}
	// Clone copies most options but not all (v1.11 drops MaxSelections): give them again.
	s, err := whole.Clone(root, opts...)
	for obj, fields := range kept {
		obj.Fields = fields
	}
	return s, err
}

func setDefaults(cfg *Config) {
	switch {
	case cfg.DefaultLimit <= 0 && cfg.MaxLimit <= 0:
		cfg.DefaultLimit, cfg.MaxLimit = DefaultLimit, DefaultMaxLimit
	case cfg.DefaultLimit <= 0:
		cfg.DefaultLimit = min(DefaultLimit, cfg.MaxLimit)
	case cfg.MaxLimit <= 0:
		cfg.MaxLimit = max(DefaultMaxLimit, cfg.DefaultLimit)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxQueryBytes <= 0 {
		cfg.MaxQueryBytes = DefaultMaxQueryBytes
	}
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = DefaultMaxDepth
	}
	if cfg.MaxSelections <= 0 {
		cfg.MaxSelections = DefaultMaxSelections
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	if cfg.MaxRecords <= 0 {
		cfg.MaxRecords = DefaultMaxRecords
	}
	if cfg.MaxCost <= 0 {
		cfg.MaxCost = DefaultMaxCost
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if cfg.MaxUploadFiles <= 0 {
		cfg.MaxUploadFiles = DefaultMaxUploadFiles
	}
	if cfg.MaxImagePixels <= 0 {
		cfg.MaxImagePixels = DefaultMaxImagePixels
	}
	if cfg.Where == (store.Bounds{}) {
		cfg.Where = store.DefaultBounds
	}
	cfg.Realtime.setDefaults()
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
}

// root builds the root resolver: a struct with one field of function type per root field,
// tagged with the field's name, which graph-gophers calls as a resolver.
func (a *API) root(tables []*table) any {
	ctxType, argsType := reflect.TypeFor[context.Context](), reflect.TypeFor[args]()
	var fields []reflect.StructField
	var values []reflect.Value
	add := func(name string, fn reflect.Value) {
		fields = append(fields, reflect.StructField{
			Name: fmt.Sprintf("R%d", len(fields)),
			Type: fn.Type(),
			Tag:  reflect.StructTag(fmt.Sprintf(`graphql:%q`, name)),
		})
		values = append(values, fn)
	}
	for _, t := range tables {
		n := t.names
		// A single record is nullable: product(id) answers null for none, and a mutation
		// that fails leaves the others their data.
		one := reflect.FuncOf([]reflect.Type{ctxType, argsType}, []reflect.Type{reflect.PointerTo(t.rec), errorType}, false)
		if n.one != "" {
			add(n.one, a.resolver(one, noted(a, "list", t.one)))
		}
		list := a.resolver(reflect.FuncOf([]reflect.Type{ctxType, argsType}, []reflect.Type{t.recs, errorType}, false), noted(a, "list", t.list))
		add(n.list, list)
		add(n.count, reflect.ValueOf(guarded(a, noted(a, "count", t.count))))
		add(n.connection, a.resolver(reflect.FuncOf([]reflect.Type{ctxType, argsType}, []reflect.Type{t.conn, errorType}, false), noted(a, "list", t.connection)))
		create, update := a.resolver(one, noted(a, "create", t.create)), a.resolver(one, noted(a, "update", t.update))
		remove := reflect.ValueOf(guarded(a, noted(a, "delete", t.remove)))
		removeRecord := a.resolver(one, noted(a, "delete", t.removeRecord))
		for _, name := range dedupe(n.create, n.createCamel) {
			add(name, create)
		}
		for _, name := range dedupe(n.update, n.updateCamel) {
			add(name, update)
		}
		add(n.del, remove)
		if n.delCamel != n.del {
			add(n.delCamel, removeRecord)
		}
		a.batchResolvers(t, add)
		a.aggregateResolver(t, add)
	}
	root := reflect.New(reflect.StructOf(fields))
	for i, v := range values {
		root.Elem().Field(i).Set(v)
	}
	return root.Interface()
}

var errorType = reflect.TypeFor[error]()

// resolver makes a function of type fn, returning a record type known only at run time,
// from a resolver that returns it as a reflect.Value.
func (a *API) resolver(fn reflect.Type, resolve func(context.Context, args) (reflect.Value, error)) reflect.Value {
	zero := reflect.Zero(fn.Out(0))
	noErr := reflect.Zero(errorType)
	return reflect.MakeFunc(fn, func(in []reflect.Value) []reflect.Value {
		ctx := in[0].Interface().(context.Context)
		v, err := resolve(ctx, in[1].Interface().(args))
		if err != nil {
			e := a.public(ctx, err)
			return []reflect.Value{zero, reflect.ValueOf(&e).Elem()}
		}
		return []reflect.Value{v, noErr}
	})
}

// guarded wraps a resolver so that its errors reach the caller as public errors.
func guarded[T any](a *API, resolve func(context.Context, args) (T, error)) func(context.Context, args) (T, error) {
	return func(ctx context.Context, in args) (T, error) {
		v, err := resolve(ctx, in)
		if err != nil {
			var zero T
			return zero, a.public(ctx, err)
		}
		return v, nil
	}
}

// noted wraps a root resolver so that the request's metrics name the kind of work it did,
// and times it for Config.ObserveResolver.
func noted[T any](a *API, op string, resolve func(context.Context, args) (T, error)) func(context.Context, args) (T, error) {
	clock := a.clock(op)
	return func(ctx context.Context, in args) (T, error) {
		began := clock.begin(ctx)
		v, err := resolve(ctx, in)
		clock.end(began)
		return v, err
	}
}

// resolverClock notes and times the root fields of one kind.
type resolverClock struct {
	op      string
	write   bool                // create, update or delete: the request is a mutation
	observe func(time.Duration) // nil: not timed
}

// clock is the clock of the root fields of kind op, made when a resolver or plan is built.
func (a *API) clock(op string) resolverClock {
	c := resolverClock{op: op, write: op == "create" || op == "update" || op == "delete"}
	if a.cfg.ObserveResolver != nil {
		c.observe = a.cfg.ObserveResolver(op)
	}
	return c
}

// begin notes a root field of the clock's kind for the request's metrics; the time it
// starts, when it is timed (end).
func (c resolverClock) begin(ctx context.Context) time.Time {
	telemetry.NoteOperation(ctx, c.op)
	if c.write {
		if b := budgetFrom(ctx); b != nil {
			b.wrote.Store(true)
		}
	}
	if c.observe == nil {
		return time.Time{}
	}
	return time.Now()
}

// end tells Config.ObserveResolver how long the field that began then took.
func (c resolverClock) end(began time.Time) {
	if c.observe != nil {
		c.observe(time.Since(began))
	}
}

// public turns a resolver's error into what the caller sees: errors meant for the caller
// as they are, anything else logged and answered as INTERNAL without its details.
func (a *API) public(ctx context.Context, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, store.ErrSearchUnsupported) {
		return userError(CodeBadRequest, searchUnsupported)
	}
	if ctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return userError(CodeTimeout, fmt.Sprintf("the request did not finish within %s", a.cfg.Timeout))
	}
	a.cfg.Logger.ErrorContext(ctx, "graphql resolver failed", "err", err)
	return userError(CodeInternal, "internal error")
}

// panicLogger logs resolver panics.
type panicLogger struct{ l *slog.Logger }

func (p panicLogger) LogPanic(ctx context.Context, value any) {
	p.l.ErrorContext(ctx, "graphql resolver panicked", "panic", value)
}

// panicHandler answers a resolver panic as INTERNAL without its details.
type panicHandler struct{}

func (panicHandler) MakePanicError(context.Context, any) *gqlerrors.QueryError {
	return &gqlerrors.QueryError{Message: "internal error", Extensions: map[string]any{"code": CodeInternal}}
}
