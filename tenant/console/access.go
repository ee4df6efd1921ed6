package console

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// What each console route needs of the signed-in key's scope, as the admin API's routes
// declare it. A route missing here is refused: authorize is the console's one door.
var routeNeeds = map[string]tenant.Need{
	"POST /console/logout":                                    {},
	"GET /console/health":                                     tenant.NeedRead,
	"GET /console/projects/new":                               tenant.NeedOperator,
	"GET /console/projects/:id":                               tenant.NeedReadProject,
	"POST /console/projects/check":                            {Project: documentID},
	"POST /console/projects/apply":                            {Change: true, Project: documentID},
	"DELETE /console/projects/:id":                            tenant.NeedOperator,
	"POST /console/projects/:id/rollback":                     tenant.NeedAdminProject,
	"POST /console/projects/:id/undelete":                     tenant.NeedOperator,
	"GET /console/projects/:id/tables/:table":                 tenant.NeedReadProject,
	"GET /console/projects/:id/tables/:table/new":             tenant.NeedReadProject,
	"GET /console/projects/:id/tables/:table/records/:uid":    tenant.NeedReadProject,
	"POST /console/projects/:id/tables/:table/records":        tenant.NeedAdminProject,
	"PUT /console/projects/:id/tables/:table/records/:uid":    tenant.NeedAdminProject,
	"DELETE /console/projects/:id/tables/:table/records/:uid": tenant.NeedAdminProject,
	"GET /console/projects/:id/backups":                       tenant.NeedReadProject,
	"GET /console/projects/:id/usage":                         tenant.NeedReadProject,
	"GET /console/projects/:id/advice":                        tenant.NeedReadProject,
	"GET /console/projects/:id/quotas":                        tenant.NeedRead,
	"POST /console/projects/:id/quotas":                       tenant.NeedOperator,
	"GET /console/projects/:id/quotas/alerts":                 tenant.NeedRead,
	"POST /console/projects/:id/backups":                      tenant.NeedAdminProject,
	"POST /console/projects/:id/restore":                      {Change: true, Project: restoredID},
	"GET /console/projects/:id/identity":                      tenant.NeedReadProject,
	"POST /console/projects/:id/identity/token":               tenant.NeedAdminProject,
	"GET /console/audit":                                      {Project: func(c echo.Context) string { return c.QueryParam("project") }},
	"GET /console/keys":                                       tenant.NeedOperator,
	"POST /console/keys":                                      tenant.NeedOperator,
	"DELETE /console/keys/:name":                              tenant.NeedOperator,

	"GET /console/projects/:id/webhooks":                                   tenant.NeedReadProject,
	"POST /console/projects/:id/webhooks/:name/deliveries/:delivery/retry": tenant.NeedAdminProject,
}

// documentID is the id of the project document a form posts ("" when it has none).
func documentID(c echo.Context) string {
	_, p, bad := parse(c)
	if bad != nil {
		return ""
	}
	return p.ID
}

// restoredID is the project a restore writes: the path's, or the new one it creates.
func restoredID(c echo.Context) string {
	if as := c.FormValue("as"); as != "" {
		return as
	}
	return c.Param("id")
}

// authorize refuses a request the session's key may not make. A route without a need is
// refused too: a new page must say what it needs.
func (con *Console) authorize(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		s := sessionOf(c)
		n, ok := routeNeeds[c.Request().Method+" "+c.Path()]
		project := ""
		if ok && n.Project != nil {
			project = n.Project(c)
		}
		if !ok || !s.op.Scope.Allows(n, project) {
			return con.render(c, http.StatusForbidden, "error", fragmentFor(c), view{Title: "Refused",
				Error: "your key's scope (" + s.op.Scope.String() + ") does not allow this; " + scopeAllows(s.op.Scope)})
		}
		return next(c)
	}
}

// scopeAllows says in words what a scope allows, as the console shows it.
func scopeAllows(s tenant.Scope) string {
	switch {
	case s.Project == "" && s.Change:
		return "it allows everything"
	case s.Project == "":
		return "it reads every project, and changes nothing"
	case s.Change:
		return "it reads and changes project " + s.Project + " (document, records, backups), and nothing else"
	}
	return "it reads project " + s.Project + ", and changes nothing"
}

// consoleActions name the console's changes in the audit log; "console." marks where they
// were made.
var consoleActions = map[string]string{
	"POST /console/projects/apply":                            "project.apply",
	"DELETE /console/projects/:id":                            "project.delete",
	"POST /console/projects/:id/rollback":                     "project.rollback",
	"POST /console/projects/:id/undelete":                     "project.undelete",
	"POST /console/projects/:id/tables/:table/records":        "record.create",
	"PUT /console/projects/:id/tables/:table/records/:uid":    "record.update",
	"DELETE /console/projects/:id/tables/:table/records/:uid": "record.delete",
	"POST /console/projects/:id/backups":                      "project.backup",
	"POST /console/projects/:id/restore":                      "project.restore",
	"POST /console/projects/:id/identity/token":               "token.mint",
	"POST /console/projects/:id/quotas":                       "quota.set",
	"POST /console/keys":                                      "key.create",
	"DELETE /console/keys/:name":                              "key.revoke",

	"POST /console/projects/:id/webhooks/:name/deliveries/:delivery/retry": "webhook.retry",
}

const (
	auditDiffKey  = "console.audit.diff"
	auditErrorKey = "console.audit.error"
)

// noteDiff tells the audit log what a change changed.
func noteDiff(c echo.Context, diff []string) { c.Set(auditDiffKey, diff) }

// auditChanges records every change made, or refused, through the console.
func (con *Console) auditChanges(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		action, ok := consoleActions[c.Request().Method+" "+c.Path()]
		if !ok {
			return next(c)
		}
		if err := next(c); err != nil {
			c.Error(err)
		}
		req := c.Request()
		project := c.Param("id")
		if project == "" {
			project = documentID(c)
		}
		target := c.Param("table")
		if uid := c.Param("uid"); uid != "" {
			target += "/" + uid
		}
		if name := c.Param("name"); name != "" {
			target = name
		}
		if name := c.FormValue("name"); target == "" && action == "key.create" {
			target = name
		}
		diff, _ := c.Get(auditDiffKey).([]string)
		ch := tenant.Change{Operator: sessionOf(c).op, Client: "console from " + con.cfg.Gate.Client(req), Action: action,
			Project: project, Target: target, Diff: diff}
		if status := c.Response().Status; status >= 400 {
			msg, _ := c.Get(auditErrorKey).(string)
			if msg == "" {
				msg = http.StatusText(status)
			}
			ch.Failure = "failed " + strconv.Itoa(status) + ": " + msg
		}
		con.cfg.Registry.Audit(req.Context(), ch)
		return nil
	}
}

// keysData fills the keys page.
type keysData struct {
	Keys []tenant.KeyInfo
	// New is the key just created: shown this once.
	New    *tenant.NewKey
	Scopes []string
}

func (con *Console) keys(c echo.Context) error {
	return con.renderKeys(c, http.StatusOK, nil, "")
}

func (con *Console) renderKeys(c echo.Context, status int, created *tenant.NewKey, problem string) error {
	ks, err := con.cfg.Registry.Keys(c.Request().Context())
	if err != nil {
		return con.fail(c, "list keys", err)
	}
	return con.render(c, status, "keys", "", view{Title: "Keys", Error: problem, Data: keysData{Keys: ks, New: created}})
}

func (con *Console) createKey(c echo.Context) error {
	var ttl time.Duration
	if s := c.FormValue("expires"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return con.renderKeys(c, http.StatusBadRequest, nil, "expires "+strconv.Quote(s)+": want a positive duration such as 720h, or nothing")
		}
		ttl = d
	}
	k, err := con.cfg.Registry.CreateKey(c.Request().Context(), c.FormValue("name"), c.FormValue("scope"), ttl)
	var ke *tenant.KeyError
	switch {
	case errors.As(err, &ke):
		return con.renderKeys(c, http.StatusBadRequest, nil, ke.Error())
	case errors.Is(err, store.ErrKeyExists):
		return con.renderKeys(c, http.StatusConflict, nil, "a key named "+strconv.Quote(c.FormValue("name"))+" exists: revoke it first, or choose another name")
	case err != nil:
		return con.fail(c, "create key", err)
	}
	noteDiff(c, []string{"+ key " + k.Name + " (" + k.Scope + ")"})
	return con.renderKeys(c, http.StatusCreated, k, "")
}

func (con *Console) revokeKey(c echo.Context) error {
	k, err := con.cfg.Registry.RevokeKey(c.Request().Context(), c.Param("name"))
	if errors.Is(err, tenant.ErrKeyNotFound) {
		return con.render(c, http.StatusNotFound, "error", fragmentFor(c), view{Error: "no key named " + strconv.Quote(c.Param("name"))})
	}
	if err != nil {
		return con.fail(c, "revoke key", err)
	}
	noteDiff(c, []string{"- key " + k.Name + " (" + k.Scope + ")"})
	return con.redirect(c, "/console/keys")
}

// auditData fills the audit page: the filters and the entries, newest first.
type auditData struct {
	Project, Since, Action string
	Entries                []tenant.AuditLine
	More                   bool
}

// auditPageSize bounds the entries one audit page shows.
const auditPageSize = 500

func (con *Console) audit(c echo.Context) error {
	d := auditData{Project: c.QueryParam("project"), Since: c.QueryParam("since"), Action: c.QueryParam("action")}
	since, err := tenant.ParseSince(d.Since, time.Now())
	if err != nil {
		return con.render(c, http.StatusBadRequest, "audit", "", view{Title: "Audit log", Error: err.Error(), Data: d})
	}
	if since.IsZero() {
		since = time.Now().Add(-7 * 24 * time.Hour)
		d.Since = "168h"
	}
	d.Entries, err = con.cfg.Registry.AuditQuery(c.Request().Context(), store.AuditQuery{Project: d.Project, Action: d.Action, Since: since, Limit: auditPageSize, Newest: true})
	if err != nil {
		return con.fail(c, "read the audit log", err)
	}
	d.More = len(d.Entries) == auditPageSize
	return con.render(c, http.StatusOK, "audit", "", view{Title: "Audit log", Data: d})
}
