package store

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A project's backups carry its files: each file is copied once to <project>/files/<name>
// in the backup target (a file's bytes never change under its key), and a restore puts back
// those the restored project lacks before its records take their place. The files stay in
// the target when the backups naming them are pruned.

// backupFileName is the name under which the file key of project id is kept in a backup
// target: one level deep, as a folder target lists names.
func backupFileName(id, key string) string {
	return id + "/files/" + strings.Replace(key, "/", "-", 1)
}

// backupFiles copies to the target the files of project id it does not hold yet.
func (s *Stores) backupFiles(ctx context.Context, to BackupTarget, id string) error {
	have, err := to.list(ctx, id+"/files/")
	if err != nil {
		return fmt.Errorf("list the files kept in %s: %w", to, err)
	}
	dir, err := s.tempDir()
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	blobs := s.ProjectBlobs(id)
	return blobs.Walk(ctx, func(key string, _ time.Time) error {
		name := backupFileName(id, key)
		if _, ok := have[name]; ok || !IsFileKey(key) {
			return nil
		}
		tmp := filepath.Join(dir, "file")
		if err := copyBlob(ctx, blobs, key, tmp); err != nil {
			return err
		}
		if err := to.put(ctx, name, tmp); err != nil {
			return fmt.Errorf("store file %s in %s: %w", key, to, err)
		}
		return nil
	})
}

// copyBlob copies the file key of blobs to the local file path.
func copyBlob(ctx context.Context, blobs Blobs, key, path string) error {
	b, err := blobs.Open(ctx, key)
	if err != nil {
		return err
	}
	defer b.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("copy file %s: %w", key, err)
	}
	return nil
}

// restoreFiles puts into project into the files of project id that from keeps and into
// lacks.
func (s *Stores) restoreFiles(ctx context.Context, from BackupTarget, id, into string) error {
	kept, err := from.list(ctx, id+"/files/")
	if err != nil || len(kept) == 0 {
		return err
	}
	blobs := s.ProjectBlobs(into)
	have := map[string]bool{}
	if err := blobs.Walk(ctx, func(key string, _ time.Time) error {
		have[key] = true
		return nil
	}); err != nil {
		return err
	}
	dir, err := s.tempDir()
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for name, size := range kept {
		key := strings.Replace(strings.TrimPrefix(name, id+"/files/"), "-", "/", 1)
		if have[key] || !IsFileKey(key) {
			continue
		}
		tmp := filepath.Join(dir, "file")
		if err := from.get(ctx, name, tmp); err != nil {
			return fmt.Errorf("fetch file %s from %s: %w", key, from, err)
		}
		f, err := os.Open(tmp)
		if err != nil {
			return err
		}
		err = blobs.Put(ctx, key, f, size)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
