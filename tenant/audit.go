package tenant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
)

const (
	// DefaultAuditRetention is how long the audit log keeps an entry unless told otherwise.
	DefaultAuditRetention = 90 * 24 * time.Hour
	// auditPruneEvery is how often each replica removes the entries past the retention.
	auditPruneEvery = time.Hour
	// MaxAuditLines bounds one answer of GET /admin/v1/audit; a caller reads on with since
	// set to the last entry's time.
	MaxAuditLines = 10000
)

// AuditLine is an audit entry as GET /admin/v1/audit writes it, one JSON object a line.
type AuditLine struct {
	At      string   `json:"at"`
	Key     string   `json:"key"`
	Scope   string   `json:"scope"`
	Client  string   `json:"client"`
	Action  string   `json:"action"`
	Project string   `json:"project,omitempty"`
	Target  string   `json:"target,omitempty"`
	Diff    []string `json:"diff"`
	Outcome string   `json:"outcome"`
}

// AuditLineOf is e as the API and the console show it.
func AuditLineOf(e store.AuditEntry) AuditLine {
	return AuditLine{At: e.At.UTC().Format(store.TimeLayout), Key: e.Key, Scope: e.Scope, Client: e.Client, Action: e.Action,
		Project: e.Project, Target: e.Target, Diff: e.Diff, Outcome: e.Outcome}
}

// Change is one change an operator made or tried, for the audit log.
type Change struct {
	Operator *Operator
	// Client names the client and its address ("console from 10.0.0.7").
	Client          string
	Action, Project string
	Target          string
	Diff            []string
	// Failure is why the change failed ("" when it was made).
	Failure string
}

// Audit records ch in the audit log. A failed write is logged: the change is made already,
// and the log's loss is the server log's to tell.
func (r *Registry) Audit(ctx context.Context, ch Change) {
	e := store.AuditEntry{Client: ch.Client, Action: ch.Action, Project: ch.Project, Target: ch.Target, Diff: ch.Diff, Outcome: "ok"}
	if ch.Operator != nil {
		e.Key, e.Scope = ch.Operator.Name, ch.Operator.Scope.String()
	}
	if ch.Failure != "" {
		e.Outcome = ch.Failure
	}
	if err := r.stores.Audit().Append(context.WithoutCancel(ctx), e); err != nil {
		r.opts.Logger.ErrorContext(ctx, "audit log: entry not written", "action", ch.Action, "project", ch.Project, "err", err)
	}
}

// AuditQuery reads the audit log as q selects it.
func (r *Registry) AuditQuery(ctx context.Context, q store.AuditQuery) ([]AuditLine, error) {
	es, err := r.stores.Audit().Read(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]AuditLine, len(es))
	for i, e := range es {
		out[i] = AuditLineOf(e)
	}
	return out, nil
}

// RunAuditPruning removes the audit entries older than retention, at once and then hourly,
// until ctx ends. Every replica prunes; removing what another removed costs nothing.
func (r *Registry) RunAuditPruning(ctx context.Context, retention time.Duration) {
	t := time.NewTicker(auditPruneEvery)
	defer t.Stop()
	for {
		n, err := r.stores.Audit().Prune(ctx, time.Now().Add(-retention))
		switch {
		case err != nil && ctx.Err() == nil:
			r.opts.Logger.ErrorContext(ctx, "audit log: prune", "err", err)
		case n > 0:
			r.opts.Logger.InfoContext(ctx, "audit log: pruned", "entries", n, "retention", retention.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// adminActions name the changes of the admin API in the audit log; a change route not named
// here is recorded under its method and path.
var adminActions = map[string]string{
	"PUT /admin/v1/projects/:id":                 "project.apply",
	"DELETE /admin/v1/projects/:id":              "project.delete",
	"POST /admin/v1/projects/:id/rollback":       "project.rollback",
	"POST /admin/v1/projects/:id/undelete":       "project.undelete",
	"POST /admin/v1/projects/:id/backups":        "project.backup",
	"POST /admin/v1/projects/:id/restore":        "project.restore",
	"POST /admin/v1/projects/:id/import":         "project.import",
	"POST /admin/v1/keys":                        "key.create",
	"DELETE /admin/v1/keys/:name":                "key.revoke",
	"PUT /admin/v1/projects/:id/quotas":          "quota.set",
	"PUT /admin/v1/projects/:id/documents":       "documents.register",
	"DELETE /admin/v1/projects/:id/documents":    "documents.remove",
	"POST /admin/v1/projects/:id/advice/declare": "index.declare",

	"POST /admin/v1/projects/:id/webhooks/:name/deliveries/:delivery/retry": "webhook.retry",
	"POST /admin/v1/projects/:id/webhooks/:name/secret":                     "webhook.rotate",
}

const auditNoteKey = "admin.audit"

// auditNote is what a handler tells the audit log of its change beyond the route.
type auditNote struct {
	target string
	diff   []string
}

// noteChange tells the audit log what the request's change was (a no-op outside one).
func noteChange(c echo.Context, target string, diff []string) {
	if n, ok := c.Get(auditNoteKey).(*auditNote); ok {
		n.target, n.diff = target, diff
	}
}

// auditChanges records every change the admin API is asked for, made or not: a route's
// refusal (scope, document, conflict) is recorded with its status and message. Reads and
// dry runs change nothing and are not recorded.
func (r *Registry) auditChanges(gate *AdminGate) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.Method == http.MethodGet || req.Method == http.MethodHead || c.QueryParam("dryRun") == "true" {
				return next(c)
			}
			note := &auditNote{}
			c.Set(auditNoteKey, note)
			res := c.Response()
			body := &errorBody{ResponseWriter: res.Writer}
			res.Writer = body
			if err := next(c); err != nil {
				c.Error(err)
			}
			route := req.Method + " " + c.Path()
			action, ok := adminActions[route]
			if !ok {
				action = route
			}
			ch := Change{Operator: OperatorOf(req.Context()), Client: adminClient(req, gate), Action: action,
				Project: c.Param("id"), Target: note.target, Diff: note.diff}
			if res.Status >= 400 {
				ch.Failure = "failed " + strconv.Itoa(res.Status) + ": " + body.message(res.Status)
			}
			r.Audit(req.Context(), ch)
			return nil
		}
	}
}

// errorBody keeps the start of an answer (errorBodyMax bytes), to read the message of an
// error answer.
type errorBody struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (b *errorBody) Write(p []byte) (int, error) {
	if room := errorBodyMax - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return b.ResponseWriter.Write(p)
}

func (b *errorBody) Flush() { http.NewResponseController(b.ResponseWriter).Flush() }

func (b *errorBody) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// errorBodyMax holds an error answer whole: a refused document lists its problems.
const errorBodyMax = 64 << 10

// message is the error answer's message, or the status's text when the answer is not one.
func (b *errorBody) message(status int) string {
	var e struct {
		Errors []struct{ Message string } `json:"errors"`
	}
	if json.Unmarshal(b.buf.Bytes(), &e) == nil && len(e.Errors) > 0 {
		return e.Errors[0].Message
	}
	return http.StatusText(status)
}

// readAudit answers GET /admin/v1/audit?project=&since=&limit= as JSON Lines, oldest first.
func (r *Registry) readAudit(c echo.Context) error {
	project := c.QueryParam("project")
	since, err := ParseSince(c.QueryParam("since"), time.Now())
	if err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	limit := MaxAuditLines
	if s := c.QueryParam("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > MaxAuditLines {
			return WriteError(c, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("limit %q: want 1 to %d", s, MaxAuditLines))
		}
	}
	lines, err := r.AuditQuery(c.Request().Context(), store.AuditQuery{Project: project, Since: since, Limit: limit})
	if err != nil {
		return r.internal(c, "read the audit log", err)
	}
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, "application/jsonl")
	res.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(res)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return nil // the client left
		}
	}
	return nil
}

// ParseSince reads a since= of the audit log: an RFC 3339 time, or a duration back from now
// ("24h"); "" is the start of the log.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("since %q: want an RFC 3339 time (2026-11-27T10:00:00Z) or a duration back from now (24h)", s)
	}
	return t, nil
}

// keysRequest is the body of POST /admin/v1/keys.
type keysRequest struct {
	Name      string `json:"name"`
	Scope     string `json:"scope"`
	ExpiresIn string `json:"expiresIn"` // a Go duration ("720h"); "" never expires
}

func (r *Registry) createKey(c echo.Context) error {
	var body keysRequest
	if err := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, 4096)).Decode(&body); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, "want a JSON body {\"name\", \"scope\", \"expiresIn\"}: "+err.Error())
	}
	var ttl time.Duration
	if body.ExpiresIn != "" {
		var err error
		if ttl, err = time.ParseDuration(body.ExpiresIn); err != nil || ttl <= 0 {
			return WriteError(c, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("expiresIn %q: want a positive duration such as 720h", body.ExpiresIn))
		}
	}
	noteChange(c, body.Name, []string{"+ key " + body.Name + " (" + body.Scope + ")"})
	k, err := r.CreateKey(c.Request().Context(), body.Name, body.Scope, ttl)
	var ke *KeyError
	switch {
	case errors.As(err, &ke):
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, ke.Error())
	case errors.Is(err, store.ErrKeyExists):
		return WriteError(c, http.StatusConflict, CodeConflict, "a key named "+quote(body.Name)+" exists: revoke it first, or choose another name")
	case err != nil:
		return r.internal(c, "create key", err)
	}
	diff := "+ key " + k.Name + " (" + k.Scope
	if k.ExpiresAt != "" {
		diff += ", expires " + k.ExpiresAt
	}
	noteChange(c, k.Name, []string{diff + ")"})
	return c.JSON(http.StatusCreated, k)
}

func (r *Registry) listKeys(c echo.Context) error {
	ks, err := r.Keys(c.Request().Context())
	if err != nil {
		return r.internal(c, "list keys", err)
	}
	return c.JSON(http.StatusOK, map[string]any{"keys": ks})
}

func (r *Registry) revokeKey(c echo.Context) error {
	name := c.Param("name")
	noteChange(c, name, nil)
	k, err := r.RevokeKey(c.Request().Context(), name)
	if errors.Is(err, ErrKeyNotFound) {
		return WriteError(c, http.StatusNotFound, CodeNotFound, "no key named "+quote(name))
	}
	if err != nil {
		return r.internal(c, "revoke key", err)
	}
	noteChange(c, name, []string{"- key " + k.Name + " (" + k.Scope + ")"})
	return c.JSON(http.StatusOK, map[string]any{"revoked": k})
}

// LocalKey and LocalScope name, in the audit log, a command that changed the stores with
// direct access to them (platform import, platform restore) rather than through a key.
const (
	LocalKey   = "local"
	LocalScope = "direct database access"
)

// AuditLocal records a change that command made with direct access to stores: no key
// opened it, so the entry names the command and the machine it ran on. failed is the
// command's error (nil when it made the change).
func AuditLocal(ctx context.Context, stores *store.Stores, command, project, target string, diff []string, failed error) error {
	host, _ := os.Hostname()
	e := store.AuditEntry{Key: LocalKey, Scope: LocalScope, Client: "platform " + command + " on " + host,
		Action: "project." + command, Project: project, Target: target, Diff: diff, Outcome: "ok"}
	if failed != nil {
		e.Outcome = "failed: " + failed.Error()
	}
	if err := stores.Audit().Append(context.WithoutCancel(ctx), e); err != nil {
		return fmt.Errorf("record %s in the audit log: %w", command, err)
	}
	return nil
}
