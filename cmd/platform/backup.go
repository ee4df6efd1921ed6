package main

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// backupTargetConfig is where backups are kept, for serve and restore alike.
type backupTargetConfig struct{ Dir, S3URL string }

func (c *backupTargetConfig) settings() []setting {
	return []setting{
		stringSetting(&c.Dir, "backup-dir", "PLATFORM_BACKUP_DIR", "", "folder that keeps the projects' backups; empty: <data>/backups"),
		stringSetting(&c.S3URL, "backup-s3-url", "PLATFORM_BACKUP_S3_URL", "", "S3-compatible bucket that keeps the backups instead, http(s)://<endpoint>/<bucket>[/<prefix>]; credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
	}
}

// target opens the configured target; the folder defaults to backups in dataDir.
func (c backupTargetConfig) target(dataDir string) (store.BackupTarget, error) {
	if c.S3URL != "" {
		return store.BackupS3(c.S3URL)
	}
	dir := c.Dir
	if dir == "" {
		dir = filepath.Join(dataDir, "backups")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("backup folder: %w", err)
	}
	return store.BackupFolder(abs), nil
}

// backupConfig is serve's: the target and the schedule.
type backupConfig struct {
	backupTargetConfig
	Every time.Duration
	Keep  int
}

func (c *backupConfig) settings() []setting {
	return append(c.backupTargetConfig.settings(),
		durationSetting(&c.Every, "backup-every", "PLATFORM_BACKUP_EVERY", 0, "how often every project is backed up (24h, 1h); 0: only when asked through the admin API or the console"),
		intSetting(&c.Keep, "backup-keep", "PLATFORM_BACKUP_KEEP", 7, "backups kept per project, the oldest removed first; 0 keeps all"),
	)
}

// options are the registry's backup options.
func (c backupConfig) options(dataDir string) (tenant.BackupOptions, error) {
	if c.Every < 0 || c.Keep < 0 {
		return tenant.BackupOptions{}, fmt.Errorf("--backup-every %s, --backup-keep %d: want neither negative", c.Every, c.Keep)
	}
	target, err := c.target(dataDir)
	if err != nil {
		return tenant.BackupOptions{}, err
	}
	return tenant.BackupOptions{Target: target, Every: c.Every, Keep: c.Keep}, nil
}

func newRestoreCmd() *cobra.Command {
	var (
		cfg     storeConfig
		targets backupTargetConfig
		project string
		at      string
		as      string
		list    bool
	)
	cmd := &cobra.Command{
		Use:   "restore --project ID [--at TIME] [--as NEW_ID]",
		Short: "Restore a project's records and document from one of its backups",
		Long: "Restore project ID from its newest backup taken at or before --at (RFC 3339, or a date; default: the newest), " +
			"in place of its records in one step (a restore that fails changes nothing), or into a new project --as NEW_ID. " +
			"The backups are those `platform serve` keeps (--backup-dir, default <data>/backups, or --backup-s3-url); " +
			"--list shows them. A running server serves the restored project once its cache refreshes " +
			"(--project-cache-refresh); the admin API and the console restore on a running server at once.",
		Args: cobra.NoArgs,
	}
	envErr := bindAll(cmd.Flags(), append(cfg.settings(), targets.settings()...))
	cmd.Flags().StringVar(&project, "project", "", "id of the project to restore")
	cmd.Flags().StringVar(&at, "at", "", "restore the newest backup taken at or before this time (RFC 3339 or YYYY-MM-DD)")
	cmd.Flags().StringVar(&as, "as", "", "restore into a new project of this id, leaving the project as it is")
	cmd.Flags().BoolVar(&list, "list", false, "list the project's backups, newest first, and restore nothing")
	_ = cmd.MarkFlagRequired("project")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if envErr != nil {
			return envErr
		}
		when, err := parseTime(at)
		if err != nil {
			return err
		}
		target, err := targets.target(cfg.DataDir)
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		stores, err := cfg.open(ctx, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		defer stores.Close(context.WithoutCancel(ctx))
		if list {
			all, err := stores.ListBackups(ctx, target, project)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d backups of project %s in %s\n", len(all), project, target)
			for _, b := range all {
				fmt.Fprintf(cmd.OutOrStdout(), "%s  %10d bytes  %s\n", b.At.Format(store.TimeLayout), b.Size, b.Name)
			}
			return nil
		}
		start := time.Now()
		out, err := tenant.RestoreBackup(ctx, stores, target, project, when, as)
		var tables []string
		if err == nil {
			for t, n := range out.Records {
				tables = append(tables, fmt.Sprintf("%s %d", t, n))
			}
			slices.Sort(tables)
		}
		restored := cmp.Or(as, project)
		if aerr := tenant.AuditLocal(ctx, stores, "restore", restored, project, []string{"~ records and document from a backup of " + project + ": " + strings.Join(tables, ", ")}, err); err == nil && aerr != nil {
			return aerr
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "restored project %s from %s (taken %s, document version %d) in %s: %s\n",
			out.Project, out.Backup.Name, out.Backup.At.Format(store.TimeLayout), out.Version,
			time.Since(start).Round(time.Millisecond), strings.Join(tables, ", "))
		return nil
	}
	return cmd
}

// parseTime reads --at: empty is the zero time, a date is the end of that day (UTC).
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		return d.Add(24*time.Hour - time.Millisecond), nil
	}
	return time.Time{}, fmt.Errorf("--at %q: want an RFC 3339 time (2026-11-27T08:00:00Z) or a date (2026-11-27)", s)
}
