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
// in the backup target (a file's bytes never change under its key), shared by every backup
// taken while the project held it, and a restore puts back those the restored project lacks
// before its records take their place. Each backup names the files it needs in a list beside
// it (backupFilesList), written before the files are copied, so that pruning removes the
// files no remaining backup names, and none of a backup being taken: a backup and a prune of
// one project never run at once, on any replica (coord.BackupProjectLock).

// filesListExt ends the name of a backup's list of files, beside the backup.
const filesListExt = ".files"

// backupFilesList is the name of the list of the files backup b needs.
func backupFilesList(b Backup) string {
	return strings.TrimSuffix(b.Name, backupExtensions[b.Format]) + filesListExt
}

// backupFileName is the name under which the file key of project id is kept in a backup
// target: one level deep, as a folder target lists names.
func backupFileName(id, key string) string {
	return id + "/files/" + strings.Replace(key, "/", "-", 1)
}

// backupFiles names in the list beside backup b the files project id holds, and copies to
// the target those it does not hold yet.
func (s *Stores) backupFiles(ctx context.Context, to BackupTarget, id string, b Backup) error {
	dir, err := s.tempDir()
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	blobs := s.ProjectBlobs(id)
	var keys []string
	if err := blobs.Walk(ctx, func(key string, _ time.Time) error {
		if IsFileKey(key) {
			keys = append(keys, key)
		}
		return nil
	}); err != nil {
		return err
	}
	// A first line, so that the list of no file is not empty: some S3 servers refuse those.
	var list strings.Builder
	list.WriteString("# the files of backup " + b.Name + "\n")
	for _, key := range keys {
		list.WriteString(backupFileName(id, key) + "\n")
	}
	tmp := filepath.Join(dir, "list")
	if err := os.WriteFile(tmp, []byte(list.String()), 0o600); err != nil {
		return err
	}
	if err := to.put(ctx, backupFilesList(b), tmp); err != nil {
		return fmt.Errorf("store the list of files in %s: %w", to, err)
	}
	// Listed after the list is stored, which narrows the time in which a prune running
	// meanwhile could remove a file this listing counted in (the scheduled rounds take one
	// project's backups one at a time).
	have, err := to.list(ctx, id+"/files/")
	if err != nil {
		return fmt.Errorf("list the files kept in %s: %w", to, err)
	}
	for _, key := range keys {
		name := backupFileName(id, key)
		if _, ok := have[name]; ok {
			continue
		}
		tmp := filepath.Join(dir, "file")
		if err := copyBlob(ctx, blobs, key, tmp); err != nil {
			return err
		}
		if err := to.put(ctx, name, tmp); err != nil {
			return fmt.Errorf("store file %s in %s: %w", key, to, err)
		}
	}
	return nil
}

// pruneFiles removes from the target the files of project id that no list of files there
// names: the lists of the backups kept, and of those being taken; the lists of backups that
// never finished go once older than orphanListAge. A backup taken before backups listed
// their files names none, so while one is kept every file stays.
func (s *Stores) pruneFiles(ctx context.Context, to BackupTarget, id string) error {
	names, err := to.list(ctx, id+"/")
	if err != nil {
		return fmt.Errorf("list the backups of project %q in %s: %w", id, to, err)
	}
	dir, err := s.tempDir()
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "list")
	named := map[string]bool{}
	for name, size := range names {
		if b, ok := parseBackupName(name, size); ok && b.Project == id {
			if _, ok := names[backupFilesList(b)]; !ok {
				return nil
			}
		}
		if !strings.HasSuffix(name, filesListExt) || strings.Contains(strings.TrimPrefix(name, id+"/"), "/") {
			continue
		}
		if orphanList(names, name) {
			if err := to.remove(ctx, name); err != nil {
				return fmt.Errorf("remove the list of files %s of no backup from %s: %w", name, to, err)
			}
			continue
		}
		err := to.get(ctx, name, tmp)
		var list []byte
		if err == nil {
			list, err = os.ReadFile(tmp)
		}
		if err != nil {
			return fmt.Errorf("read the list of files %s in %s: %w", name, to, err)
		}
		for f := range strings.Lines(string(list)) {
			named[strings.TrimSuffix(f, "\n")] = true
		}
	}
	kept, err := to.list(ctx, id+"/files/")
	if err != nil {
		return fmt.Errorf("list the files kept in %s: %w", to, err)
	}
	for name := range kept {
		if !named[name] {
			if err := to.remove(ctx, name); err != nil {
				return fmt.Errorf("remove file %s from %s: %w", name, to, err)
			}
		}
	}
	return nil
}

// orphanListAge is how old a list of files with no backup beside it gets before pruning
// removes it: the list of a backup that ended (a crash, a lost lock) between its list and its
// backup file. A younger one may be a backup's still being taken, whose files stay.
const orphanListAge = time.Hour

// orphanList reports whether the list of files list, among names, has no backup beside it and
// is older than orphanListAge.
func orphanList(names map[string]int64, list string) bool {
	base := strings.TrimSuffix(list, filesListExt)
	for _, ext := range backupExtensions {
		if _, ok := names[base+ext]; ok {
			return false
		}
	}
	_, stamp, _ := strings.Cut(base, "/")
	at, err := time.Parse(backupStamp, stamp)
	return err == nil && now().Sub(at) > orphanListAge
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
