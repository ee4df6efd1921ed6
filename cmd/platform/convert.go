package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// Files of the data folder: the previous embedded store kept its FerretDB (SQLite) files in
// ferretdb/; the embedded store now keeps its control database in platform.db and one file
// per project under projects/.
const (
	ferretDBFolder    = "ferretdb"
	sqliteControlFile = "platform.db"
	convertingFolder  = "converting-to-sqlite"
	ferretDBBackup    = "ferretdb.backup"
)

// convertFerretDB converts a data folder written by the previous, FerretDB-based embedded
// store, on the first start that finds its folder and no SQLite control database: it starts
// FerretDB on the old files, copies every project document and every record of every table
// (uid, owner and times kept) into a new embedded store in a temporary folder, moves that
// store into place with the control database last, and renames the old folder to a backup.
// Interrupted at any point, the next start begins again from the untouched old folder.
func convertFerretDB(ctx context.Context, dataDir string, logger *slog.Logger) error {
	old := filepath.Join(dataDir, ferretDBFolder)
	if fi, err := os.Stat(old); errors.Is(err, os.ErrNotExist) || err == nil && !fi.IsDir() {
		return nil
	} else if err != nil {
		return err
	}
	switch _, err := os.Stat(filepath.Join(dataDir, sqliteControlFile)); {
	case err == nil:
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	logger.Info("converting the data folder of the previous embedded store (FerretDB) to SQLite; the old files are kept", "from", old)
	started := time.Now()
	tmp := filepath.Join(dataDir, convertingFolder)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("remove an unfinished conversion: %w", err)
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	n, err := copyFerretDB(ctx, old, tmp, logger)
	if err != nil {
		return err
	}
	if err := moveInto(tmp, dataDir); err != nil {
		return err
	}
	backup := filepath.Join(dataDir, ferretDBBackup)
	if _, err := os.Stat(backup); err == nil {
		backup += "-" + time.Now().UTC().Format("20060102T150405Z")
	}
	if err := os.Rename(old, backup); err != nil {
		return fmt.Errorf("keep the old files as %s: %w", backup, err)
	}
	logger.Info("converted the data folder to SQLite", "projects", n, "took", time.Since(started).Round(time.Millisecond), "backup", backup)
	return nil
}

// copyFerretDB copies every project of the FerretDB files in old into a new embedded store in
// dir, and answers how many projects it copied.
func copyFerretDB(ctx context.Context, old, dir string, logger *slog.Logger) (n int, err error) {
	uri, stop, err := store.StartFerretDB(ctx, old, logger)
	if err != nil {
		return 0, fmt.Errorf("start FerretDB on %s: %w", old, err)
	}
	defer func() { err = errors.Join(err, stop(context.WithoutCancel(ctx))) }()
	src, err := store.Open(ctx, store.Config{DataDir: dir, MongoURI: uri, Logger: logger})
	if err != nil {
		return 0, fmt.Errorf("open FerretDB on %s: %w", old, err)
	}
	defer func() { err = errors.Join(err, src.Close(context.WithoutCancel(ctx))) }()
	// Closed before the files move, so that they are complete.
	dst, err := store.Open(ctx, store.Config{DataDir: dir, Logger: logger})
	if err != nil {
		return 0, fmt.Errorf("create the SQLite store: %w", err)
	}
	closeDst := func() error { return dst.Close(context.WithoutCancel(ctx)) }
	defer func() {
		if closeDst != nil {
			err = errors.Join(err, closeDst())
		}
	}()

	projects, err := src.Projects().List(ctx)
	if err != nil {
		return 0, err
	}
	for _, sp := range projects {
		from, err := tenant.OpenSource(ctx, src, sp.ID)
		if err != nil {
			return 0, err
		}
		progress := newProgress(func(s string) { logger.Info("converting: " + s) }, "copied")
		to, err := tenant.OpenTarget(ctx, dst, from.Header, tenant.ImportOptions{Who: "platform import", Progress: progress.add})
		if err != nil {
			return 0, err
		}
		counts, err := from.Each(ctx, to.Add)
		if err != nil {
			return 0, fmt.Errorf("copy project %q: %w", sp.ID, err)
		}
		if err := to.Finish(ctx, counts); err != nil {
			return 0, err
		}
		progress.done("project " + sp.ID)
	}
	err, closeDst = closeDst(), nil
	return len(projects), err
}

// moveInto moves everything in dir into parent and removes dir. The control database moves
// last: until it is in place the conversion has not happened, and anything moved before it
// is replaced by the next attempt.
func moveInto(dir, parent string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == sqliteControlFile {
			continue
		}
		if err := replace(filepath.Join(dir, e.Name()), filepath.Join(parent, e.Name())); err != nil {
			return err
		}
	}
	if err := replace(filepath.Join(dir, sqliteControlFile), filepath.Join(parent, sqliteControlFile)); err != nil {
		return err
	}
	return os.Remove(dir)
}

func replace(from, to string) error {
	if err := os.RemoveAll(to); err != nil {
		return fmt.Errorf("replace %s: %w", to, err)
	}
	if err := os.Rename(from, to); err != nil {
		return fmt.Errorf("move %s into place: %w", from, err)
	}
	return nil
}
