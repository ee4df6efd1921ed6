package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3afero"

	"github.com/platform-dev/platform/store"
)

const productFields = `uid name price author stock sale since tags extra createdAt updatedAt`

// products answers every product of project as an anonymous caller reads them, by uid.
func products(t *testing.T, s *server, project string) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": `{ products(limit: 1000) { ` + productFields + ` } }`})
	st, raw := s.do("POST", project+".localhost", "/api/v1/graphql", "", body)
	var out struct {
		Data struct {
			Products []map[string]any `json:"products"`
		} `json:"data"`
		Errors any `json:"errors"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || st != http.StatusOK || out.Errors != nil {
		t.Fatalf("list %s: %d %s %v", project, st, raw, err)
	}
	byUID := map[string]any{}
	for _, p := range out.Data.Products {
		byUID[p["uid"].(string)] = p
	}
	return byUID
}

// adminJSON sends an admin call and decodes its answer into out.
func adminJSON(t *testing.T, s *server, method, path, body string, want int, out any) {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	st, raw := s.do(method, "localhost", path, s.token, b)
	if st != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, st, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
}

type backupList struct {
	Target  string         `json:"target"`
	Backups []store.Backup `json:"backups"`
}

// TestBackupUnderWriteLoad takes a backup through the admin API while callers create records
// through the GraphQL API, restores it with `platform restore --as` and through the admin API
// in place, and compares every record with what the API acknowledged: each product created
// before the backup began is there as the API answered it, and nothing else is.
func TestBackupUnderWriteLoad(t *testing.T) {
	s := startServer(t, t.TempDir())
	fillShop(t, s)
	token := mintToken(t, s.DataDir, "shop", "alice")

	type ack struct {
		record map[string]any
		at     time.Time
	}
	var (
		mu    sync.Mutex
		acked = map[string]ack{}
		wg    sync.WaitGroup
		stop  = make(chan struct{})
		half  = make(chan struct{}, 3)
	)
	for w := range 3 {
		wg.Go(func() {
			for i := 0; i < 150; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if i == 40 {
					half <- struct{}{}
				}
				st, out, err := s.graphql("shop", token, `mutation($d: productInput!) { createProduct(data: $d) { `+productFields+` } }`,
					map[string]any{"d": map[string]any{"name": fmt.Sprintf("w%d-%d", w, i), "price": float64(i) + 0.25, "tags": []string{"load"}}})
				if err != nil || st != http.StatusOK || out["errors"] != nil {
					t.Errorf("writer %d: %d %v %v", w, st, out, err)
					return
				}
				rec := out["data"].(map[string]any)["createProduct"].(map[string]any)
				mu.Lock()
				acked[rec["uid"].(string)] = ack{rec, time.Now()}
				mu.Unlock()
			}
		})
	}
	for range 3 {
		<-half
	}
	var taken struct {
		Backup store.Backup `json:"backup"`
	}
	adminJSON(t, s, "POST", "/admin/v1/projects/shop/backups", "", http.StatusCreated, &taken)
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}
	// The products fillShop created were acknowledged before the load began.
	before := products(t, s, "shop")
	mu.Lock()
	for uid, p := range before {
		if _, ok := acked[uid]; !ok && strings.HasPrefix(p.(map[string]any)["name"].(string), "w") {
			t.Fatalf("product %v was never acknowledged", p)
		}
		if _, ok := acked[uid]; !ok {
			acked[uid] = ack{p.(map[string]any), time.Time{}}
		}
	}
	mu.Unlock()
	b := taken.Backup
	t.Logf("backup %s of %d bytes while %d products were created", b.Name, b.Size, len(acked))

	check := func(t *testing.T, got map[string]any) {
		t.Helper()
		for uid, rec := range got {
			a, ok := acked[uid]
			if !ok {
				t.Fatalf("restored product %v was never acknowledged", rec)
			}
			if !reflect.DeepEqual(rec, any(a.record)) {
				t.Fatalf("product %s restored as %v, acknowledged as %v", uid, rec, a.record)
			}
		}
		for uid, a := range acked {
			if _, ok := got[uid]; !ok && a.at.Before(b.At) {
				t.Fatalf("product %v acknowledged before the backup began is missing", a.record)
			}
		}
		if len(got) == len(acked) {
			t.Fatalf("every product came back (%d), even those created after the backup", len(got))
		}
	}

	// Into a new project, with the binary, while the server runs.
	stdout, stderr, err := run(t, "restore", "--project", "shop", "--as", "shop2", "--data", s.DataDir)
	if err != nil || !strings.Contains(stdout, "restored project shop2 from "+b.Name) {
		t.Fatalf("platform restore --as shop2: %v\n%s%s", err, stdout, stderr)
	}
	t.Log(strings.TrimSpace(stdout))
	restored := products(t, s, "shop2")
	t.Run("as shop2", func(t *testing.T) { check(t, restored) })
	if got := products(t, s, "shop"); len(got) != len(acked) {
		t.Fatalf("shop holds %d products after a restore into shop2, want %d", len(got), len(acked))
	}
	// A restore into a project that exists is refused.
	if _, stderr, err := run(t, "restore", "--project", "shop", "--as", "shop2", "--data", s.DataDir); err == nil || !strings.Contains(stderr, "project exists") {
		t.Fatalf("restore over shop2: %v\n%s", err, stderr)
	}

	// In place, through the admin API: the server serves the restored records at once.
	var out struct {
		Project string           `json:"project"`
		Backup  store.Backup     `json:"backup"`
		Records map[string]int64 `json:"records"`
	}
	at, _ := json.Marshal(map[string]any{"at": b.At})
	adminJSON(t, s, "POST", "/admin/v1/projects/shop/restore", string(at), http.StatusOK, &out)
	if out.Project != "shop" || out.Backup != b || out.Records["products"] != int64(len(restored)) {
		t.Fatalf("restore answered %+v, want backup %+v and %d products", out, b, len(restored))
	}
	inPlace := products(t, s, "shop")
	t.Run("in place", func(t *testing.T) { check(t, inPlace) })
	if !reflect.DeepEqual(inPlace, restored) {
		t.Fatal("the restore in place differs from the restore into shop2")
	}

	// Errors are the caller's: no backup that old, an unknown project, a bad body.
	for _, c := range []struct {
		path, body string
		status     int
		code, msg  string
	}{
		{"/admin/v1/projects/shop/restore", `{"at":"2000-01-01T00:00:00Z"}`, 404, "NOT_FOUND", "no backup taken at or before 2000-01-01T00:00:00Z"},
		{"/admin/v1/projects/nope/restore", ``, 404, "NOT_FOUND", `project "nope" has no backup yet`},
		{"/admin/v1/projects/nope/backups", ``, 404, "PROJECT_NOT_FOUND", `project "nope" does not exist`},
		{"/admin/v1/projects/shop/restore", `{"as":"shop2"}`, 409, "CONFLICT", "project exists"},
		{"/admin/v1/projects/shop/restore", `{"at":"yesterday"}`, 400, "BAD_REQUEST", "RFC 3339"},
	} {
		st, raw := s.do("POST", "localhost", c.path, s.token, []byte(c.body))
		var e struct {
			Errors []struct {
				Message    string `json:"message"`
				Extensions struct {
					Code string `json:"code"`
				} `json:"extensions"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(raw, &e); err != nil || st != c.status || len(e.Errors) != 1 || e.Errors[0].Extensions.Code != c.code || !strings.Contains(e.Errors[0].Message, c.msg) {
			t.Errorf("POST %s %s: %d %s, want %d %s %q", c.path, c.body, st, raw, c.status, c.code, c.msg)
		}
	}

	// A project deleted without purge keeps its records: a restore into it is refused, and
	// they are there when it is undeleted. (Before, the restore replaced them, then failed to
	// store the document.)
	adminJSON(t, s, "DELETE", "/admin/v1/projects/shop2", "", http.StatusOK, nil)
	st, raw := s.do("POST", "localhost", "/admin/v1/projects/shop/restore", s.token, []byte(`{"as":"shop2"}`))
	if st != http.StatusConflict || !strings.Contains(string(raw), `\"shop2\" was deleted and is kept with its records`) {
		t.Fatalf("restore into the deleted shop2: %d %s", st, raw)
	}
	adminJSON(t, s, "POST", "/admin/v1/projects/shop2/undelete", "", http.StatusOK, nil)
	if got := products(t, s, "shop2"); !reflect.DeepEqual(got, restored) {
		t.Fatalf("shop2 holds %d products once undeleted, want the %d it held", len(got), len(restored))
	}
}

// TestScheduledBackupsToS3 runs a server whose scheduled backups go to an S3-compatible
// server started here (gofakes3 with its file backend): backups appear on schedule, only the
// newest --backup-keep stay, and `platform restore` reads them from the bucket.
func TestScheduledBackupsToS3(t *testing.T) {
	fs, err := s3afero.FsPath(t.TempDir(), s3afero.FsPathCreateAll)
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := s3afero.MultiBucket(fs)
	if err != nil {
		t.Fatal(err)
	}
	if err := bucket.CreateBucket("backups"); err != nil {
		t.Fatal(err)
	}
	s3 := httptest.NewServer(gofakes3.New(bucket).Server())
	defer s3.Close()
	url := s3.URL + "/backups/prod"
	creds := []string{"AWS_ACCESS_KEY_ID=platform-test", "AWS_SECRET_ACCESS_KEY=platform-test-secret"}
	t.Setenv("AWS_ACCESS_KEY_ID", "platform-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "platform-test-secret")

	s := startServer(t, t.TempDir(), append(creds, "PLATFORM_BACKUP_S3_URL="+url, "PLATFORM_BACKUP_EVERY=1s", "PLATFORM_BACKUP_KEEP=2")...)
	fillShop(t, s)
	want := products(t, s, "shop")
	var list backupList
	deadline := time.Now().Add(30 * time.Second)
	for {
		adminJSON(t, s, "GET", "/admin/v1/projects/shop/backups", "", http.StatusOK, &list)
		if len(list.Backups) == 2 && strings.Contains(s.logText(), "msg=\"backup taken\" project=shop") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("backups of shop after 30s: %+v\n%s", list, s.logText())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if list.Target != "s3://backups/prod/" {
		t.Errorf("target %q", list.Target)
	}
	// Retention: however many rounds ran, two stay.
	time.Sleep(2500 * time.Millisecond)
	adminJSON(t, s, "GET", "/admin/v1/projects/shop/backups", "", http.StatusOK, &list)
	if n := strings.Count(s.logText(), "msg=\"backup taken\" project=shop"); len(list.Backups) != 2 || n < 3 {
		t.Fatalf("after %d scheduled backups of shop, %d kept: %+v", n, len(list.Backups), list.Backups)
	}
	metrics := s.scrape()
	if !regexp.MustCompile(`(?m)^platform_scheduled_backups_total\{result="ok"\} ([3-9]|\d\d+)$`).MatchString(metrics) ||
		!strings.Contains(metrics, "platform_scheduled_backup_last_success_timestamp_seconds 1.") {
		t.Errorf("scheduled backups' metrics:\n%s", metrics)
	}
	s.stop()

	stdout, stderr, err := run(t, "restore", "--project", "shop", "--list", "--data", s.DataDir, "--backup-s3-url", url)
	if err != nil || !strings.Contains(stdout, "2 backups of project shop in s3://backups/prod/") || !strings.Contains(stdout, list.Backups[0].Name) {
		t.Fatalf("restore --list: %v\n%s%s", err, stdout, stderr)
	}
	t.Log(stdout)
	data := t.TempDir()
	stdout, stderr, err = run(t, "restore", "--project", "shop", "--data", data, "--backup-s3-url", url)
	if err != nil || !strings.Contains(stdout, "restored project shop from "+list.Backups[0].Name) || !strings.Contains(stdout, "orders 2, products 4") {
		t.Fatalf("restore from S3 into an empty data folder: %v\n%s%s", err, stdout, stderr)
	}
	t.Log(stdout)
	again := startServer(t, data)
	if got := products(t, again, "shop"); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored from S3:\n%v\nwant\n%v", got, want)
	}
}

// TestBackupOnMongo backs up a project served from MongoDB (an embedded FerretDB) through the
// admin API: the backup is an export, which `platform import` reads too, and restores in place
// and, with the binary, under a new id.
func TestBackupOnMongo(t *testing.T) {
	uri, stop, err := store.StartFerretDB(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop(context.Background()) })
	s := startServer(t, t.TempDir(), "MONGODB_URI="+uri, "PLATFORM_DEV_ISSUER=on")
	fillShop(t, s)
	want := products(t, s, "shop")

	var taken struct {
		Backup store.Backup `json:"backup"`
	}
	adminJSON(t, s, "POST", "/admin/v1/projects/shop/backups", "", http.StatusCreated, &taken)
	b := taken.Backup
	if b.Format != store.BackupExport || !strings.HasSuffix(b.Name, ".jsonl") {
		t.Fatalf("backup on MongoDB: %+v, want an export", b)
	}
	token := mintToken(t, s.DataDir, "shop", "alice", s.storeArgs...)
	if st, out, err := s.graphql("shop", token, `mutation { createProduct(data: {name: "later", price: 1}) { uid } }`, nil); err != nil || st != http.StatusOK || out["errors"] != nil {
		t.Fatalf("create: %d %v %v", st, out, err)
	}
	var out struct {
		Records map[string]int64 `json:"records"`
	}
	adminJSON(t, s, "POST", "/admin/v1/projects/shop/restore", "", http.StatusOK, &out)
	if got := products(t, s, "shop"); !reflect.DeepEqual(got, want) || out.Records["products"] != 4 || out.Records["orders"] != 2 {
		t.Fatalf("restored in place on MongoDB (%v):\n%v\nwant\n%v", out.Records, got, want)
	}

	stdout, stderr, err := run(t, "restore", "--project", "shop", "--as", "shop2", "--data", s.DataDir, "--mongodb-uri", uri)
	if err != nil || !strings.Contains(stdout, "restored project shop2 from "+b.Name) {
		t.Fatalf("platform restore --as shop2 on MongoDB: %v\n%s%s", err, stdout, stderr)
	}
	if got := products(t, s, "shop2"); !reflect.DeepEqual(got, want) {
		t.Fatalf("shop2 restored from MongoDB:\n%v\nwant\n%v", got, want)
	}

	// The backup is an export: `platform import` reads it into the embedded store.
	data := t.TempDir()
	file := filepath.Join(s.DataDir, "backups", filepath.FromSlash(b.Name))
	if _, stderr, err := run(t, "import", "-f", file, "--data", data); err != nil || !strings.Contains(stderr, "imported project shop: 6 records") {
		t.Fatalf("import of a MongoDB backup: %v\n%s", err, stderr)
	}
}
