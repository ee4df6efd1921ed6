package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
			"embedded store (--data) or MongoDB (--mongodb-uri), then store its document. The project's tables must " +
			"be empty unless --replace is given, which first drops the records the project holds there. A running " +
			"server serves the imported project once its cache refreshes (--project-cache-refresh).",
		Args: cobra.NoArgs,
	}
	envErr := bindAll(cmd.Flags(), cfg.settings())
	cmd.Flags().StringVarP(&input, "file", "f", "-", "export to read (- for standard input)")
	cmd.Flags().BoolVar(&replace, "replace", false, "drop the project's records in the target first, and replace its document")
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
		if err != nil {
			return err
		}
		progress.done("project " + id)
		return nil
	}
	return cmd
}

// importExport reads an export from r into stores and answers the project's id.
func importExport(ctx context.Context, stores *store.Stores, r io.Reader, replace bool, progress *progress) (string, error) {
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
	var end *exportEnd
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
		if err := dst.add(ctx, l.Table, store.Record(l.Record)); err != nil {
			return "", fmt.Errorf("read export: line %d: %w", n, err)
		}
	}
	if err := lines.Err(); err != nil {
		return "", fmt.Errorf("read export: %w", err)
	}
	if err := dst.flush(ctx); err != nil {
		return "", err
	}
	if end == nil {
		return "", fmt.Errorf("%w (%d records were imported; fix the file and import again with --replace)", errIncomplete, progress.total)
	}
	if err := dst.finish(ctx, end.Records); err != nil {
		return "", err
	}
	return h.Project, nil
}

// target writes a project's records in batches and stores its document once they are in,
// so that a server does not serve the project half imported.
type target struct {
	stores   *store.Stores
	id       string
	document string
	records  *store.Records
	progress *progress

	table   string
	batch   []store.Record
	size    int
	written map[string]int64
}

// openTarget prepares project h.Project in stores: its tables and indexes exist and hold no
// record (with replace, after dropping those they held). A project stored with another
// document is refused unless replace is set.
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
	if replace {
		if err := recs.Drop(ctx); err != nil {
			return nil, fmt.Errorf("import project %q: drop its records: %w", p.ID, err)
		}
	}
	if err := recs.Ensure(ctx); err != nil {
		return nil, fmt.Errorf("import project %q: %w", p.ID, err)
	}
	for _, t := range tables {
		n, err := recs.Count(ctx, t.Name, store.All)
		if err != nil {
			return nil, fmt.Errorf("import project %q: count %s: %w", p.ID, t.Name, err)
		}
		if n > 0 {
			return nil, fmt.Errorf("import: project %q already holds %d records in %s: import with --replace to drop them first", p.ID, n, t.Name)
		}
	}
	return &target{stores: stores, id: p.ID, document: doc.String(), records: recs, progress: progress, written: map[string]int64{}}, nil
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

// flush writes the queued records.
func (t *target) flush(ctx context.Context) error {
	if len(t.batch) == 0 {
		return nil
	}
	if err := t.records.Import(ctx, t.table, t.batch); err != nil {
		return fmt.Errorf("import %d %s records after %d: %w", len(t.batch), t.table, t.written[t.table], err)
	}
	t.written[t.table] += int64(len(t.batch))
	t.progress.add(t.table, int64(len(t.batch)))
	t.batch, t.size = t.batch[:0], 0
	return nil
}

// finish checks that every record the source counted was written, then stores the document.
func (t *target) finish(ctx context.Context, want map[string]int64) error {
	if err := t.flush(ctx); err != nil {
		return err
	}
	for table, n := range want {
		if t.written[table] != n {
			return fmt.Errorf("import project %q: %s: the export counts %d records but holds %d", t.id, table, n, t.written[table])
		}
	}
	if _, _, err := t.stores.Projects().Put(ctx, t.id, t.document); err != nil {
		return fmt.Errorf("import project %q: store its document: %w", t.id, err)
	}
	return nil
}
