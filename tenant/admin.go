package tenant

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/telemetry"
)

// ProjectSummary is a project as the list shows it.
type ProjectSummary struct {
	ID        string    `json:"id"`
	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updatedAt"`
	Tables    []string  `json:"tables"`
}

// PutResult answers a PUT of a project.
type PutResult struct {
	Created bool     `json:"created"`
	Changes []string `json:"changes"`
	// Data and Warnings are DataReport's: what the apply did to the records, and what it
	// left behind.
	Data     []string `json:"data,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	Project  *Project `json:"project"`
}

// DryRunResult answers a PUT with dryRun=true: what applying the document would change and
// do to the records, and what in them refuses it. Nothing is applied.
type DryRunResult struct {
	DryRun  bool     `json:"dryRun"`
	Created bool     `json:"created"`
	Changes []string `json:"changes"`
	DataReport
	// Project is the document as it would be applied (no version: nothing is stored).
	Project *Project `json:"project"`
}

// ApplyOutcome is the word `platform apply` and the console use for what an apply did:
// "created", "unchanged" (no change), or "configured".
func ApplyOutcome(created bool, changes []string) string {
	switch {
	case created:
		return "created"
	case len(changes) == 0:
		return "unchanged"
	}
	return "configured"
}

// MountAdmin registers the admin API (apex host only) on e. Every call needs
// "Authorization: Bearer <token or key>" that gate accepts, and every route declares, with
// Needs, what of the key's scope it needs; every change is recorded in the audit log.
func (r *Registry) MountAdmin(e *echo.Echo, gate *AdminGate) {
	g := e.Group("/admin/v1", ApexOnly, r.adminAuth(gate), r.auditChanges(gate))
	g.GET("/projects", r.listProjects, Needs(NeedRead))
	g.GET("/projects/:id", r.getProject, Needs(NeedReadProject))
	g.PUT("/projects/:id", r.putProject, Needs(NeedAdminProject))
	g.DELETE("/projects/:id", r.deleteProject, Needs(NeedOperator))
	g.GET("/projects/:id/versions", r.listVersions, Needs(NeedReadProject))
	g.GET("/projects/:id/versions/:n", r.getVersion, Needs(NeedReadProject))
	g.POST("/projects/:id/rollback", r.rollbackProject, Needs(NeedAdminProject))
	g.POST("/projects/:id/undelete", r.undeleteProject, Needs(NeedOperator))
	g.GET("/projects/:id/backups", r.listBackups, Needs(NeedReadProject))
	g.POST("/projects/:id/backups", r.takeBackup, Needs(NeedAdminProject))
	g.POST("/projects/:id/restore", r.restoreBackup, Needs(NeedAdminProject))
	// An export holds every record of every owner, past the project's access rules: it is
	// its admins', as an import is.
	g.GET("/projects/:id/export", r.exportProject, Needs(NeedAdminProject))
	g.POST("/projects/:id/import", r.importProject, Needs(NeedAdminProject))
	g.GET("/keys", r.listKeys, Needs(NeedOperator))
	g.POST("/keys", r.createKey, Needs(NeedOperator))
	g.DELETE("/keys/:name", r.revokeKey, Needs(NeedOperator))
	// A project's keys read its own part of the log (?project=<id>); the whole log is the
	// operators'.
	g.GET("/audit", r.readAudit, Needs(Need{Project: func(c echo.Context) string { return c.QueryParam("project") }}))
	g.GET("/projects/:id/usage", r.projectUsage, Needs(NeedReadProject))
	g.GET("/projects/:id/advice", r.projectAdvice, Needs(NeedReadProject))
	g.POST("/projects/:id/advice/declare", r.declareIndex, Needs(NeedAdminProject))
	g.GET("/usage", r.listUsage, Needs(NeedRead))
	g.GET("/projects/:id/quotas", r.getQuotas, Needs(NeedRead))
	g.PUT("/projects/:id/quotas", r.putQuotas, Needs(NeedOperator))
	g.GET("/projects/:id/documents", r.getDocuments, Needs(NeedReadProject))
	g.PUT("/projects/:id/documents", r.putDocuments, Needs(NeedAdminProject))
	g.DELETE("/projects/:id/documents", r.putDocuments, Needs(NeedAdminProject))
	g.GET("/projects/:id/webhooks", r.listWebhooks, Needs(NeedReadProject))
	g.GET("/projects/:id/webhooks/:name/deliveries", r.listDeliveries, Needs(NeedReadProject))
	g.POST("/projects/:id/webhooks/:name/deliveries/:delivery/retry", r.retryDelivery, Needs(NeedAdminProject))
	// A secret signs what receivers trust: reading it is its project admins', as changing it.
	g.GET("/projects/:id/webhooks/:name/secret", r.webhookSecret, Needs(NeedAdminProject))
	g.POST("/projects/:id/webhooks/:name/secret", r.webhookSecret, Needs(NeedAdminProject))
}

func (r *Registry) adminAuth(gate *AdminGate) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			// Refused before the header is read, so that no client learns to put the token
			// where logs, proxies and browser history keep it.
			if name := telemetry.SecretParamIn(req); name != "" {
				return WriteError(c, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("the address carries %q: send the admin token in the Authorization header (Bearer), never in the address", name))
			}
			got, ok := strings.CutPrefix(req.Header.Get(echo.HeaderAuthorization), "Bearer ")
			if !ok || got == "" {
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="platform admin"`)
				return WriteError(c, http.StatusUnauthorized, CodeUnauthenticated, "the admin API needs Authorization: Bearer <admin token or operator key>")
			}
			op, err := gate.Check(req.Context(), req, got)
			var many *TooManyAttempts
			switch {
			case err == nil:
				ctx := WithOperator(WithClient(req.Context(), adminClient(req, gate)), op)
				c.SetRequest(req.WithContext(ctx))
				return next(c)
			case errors.As(err, &many):
				c.Response().Header().Set("Retry-After", strconv.Itoa(many.Seconds()))
				return WriteError(c, http.StatusTooManyRequests, CodeRateLimited, many.Error())
			case errors.Is(err, ErrKeyExpired):
				r.opts.Logger.WarnContext(req.Context(), "admin API: expired operator key", "client", gate.Client(req))
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="platform admin", error="invalid_token"`)
				return WriteError(c, http.StatusUnauthorized, CodeUnauthenticated, "the operator key has expired; ask an operator for a new one")
			case errors.Is(err, ErrWrongAdminToken):
				r.opts.Logger.WarnContext(req.Context(), "admin API: wrong admin token", "client", gate.Client(req))
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="platform admin", error="invalid_token"`)
				return WriteError(c, http.StatusUnauthorized, CodeUnauthenticated, "the admin token is not valid")
			}
			return r.internal(c, "check admin token", err)
		}
	}
}

func (r *Registry) listProjects(c echo.Context) error {
	ps, err := r.List(c.Request().Context())
	if err != nil {
		return r.internal(c, "list projects", err)
	}
	out := make([]ProjectSummary, 0, len(ps))
	for _, p := range ps {
		out = append(out, ProjectSummary{ID: p.ID, Version: p.Version, UpdatedAt: p.UpdatedAt, Tables: sortedKeys(p.Tables)})
	}
	return c.JSON(http.StatusOK, map[string]any{"projects": out})
}

func (r *Registry) getProject(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	p, err := r.Get(c.Request().Context(), id)
	if errors.Is(err, ErrProjectDeleted) {
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, deletedHint(id))
	}
	if errors.Is(err, ErrProjectNotFound) {
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	}
	if err != nil {
		return r.internal(c, "get project", err)
	}
	return c.JSON(http.StatusOK, p)
}

func (r *Registry) putProject(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error(), "problems", []Problem{{Path: "id", Message: err.Error()}})
	}
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, MaxDocumentBytes+1))
	if err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, "read body: "+err.Error())
	}
	p, err := ParseDocument(body)
	if err == nil && p.ID != id {
		err = &DocumentError{Problems: []Problem{{Path: "id", Message: "the document's id " + quote(p.ID) + " differs from the id in the path " + quote(id)}}}
	}
	var de *DocumentError
	if errors.As(err, &de) {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, "invalid project document: "+de.Error(), "problems", de.Problems)
	}
	if err != nil {
		return r.internal(c, "parse project", err)
	}
	opts := applyOptions(c)
	prev, cur, rep, err := r.Apply(c.Request().Context(), p, opts)
	return r.answerApply(c, id, opts, prev, cur, rep, err, "applied")
}

// applyOptions are the query parameters of an apply or a rollback.
func applyOptions(c echo.Context) ApplyOptions {
	return ApplyOptions{DryRun: c.QueryParam("dryRun") == "true", DropData: c.QueryParam("dropData") == "true"}
}

// answerApply answers what Apply (or Rollback) did, as the admin API shows it: with DryRun the
// diff and the data report, else the applied project, 201 when it was created.
func (r *Registry) answerApply(c echo.Context, id string, opts ApplyOptions, prev, cur *Project, rep *DataReport, err error, what string) error {
	if err != nil {
		return r.putFailed(c, id, err)
	}
	changes := Diff(prev, cur)
	if changes == nil {
		changes = []string{}
	}
	noteChange(c, "version "+strconv.FormatInt(cur.Version, 10), changes)
	if opts.DryRun {
		return c.JSON(http.StatusOK, DryRunResult{DryRun: true, Created: prev == nil, Changes: changes, DataReport: *rep, Project: cur})
	}
	status := http.StatusOK
	if prev == nil {
		status = http.StatusCreated
	}
	r.opts.Logger.InfoContext(c.Request().Context(), "project "+what, "project", id, "version", cur.Version, "changes", len(changes))
	return c.JSON(status, PutResult{Created: prev == nil, Changes: changes, Data: rep.Data, Warnings: rep.Warnings, Project: cur})
}

func (r *Registry) deleteProject(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	purge := c.QueryParam("purge") == "true"
	err := r.Delete(c.Request().Context(), id, purge)
	if errors.Is(err, ErrProjectDeleted) {
		return WriteError(c, http.StatusConflict, CodeConflict, deletedHint(id))
	}
	if errors.Is(err, ErrProjectNotFound) {
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	}
	if err != nil {
		return r.internal(c, "delete project", err)
	}
	what := "- project " + id
	if purge {
		what += " (purged: its document, history and records are gone)"
	}
	noteChange(c, "", []string{what})
	r.opts.Logger.InfoContext(c.Request().Context(), "project deleted", "project", id, "purged", purge)
	return c.JSON(http.StatusOK, map[string]any{"deleted": id, "purged": purge})
}

func (r *Registry) internal(c echo.Context, what string, err error) error {
	r.opts.Logger.ErrorContext(c.Request().Context(), what, "err", err)
	return WriteError(c, http.StatusInternalServerError, CodeInternal, what+" failed; see the server log")
}
