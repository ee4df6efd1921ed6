package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/platform-dev/platform/coord"
)

// Backups are taken online, while the project serves and takes writes, and each is one
// consistent picture of the project's records with the document that defined them.
//
// On the embedded backend a backup is a copy of the project's SQLite file made by SQLite's
// online backup API in one step: the copy reads one snapshot of the file (WAL lets writers go
// on meanwhile), so it holds exactly the writes committed before it began. On MongoDB a
// backup is a `platform export` (JSON Lines), read table by table: it holds every write
// acknowledged before it began, and may hold some made while it ran.
//
// A backup is kept in a BackupTarget (a folder or an S3 bucket) under
// <project>/<time><extension>, so that listing a project's backups is listing a prefix and
// their names sort by time.

// ExportFormat names the JSON Lines format of `platform export` and of MongoDB backups.
const ExportFormat = "platform-export/1"

// ExportHeader is the first line of an export.
type ExportHeader struct {
	Format   string          `json:"format"`
	Project  string          `json:"project"`
	Version  int64           `json:"version"`
	Document json.RawMessage `json:"document"`
	// Tables lists every table the export holds records of, declared or not.
	Tables []string `json:"tables"`
}

// ExportLine is a record line (Table and Record set), a piece of a file (File set) or the
// end line (End set).
type ExportLine struct {
	Table  string          `json:"table,omitempty"`
	Record json.RawMessage `json:"record,omitempty"`
	File   *ExportFile     `json:"file,omitempty"`
	End    *ExportEnd      `json:"end,omitempty"`
}

// ExportFile is a piece of the bytes of the file kept under Key (a File field's value names
// it); a file's pieces follow one another in order, the last one with Last set.
type ExportFile struct {
	Key  string `json:"key"`
	Data []byte `json:"data"`
	Last bool   `json:"last,omitempty"`
}

// ExportFilePiece bounds the bytes of one ExportFile line.
const ExportFilePiece = 1 << 20

// ExportEnd is the last line: the records exported per table, and the files, so that a
// reader can tell a complete export from a cut one.
type ExportEnd struct {
	Records map[string]int64 `json:"records"`
	Files   int64            `json:"files,omitempty"`
}

// The formats of backups, and the extension of their names.
const (
	BackupSQLite = "sqlite"
	BackupExport = "export"
)

var backupExtensions = map[string]string{BackupSQLite: ".sqlite", BackupExport: ".jsonl"}

// backupStamp is the time part of a backup's name: it sorts as the times do.
const backupStamp = "20060102T150405.000Z"

// Backup is one backup of a project.
type Backup struct {
	Project string `json:"project"`
	// At is when the backup began: it holds every write acknowledged before.
	At     time.Time `json:"at"`
	Size   int64     `json:"size"`
	Format string    `json:"format"`
	// Name is where the target keeps it.
	Name string `json:"name"`
}

func backupName(project string, at time.Time, format string) string {
	return project + "/" + at.UTC().Format(backupStamp) + backupExtensions[format]
}

// parseBackupName reads a name backupName wrote; ok is false for anything else.
func parseBackupName(name string, size int64) (b Backup, ok bool) {
	project, file, found := strings.Cut(name, "/")
	if !found {
		return b, false
	}
	for format, ext := range backupExtensions {
		stamp, found := strings.CutSuffix(file, ext)
		if !found {
			continue
		}
		at, err := time.Parse(backupStamp, stamp)
		if err != nil {
			return b, false
		}
		return Backup{Project: project, At: at, Size: size, Format: format, Name: name}, true
	}
	return b, false
}

// BackupTarget is where backups are kept: a folder (BackupFolder) or an S3-compatible bucket
// (BackupS3).
type BackupTarget interface {
	// String names the target for people: a folder's path, or s3://bucket/prefix.
	String() string
	// put stores the local file under name, replacing nothing until it is complete.
	put(ctx context.Context, name, file string) error
	// get copies what name holds into the local file.
	get(ctx context.Context, name, file string) error
	// list answers the names under prefix with their sizes.
	list(ctx context.Context, prefix string) (map[string]int64, error)
	remove(ctx context.Context, name string) error
}

// backupProject is what a backend does for backups.
type backupProject interface {
	// snapshot writes a backup of the project into the new file named file, in the format
	// it answers.
	snapshot(ctx context.Context, file string, meta backupMeta) (format string, err error)
	// restore replaces the project's tables with those of the backup in file, in one step
	// where the database allows it; tables defines the tables as the backup's document does.
	restore(ctx context.Context, bf *BackupFile, tables []Table) error
}

// backupMeta is what a backup says of itself besides the records: the project's document
// when it was taken.
type backupMeta struct {
	Project  string
	Version  int64
	Document string
	At       time.Time
}

// TakeBackup backs up project id (whose records live on mongoURI's cluster when set) to to,
// while it goes on serving.
func (s *Stores) TakeBackup(ctx context.Context, to BackupTarget, id, mongoURI string) (Backup, error) {
	fail := func(err error) (Backup, error) { return Backup{}, fmt.Errorf("back up project %q: %w", id, err) }
	ctx, unlock, err := s.lockBackups(ctx, id, true)
	if err != nil {
		return fail(err)
	}
	defer unlock()
	sp, err := s.Projects().Get(ctx, id)
	if err != nil {
		return fail(err)
	}
	bp, err := s.backupProject(ctx, id, mongoURI)
	if err != nil {
		return fail(err)
	}
	dir, err := s.tempDir()
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "backup")
	at := now()
	format, err := bp.snapshot(ctx, file, backupMeta{Project: id, Version: sp.Version, Document: sp.Document, At: at})
	if err != nil {
		return fail(err)
	}
	st, err := os.Stat(file)
	if err != nil {
		return fail(err)
	}
	b := Backup{Project: id, At: at, Size: st.Size(), Format: format, Name: backupName(id, at, format)}
	// The files first: a backup in the target names none it lacks.
	if err := s.backupFiles(ctx, to, id, b); err != nil {
		return fail(err)
	}
	if err := to.put(ctx, b.Name, file); err != nil {
		return fail(fmt.Errorf("store it in %s: %w", to, err))
	}
	return b, nil
}

// ListBackups answers project id's backups in to, newest first.
func (s *Stores) ListBackups(ctx context.Context, to BackupTarget, id string) ([]Backup, error) {
	names, err := to.list(ctx, id+"/")
	if err != nil {
		return nil, fmt.Errorf("list the backups of project %q in %s: %w", id, to, err)
	}
	out := make([]Backup, 0, len(names))
	for name, size := range names {
		if b, ok := parseBackupName(name, size); ok && b.Project == id {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b Backup) int { return b.At.Compare(a.At) })
	return out, nil
}

// PruneBackups removes project id's backups in to but the newest keep, and the files no
// remaining backup names, and answers the backups it removed. While another replica backs
// the project up or prunes its backups, it removes nothing: that one's prune does it.
func (s *Stores) PruneBackups(ctx context.Context, to BackupTarget, id string, keep int) ([]Backup, error) {
	ctx, unlock, err := s.lockBackups(ctx, id, false)
	if err != nil || unlock == nil {
		return nil, err
	}
	defer unlock()
	all, err := s.ListBackups(ctx, to, id)
	if err != nil || len(all) <= keep {
		return nil, err
	}
	old := all[max(keep, 0):]
	for _, b := range old {
		if err := to.remove(ctx, b.Name); err != nil {
			return nil, fmt.Errorf("remove backup %s from %s: %w", b.Name, to, err)
		}
		// The backup goes before its list, so no backup is ever left without one.
		if err := to.remove(ctx, backupFilesList(b)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remove the list of files of %s from %s: %w", b.Name, to, err)
		}
	}
	if err := s.pruneFiles(ctx, to, id); err != nil {
		return nil, err
	}
	return old, nil
}

// backupLockPoll is how often a backup waiting for its project's lock asks again.
const backupLockPoll = 250 * time.Millisecond

// lockBackups takes project id's backup lock (coord.BackupProjectLock), waiting while
// another replica holds it when wait is set. held lives while the lock does, and unlock
// frees it; both are nil when wait is not set and the lock is taken.
func (s *Stores) lockBackups(ctx context.Context, id string, wait bool) (held context.Context, unlock func(), err error) {
	l := coord.NewLock(s.Redis, coord.BackupProjectLock(id), coord.BackupProjectLockTTL)
	for {
		held, unlock, ok, err := l.TryLock(ctx)
		if err != nil || ok || !wait {
			return held, unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("wait for the backup another replica takes: %w", context.Cause(ctx))
		case <-time.After(backupLockPoll):
		}
	}
}

// BackupFile is a backup fetched from its target into a local file, ready to restore.
type BackupFile struct {
	Backup
	// Version and Document are the project's document when the backup was taken.
	Version  int64
	Document string

	stores *Stores
	from   BackupTarget
	dir    string
	file   string
}

// OpenBackup fetches b from its target and reads the document it holds. Close removes the
// local copy.
func (s *Stores) OpenBackup(ctx context.Context, from BackupTarget, b Backup) (_ *BackupFile, err error) {
	dir, err := s.tempDir()
	if err != nil {
		return nil, err
	}
	bf := &BackupFile{Backup: b, stores: s, from: from, dir: dir, file: filepath.Join(dir, "backup")}
	defer func() {
		if err != nil {
			_ = bf.Close()
		}
	}()
	if err := from.get(ctx, b.Name, bf.file); err != nil {
		return nil, fmt.Errorf("fetch backup %s from %s: %w", b.Name, from, err)
	}
	var meta backupMeta
	switch b.Format {
	case BackupSQLite:
		meta, err = readSQLiteBackupMeta(ctx, bf.file)
	case BackupExport:
		meta, err = readExportMeta(bf.file)
	default:
		err = fmt.Errorf("unknown format %q", b.Format)
	}
	if err != nil {
		return nil, fmt.Errorf("read backup %s: %w", b.Name, err)
	}
	if meta.Project != b.Project {
		return nil, fmt.Errorf("read backup %s: it holds project %q", b.Name, meta.Project)
	}
	bf.Version, bf.Document = meta.Version, meta.Document
	return bf, nil
}

// Restore replaces the records of project id (on mongoURI's cluster when set) with the
// backup's: every table the project holds becomes the backup's, and tables the backup does
// not hold are dropped. tables are the tables the backup's document defines. A restore that
// fails leaves the project's records as they were. The project's document is the caller's
// to store.
func (bf *BackupFile) Restore(ctx context.Context, id, mongoURI string, tables []Table) error {
	bp, err := bf.stores.backupProject(ctx, id, mongoURI)
	if err != nil {
		return fmt.Errorf("restore project %q: %w", id, err)
	}
	// The files first: the restored records name none the project lacks.
	if err := bf.stores.restoreFiles(ctx, bf.from, bf.Project, id); err != nil {
		return fmt.Errorf("restore project %q: its files: %w", id, err)
	}
	if err := bp.restore(ctx, bf, tables); err != nil {
		return fmt.Errorf("restore project %q from backup %s: %w", id, bf.Name, err)
	}
	return nil
}

// Close removes the local copy.
func (bf *BackupFile) Close() error { return os.RemoveAll(bf.dir) }

func (s *Stores) backupProject(ctx context.Context, id, mongoURI string) (backupProject, error) {
	b, err := s.db.project(ctx, id, mongoURI)
	if err != nil {
		return nil, err
	}
	bp, ok := b.(backupProject)
	if !ok {
		return nil, fmt.Errorf("the %s backend cannot back up", s.Backend)
	}
	return bp, nil
}

// tempDir makes a folder for a backup's local file, in the data folder: backups are as large
// as the projects, which the system's temporary folder may not hold.
func (s *Stores) tempDir() (string, error) {
	parent := filepath.Join(s.dataDir, "backups", ".tmp")
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", fmt.Errorf("create a temporary folder: %w", err)
	}
	dir, err := os.MkdirTemp(parent, "backup-")
	if err != nil {
		return "", fmt.Errorf("create a temporary folder: %w", err)
	}
	return dir, nil
}

// writeExport writes b's tables as an export into file.
func writeExport(ctx context.Context, b backend, file string, meta backupMeta) (err error) {
	names, err := b.tables(ctx)
	if err != nil {
		return err
	}
	names = slices.DeleteFunc(names, isStaging)
	tables := make([]Table, len(names))
	for i, n := range names {
		tables[i] = Table{Name: n}
	}
	recs := newRecords(b, tables)
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	h := ExportHeader{Format: ExportFormat, Project: meta.Project, Version: meta.Version, Document: json.RawMessage(meta.Document), Tables: names}
	if err := enc.Encode(h); err != nil {
		return err
	}
	counts := make(map[string]int64, len(names))
	for _, n := range names {
		counts[n] = 0
		err := recs.Each(ctx, n, Query{}, func(rec Record) (bool, error) {
			counts[n]++
			return true, enc.Encode(ExportLine{Table: n, Record: json.RawMessage(rec)})
		})
		if err != nil {
			return fmt.Errorf("read %s: %w", n, err)
		}
	}
	if err := enc.Encode(ExportLine{End: &ExportEnd{Records: counts}}); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Sync()
}

// readExportMeta reads an export's header.
func readExportMeta(file string) (backupMeta, error) {
	f, err := os.Open(file)
	if err != nil {
		return backupMeta{}, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return backupMeta{}, err
	}
	var h ExportHeader
	if err := json.Unmarshal(line, &h); err != nil || h.Format != ExportFormat {
		return backupMeta{}, fmt.Errorf("the first line is not a %s header", ExportFormat)
	}
	return backupMeta{Project: h.Project, Version: h.Version, Document: string(h.Document)}, nil
}

// eachExportLine reads a whole export, calling fn with each record line; it fails on a line
// that does not parse, and on an export whose end line is missing or counts other records
// than it holds.
func eachExportLine(file string, fn func(table string, rec Record) error) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 0, 64<<10), 64<<20)
	lines.Scan() // the header, read by readExportMeta
	var end *ExportEnd
	counts := map[string]int64{}
	for n := 2; lines.Scan(); n++ {
		if end != nil {
			return fmt.Errorf("line %d: after the end line", n)
		}
		var l ExportLine
		if err := json.Unmarshal(lines.Bytes(), &l); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if l.End != nil {
			end = l.End
			continue
		}
		if l.File != nil {
			// A backup is of the records; the files stay where they are kept.
			continue
		}
		if l.Table == "" || len(l.Record) == 0 {
			return fmt.Errorf("line %d: a record line needs a table and a record", n)
		}
		counts[l.Table]++
		if err := fn(l.Table, Record(l.Record)); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := lines.Err(); err != nil {
		return err
	}
	if end == nil {
		return errors.New("the export ends before its end line")
	}
	for t, n := range end.Records {
		if counts[t] != n {
			return fmt.Errorf("%s: the end line counts %d records but the export holds %d", t, n, counts[t])
		}
	}
	return nil
}

// BackupFolder keeps backups in a folder: <dir>/<project>/<time>.<format>.
func BackupFolder(dir string) BackupTarget { return folderTarget(dir) }

type folderTarget string

func (d folderTarget) String() string { return string(d) }

func (d folderTarget) path(name string) (string, error) {
	clean := path.Clean(name)
	if clean != name || strings.HasPrefix(name, "/") || strings.HasPrefix(name, "..") {
		return "", fmt.Errorf("backup name %q is not a plain name", name)
	}
	return filepath.Join(string(d), filepath.FromSlash(name)), nil
}

func (d folderTarget) put(_ context.Context, name, file string) error {
	dst, err := d.path(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	// Renamed when complete, so a backup cut short is never listed.
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp")
	if err := os.Rename(file, tmp); err != nil {
		if err := copyFile(file, tmp); err != nil {
			return err
		}
	}
	// A backup holds every record: readable by the service's user alone.
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

func (d folderTarget) get(_ context.Context, name, file string) error {
	src, err := d.path(name)
	if err != nil {
		return err
	}
	return copyFile(src, file)
}

func (d folderTarget) list(_ context.Context, prefix string) (map[string]int64, error) {
	sub, err := d.path(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(sub)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out[prefix+e.Name()] = info.Size()
	}
	return out, nil
}

func (d folderTarget) remove(_ context.Context, name string) error {
	p, err := d.path(name)
	if err != nil {
		return err
	}
	return os.Remove(p)
}

func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	return out.Sync()
}
