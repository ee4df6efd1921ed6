package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// Records are imported in batches of at most this many records or bytes; each batch is
// written all or nothing.
const (
	importBatchRecords = 500
	importBatchBytes   = 4 << 20
)

func newImportCmd() *cobra.Command {
	var (
		cfg     storeConfig
		input   string
		replace bool
	)
	cmd := &cobra.Command{
		Use:   "import [-f file.jsonl]",
		Short: "Create a project and its records from a `platform export`",
		Long: "Read a `platform export` and write the project's records, with their uid, owner and times, into the " +
			"embedded store (--data) or MongoDB (--mongodb-uri), then store its document. Records are written beside " +
			"the project's tables and take their place in one step once the whole export has been read and checked, so " +
			"an export that is cut or refused changes nothing. The project's tables must be empty unless --replace is " +
			"given, which replaces their records. A running server serves the imported records at once, and a changed " +
			"document once its cache refreshes (--project-cache-refresh).",
		Args: cobra.NoArgs,
	}
	envErr := bindAll(cmd.Flags(), cfg.settings())
	cmd.Flags().StringVarP(&input, "file", "f", "-", "export to read (- for standard input)")
	cmd.Flags().BoolVar(&replace, "replace", false, "replace the records of the tables the export holds, and the project's document")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if envErr != nil {
			return envErr
		}
		in := cmd.InOrStdin()
		if input != "-" {
			f, err := os.Open(input)
			if err != nil {
				return fmt.Errorf("read export: %w", err)
			}
			defer f.Close()
			in = f
		}
		stores, err := cfg.open(cmd.Context(), cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		defer stores.Close(context.WithoutCancel(cmd.Context()))
		progress := newProgress(printLines(cmd.ErrOrStderr()), "imported")
		id, err := importExport(cmd.Context(), stores, in, replace, progress)
		what := "+ records of " + input
		if replace {
			what = "~ records replaced by " + input
		}
		if aerr := tenant.AuditLocal(cmd.Context(), stores, "import", id, input, []string{what}, err); err == nil && aerr != nil {
			return aerr
		}
		if err != nil {
			return err
		}
		progress.done("project " + id)
		return nil
	}
	return cmd
}

// importExport reads an export from r into stores and answers the project's id. The records
// go into staging tables beside the project's, which take their place in one step once the
// whole export has been read and checked (every record, the end line and its counts): an
// export that is cut, malformed or refused changes nothing.
func importExport(ctx context.Context, stores *store.Stores, r io.Reader, replace bool, progress *progress) (id string, err error) {
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 0, 64<<10), 64<<20)
	if !lines.Scan() {
		return "", errors.Join(errors.New("read export: it is empty"), lines.Err())
	}
	var h exportHeader
	if err := json.Unmarshal(lines.Bytes(), &h); err != nil || h.Format != exportFormat {
		return "", fmt.Errorf("read export: the first line is not a %s header (%.80s)", exportFormat, lines.Bytes())
	}
	dst, err := openTarget(ctx, stores, h, replace, progress)
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil && !dst.committed {
			err = errors.Join(fmt.Errorf("%w; nothing was imported", err), dst.abort(context.WithoutCancel(ctx)))
		}
	}()
	var end *exportEnd
	read := 0
	for n := 2; lines.Scan(); n++ {
		if end != nil {
			return "", fmt.Errorf("read export: line %d: after the end line", n)
		}
		var l exportLine
		if err := json.Unmarshal(lines.Bytes(), &l); err != nil {
			return "", fmt.Errorf("read export: line %d: %w", n, err)
		}
		if l.End != nil {
			end = l.End
			continue
		}
		read++
		if err := dst.add(ctx, l.Table, store.Record(l.Record)); err != nil {
			return "", fmt.Errorf("read export: line %d: %w", n, err)
		}
	}
	if err := lines.Err(); err != nil {
		return "", fmt.Errorf("read export: %w", err)
	}
	if end == nil {
		return "", fmt.Errorf("%w (%d records read)", errIncomplete, read)
	}
	if err := dst.finish(ctx, end.Records); err != nil {
		return "", err
	}
	return h.Project, nil
}

// target writes a project's records into staging tables in batches, and once they are all
// there puts the tables in place and stores the document, so that a server does not serve
// the project half imported.
type target struct {
	stores   *store.Stores
	project  *tenant.Project
	document string
	replace  bool
	records  *store.Records
	staged   *store.Replacement
	progress *progress
	// committed is set once the records are in place (and aborting is too late).
	committed bool

	table   string
	batch   []store.Record
	size    int
	written map[string]int64
}

// openTarget prepares project h.Project in stores: a staging table for each table of the
// export. A project stored with another document, or whose tables hold records, is refused
// unless replace is set; a project deleted without purge is refused.
func openTarget(ctx context.Context, stores *store.Stores, h exportHeader, replace bool, progress *progress) (*target, error) {
	p, err := tenant.ParseDocument(h.Document)
	if err != nil {
		return nil, fmt.Errorf("import: the exported document: %w", err)
	}
	if p.ID != h.Project {
		return nil, fmt.Errorf("import: the export names project %q but its document %q", h.Project, p.ID)
	}
	var doc bytes.Buffer
	if err := json.Compact(&doc, h.Document); err != nil {
		return nil, fmt.Errorf("import: the exported document: %w", err)
	}
	switch cur, err := stores.Projects().Get(ctx, p.ID); {
	case errors.Is(err, store.ErrDeleted):
		return nil, fmt.Errorf("import: project %q was deleted and is kept with its records: restore it (platform undelete --project %s) or delete it for good (DELETE /admin/v1/projects/%s?purge=true) first", p.ID, p.ID, p.ID)
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("import: %w", err)
	case cur.Document != doc.String() && !replace:
		return nil, fmt.Errorf("import: project %q exists with another document: import with --replace to replace it and its records", p.ID)
	}
	tables := p.StoreTables()
	for _, name := range h.Tables {
		if !slices.ContainsFunc(tables, func(t store.Table) bool { return t.Name == name }) {
			tables = append(tables, store.Table{Name: name})
		}
	}
	recs, err := stores.ProjectRecords(ctx, p.ID, p.MongoURI, tables)
	if err != nil {
		return nil, fmt.Errorf("import project %q: %w", p.ID, err)
	}
	if !replace {
		stored, err := recs.StoredTables(ctx)
		if err != nil {
			return nil, fmt.Errorf("import project %q: %w", p.ID, err)
		}
		for _, name := range h.Tables {
			if !slices.Contains(stored, name) {
				continue
			}
			if n, err := recs.Count(ctx, name, store.All); err != nil || n > 0 {
				return nil, errors.Join(fmt.Errorf("import: project %q already holds %d records in %s: import with --replace to replace them", p.ID, n, name), err)
			}
		}
	}
	staged, err := recs.Replace(ctx, h.Tables)
	if err != nil {
		return nil, fmt.Errorf("import project %q: %w", p.ID, err)
	}
	return &target{stores: stores, project: p, document: doc.String(), replace: replace, records: recs, staged: staged, progress: progress, written: map[string]int64{}}, nil
}

// add queues a record of table, writing the queued ones when the batch is full or the table
// changes.
func (t *target) add(ctx context.Context, table string, rec store.Record) error {
	if len(rec) == 0 || table == "" {
		return errors.New("a record line needs a table and a record")
	}
	if table != t.table || len(t.batch) >= importBatchRecords || t.size+len(rec) > importBatchBytes {
		if err := t.flush(ctx); err != nil {
			return err
		}
		t.table = table
	}
	t.batch = append(t.batch, rec)
	t.size += len(rec)
	return nil
}

// flush writes the queued records into their staging table.
func (t *target) flush(ctx context.Context) error {
	if len(t.batch) == 0 {
		return nil
	}
	if err := t.staged.Import(ctx, t.table, t.batch); err != nil {
		return fmt.Errorf("import %d %s records after %d: %w", len(t.batch), t.table, t.written[t.table], err)
	}
	t.written[t.table] += int64(len(t.batch))
	t.progress.add(t.table, int64(len(t.batch)))
	t.batch, t.size = t.batch[:0], 0
	return nil
}

// finish checks that the records written are the ones the source counted, table by table,
// puts the staging tables in place of the project's tables, and stores the document.
func (t *target) finish(ctx context.Context, want map[string]int64) error {
	if err := t.flush(ctx); err != nil {
		return err
	}
	for _, table := range slices.Sorted(maps.Keys(t.written)) {
		if _, ok := want[table]; !ok {
			return fmt.Errorf("import project %q: the export holds %d records of %s but its end line does not count them", t.project.ID, t.written[table], table)
		}
	}
	for _, table := range slices.Sorted(maps.Keys(want)) {
		if t.written[table] != want[table] {
			return fmt.Errorf("import project %q: %s: the export counts %d records but holds %d", t.project.ID, table, want[table], t.written[table])
		}
	}
	if err := t.staged.Commit(ctx, t.replace); err != nil {
		if errors.Is(err, store.ErrNotEmpty) {
			return fmt.Errorf("import project %q: %w: import with --replace to replace them", t.project.ID, err)
		}
		return fmt.Errorf("import project %q: %w", t.project.ID, err)
	}
	t.committed = true
	// Tables the document declares that the export does not hold.
	if err := t.records.Ensure(ctx); err != nil {
		return fmt.Errorf("import project %q: %w", t.project.ID, err)
	}
	if _, _, err := t.stores.Projects().Put(ctx, t.project.ID, t.document, tenant.Applied("platform import", t.project)); err != nil {
		return fmt.Errorf("import project %q: store its document: %w", t.project.ID, err)
	}
	return nil
}

// abort drops the staging tables: the project's tables stay as they were.
func (t *target) abort(ctx context.Context) error {
	if err := t.staged.Abort(ctx); err != nil {
		return fmt.Errorf("import project %q: drop the records written beside its tables: %w", t.project.ID, err)
	}
	return nil
}
