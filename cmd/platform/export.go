package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
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
		cfg     storeConfig
		project string
		output  string
	)
	cmd := &cobra.Command{
		Use:   "export --project ID [-o file.jsonl]",
		Short: "Write a project's document and every record of its tables as JSON Lines",
		Long: "Write a project's document and every record of every table it holds, with their uid, owner and times, " +
			"as JSON Lines, from the embedded store (--data) or MongoDB (--mongodb-uri). `platform import` reads it back " +
			"into either. Records written while the export runs may be missed: stop writers for a consistent copy.",
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
		stores, err := cfg.open(cmd.Context(), cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		defer stores.Close(context.WithoutCancel(cmd.Context()))
		src, err := openSource(cmd.Context(), stores, project)
		if err != nil {
			return err
		}
		progress := newProgress(printLines(cmd.ErrOrStderr()), "exported")
		write := func(w io.Writer) error { return src.export(cmd.Context(), w, progress) }
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

// source is a project to read: its stored document, the tables to read and their records.
type source struct {
	header  exportHeader
	project *tenant.Project
	records *store.Records
}

// openSource reads project id's document and finds its tables: the declared ones and those
// its database still holds although the document no longer declares them (read with their
// stored values, as JSON).
func openSource(ctx context.Context, stores *store.Stores, id string) (*source, error) {
	sp, err := stores.Projects().Get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("export project %q: %w", id, err)
	}
	p, err := tenant.ParseDocument([]byte(sp.Document))
	if err != nil {
		return nil, fmt.Errorf("project %q: stored document: %w", id, err)
	}
	tables := p.StoreTables()
	recs, err := stores.ProjectRecords(ctx, id, p.MongoURI, tables)
	if err != nil {
		return nil, fmt.Errorf("project %q: %w", id, err)
	}
	stored, err := recs.StoredTables(ctx)
	if err != nil {
		return nil, fmt.Errorf("project %q: list tables: %w", id, err)
	}
	names := make([]string, 0, len(tables))
	for _, t := range tables {
		names = append(names, t.Name)
	}
	extra := false
	for _, name := range stored {
		if !slices.Contains(names, name) {
			names = append(names, name)
			tables = append(tables, store.Table{Name: name})
			extra = true
		}
	}
	if extra {
		if recs, err = stores.ProjectRecords(ctx, id, p.MongoURI, tables); err != nil {
			return nil, fmt.Errorf("project %q: %w", id, err)
		}
	}
	slices.Sort(names)
	return &source{
		header: exportHeader{
			Format: exportFormat, Project: id, Version: sp.Version,
			Document: json.RawMessage(sp.Document), Tables: names,
		},
		project: p,
		records: recs,
	}, nil
}

// each calls fn with every record of every table, table by table in name order, each table
// in uid order, and answers how many records each table gave.
func (s *source) each(ctx context.Context, fn func(ctx context.Context, table string, rec store.Record) error) (map[string]int64, error) {
	counts := make(map[string]int64, len(s.header.Tables))
	for _, table := range s.header.Tables {
		counts[table] = 0
		err := s.records.Each(ctx, table, store.Query{}, func(rec store.Record) (bool, error) {
			counts[table]++
			return true, fn(ctx, table, rec)
		})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
	}
	return counts, nil
}

// export writes the project as JSON Lines to w.
func (s *source) export(ctx context.Context, w io.Writer, progress *progress) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s.header); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	counts, err := s.each(ctx, func(_ context.Context, table string, rec store.Record) error {
		if err := enc.Encode(exportLine{Table: table, Record: json.RawMessage(rec)}); err != nil {
			return fmt.Errorf("write export: %w", err)
		}
		progress.add(table, 1)
		return nil
	})
	if err != nil {
		return err
	}
	if err := enc.Encode(exportLine{End: &exportEnd{Records: counts}}); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	return nil
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

// errIncomplete says that an export ended before its end line.
var errIncomplete = errors.New("the export is incomplete: it ends before its end line")
