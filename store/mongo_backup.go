package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A restore on MongoDB writes the backup's records into staging collections of the project's
// database, builds their indexes, then swaps them in by renaming. Table names cannot hold a
// hyphen, so these prefixes meet no table (FerretDB refuses dots in collection names).
const (
	mongoRestorePrefix  = "restore-"
	mongoReplacedPrefix = "replaced-"
	// mongoCleanupTimeout bounds the undoing of a failed restore, which runs even when the
	// restore's own context ended.
	mongoCleanupTimeout = 30 * time.Second
)

func (b *mongoBackend) snapshot(ctx context.Context, file string, meta backupMeta) (string, error) {
	return BackupExport, writeExport(ctx, b, file, meta)
}

// isStaging reports whether a collection is a restore's, not a table.
func isStaging(name string) bool {
	return strings.HasPrefix(name, mongoRestorePrefix) || strings.HasPrefix(name, mongoReplacedPrefix)
}

// restore reads the whole backup once before it changes anything, so a damaged or cut file
// leaves the project as it was; then it loads and indexes staging collections, and renames
// them in place of the project's tables (a rename that fails is undone).
func (b *mongoBackend) restore(ctx context.Context, bf *BackupFile, tables []Table) error {
	if bf.Format != BackupExport {
		return fmt.Errorf("a %s backup cannot be restored into MongoDB", bf.Format)
	}
	defs := map[string]*Table{}
	for _, t := range tables {
		t.index()
		defs[t.Name] = &t
	}
	def := func(name string) *Table {
		if t, ok := defs[name]; ok {
			return t
		}
		t := &Table{Name: name}
		t.index()
		defs[name] = t
		return t
	}
	var names []string
	err := eachExportLine(bf.file, func(table string, rec Record) error {
		if !slices.Contains(names, table) {
			names = append(names, table)
		}
		_, err := def(table).decodeDoc(rec)
		return err
	})
	if err != nil {
		return fmt.Errorf("the backup is not whole: %w", err)
	}
	if err := b.dropPrefixed(ctx, mongoRestorePrefix); err != nil {
		return err
	}
	staged := func(name string) *Table {
		t := *def(name)
		t.Name = mongoRestorePrefix + name
		return &t
	}
	var batch []Doc
	var batchTable string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := b.insert(ctx, staged(batchTable), batch)
		batch = batch[:0]
		return err
	}
	err = eachExportLine(bf.file, func(table string, rec Record) error {
		if table != batchTable || len(batch) >= 1000 {
			if err := flush(); err != nil {
				return err
			}
			batchTable = table
		}
		d, err := def(table).decodeDoc(rec)
		batch = append(batch, d)
		return err
	})
	if err == nil {
		err = flush()
	}
	for _, name := range names {
		if err != nil {
			break
		}
		if _, declared := defs[name]; declared {
			err = b.ensure(ctx, staged(name))
		}
	}
	if err == nil {
		err = b.swapIn(ctx, names)
	}
	if err != nil {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), mongoCleanupTimeout)
		defer cancel()
		return errors.Join(err, b.dropPrefixed(cleanup, mongoRestorePrefix))
	}
	return b.dropPrefixed(ctx, mongoReplacedPrefix)
}

// swapIn moves the project's tables aside and the staged ones (names) in their place.
func (b *mongoBackend) swapIn(ctx context.Context, names []string) (err error) {
	live, err := b.tables(ctx)
	if err != nil {
		return err
	}
	type move struct{ from, to string }
	var done []move
	rename := func(from, to string) error {
		err := b.db.Client().Database("admin").RunCommand(ctx, bson.D{
			{Key: "renameCollection", Value: b.db.Name() + "." + from},
			{Key: "to", Value: b.db.Name() + "." + to},
		}).Err()
		if err != nil {
			return mongoFail(ctx, fmt.Sprintf("rename %s to %s", from, to), err)
		}
		done = append(done, move{from, to})
		return nil
	}
	defer func() {
		if err == nil {
			return
		}
		undo, cancel := context.WithTimeout(context.WithoutCancel(ctx), mongoCleanupTimeout)
		defer cancel()
		for _, m := range slices.Backward(done) {
			if uerr := b.db.Client().Database("admin").RunCommand(undo, bson.D{
				{Key: "renameCollection", Value: b.db.Name() + "." + m.to},
				{Key: "to", Value: b.db.Name() + "." + m.from},
			}).Err(); uerr != nil {
				err = errors.Join(err, fmt.Errorf("rename %s back to %s: %w", m.to, m.from, uerr))
			}
		}
	}()
	for _, t := range live {
		// Only a restore whose undoing failed leaves these: they may be the project's only
		// copy of its records.
		if strings.HasPrefix(t, mongoReplacedPrefix) {
			return fmt.Errorf("an earlier restore left the collection %s in %s: rename it back to %s, or drop it, first", t, b.db.Name(), strings.TrimPrefix(t, mongoReplacedPrefix))
		}
	}
	for _, t := range live {
		if isStaging(t) {
			continue
		}
		if err := rename(t, mongoReplacedPrefix+t); err != nil {
			return err
		}
	}
	for _, t := range names {
		if err := rename(mongoRestorePrefix+t, t); err != nil {
			return err
		}
	}
	return nil
}

// dropPrefixed drops the collections whose names start with prefix.
func (b *mongoBackend) dropPrefixed(ctx context.Context, prefix string) error {
	all, err := b.tables(ctx)
	if err != nil {
		return err
	}
	for _, t := range all {
		if strings.HasPrefix(t, prefix) {
			if err := b.db.Collection(t).Drop(ctx); err != nil {
				return mongoFail(ctx, "drop "+t, err)
			}
		}
	}
	return nil
}
