package tenant

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/platform-dev/platform/store"
)

// An export is JSON Lines (store.ExportFormat): a header naming the project, its document and
// its tables, one line per record, and an end line with the counts, so that an import can
// tell a complete export from a cut one. `platform export` and import, `platform convert` and
// the admin API's export and import routes all read and write it here.

// Progress is told how many records of table were moved; nil tells nobody.
type Progress func(table string, n int64)

func (p Progress) add(table string, n int64) {
	if p != nil {
		p(table, n)
	}
}

// ErrIncomplete says that an export ended before its end line.
var ErrIncomplete = errors.New("the export is incomplete: it ends before its end line")

// ImportError is an import refused for what the export holds or for a failure to read it
// (Conflict false), or for what the project already holds (Conflict true), rather than for a
// failure of the store.
type ImportError struct {
	Conflict bool
	Err      error
}

func (e *ImportError) Error() string { return e.Err.Error() }
func (e *ImportError) Unwrap() error { return e.Err }

func badExport(err error) error { return &ImportError{Err: err} }
func importConflict(err error) error {
	return &ImportError{Conflict: true, Err: err}
}

// Source is a project to read: its stored document, the tables to read and their records.
type Source struct {
	Header  store.ExportHeader
	records *store.Records
	// files keep the bytes of the project's File fields; nil when it has none.
	files store.Blobs
}

// OpenSource reads project id's document and finds its tables: the declared ones and those
// its database still holds although the document no longer declares them (read with their
// stored values, as JSON).
func OpenSource(ctx context.Context, stores *store.Stores, id string) (*Source, error) {
	sp, err := stores.Projects().Get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("export project %q: %w", id, err)
	}
	p, err := ParseDocument([]byte(sp.Document))
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
	return &Source{
		Header: store.ExportHeader{
			Format: store.ExportFormat, Project: id, Version: sp.Version,
			Document: json.RawMessage(sp.Document), Tables: names,
		},
		records: recs,
		files:   projectFiles(stores, p),
	}, nil
}

// Each calls fn with every record of every table, table by table in name order, each table
// in uid order, and answers how many records each table gave.
func (s *Source) Each(ctx context.Context, fn func(ctx context.Context, table string, rec store.Record) error) (map[string]int64, error) {
	counts := make(map[string]int64, len(s.Header.Tables))
	for _, table := range s.Header.Tables {
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

// Export writes the project as JSON Lines to w.
func (s *Source) Export(ctx context.Context, w io.Writer, progress Progress) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s.Header); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	counts, err := s.Each(ctx, func(_ context.Context, table string, rec store.Record) error {
		if err := enc.Encode(store.ExportLine{Table: table, Record: json.RawMessage(rec)}); err != nil {
			return fmt.Errorf("write export: %w", err)
		}
		progress.add(table, 1)
		return nil
	})
	if err != nil {
		return err
	}
	files, err := s.exportFiles(ctx, enc)
	if err != nil {
		return err
	}
	if err := enc.Encode(store.ExportLine{End: &store.ExportEnd{Records: counts, Files: files}}); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write export: %w", err)
	}
	return nil
}

// ImportOptions say how Import treats what the project already holds, and who imports.
type ImportOptions struct {
	// Replace replaces the records of the tables the export holds, and the document.
	Replace bool
	// Project, when set, is the only project the export may name.
	Project string
	// Who names the importer in the project's history.
	Who      string
	Progress Progress
	// Check, when set, checks the export's document before anything is written: the admin
	// API holds a project's key to what an apply would be held to (its tables quota).
	Check func(context.Context, *Project) error
}

// Records are imported in batches of at most this many records or bytes; each batch is
// written all or nothing.
const (
	importBatchRecords = 500
	importBatchBytes   = 4 << 20
)

// Import reads an export from r into stores and answers the project's id. The records go
// into staging tables beside the project's, which take their place in one step once the
// whole export has been read and checked (every record, the end line and its counts): an
// export that is cut, malformed or refused changes nothing.
func Import(ctx context.Context, stores *store.Stores, r io.Reader, opts ImportOptions) (id string, err error) {
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 0, 64<<10), 64<<20)
	if !lines.Scan() {
		return "", badExport(errors.Join(errors.New("read export: it is empty"), lines.Err()))
	}
	var h store.ExportHeader
	if err := json.Unmarshal(lines.Bytes(), &h); err != nil || h.Format != store.ExportFormat {
		if rerr := lines.Err(); rerr != nil {
			return "", badExport(fmt.Errorf("read export: %w", rerr))
		}
		return "", badExport(fmt.Errorf("read export: the first line is not a %s header (%.80s)", store.ExportFormat, lines.Bytes()))
	}
	if opts.Project != "" && h.Project != opts.Project {
		return "", badExport(fmt.Errorf("import: the export is of project %q, not %q", h.Project, opts.Project))
	}
	dst, err := OpenTarget(ctx, stores, h, opts)
	if err != nil {
		return "", err
	}
	defer dst.dropImporting()
	defer func() {
		if err != nil && !dst.committed {
			err = errors.Join(fmt.Errorf("%w; nothing was imported", err), dst.abort(context.WithoutCancel(ctx)))
		}
	}()
	var end *store.ExportEnd
	read := 0
	for n := 2; lines.Scan(); n++ {
		if end != nil {
			return "", badExport(fmt.Errorf("read export: line %d: after the end line", n))
		}
		var l store.ExportLine
		if err := json.Unmarshal(lines.Bytes(), &l); err != nil {
			// A reader that failed hands over what it read before: its error says why the
			// line is cut (a body past its bound, a dropped connection).
			if rerr := lines.Err(); rerr != nil {
				return "", badExport(fmt.Errorf("read export: %w", rerr))
			}
			return "", badExport(fmt.Errorf("read export: line %d: %w", n, err))
		}
		if l.End != nil {
			end = l.End
			continue
		}
		if l.File != nil {
			if err := dst.importFile(ctx, l.File); err != nil {
				return "", fmt.Errorf("read export: line %d: %w", n, err)
			}
			continue
		}
		read++
		if len(l.Record) == 0 || l.Table == "" {
			return "", badExport(fmt.Errorf("read export: line %d: a record line needs a table and a record", n))
		}
		if err := dst.Add(ctx, l.Table, store.Record(l.Record)); err != nil {
			return "", fmt.Errorf("read export: line %d: %w", n, err)
		}
	}
	if err := lines.Err(); err != nil {
		return "", badExport(fmt.Errorf("read export: %w", err))
	}
	if end == nil {
		return "", badExport(fmt.Errorf("%w (%d records read)", ErrIncomplete, read))
	}
	if dst.file != nil || dst.files != end.Files {
		return "", badExport(fmt.Errorf("import project %q: the export counts %d files but holds %d whole", h.Project, end.Files, dst.files))
	}
	if err := dst.Finish(ctx, end.Records); err != nil {
		return "", err
	}
	return h.Project, nil
}

// Target writes a project's records into staging tables in batches, and once they are all
// there puts the tables in place and stores the document, so that a server does not serve
// the project half imported.
type Target struct {
	stores   *store.Stores
	project  *Project
	document string
	opts     ImportOptions
	records  *store.Records
	staged   *store.Replacement
	tables   []string // the export's
	// committed is set once the records are in place (and aborting is too late).
	committed bool

	table   string
	batch   []store.Record
	size    int
	written map[string]int64
	// file is the file whose pieces are being read, files those stored (transfer_files.go).
	file  *importing
	files int64
}

// OpenTarget prepares project h.Project in stores: a staging table for each table of the
// export. A project stored with another document, or whose tables hold records, is refused
// unless opts.Replace is set; a project deleted without purge is refused.
func OpenTarget(ctx context.Context, stores *store.Stores, h store.ExportHeader, opts ImportOptions) (*Target, error) {
	p, err := ParseDocument(h.Document)
	if err != nil {
		return nil, badExport(fmt.Errorf("import: the exported document: %w", err))
	}
	if p.ID != h.Project {
		return nil, badExport(fmt.Errorf("import: the export names project %q but its document %q", h.Project, p.ID))
	}
	if opts.Check != nil {
		if err := opts.Check(ctx, p); err != nil {
			return nil, badExport(fmt.Errorf("import: the exported document: %w", err))
		}
	}
	var doc bytes.Buffer
	if err := json.Compact(&doc, h.Document); err != nil {
		return nil, badExport(fmt.Errorf("import: the exported document: %w", err))
	}
	switch cur, err := stores.Projects().Get(ctx, p.ID); {
	case errors.Is(err, store.ErrDeleted):
		return nil, importConflict(fmt.Errorf("import: project %q was deleted and is kept with its records: restore it (platform undelete --project %s) or delete it for good (DELETE /admin/v1/projects/%s?purge=true) first", p.ID, p.ID, p.ID))
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("import: %w", err)
	case cur.Document != doc.String() && !opts.Replace:
		return nil, importConflict(fmt.Errorf("import: project %q exists with another document: import with --replace to replace it and its records", p.ID))
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
	if !opts.Replace {
		stored, err := recs.StoredTables(ctx)
		if err != nil {
			return nil, fmt.Errorf("import project %q: %w", p.ID, err)
		}
		for _, name := range h.Tables {
			if !slices.Contains(stored, name) {
				continue
			}
			if n, err := recs.Count(ctx, name, store.All); err != nil || n > 0 {
				return nil, errors.Join(importConflict(fmt.Errorf("import: project %q already holds %d records in %s: import with --replace to replace them", p.ID, n, name)), err)
			}
		}
	}
	staged, err := recs.Replace(ctx, h.Tables)
	if err != nil {
		return nil, fmt.Errorf("import project %q: %w", p.ID, err)
	}
	return &Target{stores: stores, project: p, document: doc.String(), opts: opts, records: recs, staged: staged, tables: h.Tables, written: map[string]int64{}}, nil
}

// Add queues a record of table, writing the queued ones when the batch is full or the table
// changes.
func (t *Target) Add(ctx context.Context, table string, rec store.Record) error {
	if !slices.Contains(t.tables, table) {
		return badExport(fmt.Errorf("a record of table %q, which the header does not list", table))
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
func (t *Target) flush(ctx context.Context) error {
	if len(t.batch) == 0 {
		return nil
	}
	if err := t.staged.Import(ctx, t.table, t.batch); err != nil {
		err = fmt.Errorf("import %d %s records after %d: %w", len(t.batch), t.table, t.written[t.table], err)
		var bad *store.RecordError
		var twice *store.ConflictError
		if errors.As(err, &bad) || errors.As(err, &twice) {
			return badExport(err)
		}
		return err
	}
	t.written[t.table] += int64(len(t.batch))
	t.opts.Progress.add(t.table, int64(len(t.batch)))
	t.batch, t.size = t.batch[:0], 0
	return nil
}

// Finish checks that the records written are the ones the source counted, table by table,
// puts the staging tables in place of the project's tables, and stores the document.
func (t *Target) Finish(ctx context.Context, want map[string]int64) error {
	if err := t.flush(ctx); err != nil {
		return err
	}
	for _, table := range slices.Sorted(maps.Keys(t.written)) {
		if _, ok := want[table]; !ok {
			return badExport(fmt.Errorf("import project %q: the export holds %d records of %s but its end line does not count them", t.project.ID, t.written[table], table))
		}
	}
	for _, table := range slices.Sorted(maps.Keys(want)) {
		if t.written[table] != want[table] {
			return badExport(fmt.Errorf("import project %q: %s: the export counts %d records but holds %d", t.project.ID, table, want[table], t.written[table]))
		}
	}
	if err := t.staged.Commit(ctx, t.opts.Replace); err != nil {
		if errors.Is(err, store.ErrNotEmpty) {
			return importConflict(fmt.Errorf("import project %q: %w: import with --replace to replace them", t.project.ID, err))
		}
		var index *store.IndexError
		if errors.As(err, &index) {
			return badExport(fmt.Errorf("import project %q: %w", t.project.ID, err))
		}
		return fmt.Errorf("import project %q: %w", t.project.ID, err)
	}
	t.committed = true
	// Tables the document declares that the export does not hold.
	if err := t.records.Ensure(ctx); err != nil {
		return fmt.Errorf("import project %q: %w", t.project.ID, err)
	}
	if _, _, err := t.stores.Projects().Put(ctx, t.project.ID, t.document, Applied(t.opts.Who, t.project)); err != nil {
		return fmt.Errorf("import project %q: store its document: %w", t.project.ID, err)
	}
	return nil
}

// abort drops the staging tables: the project's tables stay as they were.
func (t *Target) abort(ctx context.Context) error {
	if err := t.staged.Abort(ctx); err != nil {
		return fmt.Errorf("import project %q: drop the records written beside its tables: %w", t.project.ID, err)
	}
	return nil
}
