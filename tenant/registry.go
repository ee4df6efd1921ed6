package tenant

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/platform-dev/platform/coord"
	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/pressure"
	"github.com/platform-dev/platform/store"
)

// ErrProjectNotFound is returned for a project the registry does not hold.
var ErrProjectNotFound = errors.New("project not found")

// ErrProjectDeleted is returned for a project deleted without purge: it does not serve, and
// its id cannot be taken by a new document until it is restored or purged. Registry.Get
// answers it together with ErrProjectNotFound.
var ErrProjectDeleted = errors.New("project deleted")

// GraphQLLimits are the deployment's defaults and bounds for every project's API.
type GraphQLLimits struct {
	DefaultLimit  int
	MaxLimit      int
	MaxBodyBytes  int64
	MaxQueryBytes int
	MaxDepth      int
	Timeout       time.Duration
	// MaxResultBytes and MaxRecords are the budget of one request, across the whole answer
	// (RESULT_TOO_LARGE past it); MaxCost bounds a document's estimate before it runs
	// (QUERY_TOO_COMPLEX). See gql.Config.
	MaxResultBytes int64
	MaxRecords     int64
	MaxCost        int64
	// Pressure, when set, says whether the process is short of memory: expensive documents
	// are then refused with 503 (gql.Config.Pressure). nil: never.
	Pressure func() bool
}

// Options tune the registry and its cache.
type Options struct {
	// CacheSize bounds how many projects are held ready at once (least recently used go).
	CacheSize int
	// IdleTTL evicts a project nobody asked for in that long.
	IdleTTL time.Duration
	// Refresh is how old a cached project may get before it is checked against the control
	// database in the background (a safety net for a missed change message).
	Refresh time.Duration
	// NotFoundTTL is how long "no such project" is remembered, so a flood of requests for an
	// unknown host does not reach the control database.
	NotFoundTTL time.Duration
	GraphQL     GraphQLLimits
	// Realtime bounds subscriptions (see RealtimeLimits).
	Realtime RealtimeLimits
	// Auth tunes token verification (leeway, JWKS refresh).
	Auth   VerifierConfig
	Logger *slog.Logger
	// Registerer receives the project cache's metrics; nil keeps them unregistered.
	Registerer prometheus.Registerer
	// Tracer, when set, traces GraphQL executions; nil costs nothing.
	Tracer trace.Tracer

	// Backups say where projects' backups go and how often.
	Backups BackupOptions
	// Usage tunes usage metering.
	Usage UsageOptions

	// Quotas are the deployment's default quotas (see Quotas); a project's overrides,
	// set through the admin API, replace them field by field.
	Quotas Quotas
	// MetricsProjects bounds the projects that get their own label on the quota and usage
	// metrics (the most used on the replica; the rest are summed as _other). Default 100.
	MetricsProjects int
	// FairShare admits GraphQL requests per project when the process is busy (see
	// pressure.FairShare); nil admits every request at once.
	FairShare *pressure.FairShare
	// MaxImportBytes bounds the body of an import through the admin API (0:
	// DefaultMaxImportBytes).
	MaxImportBytes int64
	// Persisted bounds persisted and registered documents (persisted.go).
	Persisted PersistedOptions
	// Files bound the files of File fields and sign their URLs (files.go).
	Files FileOptions
	// Webhooks tune the delivery of webhooks (webhooks_run.go).
	Webhooks WebhookOptions
	// Proxies are the trusted proxies, whose X-Forwarded-Proto, -Host and -Prefix say where
	// a request was sent (the start of a File's url); nil believes no one's.
	Proxies Proxies
}

func (o *Options) defaults() {
	if o.CacheSize <= 0 {
		o.CacheSize = 1000
	}
	if o.IdleTTL <= 0 {
		o.IdleTTL = 10 * time.Minute
	}
	if o.Refresh <= 0 {
		o.Refresh = 30 * time.Second
	}
	if o.NotFoundTTL <= 0 {
		o.NotFoundTTL = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxImportBytes <= 0 {
		o.MaxImportBytes = DefaultMaxImportBytes
	}
	if o.MetricsProjects <= 0 {
		o.MetricsProjects = 100
	}
	if len(o.Files.Key) == 0 {
		// Signed URLs then hold on this process only, until it ends.
		o.Files.Key = make([]byte, 32)
		_, _ = rand.Read(o.Files.Key)
	}
}

// Registry stores project documents in the control database and keeps the ones in use ready
// to serve.
type Registry struct {
	stores    *store.Stores
	projects  *store.Projects
	opts      Options
	cache     *cache
	resolvers *prometheus.HistogramVec // by operation
	verifiers *Verifiers
	live      *realtime
	meter     *meter
	quota     *quotaLimiter
	// invalidations tell every replica that a project's document changed.
	invalidations *coord.Invalidations
	// quotaMetrics count refusals and measure quota use at each scrape.
	quotaMetrics *quotaMetrics
	stop         context.CancelFunc
	done         chan struct{}
	// own are this replica's change notices on their way back from Redis (pub/sub echoes
	// them to their sender). The entry was forgotten when the change was announced, and a
	// load since read the new document: forgetting it again would only build it twice.
	own ownNotices
	// closed makes Close run once, however often it is called.
	closed sync.Once
	// documentChanged wakes the webhooks' project scan when a document changed anywhere.
	documentChanged chan struct{}
}

// ownNoticeTTL bounds how long a notice this replica sent is waited for: one lost on a
// reconnection must not make listen skip another replica's notice for long.
const ownNoticeTTL = 10 * time.Second

// ownNotices are the times this replica announced each project's change, oldest first.
type ownNotices struct {
	mu sync.Mutex
	at map[string][]time.Time
}

func (o *ownNotices) add(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.at == nil {
		o.at = map[string][]time.Time{}
	}
	o.at[id] = append(o.at[id], time.Now())
}

// take reports whether a notice of id is this replica's own, sent within ownNoticeTTL, and
// counts it received. Another replica's notice taken for one's own costs nothing: the own
// one then comes, is not expected any more, and makes the replica forget the entry after
// both changes.
func (o *ownNotices) take(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	at := o.at[id]
	if len(at) == 0 {
		return false
	}
	if len(at) == 1 {
		delete(o.at, id)
	} else {
		o.at[id] = at[1:]
	}
	return time.Since(at[0]) < ownNoticeTTL
}

// NewRegistry opens the registry and starts listening for changes made by other replicas.
func NewRegistry(ctx context.Context, stores *store.Stores, opts Options) (*Registry, error) {
	opts.defaults()
	r := &Registry{stores: stores, projects: stores.Projects(), opts: opts, done: make(chan struct{}), documentChanged: make(chan struct{}, 1)}
	if opts.Auth.Logger == nil {
		opts.Auth.Logger = opts.Logger
	}
	// A request waits for its project's keys at most FetchTimeout: within the time the API
	// gives a request, a hanging identity provider is answered 503.
	if t := opts.GraphQL.Timeout; t > 0 && (opts.Auth.FetchTimeout <= 0 || opts.Auth.FetchTimeout > t) {
		opts.Auth.FetchTimeout = t
	}
	r.verifiers = NewVerifiers(opts.Auth)
	r.cache = newCache(opts, r.Get, r.build)
	r.cache.quotas = func(ctx context.Context, id string) (Quotas, error) {
		_, q, err := r.quotasOf(ctx, id)
		return q, err
	}
	if err := r.registerMetrics(opts.Registerer); err != nil {
		return nil, err
	}
	var err error
	if r.live, err = newRealtime(opts.Realtime, opts.Registerer); err != nil {
		return nil, err
	}
	slots := coord.NewSlots(stores.Redis, opts.Logger)
	pool, err := coord.NewPool(ctx, stores.Redis, slots, opts.Logger)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r.stop == nil { // NewRegistry failed: nothing will close the registry
			pool.Close()
		}
	}()
	r.quota = &quotaLimiter{rates: coord.NewRates(stores.Redis), slots: slots, pool: pool, requestTTL: time.Minute}
	if t := opts.GraphQL.Timeout; t > 0 {
		r.quota.requestTTL = t + 10*time.Second
	}
	if err := r.registerQuotaMetrics(opts.Registerer); err != nil {
		return nil, err
	}
	r.meter = newMeter(opts.Usage, stores.Usage(), opts.Logger)
	if err := r.meter.register(opts.Registerer, opts.MetricsProjects); err != nil {
		r.meter.close()
		return nil, err
	}
	r.invalidations = coord.NewInvalidations(stores.Redis)
	// Listen returns once Redis confirmed the subscription, so no change announced after
	// NewRegistry returns can be missed.
	ids, stopListening, err := r.invalidations.Listen(ctx)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.stop = cancel
	go r.listen(lctx, ids, stopListening)
	return r, nil
}

func (r *Registry) listen(ctx context.Context, ch <-chan string, stop func()) {
	defer close(r.done)
	defer stop()
	janitor := time.NewTicker(r.opts.IdleTTL / 4)
	defer janitor.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case id, ok := <-ch:
			if !ok {
				return
			}
			if !r.own.take(id) {
				r.cache.forget(id)
			}
			select {
			case r.documentChanged <- struct{}{}:
			default:
			}
		case <-janitor.C:
			r.cache.evictIdle()
		}
	}
}

// Close stops listening for changes and releases every cached project.
func (r *Registry) Close() {
	r.closed.Do(func() {
		r.stop()
		<-r.done
		r.quota.pool.Close()
		r.cache.purge()
		r.meter.close()
	})
}

// Runtime returns the ready-to-serve state of a project; ErrProjectNotFound when there is no
// such project. It reads the control database only when the project is not cached.
func (r *Registry) Runtime(ctx context.Context, id string) (*Runtime, error) {
	return r.cache.get(ctx, id)
}

// build makes a project ready to serve: its tables and indexes as the document declares
// them, its records, and its GraphQL API. Creating what exists already changes nothing, so
// every replica that builds a project makes sure of its tables.
func (r *Registry) build(ctx context.Context, p *Project) (*Runtime, error) {
	records, err := r.stores.ProjectRecords(ctx, p.ID, p.MongoURI, p.StoreTables())
	if err != nil {
		return nil, err
	}
	if err := records.Ensure(ctx); err != nil {
		return nil, indexProblem(p, err)
	}
	if err := webhooksReady(ctx, p, records); err != nil {
		return nil, err
	}
	_, quotas, err := r.quotasOf(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	records.LimitStorage(quotas.storageQuota())
	usage := r.meter.project(p.ID)
	realtime := r.live.limits.Realtime
	var answered func(mutation, failed bool)
	if usage != nil {
		records.CountInto(&usage.store)
		usage.records.Store(records)
		realtime.Observe = usage.realtime(realtime.Observe)
		answered = usage.answered
	}
	lim := r.opts.GraphQL
	lim.MaxResultBytes, lim.MaxRecords = quotas.MaxResultBytes, quotas.MaxRecordsPerRequest
	introspection := p.GraphQL.Introspection == nil || *p.GraphQL.Introspection
	if p.GraphQL.DefaultLimit > 0 {
		lim.DefaultLimit = p.GraphQL.DefaultLimit
	}
	if p.GraphQL.MaxLimit > 0 {
		lim.MaxLimit = p.GraphQL.MaxLimit
	}
	cfg := gql.Config{
		Tables:          p.APITables(),
		Records:         records,
		Introspection:   introspection,
		DefaultLimit:    lim.DefaultLimit,
		MaxLimit:        lim.MaxLimit,
		MaxBodyBytes:    lim.MaxBodyBytes,
		MaxQueryBytes:   lim.MaxQueryBytes,
		MaxDepth:        lim.MaxDepth,
		Timeout:         lim.Timeout,
		MaxResultBytes:  lim.MaxResultBytes,
		MaxRecords:      lim.MaxRecords,
		MaxCost:         lim.MaxCost,
		Pressure:        lim.Pressure,
		Logger:          r.opts.Logger.With("project", p.ID),
		Tracer:          r.opts.Tracer,
		ObserveResolver: r.resolverObserver,
		Changes:         r.stores.Changes().Project(p.ID),
		Realtime:        realtime,
		Answered:        answered,
		Files:           r.stores.ProjectBlobs(p.ID),
		FileKey:         projectFileKey(r.opts.Files.Key, p.ID),
		MaxFileBytes:    r.opts.Files.MaxFileBytes,
		MaxUploadBytes:  r.opts.Files.MaxUploadBytes,
		MaxUploadFiles:  r.opts.Files.MaxUploadFiles,
		MaxImagePixels:  r.opts.Files.MaxImagePixels,
		BaseURL:         r.opts.Proxies.baseURL,
	}
	if err := r.persistedConfig(ctx, p.ID, &cfg); err != nil {
		return nil, err
	}
	api, err := gql.New(cfg)
	if err != nil {
		return nil, &DocumentError{Problems: []Problem{{Path: "tables", Message: err.Error()}}}
	}
	rules, err := CompileAccess(p.Tables)
	if err != nil {
		return nil, &DocumentError{Problems: []Problem{{Path: "tables", Message: err.Error()}}}
	}
	rules.logger = r.opts.Logger.With("project", p.ID)
	return &Runtime{Project: p, API: api, Verifier: r.verifiers.For(p.ID, p.Auth), Rules: rules, Records: records, Quotas: quotas, rate: &rateTokens{}, concKey: coord.QuotaRequests(p.ID), usage: usage}, nil
}

// Get reads a project document from the control database.
func (r *Registry) Get(ctx context.Context, id string) (*Project, error) {
	sp, err := r.projects.Get(ctx, id)
	if errors.Is(err, store.ErrDeleted) {
		return nil, fmt.Errorf("%w: %q (%w)", ErrProjectNotFound, id, ErrProjectDeleted)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrProjectNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	return decodeStored(sp)
}

func decodeStored(sp *store.StoredProject) (*Project, error) {
	var p Project
	if err := json.Unmarshal([]byte(sp.Document), &p); err != nil {
		return nil, fmt.Errorf("decode stored project %q: %w", sp.ID, err)
	}
	p.Version, p.UpdatedAt = sp.Version, sp.UpdatedAt
	return &p, nil
}

// Put creates or replaces a project. The document must have passed ParseDocument; Put also
// checks that its API can be built, so a stored project always serves, and checks it
// against the stored records as Apply does (without dropping data). It returns the previous
// document (nil for a new project) and the stored one; ErrProjectDeleted while the id is a
// project deleted without purge. The project's history records the change with the client
// WithClient names.
func (r *Registry) Put(ctx context.Context, p *Project) (prev, cur *Project, err error) {
	prev, cur, _, err = r.Apply(ctx, p, ApplyOptions{})
	return prev, cur, err
}

// put stores p once its API builds and migrate, which rewrites the records, succeeded.
func (r *Registry) put(ctx context.Context, p *Project, migrate func(context.Context) error) (prev, cur *Project, err error) {
	if _, err := r.build(ctx, p); err != nil {
		return nil, nil, err
	}
	if err := migrate(ctx); err != nil {
		return nil, nil, err
	}
	doc := *p
	doc.Version, doc.UpdatedAt = 0, time.Time{}
	js, err := json.Marshal(&doc)
	if err != nil {
		return nil, nil, fmt.Errorf("encode project %q: %w", p.ID, err)
	}
	old, stored, err := r.projects.Put(ctx, p.ID, string(js), Applied(appliedBy(ctx), p))
	if errors.Is(err, store.ErrDeleted) {
		return nil, nil, fmt.Errorf("%w: %q", ErrProjectDeleted, p.ID)
	}
	if err != nil {
		return nil, nil, err
	}
	if old != nil {
		if prev, err = decodeStored(old); err != nil {
			return nil, nil, err
		}
	}
	if old == nil || old.Version != stored.Version {
		r.announce(ctx, p.ID)
	}
	if cur, err = decodeStored(stored); err != nil {
		return nil, nil, err
	}
	return prev, cur, nil
}

// indexProblem reports an index the store cannot build on the records a table holds at the
// index's path in the document; other errors pass through.
func indexProblem(p *Project, err error) error {
	var ie *store.IndexError
	if !errors.As(err, &ie) {
		return err
	}
	path := "tables." + ie.Table + ".indexes"
	for i, ix := range p.Tables[ie.Table].Indexes {
		if slices.Equal(ix.Fields, ie.Index.Fields) {
			path = fmt.Sprintf("%s.%d", path, i)
		}
	}
	msg := ie.Error()
	if ie.Value != nil {
		vals := make([]string, len(ie.Value))
		for i, v := range ie.Value {
			js, _ := json.Marshal(v)
			vals[i] = string(js)
		}
		msg = fmt.Sprintf("cannot be unique: more than one record of %s has %s = %s; change those records or drop unique", ie.Table, strings.Join(ie.Index.Fields, ", "), strings.Join(vals, ", "))
	}
	return &DocumentError{Problems: []Problem{{Path: path, Message: msg}}}
}

// Delete stops serving a project and keeps its document, history and records, so that
// Restore brings it back; with purge it removes them all, whether the project was deleted
// before or not. ErrProjectDeleted when a project deleted without purge is deleted again
// without purge.
func (r *Registry) Delete(ctx context.Context, id string, purge bool) error {
	sp, err := r.projects.Lookup(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %q", ErrProjectNotFound, id)
	}
	if err != nil {
		return err
	}
	p, err := decodeStored(sp)
	if err != nil {
		return err
	}
	err = r.projects.Delete(ctx, id)
	switch {
	case errors.Is(err, store.ErrDeleted) && !purge:
		return fmt.Errorf("%w: %q", ErrProjectDeleted, id)
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: %q", ErrProjectNotFound, id)
	case err != nil && !errors.Is(err, store.ErrDeleted):
		return err
	}
	r.announce(ctx, id)
	if !purge {
		return nil
	}
	// The records go before the document: a purge that fails half way leaves a deleted
	// project to purge again, never records that a new project of the id would serve.
	records, err := r.stores.ProjectRecords(ctx, id, p.MongoURI, nil)
	if err != nil {
		return err
	}
	if err := records.Drop(ctx); err != nil {
		return err
	}
	if err := r.projects.Purge(ctx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// List returns every project, ordered by id.
func (r *Registry) List(ctx context.Context) ([]*Project, error) {
	sps, err := r.projects.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*Project, 0, len(sps))
	for i := range sps {
		p, err := decodeStored(&sps[i])
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// announce drops the local copy of a changed project and tells the other replicas to do the
// same. A failed publish is logged, not returned: the change is stored, and the other
// replicas' background refresh picks it up.
func (r *Registry) announce(ctx context.Context, id string) {
	r.cache.forget(id)
	r.own.add(id)
	if err := r.invalidations.Announce(ctx, id); err != nil {
		r.own.take(id)
		r.opts.Logger.Warn("announce project change", "project", id, "err", err)
	}
}

// Diff describes how a project document changed, one line a change, for people to read.
func Diff(prev, cur *Project) []string {
	if prev == nil {
		lines := []string{"+ project " + cur.ID}
		for _, t := range sortedKeys(cur.Tables) {
			lines = append(lines, "+ table "+t)
		}
		return lines
	}
	var lines []string
	if prev.MongoURI != cur.MongoURI {
		lines = append(lines, "~ mongoURI")
	}
	if !equalJSON(prev.Auth, cur.Auth) {
		lines = append(lines, "~ auth")
	}
	if !equalJSON(prev.GraphQL, cur.GraphQL) {
		lines = append(lines, "~ graphql")
	}
	if !equalJSON(prev.CORS, cur.CORS) {
		lines = append(lines, "~ cors")
	}
	for _, n := range unionKeys(prev.Tables, cur.Tables) {
		a, inA := prev.Tables[n]
		b, inB := cur.Tables[n]
		switch {
		case !inA:
			lines = append(lines, "+ table "+n)
		case !inB:
			lines = append(lines, "- table "+n)
		default:
			lines = append(lines, diffTable(n, a, b)...)
		}
	}
	return lines
}

func diffTable(name string, a, b TableDoc) []string {
	lines := append(diffNamed("field", name, a.Fields, b.Fields), diffNamed("relation", name, a.Relations, b.Relations)...)
	if a.TypeName != b.TypeName || a.Description != b.Description {
		lines = append(lines, "~ table "+name)
	}
	if a.Access != b.Access {
		lines = append(lines, "~ access "+name)
	}
	if !equalJSON(a.Indexes, b.Indexes) {
		lines = append(lines, "~ indexes "+name)
	}
	if !equalJSON(a.Search, b.Search) {
		lines = append(lines, "~ search "+name)
	}
	sort.Strings(lines)
	return lines
}

// diffNamed is one line per entry of a table's named parts (fields, relations) added (+),
// removed (-) or changed (~): "+ field products.stock".
func diffNamed[T any](kind, table string, a, b map[string]T) []string {
	var lines []string
	for _, n := range unionKeys(a, b) {
		va, inA := a[n]
		vb, inB := b[n]
		switch {
		case !inA:
			lines = append(lines, fmt.Sprintf("+ %s %s.%s", kind, table, n))
		case !inB:
			lines = append(lines, fmt.Sprintf("- %s %s.%s", kind, table, n))
		case !equalJSON(va, vb):
			lines = append(lines, fmt.Sprintf("~ %s %s.%s", kind, table, n))
		}
	}
	return lines
}

// unionKeys is the keys of a and b, sorted.
func unionKeys[T any](a, b map[string]T) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return sortedKeys(keys)
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
