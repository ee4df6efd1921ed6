package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
)

// sqliteBackupAPI is the driver connection's side of SQLite's online backup API.
type sqliteBackupAPI interface {
	NewBackup(dstURI string) (*sqlite.Backup, error)
	NewRestore(srcURI string) (*sqlite.Backup, error)
}

// sqliteBackupTable is the table a backup's copy of a project file gains: the document of the
// project the copy was taken of. Project tables are named t_<name>, so it meets none.
const sqliteBackupTable = "platform_backup"

// snapshot copies the project's file with SQLite's online backup API, on a reader
// connection that holds one read transaction from the first step to the last: every step
// reads the same snapshot, so the copy is consistent, and writers (WAL) go on meanwhile.
// Without it, each step would read the file anew and the copy would start over whenever a
// writer changed it. Steps of a few megabytes, with a pause between, leave the writers their
// share of the disk and the processors.
func (p *sqliteProject) snapshot(ctx context.Context, file string, meta backupMeta) (string, error) {
	f, release, err := p.file()
	if err != nil {
		return "", err
	}
	defer release()
	if err := backupSQLite(ctx, f.reader, file); err != nil {
		return "", fmt.Errorf("copy %s: %w", f.path, err)
	}
	if err := writeSQLiteBackupMeta(ctx, file, meta); err != nil {
		return "", fmt.Errorf("write the document into the copy: %w", err)
	}
	return BackupSQLite, nil
}

// A backup copies sqliteBackupPages pages a step (4 MB of 4 KB pages), and pauses after each
// step for as long as the step took: a backup keeps at most half of one processor busy.
const sqliteBackupPages = 1024

func backupSQLite(ctx context.Context, db *sql.DB, file string) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN`); err != nil {
		return err
	}
	defer func() {
		_, rerr := conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
		err = errors.Join(err, rerr)
	}()
	// The read transaction begins with the first read.
	var tables int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
		return err
	}
	return conn.Raw(func(dc any) error {
		api, ok := dc.(sqliteBackupAPI)
		if !ok {
			return fmt.Errorf("the SQLite driver's connection %T has no backup API", dc)
		}
		b, err := api.NewBackup(file)
		if err != nil {
			return err
		}
		for more := true; more && err == nil; {
			start := time.Now()
			if more, err = b.Step(sqliteBackupPages); more && err == nil {
				select {
				case <-ctx.Done():
					err = ctx.Err()
				case <-time.After(time.Since(start)):
				}
			}
		}
		return errors.Join(err, b.Finish())
	})
}

// restore copies the backup over the project's file with the backup API, in one write
// transaction on the writer connection: readers see the old records until it commits and the
// restored ones after, and a restore that fails changes nothing.
func (p *sqliteProject) restore(ctx context.Context, bf *BackupFile, _ []Table) error {
	if bf.Format != BackupSQLite {
		return fmt.Errorf("a %s backup cannot be restored into the embedded store: import it with `platform import`", bf.Format)
	}
	f, release, err := p.file()
	if err != nil {
		return err
	}
	defer release()
	err = restoreSQLite(ctx, f.writer, bf.file)
	// Whatever happened, the columns this process knows are read again.
	f.mu.Lock()
	clear(f.cols)
	clear(f.writeCols)
	f.mu.Unlock()
	if err != nil {
		return err
	}
	// The restore wrote the whole file into the WAL: copied back now, as part of the restore,
	// rather than by whichever write comes next.
	if _, err := f.writer.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// restoreSQLite copies the backup in file over db's file in one step, on its one writer
// connection.
func restoreSQLite(ctx context.Context, db *sql.DB, file string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		api, ok := dc.(sqliteBackupAPI)
		if !ok {
			return fmt.Errorf("the SQLite driver's connection %T has no backup API", dc)
		}
		b, err := api.NewRestore(file)
		if err != nil {
			return err
		}
		_, err = b.Step(-1)
		return errors.Join(err, b.Finish())
	})
}

// openSQLiteCopy opens a backup's file alone, as a single file without WAL.
func openSQLiteCopy(ctx context.Context, file string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `PRAGMA journal_mode=DELETE`); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

func writeSQLiteBackupMeta(ctx context.Context, file string, meta backupMeta) (err error) {
	db, err := openSQLiteCopy(ctx, file)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	if _, err := db.ExecContext(ctx, `CREATE TABLE `+sqliteBackupTable+` (project TEXT NOT NULL, version INTEGER NOT NULL, document TEXT NOT NULL, at TEXT NOT NULL)`); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `INSERT INTO `+sqliteBackupTable+` VALUES (?, ?, ?, ?)`,
		meta.Project, meta.Version, meta.Document, meta.At.UTC().Format(TimeLayout))
	return err
}

// readSQLiteBackupMeta checks a backup's file, reads its document and removes it, leaving
// the project's tables alone in the file to restore.
func readSQLiteBackupMeta(ctx context.Context, file string) (meta backupMeta, err error) {
	db, err := openSQLiteCopy(ctx, file)
	if err != nil {
		return meta, err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	var check string
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check); err != nil {
		return meta, err
	}
	if check != "ok" {
		return meta, fmt.Errorf("the file is damaged: %s", check)
	}
	var at string
	err = db.QueryRowContext(ctx, `SELECT project, version, document, at FROM `+sqliteBackupTable).Scan(&meta.Project, &meta.Version, &meta.Document, &at)
	if err != nil {
		return meta, fmt.Errorf("not a backup of the platform: %w", err)
	}
	if meta.At, err = time.Parse(time.RFC3339Nano, at); err != nil {
		return meta, err
	}
	_, err = db.ExecContext(ctx, `DROP TABLE `+sqliteBackupTable)
	return meta, err
}
