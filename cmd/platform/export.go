package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// An export is JSON Lines: a header naming the project, its document and its tables, one line
// per record, and an end line with the counts, so that an import can tell a complete export
// from a cut one. A backup of a project on MongoDB is an export too: store defines the format.
const exportFormat = store.ExportFormat

type (
	exportHeader = store.ExportHeader
	exportLine   = store.ExportLine
	exportEnd    = store.ExportEnd
)

// storeConfig is how export, import and serve reach the records.
type storeConfig struct{ DataDir, MongoURI string }

func (c *storeConfig) settings() []setting {
	return []setting{
		stringSetting(&c.DataDir, "data", "PLATFORM_DATA", "./data", "data folder of the embedded store"),
		stringSetting(&c.MongoURI, "mongodb-uri", "MONGODB_URI", "", "MongoDB that holds the projects; empty: the embedded store in the data folder"),
	}
}

// open opens the stores as serve would, logging warnings and errors to logs; the embedded
// Redis it starts stays unused.
func (c storeConfig) open(ctx context.Context, logs io.Writer) (*store.Stores, error) {
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	dir, err := filepath.Abs(c.DataDir)
	if err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	stores, err := store.Open(ctx, store.Config{DataDir: dir, MongoURI: c.MongoURI, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("open stores: %w", err)
	}
	return stores, nil
}

func newExportCmd() *cobra.Command {
	var (
		cfg     transferConfig
		project string
		output  string
	)
	cmd := &cobra.Command{
		Use:   "export --project ID [-o file.jsonl]",
		Short: "Write a project's document and every record of its tables as JSON Lines",
		Long: "Write a project's document and every record of every table it holds, with their uid, owner and times, " +
			"as JSON Lines, from the embedded store (--data) or MongoDB (--mongodb-uri). `platform import` reads it back " +
			"into either. With --server it asks a running server's admin API instead (GET /admin/v1/projects/{id}/export) " +
			"with an operator key or the project's admin key, and needs no access to its files. " +
			"Records written while the export runs may be missed: stop writers for a consistent copy.",
		Args: cobra.NoArgs,
	}
	envErr := bindAll(cmd.Flags(), cfg.settings())
	cmd.Flags().StringVar(&project, "project", "", "id of the project to export")
	cmd.Flags().StringVarP(&output, "output", "o", "-", "file to write (- for standard output); written under a temporary name and renamed when complete")
	_ = cmd.MarkFlagRequired("project")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if envErr != nil {
			return envErr
		}
		progress := newProgress(printLines(cmd.ErrOrStderr()), "exported")
		var write func(w io.Writer) error
		if cfg.Server != "" {
			write = func(w io.Writer) error { return exportRemote(cmd.Context(), cfg, project, w, progress) }
		} else {
			stores, err := cfg.open(cmd.Context(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer stores.Close(context.WithoutCancel(cmd.Context()))
			src, err := tenant.OpenSource(cmd.Context(), stores, project)
			if err != nil {
				return err
			}
			write = func(w io.Writer) error { return src.Export(cmd.Context(), w, progress.add) }
		}
		var err error
		if output == "-" {
			err = write(cmd.OutOrStdout())
		} else {
			err = writeFileAtomic(output, write)
		}
		if err != nil {
			return err
		}
		progress.done(fmt.Sprintf("project %s", project))
		return nil
	}
	return cmd
}

// writeFileAtomic writes name through write under a temporary name in the same folder and
// renames it when write succeeded, so a cut export never looks complete. A name that is not
// a regular file (/dev/null, a pipe, a terminal) is written into, not replaced.
func writeFileAtomic(name string, write func(io.Writer) error) (err error) {
	if fi, err := os.Stat(name); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", name, err)
		}
		if err := write(f); err != nil {
			_ = f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// progress reports records moved through report: every few seconds while it runs, and a
// summary at the end.
type progress struct {
	report func(string)
	verb   string
	start  time.Time
	last   time.Time
	total  int64
	tables map[string]int64
}

// progressEvery is how often a long move reports.
const progressEvery = 2 * time.Second

func newProgress(report func(string), verb string) *progress {
	now := time.Now()
	return &progress{report: report, verb: verb, start: now, last: now, tables: map[string]int64{}}
}

// printLines reports each line on w.
func printLines(w io.Writer) func(string) { return func(s string) { fmt.Fprintln(w, s) } }

func (p *progress) add(table string, n int64) {
	p.total += n
	p.tables[table] += n
	if now := time.Now(); now.Sub(p.last) >= progressEvery {
		p.last = now
		p.report(fmt.Sprintf("%s %d records (%s: %d), %s", p.verb, p.total, table, p.tables[table], p.rate(now)))
	}
}

func (p *progress) rate(now time.Time) string {
	secs := now.Sub(p.start).Seconds()
	return fmt.Sprintf("%.1f s, %.0f records/s", secs, float64(p.total)/max(secs, 1e-3))
}

// done reports the summary: what was moved, per table.
func (p *progress) done(what string) {
	tables := make([]string, 0, len(p.tables))
	for t := range p.tables {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d records in %s", p.verb, what, p.total, p.rate(time.Now()))
	sep := " ("
	for _, t := range tables {
		fmt.Fprintf(&b, "%s%s %d", sep, t, p.tables[t])
		sep = ", "
	}
	if len(tables) > 0 {
		b.WriteString(")")
	}
	p.report(b.String())
}
