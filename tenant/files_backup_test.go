package tenant_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/platform-dev/platform/coord"
	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// TestBackupPruningRemovesTheirFiles: a file a backup target keeps goes when the last backup
// naming it is pruned, in a folder as in an S3 bucket, and a kept backup still restores its
// files.
func TestBackupPruningRemovesTheirFiles(t *testing.T) {
	for _, where := range []string{"folder", "s3"} {
		t.Run(where, func(t *testing.T) {
			target, files := backupTarget(t, where)
			stores := openStores(t)
			s := newServiceOn(t, stores, tenant.Options{Backups: tenant.BackupOptions{Target: target, Keep: 1}})
			putFilesProject(t, s)
			m := mediaPosts{t, s, s.token(t, "media", "alice")}
			create, remove, alice := m.create, m.remove, m.token
			backup := func(want int) { t.Helper(); m.backup(files, want) }
			a, _ := create()
			backup(1)
			b, bURL := create()
			remove(a)
			backup(1) // the first backup, pruned, alone named a's photo
			remove(b)
			if _, err := s.reg.Restore(t.Context(), "media", time.Time{}, ""); err != nil {
				t.Fatal(err)
			}
			if res, _ := s.fetch(t, http.MethodGet, bURL, alice, nil); res.StatusCode != http.StatusOK {
				t.Fatalf("b's photo after the restore: %d", res.StatusCode)
			}
			remove(b)
			backup(0)
		})
	}
}

// mediaPosts makes and removes posts with a photo in project media of s, as token, and
// takes its backups.
type mediaPosts struct {
	t     *testing.T
	s     service
	token string
}

// create makes a post with a photo, and answers its id and the photo's url.
func (m mediaPosts) create() (id, url string) {
	t := m.t
	t.Helper()
	a := m.s.post(t, "media", m.token, `mutation { createPost(data: {title: "x"}) { id } }`, nil)
	var post struct{ ID string }
	if len(a.Errors) > 0 || json.Unmarshal(a.Data["createPost"], &post) != nil {
		t.Fatalf("create: %+v", a.Errors)
	}
	res, body := m.s.fetch(t, http.MethodPut, "http://media.platform.test/files/posts/"+post.ID+"/photo?name=p.png", m.token, pngOf(t, 4, 4))
	var f fileOut
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &f) != nil {
		t.Fatalf("PUT photo: %d %s", res.StatusCode, body)
	}
	return post.ID, f.URL
}

// remove deletes the post id, and its photo with it.
func (m mediaPosts) remove(id string) {
	m.t.Helper()
	if d := m.s.post(m.t, "media", m.token, `mutation($id: ID) { deletePost(uid: $id) { id } }`, map[string]any{"id": id}); len(d.Errors) > 0 {
		m.t.Fatalf("delete: %+v", d.Errors)
	}
}

// backup takes a backup of media, and checks that the target then keeps want files.
func (m mediaPosts) backup(files func() []string, want int) {
	m.t.Helper()
	if _, err := m.s.reg.TakeBackup(m.t.Context(), "media"); err != nil {
		m.t.Fatal(err)
	}
	if got := files(); len(got) != want {
		m.t.Fatalf("the target keeps files %v, want %d", got, want)
	}
}

// TestBackupListsOfUnfinishedBackups: a backup that ended after its list of files but
// before its backup file (a crash) leaves a list no backup stands beside; pruning removes it
// once it is an hour old, and the files only it named with it, but spares a younger one,
// which may be a backup's still being taken.
func TestBackupListsOfUnfinishedBackups(t *testing.T) {
	target, files := backupTarget(t, "folder")
	s := newServiceOn(t, openStores(t), tenant.Options{Backups: tenant.BackupOptions{Target: target, Keep: 1}})
	putFilesProject(t, s)
	m := mediaPosts{t, s, s.token(t, "media", "alice")}
	dir := filepath.Join(target.String(), "media")
	// unfinished leaves beside the backups the list of one begun ago that names what the
	// newest backup's list names, and answers its path.
	unfinished := func(ago time.Duration) string {
		lists, err := filepath.Glob(filepath.Join(dir, "*.files"))
		if err != nil || len(lists) != 1 {
			t.Fatalf("lists of files %v, %v: want the newest backup's", lists, err)
		}
		list, err := os.ReadFile(lists[0])
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, time.Now().Add(-ago).UTC().Format("20060102T150405.000Z")+".files")
		if err := os.WriteFile(path, list, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, _ := m.create()
	m.backup(files, 1)
	old := unfinished(2 * time.Hour)
	m.remove(a)
	m.backup(files, 0) // the list of the backup two hours ago keeps a's photo no more
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the list of the backup begun two hours ago is still there: %v", err)
	}
	b, _ := m.create()
	m.backup(files, 1)
	young := unfinished(time.Minute)
	m.remove(b)
	m.backup(files, 1) // a backup begun a minute ago may still be running: b's photo stays
	if _, err := os.Stat(young); err != nil {
		t.Errorf("the list of the backup begun a minute ago: %v", err)
	}
}

// TestBackupLock: while another replica backs a project up (it holds the project's backup
// lock), pruning its backups here removes nothing, since a file the other's backup counts on
// may be named by no list yet, and a backup here waits for the other's to end.
func TestBackupLock(t *testing.T) {
	target, files := backupTarget(t, "folder")
	stores := openStores(t)
	s := newServiceOn(t, stores, tenant.Options{Backups: tenant.BackupOptions{Target: target}})
	putFilesProject(t, s)
	m := mediaPosts{t, s, s.token(t, "media", "alice")}
	a, _ := m.create()
	m.backup(files, 1)
	m.remove(a)

	_, unlock, ok, err := coord.NewLock(stores.Redis, coord.BackupProjectLock("media"), coord.BackupProjectLockTTL).TryLock(t.Context())
	if err != nil || !ok {
		t.Fatalf("take the lock as another replica: %v %v", ok, err)
	}
	defer unlock()
	if removed, err := stores.PruneBackups(t.Context(), target, "media", 0); err != nil || len(removed) > 0 || len(files()) != 1 {
		t.Fatalf("pruned while another replica backs up: removed %v, %v; the target keeps files %v", removed, err, files())
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.reg.TakeBackup(context.WithoutCancel(t.Context()), "media")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("took a backup while another replica takes one: %v", err)
	case <-time.After(time.Second):
	}
	unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the backup still waits after the other ended")
	}
	if removed, err := stores.PruneBackups(t.Context(), target, "media", 0); err != nil || len(removed) != 2 || len(files()) != 0 {
		t.Fatalf("pruned all: removed %v, %v; the target keeps files %v", removed, err, files())
	}
}

// backupTarget is a backup target in a folder or an S3 bucket, and what lists the files of
// project "media" it keeps.
func backupTarget(t *testing.T, where string) (store.BackupTarget, func() []string) {
	if where == "folder" {
		dir := t.TempDir()
		return store.BackupFolder(dir), func() []string {
			entries, err := os.ReadDir(filepath.Join(dir, "media", "files"))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			return names
		}
	}
	srv := testenv.S3Server(t, "backups")
	target, err := store.BackupS3(srv + "/backups/eu")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv)
	c, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewEnvAWS(), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	return target, func() []string {
		var names []string
		for obj := range c.ListObjects(context.Background(), "backups", minio.ListObjectsOptions{Prefix: "eu/media/files/", Recursive: true}) {
			if obj.Err != nil {
				t.Fatal(obj.Err)
			}
			names = append(names, obj.Key)
		}
		return names
	}
}
