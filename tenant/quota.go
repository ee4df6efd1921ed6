package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/coord"
	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// Quotas are what the operator allows a project. They are kept beside the project's
// document (store.Projects.Quotas), never in it, since a project's admin may edit the
// document. As deployment defaults a zero field bounds nothing (the request budget then
// takes the GraphQL limits); as a project's override a zero field takes the default.
type Quotas struct {
	// RequestsPerMinute bounds the GraphQL requests and realtime connections a project
	// opens per minute, across replicas (429 RATE_LIMITED with Retry-After).
	RequestsPerMinute int64 `json:"requestsPerMinute"`
	// ConcurrentRequests bounds the GraphQL requests a project has in flight at once,
	// across replicas (429 RATE_LIMITED).
	ConcurrentRequests int64 `json:"concurrentRequests"`
	// Records and BytesStored bound what the project stores: a write past them answers
	// QUOTA_EXCEEDED; reads go on.
	Records     int64 `json:"records"`
	BytesStored int64 `json:"bytesStored"`
	// Tables bounds the tables a document may declare (checked when it is applied).
	Tables int64 `json:"tables"`
	// Subscriptions bounds the project's open subscription connections (WebSocket and
	// SSE) across replicas; when set, it replaces the per-replica project cap.
	Subscriptions int64 `json:"subscriptions"`
	// MaxResultBytes and MaxRecordsPerRequest are the request budget of one GraphQL request
	// (RESULT_TOO_LARGE past it): gql.Config's MaxResultBytes and MaxRecords.
	MaxResultBytes       int64 `json:"maxResultBytes"`
	MaxRecordsPerRequest int64 `json:"maxRecordsPerRequest"`
}

// quotaField is one of Quotas' fields, by its JSON name.
type quotaField struct {
	name string
	max  int64 // the largest value an operator may set
	of   func(*Quotas) *int64
	// use marks a quota whose use can be measured against it (the request budget cannot:
	// each request spends its own).
	use bool
}

var quotaFields = []quotaField{
	{"requestsPerMinute", 10_000_000, func(q *Quotas) *int64 { return &q.RequestsPerMinute }, true},
	{"concurrentRequests", 100_000, func(q *Quotas) *int64 { return &q.ConcurrentRequests }, true},
	{"records", 1 << 40, func(q *Quotas) *int64 { return &q.Records }, true},
	{"bytesStored", 1 << 50, func(q *Quotas) *int64 { return &q.BytesStored }, true},
	{"tables", 10_000, func(q *Quotas) *int64 { return &q.Tables }, true},
	{"subscriptions", 10_000_000, func(q *Quotas) *int64 { return &q.Subscriptions }, true},
	{"maxResultBytes", 1 << 34, func(q *Quotas) *int64 { return &q.MaxResultBytes }, false},
	{"maxRecordsPerRequest", 100_000_000, func(q *Quotas) *int64 { return &q.MaxRecordsPerRequest }, false},
}

// Validate checks every field against its bounds, naming the first field out of them.
func (q Quotas) Validate() error {
	for _, f := range quotaFields {
		if v := *f.of(&q); v < 0 || v > f.max {
			return fmt.Errorf("quota %s: %d is out of bounds (0 to %d; 0 takes the default)", f.name, v, f.max)
		}
	}
	return nil
}

// over answers q with each zero field taken from def.
func (q Quotas) over(def Quotas) Quotas {
	for _, f := range quotaFields {
		if p := f.of(&q); *p == 0 {
			*p = *f.of(&def)
		}
	}
	return q
}

// asMap answers the fields that are set, by name, as the store keeps them.
func (q Quotas) asMap() map[string]int64 {
	m := map[string]int64{}
	for _, f := range quotaFields {
		if v := *f.of(&q); v != 0 {
			m[f.name] = v
		}
	}
	return m
}

func quotasFrom(m map[string]int64) Quotas {
	var q Quotas
	for _, f := range quotaFields {
		*f.of(&q) = m[f.name]
	}
	return q
}

// defaultQuotas are the deployment's defaults with the request budget the GraphQL limits
// give when no default is set.
func (r *Registry) defaultQuotas() Quotas {
	return r.opts.Quotas.over(Quotas{MaxResultBytes: r.opts.GraphQL.MaxResultBytes, MaxRecordsPerRequest: r.opts.GraphQL.MaxRecords})
}

// quotasOf answers a project's overrides and the quotas it is held to.
func (r *Registry) quotasOf(ctx context.Context, id string) (overrides, effective Quotas, err error) {
	m, err := r.projects.Quotas(ctx, id)
	if err != nil {
		return Quotas{}, Quotas{}, err
	}
	overrides = quotasFrom(m)
	return overrides, overrides.over(r.defaultQuotas()), nil
}

// QuotaError is a document refused when it is applied because it declares more tables than
// its project's tables quota (the only quota checked at apply time).
type QuotaError struct {
	Quota       string
	Limit, Used int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("%s quota exceeded: the document declares %d tables, and the project's quota is %d", e.Quota, e.Used, e.Limit)
}

// checkTables refuses a document that declares more tables than its project's quota.
func (r *Registry) checkTables(ctx context.Context, p *Project) error {
	_, q, err := r.quotasOf(ctx, p.ID)
	if err != nil {
		return err
	}
	if n := int64(len(p.Tables)); q.Tables > 0 && n > q.Tables {
		return &QuotaError{Quota: "tables", Limit: q.Tables, Used: n}
	}
	return nil
}

// SetQuotas changes a project's overrides by patch: a field patch holds replaces the
// override (0 removes it, so the default applies). Every replica serves the new quotas
// from its next request on.
func (r *Registry) SetQuotas(ctx context.Context, id string, patch map[string]int64) (Quotas, error) {
	if _, err := r.Get(ctx, id); err != nil {
		return Quotas{}, err
	}
	cur, err := r.projects.Quotas(ctx, id)
	if err != nil {
		return Quotas{}, err
	}
	for k, v := range patch {
		cur[k] = v
	}
	q := quotasFrom(cur)
	if err := q.Validate(); err != nil {
		return Quotas{}, &QuotaInputError{Err: err}
	}
	if err := r.projects.SetQuotas(ctx, id, q.asMap()); err != nil {
		return Quotas{}, err
	}
	r.announce(ctx, id)
	return q, nil
}

// QuotaLine is one quota of a project: where its limit comes from and how much of it the
// project uses.
type QuotaLine struct {
	Quota string `json:"quota"`
	// Limit is what the project is held to (0: no bound): its Override, else the Default.
	Limit    int64 `json:"limit"`
	Override int64 `json:"override"`
	Default  int64 `json:"default"`
	// Used is absent for the request budget, which each request spends on its own.
	Used *int64 `json:"used,omitempty"`
	// Percent is Used of Limit; Alert is "warning" from 80%, "exceeded" from 100%, else "".
	Percent float64 `json:"percent"`
	Alert   string  `json:"alert,omitempty"`
}

// QuotaReport answers GET /admin/v1/projects/{id}/quotas.
type QuotaReport struct {
	Project string      `json:"project"`
	Quotas  []QuotaLine `json:"quotas"`
}

// Alert levels of QuotaLine.
const (
	AlertWarning  = "warning"
	AlertExceeded = "exceeded"
)

// measure sets Used, Percent and Alert.
func (l *QuotaLine) measure(used int64) {
	l.Used = &used
	if l.Limit <= 0 {
		return
	}
	l.Percent = math.Round(float64(used)*1000/float64(l.Limit)) / 10
	switch {
	case used >= l.Limit:
		l.Alert = AlertExceeded
	case used*5 >= l.Limit*4:
		l.Alert = AlertWarning
	}
}

// QuotaReport measures what project id uses of each quota.
func (r *Registry) QuotaReport(ctx context.Context, id string) (*QuotaReport, error) {
	rt, err := r.Runtime(ctx, id)
	if err != nil {
		return nil, err
	}
	overrides, eff, err := r.quotasOf(ctx, id)
	if err != nil {
		return nil, err
	}
	used, err := r.quota.use(ctx, rt, eff, true)
	if err != nil {
		return nil, err
	}
	def := r.defaultQuotas()
	rep := &QuotaReport{Project: id}
	for _, f := range quotaFields {
		l := QuotaLine{Quota: f.name, Limit: *f.of(&eff), Override: *f.of(&overrides), Default: *f.of(&def)}
		if u, ok := used[f.name]; ok {
			l.measure(u)
		}
		rep.Quotas = append(rep.Quotas, l)
	}
	return rep, nil
}

// quotaLimiter enforces the rate and concurrency quotas in Redis, so that they hold across
// replicas: requestsPerMinute in coord.QuotaRate's bucket, concurrentRequests in the slots
// of coord.QuotaRequests (leased to replicas by pool), subscriptions in the slots of
// coord.QuotaSubscriptions.
type quotaLimiter struct {
	rates *coord.Rates
	slots *coord.Slots
	pool  *coord.Pool
	// requestTTL bounds how long a request's slot outlives a replica that died holding it.
	requestTTL time.Duration
}

// refusal is a request a quota refuses: its message and Retry-After.
type refusal struct {
	quota string
	msg   string
	retry int // seconds
}

// rateTokens are requests of one project this replica took from the project's rate limit
// in Redis and has not spent yet. Taking a tenth of a second's worth of the quota at once
// makes a busy project's rate cost one Redis call per batch instead of per request; a
// project under 600 requests a minute takes them one at a time. Tokens never spent are
// lost (after tokenLife): like a race between replicas, a batch can only refuse early,
// never admit more than the quota.
type rateTokens struct {
	mu    sync.Mutex
	left  int
	until time.Time
}

// tokenLife is how long a replica may spend a batch of tokens.
const tokenLife = time.Second

// batchSize is how many requests a replica takes from a quota of rpm at once.
func batchSize(rpm int) int { return min(max(rpm/600, 1), 1000) }

// allow counts one request of rt's project against its requests per minute.
func (l *quotaLimiter) allow(ctx context.Context, rt *Runtime) (*refusal, error) {
	n := int(rt.Quotas.RequestsPerMinute)
	if n <= 0 {
		return nil, nil
	}
	t := rt.rate
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if t.left > 0 && now.Before(t.until) {
		t.left--
		return nil, nil
	}
	id, rate := rt.Project.ID, coord.Rate{N: n, Period: time.Minute}
	res, err := l.rates.Allow(ctx, coord.QuotaRate(id), rate, batchSize(n))
	if err == nil && res.Allowed == 0 && batchSize(n) > 1 {
		// Near the limit a whole batch is refused; a single request may still fit.
		res, err = l.rates.Allow(ctx, coord.QuotaRate(id), rate, 1)
	}
	if err != nil {
		return nil, fmt.Errorf("count request of %q: %w", id, err)
	}
	if res.Allowed > 0 {
		t.left, t.until = res.Allowed-1, now.Add(tokenLife)
		return nil, nil
	}
	retry := max(int(math.Ceil(res.RetryAfter.Seconds())), 1)
	return &refusal{quota: "requestsPerMinute", retry: retry,
		msg: fmt.Sprintf("project %q may make %d requests per minute (its requestsPerMinute quota); retry after %d s", id, n, retry)}, nil
}

// use measures what rt's project uses of each quota that can be measured, by name; without
// storage it leaves out records and bytes unless they have a quota, since counting them
// reads every table.
func (l *quotaLimiter) use(ctx context.Context, rt *Runtime, eff Quotas, storage bool) (map[string]int64, error) {
	id := rt.Project.ID
	var rpm int64
	if eff.RequestsPerMinute > 0 {
		n := int(eff.RequestsPerMinute)
		res, err := l.rates.Allow(ctx, coord.QuotaRate(id), coord.Rate{N: n, Period: time.Minute}, 0)
		if err != nil {
			return nil, fmt.Errorf("requests of %q: %w", id, err)
		}
		rpm = int64(n - res.Remaining)
	}
	conc, err := l.slots.Held(ctx, coord.QuotaRequests(id))
	if err != nil {
		return nil, err
	}
	subs, err := l.slots.Held(ctx, coord.QuotaSubscriptions(id))
	if err != nil {
		return nil, err
	}
	var stored store.StoredSize
	if storage || eff.Records > 0 || eff.BytesStored > 0 {
		if stored, err = rt.Records.Stored(ctx); err != nil {
			return nil, fmt.Errorf("storage of %q: %w", id, err)
		}
	}
	return map[string]int64{
		"requestsPerMinute": rpm, "concurrentRequests": conc, "subscriptions": subs,
		"records": stored.Records, "bytesStored": stored.Bytes, "tables": int64(len(rt.Project.Tables)),
	}, nil
}

// withQuotas holds a project's GraphQL requests and realtime connections to its quotas:
// each counts against its requests per minute; a request holds one of its concurrent
// requests and a realtime connection one of its subscriptions while it runs. Redis not
// answering refuses the request (503), as the MCP limits do: the quotas cannot be checked.
func (r *Registry) withQuotas(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		rt := RuntimeOf(c)
		q := rt.Quotas
		if q.RequestsPerMinute <= 0 && q.ConcurrentRequests <= 0 && q.Subscriptions <= 0 {
			return next(c)
		}
		req := c.Request()
		ctx := req.Context()
		id := rt.Project.ID
		ref, err := r.quota.allow(ctx, rt)
		if err != nil {
			return r.quotaUnavailable(c, err)
		}
		if ref == nil {
			realtime := gql.IsWebSocket(req) || gql.IsEventStream(req)
			limit, what := q.ConcurrentRequests, "concurrentRequests"
			if realtime {
				limit, what = q.Subscriptions, "subscriptions"
			}
			if limit > 0 {
				var ok bool
				if realtime {
					var release func()
					if release, ok, err = r.quota.slots.Hold(ctx, coord.QuotaSubscriptions(id), limit, coord.SubscriptionSlotTTL); ok {
						defer release()
					}
				} else if ok, err = r.quota.pool.Acquire(ctx, rt.concKey, limit, r.quota.requestTTL); ok {
					defer r.quota.pool.Release(rt.concKey, limit)
				}
				if err != nil {
					return r.quotaUnavailable(c, err)
				}
				if !ok {
					ref = &refusal{quota: what, retry: 1}
					ref.msg = fmt.Sprintf("project %q has %d requests in flight, the most its concurrentRequests quota allows; retry when one ends", id, limit)
					if realtime {
						ref.msg = fmt.Sprintf("project %q has %d subscription connections open, the most its subscriptions quota allows: close one first", id, limit)
					}
				}
			}
		}
		if ref != nil {
			r.quotaRefused(ref.quota)
			c.Response().Header().Set("Retry-After", strconv.Itoa(ref.retry))
			return WriteError(c, http.StatusTooManyRequests, CodeRateLimited, ref.msg, "quota", ref.quota)
		}
		return next(c)
	}
}

func (r *Registry) quotaUnavailable(c echo.Context, err error) error {
	if errors.Is(c.Request().Context().Err(), context.Canceled) {
		return nil
	}
	r.opts.Logger.WarnContext(c.Request().Context(), "redis did not answer; request refused", "err", err)
	c.Response().Header().Set("Retry-After", "1")
	return WriteError(c, http.StatusServiceUnavailable, CodeInternal, "the project's quotas cannot be checked right now (Redis does not answer); retry in a few seconds")
}

// getQuotas answers GET /admin/v1/projects/{id}/quotas.
func (r *Registry) getQuotas(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	rep, err := r.QuotaReport(c.Request().Context(), id)
	if errors.Is(err, ErrProjectNotFound) {
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	}
	if err != nil {
		return r.internal(c, "quotas", err)
	}
	return c.JSON(http.StatusOK, rep)
}

// putQuotas answers PUT /admin/v1/projects/{id}/quotas: a JSON object of the quotas to
// change ({"requestsPerMinute": 600}); 0 takes the default again, others are kept.
func (r *Registry) putQuotas(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	patch, err := decodeQuotaPatch(http.MaxBytesReader(c.Response(), c.Request().Body, 64<<10))
	if err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	ctx := c.Request().Context()
	_, err = r.SetQuotas(ctx, id, patch)
	switch {
	case errors.Is(err, ErrProjectNotFound):
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	case errors.As(err, new(*QuotaInputError)):
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	case err != nil:
		return r.internal(c, "set quotas", err)
	}
	r.opts.Logger.InfoContext(ctx, "project quotas set", "project", id, "quotas", patch)
	diff := make([]string, 0, len(patch))
	for _, k := range slices.Sorted(maps.Keys(patch)) {
		diff = append(diff, fmt.Sprintf("~ quota %s = %d", k, patch[k]))
	}
	noteChange(c, id, diff)
	return r.getQuotas(c)
}

// decodeQuotaPatch reads a PUT's body, naming the field that is not a quota or not a whole
// number.
func decodeQuotaPatch(body io.Reader) (map[string]int64, error) {
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(body).Decode(&raw); err != nil {
		return nil, fmt.Errorf("the body must be a JSON object of quotas: %v", err)
	}
	patch := map[string]int64{}
	for k, v := range raw {
		if !slices.ContainsFunc(quotaFields, func(f quotaField) bool { return f.name == k }) {
			return nil, fmt.Errorf("quota %s: no such quota (quotas: %s)", k, quotaNames())
		}
		var n int64
		if err := json.Unmarshal(v, &n); err != nil {
			return nil, fmt.Errorf("quota %s: %s is not a whole number", k, v)
		}
		patch[k] = n
	}
	if err := quotasFrom(patch).Validate(); err != nil {
		return nil, err
	}
	return patch, nil
}

func quotaNames() string {
	s := ""
	for i, f := range quotaFields {
		if i > 0 {
			s += ", "
		}
		s += f.name
	}
	return s
}

// QuotaInputError is a quota set out of its bounds, or not a number.
type QuotaInputError struct{ Err error }

func (e *QuotaInputError) Error() string { return e.Err.Error() }
func (e *QuotaInputError) Unwrap() error { return e.Err }

// storageQuota is what a project's records are held to.
func (q Quotas) storageQuota() store.StorageQuota {
	return store.StorageQuota{Records: q.Records, Bytes: q.BytesStored}
}
