package tenant

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform-dev/platform/coord"
	"github.com/platform-dev/platform/store"
)

// BackupOptions say where projects' backups go and how often they are taken.
type BackupOptions struct {
	// Target keeps the backups; nil: no backups (the admin API answers 404 for them).
	Target store.BackupTarget
	// Every is how often each project is backed up; zero: only when asked.
	Every time.Duration
	// Keep is how many backups of each project are kept (the oldest go); zero keeps all.
	Keep int
}

// ErrNoBackup says that a project has no backup to restore.
var ErrNoBackup = errors.New("no backup")

// ErrProjectExists says that a restore under another id would replace a project.
var ErrProjectExists = errors.New("project exists")

// Restored is what a restore did.
type Restored struct {
	// Backup is the backup restored.
	Backup store.Backup `json:"backup"`
	// Project is the id restored into: the backup's own, or the one asked for.
	Project string `json:"project"`
	// Version is the version of the document the backup held.
	Version int64 `json:"version"`
	// Records counts the records of each table after the restore.
	Records map[string]int64 `json:"records"`
}

// PickBackup answers the newest of backups (newest first, as store.ListBackups answers them)
// taken at or before at; a zero at takes the newest.
func PickBackup(backups []store.Backup, at time.Time) (store.Backup, bool) {
	for _, b := range backups {
		if at.IsZero() || !b.At.After(at) {
			return b, true
		}
	}
	return store.Backup{}, false
}

// RestoreBackup restores project id from its newest backup in from taken at or before at
// (the newest when at is zero): into project as when it is set, which must not exist, or
// else in place of the project's records, which a failed restore leaves as they were. The
// backup's document becomes the project's. A server that did not do the restore serves it
// once its cache refreshes.
func RestoreBackup(ctx context.Context, stores *store.Stores, from store.BackupTarget, id string, at time.Time, as string) (*Restored, error) {
	into := id
	if as != "" {
		if err := ValidateID(as); err != nil {
			return nil, err
		}
		switch _, err := stores.Projects().Get(ctx, as); {
		case err == nil && as != id:
			return nil, fmt.Errorf("restore project %q as %q: %w: delete it first or restore under another id", id, as, ErrProjectExists)
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
		into = as
	}
	// A project deleted without purge keeps its records until it is undeleted or purged: a
	// restore does not write over them.
	switch sp, err := stores.Projects().Lookup(ctx, into); {
	case err == nil && !sp.DeletedAt.IsZero():
		return nil, fmt.Errorf("%w: %s", ErrProjectDeleted, deletedHint(into))
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	all, err := stores.ListBackups(ctx, from, id)
	if err != nil {
		return nil, err
	}
	b, ok := PickBackup(all, at)
	if !ok {
		when := "yet"
		if !at.IsZero() {
			when = "taken at or before " + at.UTC().Format(time.RFC3339)
		}
		return nil, fmt.Errorf("project %q has %w %s in %s (%d in all)", id, ErrNoBackup, when, from, len(all))
	}
	bf, err := stores.OpenBackup(ctx, from, b)
	if err != nil {
		return nil, err
	}
	defer bf.Close()
	p, err := ParseDocument([]byte(bf.Document))
	if err != nil {
		return nil, fmt.Errorf("backup %s: its document: %w", b.Name, err)
	}
	p.ID = into
	doc, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode project %q: %w", into, err)
	}
	tables := p.StoreTables()
	if err := bf.Restore(ctx, into, p.MongoURI, tables); err != nil {
		return nil, err
	}
	records, err := stores.ProjectRecords(ctx, into, p.MongoURI, tables)
	if err != nil {
		return nil, err
	}
	if err := records.Ensure(ctx); err != nil {
		return nil, fmt.Errorf("restore project %q: %w", into, indexProblem(p, err))
	}
	who := appliedBy(ctx)
	if who == "" {
		who = "platform restore"
	}
	if _, _, err := stores.Projects().Put(ctx, into, string(doc), Applied(who+" (restore from backup "+b.Name+")", p)); err != nil {
		return nil, fmt.Errorf("restore project %q: store its document: %w", into, err)
	}
	out := &Restored{Backup: b, Project: into, Version: bf.Version, Records: map[string]int64{}}
	for _, t := range tables {
		if out.Records[t.Name], err = records.Count(ctx, t.Name, store.All); err != nil {
			return nil, fmt.Errorf("restore project %q: count %s: %w", into, t.Name, err)
		}
	}
	return out, nil
}

// ErrBackupsOff answers a backup call on a registry that keeps no backups.
var ErrBackupsOff = errors.New("this server keeps no backups")

// BackupTarget names where the registry keeps backups ("" when it keeps none).
func (r *Registry) BackupTarget() string {
	if r.opts.Backups.Target == nil {
		return ""
	}
	return r.opts.Backups.Target.String()
}

// TakeBackup backs project id up now and drops its backups past the ones to keep.
func (r *Registry) TakeBackup(ctx context.Context, id string) (store.Backup, error) {
	o := r.opts.Backups
	if o.Target == nil {
		return store.Backup{}, ErrBackupsOff
	}
	p, err := r.Get(ctx, id)
	if err != nil {
		return store.Backup{}, err
	}
	b, err := r.stores.TakeBackup(ctx, o.Target, id, p.MongoURI)
	if err != nil {
		return store.Backup{}, err
	}
	if o.Keep > 0 {
		if _, err := r.stores.PruneBackups(ctx, o.Target, id, o.Keep); err != nil {
			return b, err
		}
	}
	return b, nil
}

// Backups lists project id's backups, newest first; a deleted project's backups stay.
func (r *Registry) Backups(ctx context.Context, id string) ([]store.Backup, error) {
	if r.opts.Backups.Target == nil {
		return nil, ErrBackupsOff
	}
	return r.stores.ListBackups(ctx, r.opts.Backups.Target, id)
}

// Restore is RestoreBackup from the registry's backups; every replica serves the restored
// project at once.
func (r *Registry) Restore(ctx context.Context, id string, at time.Time, as string) (*Restored, error) {
	if r.opts.Backups.Target == nil {
		return nil, ErrBackupsOff
	}
	out, err := RestoreBackup(ctx, r.stores, r.opts.Backups.Target, id, at, as)
	if err != nil {
		return nil, err
	}
	r.announce(ctx, out.Project)
	return out, nil
}

// RunBackups takes the scheduled backups until ctx ends: at once, then every Backups.Every,
// it backs up each project whose newest backup is older than half of Every (so that a
// restarted replica does not take them again), keeping Backups.Keep of each. It returns at
// once when no schedule is set.
func (r *Registry) RunBackups(ctx context.Context) {
	o := r.opts.Backups
	if o.Target == nil || o.Every <= 0 {
		return
	}
	m := r.backupMetrics()
	t := time.NewTicker(o.Every)
	defer t.Stop()
	for {
		r.backupRound(ctx, m)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// backupRound backs up the projects that need it, if this replica gets the lock.
func (r *Registry) backupRound(ctx context.Context, m scheduledBackupMetrics) {
	log := r.opts.Logger
	// The scheduled backups run on one replica at a time: the one that holds the lock.
	work, unlock, got, err := coord.NewLock(r.stores.Redis, coord.BackupLock, coord.BackupLockTTL).TryLock(ctx)
	if err != nil {
		log.Warn("scheduled backups: take the lock", "err", err)
		return
	}
	if !got {
		log.Debug("scheduled backups: another replica runs them")
		return
	}
	defer func() {
		if cause := context.Cause(work); work.Err() != nil && ctx.Err() == nil {
			log.Warn("scheduled backups: stopped", "err", cause)
		}
		unlock()
	}()

	projects, err := r.List(work)
	if err != nil {
		log.Error("scheduled backups: list projects", "err", err)
		return
	}
	taken, failed := 0, 0
	for _, p := range projects {
		if work.Err() != nil {
			return
		}
		if list, err := r.Backups(work, p.ID); err == nil && len(list) > 0 && time.Since(list[0].At) < r.opts.Backups.Every/2 {
			continue
		}
		start := time.Now()
		b, err := r.TakeBackup(work, p.ID)
		if err != nil {
			failed++
			m.failed.Inc()
			log.Error("scheduled backup failed", "project", p.ID, "err", err)
			continue
		}
		taken++
		m.ok.Inc()
		m.lastOK.SetToCurrentTime()
		log.Info("backup taken", "project", p.ID, "backup", b.Name, "bytes", b.Size, "took", time.Since(start).Round(time.Millisecond))
	}
	if taken+failed > 0 {
		log.Info("scheduled backups done", "taken", taken, "failed", failed, "target", r.opts.Backups.Target.String())
	}
}

// backupError answers the errors of the backup calls that are the caller's to fix.
func (r *Registry) backupError(c echo.Context, id, what string, err error) error {
	switch {
	case errors.Is(err, ErrBackupsOff):
		return WriteError(c, http.StatusNotFound, CodeNotFound, err.Error())
	case errors.Is(err, ErrProjectNotFound):
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	case errors.Is(err, ErrNoBackup):
		return WriteError(c, http.StatusNotFound, CodeNotFound, err.Error())
	case errors.Is(err, ErrProjectExists):
		return WriteError(c, http.StatusConflict, CodeConflict, err.Error())
	}
	return r.internal(c, what, err)
}

func (r *Registry) listBackups(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	list, err := r.Backups(c.Request().Context(), id)
	if err != nil {
		return r.backupError(c, id, "list backups", err)
	}
	return c.JSON(http.StatusOK, map[string]any{"project": id, "target": r.BackupTarget(), "backups": list})
}

func (r *Registry) takeBackup(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	b, err := r.TakeBackup(c.Request().Context(), id)
	if err != nil {
		return r.backupError(c, id, "take a backup", err)
	}
	r.opts.Logger.InfoContext(c.Request().Context(), "backup taken", "project", id, "backup", b.Name, "bytes", b.Size)
	return c.JSON(http.StatusCreated, map[string]any{"backup": b})
}

// RestoreRequest is the body of POST /admin/v1/projects/{id}/restore: both fields optional.
type RestoreRequest struct {
	// At picks the newest backup taken at or before it; zero: the newest.
	At time.Time `json:"at,omitzero"`
	// As restores into a new project of that id instead of in place.
	As string `json:"as,omitempty"`
}

func (r *Registry) restoreBackup(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	var req RestoreRequest
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, 64<<10))
	if err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, "read body: "+err.Error())
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			return WriteError(c, http.StatusBadRequest, CodeBadRequest, `the body must be {"at": "<RFC 3339 time>", "as": "<new project id>"}, both optional: `+err.Error())
		}
	}
	if req.As != "" {
		if err := ValidateID(req.As); err != nil {
			return WriteError(c, http.StatusBadRequest, CodeBadRequest, "as: "+err.Error())
		}
		// Restoring as another project creates that project: the key must reach it too.
		if op := OperatorOf(c.Request().Context()); op == nil || !op.Scope.Allows(NeedAdminProject, req.As) {
			return WriteError(c, http.StatusForbidden, CodeForbidden, "the key's scope does not allow creating project "+quote(req.As))
		}
	}
	out, err := r.Restore(c.Request().Context(), id, req.At, req.As)
	if errors.Is(err, ErrProjectDeleted) {
		// The project restored into is kept, deleted, with its records.
		return WriteError(c, http.StatusConflict, CodeConflict, deletedHint(cmp.Or(req.As, id)))
	}
	if err != nil {
		return r.backupError(c, id, "restore", err)
	}
	r.opts.Logger.InfoContext(c.Request().Context(), "project restored", "project", out.Project, "backup", out.Backup.Name)
	return c.JSON(http.StatusOK, out)
}

// scheduledBackupMetrics count the scheduled backups of this replica.
type scheduledBackupMetrics struct {
	ok, failed prometheus.Counter
	lastOK     prometheus.Gauge
}

// backupMetrics makes the scheduled backups' metrics and registers them where the registry's
// go (a replica runs one schedule).
func (r *Registry) backupMetrics() scheduledBackupMetrics {
	total := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "platform_scheduled_backups_total",
		Help: "Scheduled backups of projects this replica took, by result: ok or failed.",
	}, []string{"result"})
	last := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "platform_scheduled_backup_last_success_timestamp_seconds",
		Help: "When this replica last took a scheduled backup of a project (Unix time).",
	})
	if reg := r.opts.Registerer; reg != nil {
		for _, c := range []prometheus.Collector{total, last} {
			if err := reg.Register(c); err != nil {
				r.opts.Logger.Warn("register the scheduled backups' metrics", "err", err)
			}
		}
	}
	return scheduledBackupMetrics{ok: total.WithLabelValues("ok"), failed: total.WithLabelValues("failed"), lastOK: last}
}
