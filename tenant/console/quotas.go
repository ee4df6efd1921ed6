package console

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/tenant"
)

func (con *Console) mountQuotas(g *echo.Group) {
	g.GET("/projects/:id/quotas", con.quotas)
	g.POST("/projects/:id/quotas", con.setQuotas)
	g.GET("/projects/:id/quotas/alerts", con.quotaAlerts)
}

// quotasView is a project's quotas, what it uses of them, and what the last change did.
type quotasView struct {
	Project string
	Quotas  []tenant.QuotaLine
	Alerts  []tenant.QuotaLine // the quotas at 80% or more
	Done    string
	Error   string
}

func (con *Console) quotasOf(c echo.Context) (*quotasView, error) {
	id := c.Param("id")
	v := &quotasView{Project: id}
	if err := tenant.ValidateID(id); err != nil {
		return v, fmt.Errorf("%w: %w", errBadID, err)
	}
	rep, err := con.cfg.Registry.QuotaReport(c.Request().Context(), id)
	if err != nil {
		return v, err
	}
	v.Quotas = rep.Quotas
	for _, l := range rep.Quotas {
		if l.Alert != "" {
			v.Alerts = append(v.Alerts, l)
		}
	}
	return v, nil
}

func (con *Console) quotas(c echo.Context) error {
	v, err := con.quotasOf(c)
	if err != nil {
		return con.quotasFailed(c, "show quotas", err, "")
	}
	return con.render(c, http.StatusOK, "quotas", "", view{Title: "Quotas · " + v.Project, Data: v})
}

// quotaAlerts is the fragment the project page loads: the quotas the project uses 80% or
// more of.
func (con *Console) quotaAlerts(c echo.Context) error {
	v, err := con.quotasOf(c)
	if err != nil {
		con.cfg.Logger.WarnContext(c.Request().Context(), "console: quota alerts", "project", v.Project, "err", err)
		return c.NoContent(http.StatusNoContent)
	}
	return con.render(c, http.StatusOK, "quotas", "quota-alerts", view{Data: v})
}

// setQuotas takes the form: every quota's field, empty or 0 for the default.
func (con *Console) setQuotas(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	if err := tenant.ValidateID(id); err != nil {
		return con.quotasFailed(c, "set quotas", fmt.Errorf("%w: %w", errBadID, err), "quotas")
	}
	form, err := c.FormParams()
	if err != nil {
		return con.quotasFailed(c, "set quotas", err, "quotas")
	}
	patch := map[string]int64{}
	for name, vals := range form {
		if !strings.HasPrefix(name, "q.") || len(vals) == 0 {
			continue
		}
		quota, raw := strings.TrimPrefix(name, "q."), strings.TrimSpace(vals[0])
		var n int64
		if raw != "" {
			if n, err = strconv.ParseInt(raw, 10, 64); err != nil {
				return con.quotasFailed(c, "set quotas", &tenant.QuotaInputError{Err: fmt.Errorf("quota %s: %q is not a whole number", quota, raw)}, "quotas")
			}
		}
		patch[quota] = n
	}
	if _, err := con.cfg.Registry.SetQuotas(ctx, id, patch); err != nil {
		return con.quotasFailed(c, "set quotas", err, "quotas")
	}
	con.cfg.Logger.InfoContext(ctx, "console: project quotas set", "project", id, "quotas", patch)
	v, err := con.quotasOf(c)
	if err != nil {
		return con.quotasFailed(c, "show quotas", err, "quotas")
	}
	v.Done = "quotas saved; every replica applies them from its next request"
	return con.render(c, http.StatusOK, "quotas", "quotas", view{Data: v})
}

// quotasFailed answers with what the caller must fix, or where to look.
func (con *Console) quotasFailed(c echo.Context, what string, err error, fragment string) error {
	v, lerr := con.quotasOf(c)
	switch {
	case errors.Is(err, tenant.ErrProjectNotFound), errors.As(err, new(*tenant.QuotaInputError)), errors.Is(err, errBadID):
		v.Error = err.Error()
	default:
		con.cfg.Logger.ErrorContext(c.Request().Context(), "console: "+what, "err", err)
		v.Error = what + " failed; see the server log"
	}
	if lerr != nil && !errors.Is(lerr, err) && v.Quotas == nil && fragment != "" {
		v.Error += "; " + lerr.Error()
	}
	return con.render(c, http.StatusUnprocessableEntity, "quotas", fragment, view{Title: "Quotas · " + v.Project, Data: v})
}
