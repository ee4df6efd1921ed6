package tenant

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
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
// "Authorization: Bearer <token>" that gate accepts.
func (r *Registry) MountAdmin(e *echo.Echo, gate *AdminGate) {
	g := e.Group("/admin/v1", ApexOnly, r.adminAuth(gate))
	g.GET("/projects", r.listProjects)
	g.GET("/projects/:id", r.getProject)
	g.PUT("/projects/:id", r.putProject)
	g.DELETE("/projects/:id", r.deleteProject)
	g.GET("/projects/:id/backups", r.listBackups)
	g.POST("/projects/:id/backups", r.takeBackup)
	g.POST("/projects/:id/restore", r.restoreBackup)
}

func (r *Registry) adminAuth(gate *AdminGate) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			got, ok := strings.CutPrefix(req.Header.Get(echo.HeaderAuthorization), "Bearer ")
			if !ok || got == "" {
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="platform admin"`)
				return WriteError(c, http.StatusUnauthorized, CodeUnauthenticated, "the admin API needs Authorization: Bearer <admin token>")
			}
			err := gate.Check(req.Context(), req, got)
			var many *TooManyAttempts
			switch {
			case err == nil:
				return next(c)
			case errors.As(err, &many):
				c.Response().Header().Set("Retry-After", strconv.Itoa(many.Seconds()))
				return WriteError(c, http.StatusTooManyRequests, CodeRateLimited, many.Error())
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
	prev, cur, err := r.Put(c.Request().Context(), p)
	if errors.As(err, &de) {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, "invalid project document: "+de.Error(), "problems", de.Problems)
	}
	if err != nil {
		return r.internal(c, "store project", err)
	}
	status := http.StatusOK
	if prev == nil {
		status = http.StatusCreated
	}
	changes := Diff(prev, cur)
	if changes == nil {
		changes = []string{}
	}
	r.opts.Logger.InfoContext(c.Request().Context(), "project applied", "project", id, "version", cur.Version, "changes", len(changes))
	return c.JSON(status, PutResult{Created: prev == nil, Changes: changes, Project: cur})
}

func (r *Registry) deleteProject(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	purge := c.QueryParam("purge") == "true"
	err := r.Delete(c.Request().Context(), id, purge)
	if errors.Is(err, ErrProjectNotFound) {
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	}
	if err != nil {
		return r.internal(c, "delete project", err)
	}
	r.opts.Logger.InfoContext(c.Request().Context(), "project deleted", "project", id, "purged", purge)
	return c.JSON(http.StatusOK, map[string]any{"deleted": id, "purged": purge})
}

func (r *Registry) internal(c echo.Context, what string, err error) error {
	r.opts.Logger.ErrorContext(c.Request().Context(), what, "err", err)
	return WriteError(c, http.StatusInternalServerError, CodeInternal, what+" failed; see the server log")
}
