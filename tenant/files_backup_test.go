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
			alice := s.token(t, "media", "alice")
			create := func() (id, url string) {
				a := s.post(t, "media", alice, `mutation { createPost(data: {title: "x"}) { id } }`, nil)
				var post struct{ ID string }
				if len(a.Errors) > 0 || json.Unmarshal(a.Data["createPost"], &post) != nil {
					t.Fatalf("create: %+v", a.Errors)
				}
				res, body := s.fetch(t, http.MethodPut, "http://media.platform.test/files/posts/"+post.ID+"/photo?name=p.png", alice, pngOf(t, 4, 4))
				var f fileOut
				if res.StatusCode != http.StatusOK || json.Unmarshal(body, &f) != nil {
					t.Fatalf("PUT photo: %d %s", res.StatusCode, body)
				}
				return post.ID, f.URL
			}
			remove := func(id string) {
				if d := s.post(t, "media", alice, `mutation($id: ID) { deletePost(uid: $id) { id } }`, map[string]any{"id": id}); len(d.Errors) > 0 {
					t.Fatalf("delete: %+v", d.Errors)
				}
			}
			backup := func(want int) {
				t.Helper()
				if _, err := s.reg.TakeBackup(t.Context(), "media"); err != nil {
					t.Fatal(err)
				}
				if got := files(); len(got) != want {
					t.Fatalf("the target keeps files %v, want %d", got, want)
				}
			}
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
