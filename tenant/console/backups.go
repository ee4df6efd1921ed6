package console

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

func (con *Console) mountBackups(g *echo.Group) {
	g.GET("/projects/:id/backups", con.backups)
	g.POST("/projects/:id/backups", con.takeBackup)
	g.POST("/projects/:id/restore", con.restore)
}

// backupsView lists a project's backups, with what the last action did.
type backupsView struct {
	Project string
	Target  string
	Backups []store.Backup
	Done    string // what the last action did
	Error   string
}

// errBadID marks a project id that is not one.
var errBadID = errors.New("bad project id")

func (con *Console) backupsOf(c echo.Context) (*backupsView, error) {
	id := c.Param("id")
	v := &backupsView{Project: id}
	if err := tenant.ValidateID(id); err != nil {
		return v, fmt.Errorf("%w: %w", errBadID, err)
	}
	list, err := con.cfg.Registry.Backups(c.Request().Context(), id)
	if err != nil {
		return v, err
	}
	v.Backups = list
	v.Target = con.cfg.Registry.BackupTarget()
	return v, nil
}

func (con *Console) backups(c echo.Context) error {
	v, err := con.backupsOf(c)
	if err != nil {
		v.Error = err.Error()
	}
	return con.render(c, http.StatusOK, "backups", "", view{Title: "Backups · " + v.Project, Data: v})
}

func (con *Console) takeBackup(c echo.Context) error {
	ctx := c.Request().Context()
	b, err := con.cfg.Registry.TakeBackup(ctx, c.Param("id"))
	if err != nil {
		return con.backupFailed(c, "back up", err)
	}
	con.cfg.Logger.InfoContext(ctx, "console: backup taken", "project", b.Project, "backup", b.Name, "bytes", b.Size)
	return con.backupOutcome(c, fmt.Sprintf("backup %s taken (%d bytes)", b.Name, b.Size))
}

func (con *Console) restore(c echo.Context) error {
	ctx := c.Request().Context()
	at, err := time.Parse(time.RFC3339Nano, c.FormValue("at"))
	if err != nil {
		return con.backupFailed(c, "restore", fmt.Errorf("the backup's time %q: %w", c.FormValue("at"), err))
	}
	as := strings.TrimSpace(c.FormValue("as"))
	if as != "" {
		if err := tenant.ValidateID(as); err != nil {
			return con.backupFailed(c, "restore", fmt.Errorf("%w: %w", errBadID, err))
		}
	}
	out, err := con.cfg.Registry.Restore(ctx, c.Param("id"), at, as)
	if err != nil {
		return con.backupFailed(c, "restore", err)
	}
	tables := make([]string, 0, len(out.Records))
	for t, n := range out.Records {
		tables = append(tables, fmt.Sprintf("%s %d", t, n))
	}
	slices.Sort(tables)
	con.cfg.Logger.InfoContext(ctx, "console: project restored", "project", out.Project, "backup", out.Backup.Name)
	return con.backupOutcome(c, fmt.Sprintf("restored project %s from %s: %s", out.Project, out.Backup.Name, strings.Join(tables, ", ")))
}

// backupOutcome answers an action with the list as it is now and what the action did.
func (con *Console) backupOutcome(c echo.Context, done string) error {
	v, err := con.backupsOf(c)
	if err != nil {
		return con.backupFailed(c, "list backups", err)
	}
	v.Done = done
	return con.render(c, http.StatusOK, "backups", "backups", view{Data: v})
}

// backupFailed answers an action that failed: the caller's mistakes say what to fix, the
// rest where to look.
func (con *Console) backupFailed(c echo.Context, what string, err error) error {
	v, lerr := con.backupsOf(c)
	switch {
	case errors.Is(err, tenant.ErrProjectNotFound), errors.Is(err, tenant.ErrNoBackup), errors.Is(err, tenant.ErrProjectExists),
		errors.Is(err, tenant.ErrBackupsOff), errors.As(err, new(*time.ParseError)), errors.Is(err, errBadID):
		v.Error = err.Error()
	default:
		con.cfg.Logger.ErrorContext(c.Request().Context(), "console: "+what, "err", err)
		v.Error = what + " failed; see the server log"
	}
	if lerr != nil && !errors.Is(lerr, err) {
		v.Error += "; " + lerr.Error()
	}
	return con.render(c, http.StatusUnprocessableEntity, "backups", "backups", view{Data: v})
}
