package tenant

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
)

// ProjectVersion is one applied version of a project's document, as its history lists it.
type ProjectVersion struct {
	Version int64 `json:"version"`
	// AppliedAt is RFC 3339 in UTC with milliseconds, as the API shows times.
	AppliedAt string `json:"appliedAt"`
	// Who applied it: the client and its address ("platform apply from 127.0.0.1",
	// "console from 10.0.0.7"); empty for a version applied before history was kept.
	Who string `json:"who"`
	// Changes are the lines Diff wrote against the version before.
	Changes []string `json:"changes"`
}

// ProjectHistory answers GET /admin/v1/projects/{id}/versions.
type ProjectHistory struct {
	Project  string           `json:"project"`
	Deleted  bool             `json:"deleted"`
	Versions []ProjectVersion `json:"versions"` // newest first
}

type clientKey struct{}

// WithClient names, for the history of the projects a request changes, who sends it.
func WithClient(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, clientKey{}, who)
}

func appliedBy(ctx context.Context) string {
	who, _ := ctx.Value(clientKey{}).(string)
	return who
}

// cliAgent is the User-Agent the platform binary sends: "platform/<version> (<command>)".
var cliAgent = regexp.MustCompile(`^platform/\S+ \(([a-z-]{1,32})\)$`)

// adminClient names the client of an admin API request: the platform command that sends it,
// or "admin API", and its address.
func adminClient(r *http.Request, gate *AdminGate) string {
	kind := "admin API"
	if m := cliAgent.FindStringSubmatch(r.Header.Get("User-Agent")); m != nil {
		kind = "platform " + m[1]
	}
	return kind + " from " + gate.Client(r)
}

// Applied is what a project's history keeps of p's document besides the document: who
// applies it, and how it changes the stored one (Diff); and whether it declares webhooks.
func Applied(who string, p *Project) store.Applied {
	return store.Applied{Who: who, Changes: func(old *store.StoredProject) []string {
		var prev *Project
		if old != nil {
			var err error
			if prev, err = decodeStored(old); err != nil {
				return []string{"~ document (the previous one cannot be read: " + err.Error() + ")"}
			}
		}
		return Diff(prev, p)
	}, Webhooks: p.hasWebhooks()}
}

// refuseDeleted answers ErrProjectDeleted when id is a project deleted without purge, before
// anything touches the records it keeps.
func (r *Registry) refuseDeleted(ctx context.Context, id string) error {
	sp, err := r.projects.Lookup(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case !sp.DeletedAt.IsZero():
		return fmt.Errorf("%w: %q", ErrProjectDeleted, id)
	}
	return nil
}

// Undelete brings back a project deleted without purge, with its document, history and
// records as they were; ErrProjectNotFound, or ErrProjectNotDeleted for a project that serves.
func (r *Registry) Undelete(ctx context.Context, id string) (*Project, error) {
	sp, err := r.projects.Restore(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, fmt.Errorf("%w: %q", ErrProjectNotFound, id)
	case errors.Is(err, store.ErrNotDeleted):
		return nil, fmt.Errorf("%w: %q", ErrProjectNotDeleted, id)
	case err != nil:
		return nil, err
	}
	r.announce(ctx, id)
	return decodeStored(sp)
}

// ErrProjectNotDeleted is returned for a restore of a project that serves.
var ErrProjectNotDeleted = errors.New("project not deleted")

// History lists every applied version of a project, newest first, deleted or not;
// ErrProjectNotFound.
func (r *Registry) History(ctx context.Context, id string) (*ProjectHistory, error) {
	sp, err := r.projects.Lookup(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrProjectNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	vs, err := r.projects.Versions(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrProjectNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	h := &ProjectHistory{Project: id, Deleted: !sp.DeletedAt.IsZero(), Versions: make([]ProjectVersion, len(vs))}
	for i, v := range vs {
		h.Versions[i] = ProjectVersion{Version: v.Version, AppliedAt: v.AppliedAt.UTC().Format(store.TimeLayout), Who: v.Who, Changes: v.Changes}
	}
	return h, nil
}

// ErrVersionNotFound is returned for a version a project's history does not hold.
var ErrVersionNotFound = errors.New("version not found")

// Version returns version n of a project's document, as it was applied; ErrVersionNotFound.
func (r *Registry) Version(ctx context.Context, id string, n int64) (*Project, error) {
	v, err := r.projects.Version(ctx, id, n)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: project %q has no version %d", ErrVersionNotFound, id, n)
	}
	if err != nil {
		return nil, err
	}
	return decodeStored(&store.StoredProject{ID: id, Version: v.Version, UpdatedAt: v.AppliedAt, Document: v.Document})
}

// Rollback applies version n of a project's document again, through Put and so through
// every check a new document passes, as a new version; the history names the client and
// the version it came back to.
func (r *Registry) Rollback(ctx context.Context, id string, n int64, opts ApplyOptions) (prev, cur *Project, rep *DataReport, err error) {
	v, err := r.projects.Version(ctx, id, n)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil, fmt.Errorf("%w: project %q has no version %d", ErrVersionNotFound, id, n)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	// The document is checked again, and against the records: what was valid then may not
	// be now.
	p, err := ParseDocument([]byte(v.Document))
	if err != nil {
		return nil, nil, nil, err
	}
	return r.Apply(WithClient(ctx, appliedBy(ctx)+" (rollback to version "+strconv.FormatInt(n, 10)+")"), p, opts)
}

func (r *Registry) listVersions(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	h, err := r.History(c.Request().Context(), id)
	if errors.Is(err, ErrProjectNotFound) {
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	}
	if err != nil {
		return r.internal(c, "list versions", err)
	}
	return c.JSON(http.StatusOK, h)
}

// versionParam reads a version number.
func versionParam(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("version %q is not a version number (1, 2, ...)", v)
	}
	return n, nil
}

func (r *Registry) getVersion(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	n, err := versionParam(c.Param("n"))
	if err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	p, err := r.Version(c.Request().Context(), id, n)
	if errors.Is(err, ErrVersionNotFound) {
		return WriteError(c, http.StatusNotFound, CodeNotFound, err.Error()+"; GET /admin/v1/projects/"+id+"/versions lists them")
	}
	if err != nil {
		return r.internal(c, "get version", err)
	}
	return c.JSON(http.StatusOK, p)
}

func (r *Registry) rollbackProject(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	n, err := versionParam(c.QueryParam("to"))
	if err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, "rollback needs ?to=<version>: "+err.Error())
	}
	opts := applyOptions(c)
	prev, cur, rep, err := r.Rollback(c.Request().Context(), id, n, opts)
	return r.answerApply(c, id, opts, prev, cur, rep, err, "rolled back to version "+strconv.FormatInt(n, 10))
}

// putFailed answers an error of Put (or Rollback) that is not the caller's document being
// invalid in itself.
func (r *Registry) putFailed(c echo.Context, id string, err error) error {
	var de *DocumentError
	var qe *QuotaError
	switch {
	case errors.As(err, &de):
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, "invalid project document: "+de.Error(), "problems", de.Problems)
	case errors.As(err, &qe):
		return WriteError(c, http.StatusBadRequest, CodeQuotaExceeded, qe.Error(), "quota", qe.Quota, "limit", qe.Limit)
	case errors.Is(err, ErrProjectDeleted):
		return WriteError(c, http.StatusConflict, CodeConflict, deletedHint(id))
	case errors.Is(err, ErrVersionNotFound):
		return WriteError(c, http.StatusNotFound, CodeNotFound, err.Error())
	}
	return r.internal(c, "store project", err)
}

// deletedHint says what to do with a project deleted without purge.
func deletedHint(id string) string {
	return "project " + quote(id) + " was deleted and is kept with its records: restore it (POST /admin/v1/projects/" + id +
		"/undelete, platform undelete --project " + id + ") or delete it for good (DELETE /admin/v1/projects/" + id + "?purge=true)"
}

func (r *Registry) undeleteProject(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	p, err := r.Undelete(c.Request().Context(), id)
	switch {
	case errors.Is(err, ErrProjectNotFound):
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	case errors.Is(err, ErrProjectNotDeleted):
		return WriteError(c, http.StatusConflict, CodeConflict, "project "+quote(id)+" is not deleted")
	case err != nil:
		return r.internal(c, "restore project", err)
	}
	r.opts.Logger.InfoContext(c.Request().Context(), "project restored", "project", id, "version", p.Version, "by", appliedBy(c.Request().Context()))
	return c.JSON(http.StatusOK, map[string]any{"restored": id, "project": p})
}

// Deleted lists the projects deleted without purge, ordered by id; DeletedAt tells when.
func (r *Registry) Deleted(ctx context.Context) ([]DeletedProject, error) {
	sps, err := r.projects.Deleted(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]DeletedProject, 0, len(sps))
	for i := range sps {
		p, err := decodeStored(&sps[i])
		if err != nil {
			return nil, err
		}
		out = append(out, DeletedProject{Project: p, DeletedAt: sps[i].DeletedAt})
	}
	return out, nil
}

// DeletedProject is a project deleted without purge.
type DeletedProject struct {
	*Project
	DeletedAt time.Time
}
