package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"modernc.org/sqlite"
)

// The embedded backend keeps everything in SQLite files under the data folder, spoken to
// directly through modernc.org/sqlite (pure Go, so the binary stays static): platform.db
// holds the project registry and projects/<id>.db each project's tables. Each file has one
// writer connection (SQLite serializes writers anyway; one connection makes every write
// transaction wait in Go instead of spinning on SQLITE_BUSY) and a small pool of readers,
// which WAL lets run beside the writer.

const (
	// sqliteReaders is the reader pool of one file: enough to keep two cores busy while a
	// slow reader streams a large answer to a slow client.
	sqliteReaders = 4
	// sqliteMaxOpenFiles bounds the project files open at once (each holds up to five
	// connections and their page caches); the least recently used idle file is closed when
	// another must open.
	sqliteMaxOpenFiles = 64
	// sqliteIdle closes a project file nobody used for that long.
	sqliteIdle = 5 * time.Minute
	// sqliteStatements bounds the prepared statements a file keeps: the shapes of the
	// queries an API sends are few, but a where built by callers can take many shapes.
	sqliteStatements = 256
)

// sqlitePragmas apply to every connection: WAL so readers never wait for the writer,
// synchronous=NORMAL (a commit is durable once the WAL is synced at checkpoints; a power
// loss can lose the last commits but never corrupts), a busy timeout for other processes
// sharing the file, and a page cache of 4 MB per connection (SQLite's default is 2 MB; the
// operating system caches the rest of the file). No mmap: every connection maps the file
// on its own, so a project read by five connections counted its file five times in resident
// memory, and reads through the page cache measured no slower (docs/performance.md).
var sqlitePragmas = []string{
	"busy_timeout(10000)",
	"journal_mode(WAL)",
	"synchronous(NORMAL)",
	"cache_size(-4000)",
	"foreign_keys(0)",
}

// Where each connection's temporary b-trees go. A reader's (a sort, a DISTINCT) stay in
// memory. The writer's go to temporary files past its page cache: it builds indexes, and
// building one over a large table sorts every entry first, which in memory took 125 MB of
// resident memory for the scan index of a million records (6 MB with a file, the build 1.3
// times as long), and an import of a million records that builds six peaked at 424 MB.
const (
	sqliteReaderTemp = "temp_store(MEMORY)"
	sqliteWriterTemp = "temp_store(FILE)"
)

// sqliteFile is one open database file: its writer, its readers, their prepared statements
// and the columns of its tables.
type sqliteFile struct {
	path   string
	writer *sql.DB
	reader *sql.DB

	mu        sync.Mutex
	stmts     map[stmtKey]*sql.Stmt
	cols      map[string]columns // by table, for reads: see columns
	writeCols map[string]columns // by table, for writes at schema: see writeColumns
	schema    int64
	rows      *lru.Cache[rowKey, []any] // answers of counts: see sqliteFile.row
	cuts      *lru.Cache[cutMemo, any]  // bounds of pages, by statement and parameters: see orderCut

	// Kept by sqliteDatabases under its lock.
	refs     int
	lastUsed time.Time
}

type stmtKey struct {
	write bool
	query string
}

func openSQLiteFile(path string) (*sqliteFile, error) {
	dsn := func(extra ...string) string {
		q := url.Values{}
		for _, p := range append(sqlitePragmas, extra...) {
			q.Add("_pragma", p)
		}
		q.Set("_txlock", "immediate")
		return (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}).String()
	}
	f := &sqliteFile{path: path, stmts: map[stmtKey]*sql.Stmt{}, cols: map[string]columns{}, writeCols: map[string]columns{}, rows: newRowCache(), cuts: newCutCache()}
	var err error
	if f.writer, err = sql.Open("sqlite", dsn(sqliteWriterTemp)); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f.writer.SetMaxOpenConns(1)
	f.writer.SetMaxIdleConns(1)
	f.writer.SetConnMaxIdleTime(0)
	// The writer's first connection creates the file and switches it to WAL before any
	// reader opens it.
	if err := f.writer.Ping(); err != nil {
		_ = f.writer.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if f.reader, err = sql.Open("sqlite", dsn("query_only(1)", sqliteReaderTemp)); err != nil {
		_ = f.writer.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f.reader.SetMaxOpenConns(sqliteReaders)
	f.reader.SetMaxIdleConns(sqliteReaders)
	return f, nil
}

// stmt returns the statement for query, prepared once per file (database/sql then prepares
// it once on each connection that runs it). f.mu is not held while preparing: preparing a
// write waits for the writer connection, whose transaction may need f.mu.
func (f *sqliteFile) stmt(ctx context.Context, write bool, query string) (*sql.Stmt, error) {
	k := stmtKey{write, query}
	f.mu.Lock()
	s, ok := f.stmts[k]
	f.mu.Unlock()
	if ok {
		return s, nil
	}
	db := f.reader
	if write {
		db = f.writer
	}
	s, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if other, ok := f.stmts[k]; ok {
		_ = s.Close()
		return other, nil
	}
	if len(f.stmts) >= sqliteStatements {
		// Any statement will do: the ones in use are prepared again next time.
		for old, s := range f.stmts {
			_ = s.Close()
			delete(f.stmts, old)
			break
		}
	}
	f.stmts[k] = s
	return s, nil
}

func (f *sqliteFile) close() error {
	f.mu.Lock()
	for k, s := range f.stmts {
		_ = s.Close()
		delete(f.stmts, k)
	}
	f.mu.Unlock()
	return errors.Join(f.reader.Close(), f.writer.Close())
}

// sqliteDatabases is the embedded backend: the registry and the project files under dir.
type sqliteDatabases struct {
	dir     string
	logger  *slog.Logger
	control *sqliteFile

	mu        sync.Mutex
	files     map[string]*sqliteFile // open project files, by project id
	lastSweep time.Time
	closed    bool
}

// openSQLite opens (creating when new) the data folder dir.
func openSQLite(ctx context.Context, dir string, logger *slog.Logger) (*sqliteDatabases, error) {
	if err := os.MkdirAll(filepath.Join(dir, "projects"), 0o700); err != nil {
		return nil, fmt.Errorf("create data folder: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	control, err := openSQLiteFile(filepath.Join(abs, "platform.db"))
	if err != nil {
		return nil, err
	}
	if err := createRegistry(ctx, control); err != nil {
		_ = control.close()
		return nil, fmt.Errorf("create the project registry in %s: %w", control.path, err)
	}
	if err := createOperators(ctx, control); err != nil {
		_ = control.close()
		return nil, fmt.Errorf("create the keys and audit log in %s: %w", control.path, err)
	}
	if err := createUsage(ctx, control); err != nil {
		_ = control.close()
		return nil, fmt.Errorf("create the usage table in %s: %w", control.path, err)
	}
	return &sqliteDatabases{dir: abs, logger: logger, control: control, files: map[string]*sqliteFile{}}, nil
}

func (d *sqliteDatabases) projects() projectsBackend { return sqliteProjects{d.control} }

func (d *sqliteDatabases) operators() operatorsBackend { return sqliteOperators{d.control} }

func (d *sqliteDatabases) project(_ context.Context, projectID, mongoURI string) (backend, error) {
	if mongoURI != "" {
		return nil, fmt.Errorf("project %q names a MongoDB cluster, but the service keeps its data in SQLite files (set MONGODB_URI to use MongoDB)", projectID)
	}
	if !validFileName(projectID) {
		return nil, fmt.Errorf("project id %q cannot name a file", projectID)
	}
	return &sqliteProject{dbs: d, id: projectID}, nil
}

// validFileName reports whether id names a file in the projects folder and nothing else.
func validFileName(id string) bool {
	if id == "" || id == "." || id == ".." || len(id) > 200 {
		return false
	}
	for _, r := range id {
		if r == '/' || r == '\\' || r == 0 {
			return false
		}
	}
	return true
}

func (d *sqliteDatabases) projectPath(id string) string {
	return filepath.Join(d.dir, "projects", id+".db")
}

// acquire returns the open file of project id, opening it when needed; release gives it
// back, so that idle files can be closed.
func (d *sqliteDatabases) acquire(id string) (f *sqliteFile, release func(), err error) {
	d.mu.Lock()
	var idle []*sqliteFile
	// Closing waits for the file's connections, and checkpoints its WAL: not under d.mu.
	defer func() {
		d.mu.Unlock()
		d.closeFiles(idle)
	}()
	if d.closed {
		return nil, nil, errors.New("store: closed")
	}
	now := time.Now()
	if now.Sub(d.lastSweep) > time.Minute {
		d.lastSweep = now
		for id, f := range d.files {
			if f.refs == 0 && now.Sub(f.lastUsed) > sqliteIdle {
				delete(d.files, id)
				idle = append(idle, f)
			}
		}
	}
	f, ok := d.files[id]
	if !ok {
		if len(d.files) >= sqliteMaxOpenFiles {
			if oldest := d.leastRecent(); oldest != "" {
				idle = append(idle, d.files[oldest])
				delete(d.files, oldest)
			}
		}
		if f, err = openSQLiteFile(d.projectPath(id)); err != nil {
			return nil, nil, err
		}
		d.files[id] = f
	}
	f.refs++
	f.lastUsed = now
	return f, func() {
		d.mu.Lock()
		f.refs--
		f.lastUsed = time.Now()
		d.mu.Unlock()
	}, nil
}

// leastRecent is the id of the open file nobody uses that was used longest ago ("" when
// every file is in use); d.mu is held.
func (d *sqliteDatabases) leastRecent() string {
	oldest := ""
	for id, f := range d.files {
		if f.refs == 0 && (oldest == "" || f.lastUsed.Before(d.files[oldest].lastUsed)) {
			oldest = id
		}
	}
	return oldest
}

func (d *sqliteDatabases) closeFiles(files []*sqliteFile) {
	for _, f := range files {
		if err := f.close(); err != nil {
			d.logger.Warn("close project database", "file", f.path, "err", err)
		}
	}
}

// remove closes project id's file and deletes it with its WAL.
func (d *sqliteDatabases) remove(id string) error {
	d.mu.Lock()
	f, ok := d.files[id]
	delete(d.files, id)
	d.mu.Unlock()
	if ok {
		// Statements still running finish first; new ones open the file again.
		d.closeFiles([]*sqliteFile{f})
	}
	var errs []error
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(d.projectPath(id) + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (d *sqliteDatabases) ping(ctx context.Context) error {
	return d.control.reader.PingContext(ctx)
}

func (d *sqliteDatabases) close(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	var errs []error
	for id, f := range d.files {
		delete(d.files, id)
		errs = append(errs, f.close())
	}
	errs = append(errs, d.control.close())
	return errors.Join(errs...)
}

// createRegistry creates the registry's tables in platform.db, or brings those an older
// version made up to date: projects gains deletedAt, and the history starts with the
// documents stored before it existed (who applied them is not known).
func createRegistry(ctx context.Context, f *sqliteFile) error {
	tx, err := f.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS projects (
			id TEXT NOT NULL PRIMARY KEY,
			version INTEGER NOT NULL,
			updatedAt TEXT NOT NULL,
			document TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS project_versions (
			id TEXT NOT NULL,
			version INTEGER NOT NULL,
			appliedAt TEXT NOT NULL,
			who TEXT NOT NULL,
			changes TEXT NOT NULL,
			document TEXT NOT NULL,
			PRIMARY KEY (id, version)) WITHOUT ROWID`,
		`CREATE TABLE IF NOT EXISTS project_quotas (
			id TEXT NOT NULL PRIMARY KEY,
			quotas TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS project_documents (
			id TEXT NOT NULL PRIMARY KEY,
			manifest TEXT NOT NULL)`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('projects') WHERE name = 'deletedAt'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE projects ADD COLUMN deletedAt TEXT`); err != nil {
			return err
		}
	}
	// webhooks is 1 for a document that declares webhooks, 0 for one that does not, and NULL
	// for one stored before the column was (RunWebhooks reads those and marks them).
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('projects') WHERE name = 'webhooks'`).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE projects ADD COLUMN webhooks INTEGER`); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO project_versions (id, version, appliedAt, who, changes, document)
		SELECT id, version, updatedAt, '', '[]', document FROM projects`); err != nil {
		return err
	}
	return tx.Commit()
}

// sqliteProjects is the registry of platform.db: the table projects holds each project's
// current document, project_versions every version applied.
type sqliteProjects struct{ f *sqliteFile }

const projectColumns = `id, version, updatedAt, document, deletedAt`

func (p sqliteProjects) put(ctx context.Context, id, document string, by Applied, at time.Time) (prev, cur *StoredProject, err error) {
	tx, err := p.f.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("store project %q: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	prev, err = scanProject(tx.QueryRowContext(ctx, `SELECT `+projectColumns+` FROM projects WHERE id = ?`, id))
	switch {
	case errors.Is(err, ErrNotFound):
		prev = nil
	case err != nil:
		return nil, nil, fmt.Errorf("store project %q: %w", id, err)
	case !prev.DeletedAt.IsZero():
		return nil, nil, fmt.Errorf("store project %q: %w", id, ErrDeleted)
	case prev.Document == document:
		return prev, prev, nil
	}
	cur = &StoredProject{ID: id, Version: 1, UpdatedAt: at, Document: document}
	if prev != nil {
		cur.Version = prev.Version + 1
	}
	changes, err := json.Marshal(by.changesOf(prev))
	if err != nil {
		return nil, nil, fmt.Errorf("store project %q: %w", id, err)
	}
	stamp := at.UTC().Format(TimeLayout)
	if _, err := tx.ExecContext(ctx, `INSERT INTO projects (id, version, updatedAt, document, webhooks) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET version = excluded.version, updatedAt = excluded.updatedAt, document = excluded.document, webhooks = excluded.webhooks`,
		id, cur.Version, stamp, document, by.Webhooks); err != nil {
		return nil, nil, fmt.Errorf("store project %q: %w", id, err)
	}
	// A version that a release without history left behind, when it deleted the project
	// for good, is replaced.
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO project_versions (id, version, appliedAt, who, changes, document) VALUES (?, ?, ?, ?, ?, ?)`,
		id, cur.Version, stamp, by.Who, string(changes), document); err != nil {
		return nil, nil, fmt.Errorf("store project %q: history: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, fmt.Errorf("store project %q: %w", id, err)
	}
	return prev, cur, nil
}

func (p sqliteProjects) get(ctx context.Context, id string) (*StoredProject, error) {
	sp, err := scanProject(p.f.reader.QueryRowContext(ctx, `SELECT `+projectColumns+` FROM projects WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("project %q: %w", id, err)
	}
	return sp, nil
}

func (p sqliteProjects) list(ctx context.Context) ([]StoredProject, error) {
	return p.listWhere(ctx, "")
}

func (p sqliteProjects) withWebhooks(ctx context.Context) ([]StoredProject, error) {
	return p.listWhere(ctx, `WHERE deletedAt IS NULL AND (webhooks IS NULL OR webhooks != 0)`)
}

func (p sqliteProjects) markWebhooks(ctx context.Context, id string, version int64, webhooks bool) error {
	if _, err := p.f.writer.ExecContext(ctx, `UPDATE projects SET webhooks = ? WHERE id = ? AND version = ?`, webhooks, id, version); err != nil {
		return fmt.Errorf("note the webhooks of project %q: %w", id, err)
	}
	return nil
}

// listWhere lists the projects that where (a WHERE clause, or "" for all) selects.
func (p sqliteProjects) listWhere(ctx context.Context, where string) ([]StoredProject, error) {
	rows, err := p.f.reader.QueryContext(ctx, `SELECT `+projectColumns+` FROM projects `+where+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	defer rows.Close()
	var out []StoredProject
	for rows.Next() {
		sp, err := scanProject(rows)
		if err != nil {
			return nil, fmt.Errorf("list projects: %w", err)
		}
		out = append(out, *sp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}

func (p sqliteProjects) markDeleted(ctx context.Context, id string, at time.Time) error {
	res, err := p.f.writer.ExecContext(ctx, `UPDATE projects SET deletedAt = ? WHERE id = ? AND deletedAt IS NULL`, at.UTC().Format(TimeLayout), id)
	if err != nil {
		return fmt.Errorf("delete project %q: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if _, err := p.get(ctx, id); err != nil {
			return err
		}
		return fmt.Errorf("project %q: %w", id, ErrDeleted)
	}
	return nil
}

func (p sqliteProjects) restore(ctx context.Context, id string) (*StoredProject, error) {
	sp, err := scanProject(p.f.writer.QueryRowContext(ctx, `UPDATE projects SET deletedAt = NULL WHERE id = ? AND deletedAt IS NOT NULL RETURNING `+projectColumns, id))
	if errors.Is(err, ErrNotFound) {
		if _, err := p.get(ctx, id); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("project %q: %w", id, ErrNotDeleted)
	}
	if err != nil {
		return nil, fmt.Errorf("restore project %q: %w", id, err)
	}
	return sp, nil
}

func (p sqliteProjects) purge(ctx context.Context, id string) error {
	tx, err := p.f.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("purge project %q: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, `DELETE FROM projects WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("purge project %q: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("project %q: %w", id, ErrNotFound)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM project_quotas WHERE id = ?`, id); err != nil {
		return fmt.Errorf("purge the quotas of project %q: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM project_documents WHERE id = ?`, id); err != nil {
		return fmt.Errorf("purge the registered documents of project %q: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM project_versions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("purge project %q: history: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("purge project %q: %w", id, err)
	}
	return nil
}

func (p sqliteProjects) versions(ctx context.Context, id string) ([]StoredVersion, error) {
	if _, err := p.get(ctx, id); err != nil {
		return nil, err
	}
	rows, err := p.f.reader.QueryContext(ctx, `SELECT version, appliedAt, who, changes, '' FROM project_versions WHERE id = ? ORDER BY version DESC`, id)
	if err != nil {
		return nil, fmt.Errorf("versions of project %q: %w", id, err)
	}
	defer rows.Close()
	var out []StoredVersion
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, fmt.Errorf("versions of project %q: %w", id, err)
		}
		out = append(out, *v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("versions of project %q: %w", id, err)
	}
	return out, nil
}

func (p sqliteProjects) version(ctx context.Context, id string, n int64) (*StoredVersion, error) {
	v, err := scanVersion(p.f.reader.QueryRowContext(ctx, `SELECT version, appliedAt, who, changes, document FROM project_versions WHERE id = ? AND version = ?`, id, n))
	if err != nil {
		return nil, fmt.Errorf("project %q version %d: %w", id, n, err)
	}
	return v, nil
}

func scanVersion(row interface{ Scan(...any) error }) (*StoredVersion, error) {
	var v StoredVersion
	var at, changes string
	if err := row.Scan(&v.Version, &at, &v.Who, &changes, &v.Document); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return nil, fmt.Errorf("version %d: appliedAt %q: %w", v.Version, at, err)
	}
	v.AppliedAt = t.UTC()
	if err := json.Unmarshal([]byte(changes), &v.Changes); err != nil {
		return nil, fmt.Errorf("version %d: changes: %w", v.Version, err)
	}
	return &v, nil
}

func scanProject(row interface{ Scan(...any) error }) (*StoredProject, error) {
	var sp StoredProject
	var at string
	var deleted sql.NullString
	if err := row.Scan(&sp.ID, &sp.Version, &at, &sp.Document, &deleted); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return nil, fmt.Errorf("project %q: updatedAt %q: %w", sp.ID, at, err)
	}
	sp.UpdatedAt = t.UTC()
	if deleted.Valid {
		if sp.DeletedAt, err = time.Parse(time.RFC3339Nano, deleted.String); err != nil {
			return nil, fmt.Errorf("project %q: deletedAt %q: %w", sp.ID, deleted.String, err)
		}
		sp.DeletedAt = sp.DeletedAt.UTC()
	}
	return &sp, nil
}

// sqliteError is the SQLite result code of err (0 when err does not come from SQLite).
func sqliteError(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

func (p sqliteProjects) quotas(ctx context.Context, id string) (map[string]int64, error) {
	var raw string
	err := p.f.reader.QueryRowContext(ctx, `SELECT quotas FROM project_quotas WHERE id = ?`, id).Scan(&raw)
	q := map[string]int64{}
	if errors.Is(err, sql.ErrNoRows) {
		return q, nil
	}
	if err == nil {
		err = json.Unmarshal([]byte(raw), &q)
	}
	if err != nil {
		return nil, fmt.Errorf("quotas of project %q: %w", id, err)
	}
	return q, nil
}

func (p sqliteProjects) setQuotas(ctx context.Context, id string, q map[string]int64) error {
	var err error
	if len(q) == 0 {
		_, err = p.f.writer.ExecContext(ctx, `DELETE FROM project_quotas WHERE id = ?`, id)
	} else {
		raw, _ := json.Marshal(q) // a map of numbers always encodes
		_, err = p.f.writer.ExecContext(ctx, `INSERT INTO project_quotas (id, quotas) VALUES (?, ?)
			ON CONFLICT (id) DO UPDATE SET quotas = excluded.quotas`, id, string(raw))
	}
	if err != nil {
		return fmt.Errorf("set the quotas of project %q: %w", id, err)
	}
	return nil
}
