package tenant_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// filesDoc is a project with a File and a [File] field, read and written by their owner.
const filesDoc = `{
  "id": "media",
  "auth": {"jwksURL": %q, "issuer": "urn:platform:dev-issuer", "audience": "media"},
  "tables": {
    "posts": {
      "fields": {
        "title": {"type": "String"},
        "photo": {"type": "File", "file": {"maxSize": 200000, "mimeTypes": ["image/*"], "thumbs": ["16x16", "40x0"]}},
        "docs":  {"type": "[File]", "file": {"maxCount": 2}}
      },
      "access": {"read": "owner", "create": "authenticated", "update": "owner", "delete": "owner"}
    }
  }
}`

// filesService serves the project of filesDoc on stores it answers too, with the files
// options opts. where says where: "folder" (records in SQLite, files in the data folder),
// "s3" (files in a bucket of an S3-compatible server started for the test) or "mongo"
// (records on the mongo backend, an embedded FerretDB).
func filesService(t *testing.T, opts tenant.FileOptions, where string) (service, *store.Stores) {
	t.Helper()
	return filesServiceWith(t, tenant.Options{Files: opts}, where)
}

// filesServiceWith is filesService with the registry's options.
func filesServiceWith(t *testing.T, opts tenant.Options, where string) (service, *store.Stores) {
	t.Helper()
	cfg := store.Config{DataDir: t.TempDir()}
	switch where {
	case "s3":
		cfg.FilesS3URL = testenv.S3Server(t, "files") + "/files/kept"
	case "mongo":
		cfg.Logger = slog.New(slog.DiscardHandler)
		uri, stop, err := store.StartFerretDB(t.Context(), cfg.DataDir, cfg.Logger)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stop(context.Background()) })
		cfg.MongoURI = uri
	}
	stores, err := store.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stores.Close(context.Background()) })
	opts.Files.Key = []byte("test secret")
	s := newServiceOn(t, stores, opts)
	putFilesProject(t, s)
	return s, stores
}

// pngOf is a w×h PNG image.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 200, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// upload is one file part of a multipart request, put at path in the variables.
type upload struct {
	path, name string
	body       []byte
}

// multipartPost sends a GraphQL multipart request (jaydenseric's spec) to the project's
// host, with the Apollo-Require-Preflight header when preflight is set.
func (s service) multipartPost(t *testing.T, token, query string, vars map[string]any, files []upload, preflight bool) gqlAnswer {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	ops, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	paths := map[string][]string{}
	for i, f := range files {
		paths[fmt.Sprint(i)] = []string{f.path}
	}
	m, _ := json.Marshal(paths)
	_ = mw.WriteField("operations", string(ops))
	_ = mw.WriteField("map", string(m))
	for i, f := range files {
		w, _ := mw.CreateFormFile(fmt.Sprint(i), f.name)
		_, _ = w.Write(f.body)
	}
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, s.url+"/api/v1/graphql", &body)
	req.Host = "media.platform.test"
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	if preflight {
		req.Header.Set("Apollo-Require-Preflight", "true")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	a := gqlAnswer{status: res.StatusCode}
	if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
		t.Fatal(err)
	}
	return a
}

// fetch sends a request for a file's URL (absolute, as File.url answers it) to the service,
// with the headers.
// putFilesProject applies the project of filesDoc on s.
func putFilesProject(t *testing.T, s service) {
	t.Helper()
	p, err := tenant.ParseDocument(fmt.Appendf(nil, filesDoc, s.jwks))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.reg.Put(t.Context(), p); err != nil {
		t.Fatal(err)
	}
}

func (s service) fetch(t *testing.T, method, rawURL, token string, body []byte, headers ...string) (*http.Response, []byte) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	host := u.Host
	u.Host = strings.TrimPrefix(s.url, "http://")
	req, _ := http.NewRequest(method, u.String(), bytes.NewReader(body))
	req.Host = host
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

type fileOut struct {
	Name, MimeType, Etag, URL, SignedURL string
	Size                                 int
}

const createPost = `mutation($photo: Upload, $docs: [Upload]) {
  createPost(data: {title: "hello", photo: $photo, docs: $docs}) {
    id photo { name size mimeType etag url signedUrl(expiresIn: 60) } docs { name url }
  }
}`

// TestFileUploadAndDownload: files uploaded by multipart requests and PUT, downloaded under
// the read rule or by a signed URL, with their thumbnails, and removed with what held them,
// kept in the data folder and in an S3 bucket, with the records on SQLite and on the mongo
// backend.
func TestFileUploadAndDownload(t *testing.T) {
	for _, where := range []string{"folder", "s3", "mongo"} {
		t.Run(where, func(t *testing.T) { testFiles(t, where) })
	}
}

func testFiles(t *testing.T, where string) {
	s, stores := filesService(t, tenant.FileOptions{MaxUploadFiles: 3}, where)
	alice, bob := s.token(t, "media", "alice"), s.token(t, "media", "bob")
	photo := pngOf(t, 64, 48)

	a := s.multipartPost(t, alice, createPost, map[string]any{"photo": nil, "docs": []any{nil}},
		[]upload{{"variables.photo", "cat.png", photo}, {"variables.docs.0", "notes.txt", []byte("some notes")}}, true)
	if len(a.Errors) > 0 {
		t.Fatalf("create: %+v", a.Errors)
	}
	var post struct {
		ID    string
		Photo fileOut
		Docs  []fileOut
	}
	if err := json.Unmarshal(a.Data["createPost"], &post); err != nil {
		t.Fatal(err)
	}
	p := post.Photo
	if p.Name != "cat.png" || p.Size != len(photo) || p.MimeType != "image/png" || len(p.Etag) != 64 ||
		!strings.HasPrefix(p.URL, "http://media.platform.test/files/posts/"+post.ID+"/photo/") {
		t.Fatalf("photo: %+v", p)
	}
	if len(post.Docs) != 1 || post.Docs[0].Name != "notes.txt" {
		t.Fatalf("docs: %+v", post.Docs)
	}

	t.Run("download", func(t *testing.T) {
		res, body := s.fetch(t, http.MethodGet, p.URL, alice, nil)
		if res.StatusCode != http.StatusOK || !bytes.Equal(body, photo) || res.Header.Get("Content-Type") != "image/png" || res.Header.Get("ETag") != `"`+p.Etag+`"` {
			t.Fatalf("GET: %d %s %q, %d bytes", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("ETag"), len(body))
		}
		res, _ = s.fetch(t, http.MethodGet, p.URL, alice, nil, "If-None-Match", `"`+p.Etag+`"`)
		if res.StatusCode != http.StatusNotModified {
			t.Errorf("If-None-Match: %d, want 304", res.StatusCode)
		}
		res, body = s.fetch(t, http.MethodGet, p.URL, alice, nil, "Range", "bytes=8-15")
		if res.StatusCode != http.StatusPartialContent || !bytes.Equal(body, photo[8:16]) {
			t.Errorf("Range: %d, %q", res.StatusCode, body)
		}
		res, body = s.fetch(t, http.MethodGet, post.Docs[0].URL, alice, nil)
		if res.StatusCode != http.StatusOK || string(body) != "some notes" || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("doc: %d %q %q", res.StatusCode, res.Header.Get("Content-Disposition"), body)
		}
	})

	t.Run("read rule", func(t *testing.T) {
		for _, c := range []struct {
			token  string
			status int
			code   string
		}{{bob, http.StatusNotFound, "NOT_FOUND"}, {"", http.StatusUnauthorized, "UNAUTHENTICATED"}} {
			res, body := s.fetch(t, http.MethodGet, p.URL, c.token, nil)
			if res.StatusCode != c.status || !strings.Contains(string(body), c.code) {
				t.Errorf("token %.8q: %d %s, want %d %s", c.token, res.StatusCode, body, c.status, c.code)
			}
		}
	})

	t.Run("signed URL", func(t *testing.T) {
		res, body := s.fetch(t, http.MethodGet, p.SignedURL, "", nil)
		if res.StatusCode != http.StatusOK || !bytes.Equal(body, photo) {
			t.Fatalf("signed: %d", res.StatusCode)
		}
		tampered := strings.Replace(p.SignedURL, "/photo/", "/photo/x", 1)
		other := strings.Replace(p.SignedURL, "expires=", "expires=9", 1)
		for _, u := range []string{tampered, other} {
			if res, body := s.fetch(t, http.MethodGet, u, "", nil); res.StatusCode == http.StatusOK || !strings.Contains(string(body), "FORBIDDEN") {
				t.Errorf("%s: %d %s, want FORBIDDEN", u, res.StatusCode, body)
			}
		}
		short := s.post(t, "media", alice, `query($id: ID!) { post(id: $id) { photo { signedUrl(expiresIn: 1) } } }`, map[string]any{"id": post.ID})
		var got struct{ Post struct{ Photo fileOut } }
		if err := json.Unmarshal([]byte(mustJSON(t, short.Data)), &got); err != nil || got.Post.Photo.SignedURL == "" {
			t.Fatalf("signedUrl(expiresIn: 1): %+v %v", short, err)
		}
		time.Sleep(2100 * time.Millisecond)
		if res, body := s.fetch(t, http.MethodGet, got.Post.Photo.SignedURL, "", nil); res.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "expired") {
			t.Errorf("expired: %d %s", res.StatusCode, body)
		}
	})

	t.Run("thumbnails", func(t *testing.T) {
		res, body := s.fetch(t, http.MethodGet, p.URL+"?thumb=16x16", alice, nil)
		img, err := png.Decode(bytes.NewReader(body))
		if res.StatusCode != http.StatusOK || err != nil || img.Bounds().Dx() != 16 || img.Bounds().Dy() != 16 {
			t.Fatalf("16x16: %d %v", res.StatusCode, err)
		}
		res, body = s.fetch(t, http.MethodGet, p.URL+"?thumb=40x0", alice, nil)
		if img, err := png.Decode(bytes.NewReader(body)); res.StatusCode != http.StatusOK || err != nil || img.Bounds().Dx() != 40 || img.Bounds().Dy() != 30 {
			t.Fatalf("40x0: %d %v", res.StatusCode, err)
		}
		res, body = s.fetch(t, http.MethodGet, p.URL+"?thumb=32x32", alice, nil)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "BAD_REQUEST") || !strings.Contains(string(body), "not a size") {
			t.Errorf("undeclared size: %d %s", res.StatusCode, body)
		}
	})

	t.Run("PUT", func(t *testing.T) {
		docsURL := "http://media.platform.test/files/posts/" + post.ID + "/docs?name=more.txt"
		res, body := s.fetch(t, http.MethodPut, docsURL, bob, []byte("bob's"))
		if res.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "FORBIDDEN") {
			t.Errorf("bob's PUT: %d %s", res.StatusCode, body)
		}
		res, body = s.fetch(t, http.MethodPut, docsURL, alice, []byte("more notes"))
		var f fileOut
		if err := json.Unmarshal(body, &f); res.StatusCode != http.StatusOK || err != nil || f.Name != "more.txt" || f.MimeType != "text/plain" {
			t.Fatalf("PUT: %d %s", res.StatusCode, body)
		}
		if res, got := s.fetch(t, http.MethodGet, f.URL, alice, nil); res.StatusCode != http.StatusOK || string(got) != "more notes" {
			t.Errorf("GET after PUT: %d %q", res.StatusCode, got)
		}
		// The list holds two, its most: a third is refused.
		res, body = s.fetch(t, http.MethodPut, docsURL, alice, []byte("too many"))
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "TOO_MANY_FILES") {
			t.Errorf("third doc: %d %s", res.StatusCode, body)
		}
	})

	t.Run("replace and delete remove the bytes", func(t *testing.T) {
		before := blobKeys(t, stores)
		res, _ := s.fetch(t, http.MethodPut, "http://media.platform.test/files/posts/"+post.ID+"/photo?name=dog.png", alice, pngOf(t, 8, 8))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("replace: %d", res.StatusCode)
		}
		if res, _ := s.fetch(t, http.MethodGet, p.URL, alice, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("the replaced photo's URL: %d, want 404", res.StatusCode)
		}
		after := blobKeys(t, stores)
		if len(after) != len(before)-2 { // the photo and its two thumbnails went, the new photo came
			t.Errorf("kept %v before the photo was replaced, %v after", before, after)
		}
		if d := s.post(t, "media", alice, `mutation($id: ID) { deletePost(uid: $id) { id } }`, map[string]any{"id": post.ID}); len(d.Errors) > 0 {
			t.Fatalf("delete: %+v", d.Errors)
		}
		if left := blobKeys(t, stores); len(left) != 0 {
			t.Errorf("files left after the record was deleted: %v", left)
		}
	})
}

// blobKeys are the keys of the files the project media keeps.
func blobKeys(t *testing.T, stores *store.Stores) []string {
	t.Helper()
	var keys []string
	err := stores.ProjectBlobs("media").Walk(context.Background(), func(k string, _ time.Time) error {
		keys = append(keys, k)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// Uploads refused, each with the code and reason that say why.
func TestFileUploadRefusals(t *testing.T) {
	s, stores := filesService(t, tenant.FileOptions{MaxUploadFiles: 3, MaxFileBytes: 300000}, "folder")
	alice := s.token(t, "media", "alice")
	big := append(pngOf(t, 8, 8), make([]byte, 250000)...)
	for _, c := range []struct {
		name      string
		files     []upload
		preflight bool
		status    int
		code      string
		reason    string
	}{
		{"no preflight header", []upload{{"variables.photo", "a.png", pngOf(t, 4, 4)}}, false, http.StatusBadRequest, "BAD_REQUEST", ""},
		{"larger than the field takes", []upload{{"variables.photo", "big.png", big}}, true, http.StatusOK, "BAD_USER_INPUT", "FILE_TOO_LARGE"},
		{"larger than any upload", []upload{{"variables.photo", "huge.png", make([]byte, 300001)}}, true, http.StatusRequestEntityTooLarge, "BAD_REQUEST", ""},
		{"wrong media type", []upload{{"variables.photo", "a.png", []byte("plain text, not an image")}}, true, http.StatusOK, "BAD_USER_INPUT", "MIME_TYPE_NOT_ALLOWED"},
		{"too many for the field", []upload{{"variables.docs.0", "1", []byte("1")}, {"variables.docs.1", "2", []byte("2")}, {"variables.docs.2", "3", []byte("3")}}, true, http.StatusOK, "BAD_USER_INPUT", "TOO_MANY_FILES"},
		{"too many for a request", []upload{{"variables.docs.0", "1", []byte("1")}, {"variables.docs.1", "2", []byte("2")}, {"variables.docs.2", "3", []byte("3")}, {"variables.docs.3", "4", []byte("4")}}, true, http.StatusRequestEntityTooLarge, "BAD_REQUEST", ""},
		{"a path outside the variables", []upload{{"operations.photo", "a.png", pngOf(t, 4, 4)}}, true, http.StatusBadRequest, "BAD_REQUEST", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var docs []any
			for _, f := range c.files {
				if strings.HasPrefix(f.path, "variables.docs.") {
					docs = append(docs, nil)
				}
			}
			a := s.multipartPost(t, alice, createPost, map[string]any{"photo": nil, "docs": docs}, c.files, c.preflight)
			if a.status != c.status || a.code() != c.code || len(a.Errors) == 0 {
				t.Fatalf("%d %+v, want %d %s", a.status, a.Errors, c.status, c.code)
			}
			if reason, _ := a.Errors[0].Extensions["reason"].(string); reason != c.reason {
				t.Errorf("reason %q, want %q (%s)", reason, c.reason, a.Errors[0].Message)
			}
		})
	}
	if keys := blobKeys(t, stores); len(keys) != 0 {
		t.Errorf("refused uploads left files: %v", keys)
	}
}

// TestFilesCountInTheStorageQuota: a project's file bytes count in its bytesStored quota, so
// that files cannot fill a disk its records could not.
func TestFilesCountInTheStorageQuota(t *testing.T) {
	stores := openStores(t)
	s := newServiceOn(t, stores, tenant.Options{Quotas: tenant.Quotas{BytesStored: 500_000}})
	putFilesProject(t, s)
	alice := s.token(t, "media", "alice")
	photo := append(pngOf(t, 8, 8), make([]byte, 190_000)...)
	for i := range 3 {
		a := s.multipartPost(t, alice, createPost, map[string]any{"photo": nil}, []upload{{"variables.photo", "p.png", photo}}, true)
		if i < 2 && len(a.Errors) > 0 {
			t.Fatalf("upload %d: %+v", i, a.Errors)
		}
		if i == 2 && (a.code() != "QUOTA_EXCEEDED" || a.Errors[0].Extensions["quota"] != "bytesStored") {
			t.Fatalf("upload %d past the quota: %+v, want QUOTA_EXCEEDED of bytesStored", i, a.Errors)
		}
		// The quota's count of the bytes stored is at most this old.
		time.Sleep(2100 * time.Millisecond)
	}
	if keys := blobKeys(t, stores); len(keys) != 2 {
		t.Errorf("files kept: %v, want the two uploads the quota let in", keys)
	}
}

// TestAliasedCreatesKeepTheirFiles: creates in a row in one mutation are written in one
// store call, and record by record when that call is refused. A refused record's file is
// removed; the files of the records written stay, and their addresses serve them.
func TestAliasedCreatesKeepTheirFiles(t *testing.T) {
	stores := openStores(t)
	s := newServiceOn(t, stores, tenant.Options{Quotas: tenant.Quotas{Records: 2}, Files: tenant.FileOptions{Key: []byte("test secret")}})
	putFilesProject(t, s)
	alice := s.token(t, "media", "alice")
	photos := [][]byte{pngOf(t, 4, 4), pngOf(t, 5, 5), pngOf(t, 6, 6)}
	a := s.multipartPost(t, alice, `mutation($a: Upload, $b: Upload, $c: Upload) {
  a: createPost(data: {title: "a", photo: $a}) { photo { url } }
  b: createPost(data: {title: "b", photo: $b}) { photo { url } }
  c: createPost(data: {title: "c", photo: $c}) { photo { url } }
}`, map[string]any{"a": nil, "b": nil, "c": nil},
		[]upload{{"variables.a", "a.png", photos[0]}, {"variables.b", "b.png", photos[1]}, {"variables.c", "c.png", photos[2]}}, true)
	// The quota refuses the three records at once, then the third alone.
	if len(a.Errors) != 1 || a.code() != "QUOTA_EXCEEDED" || string(a.Data["c"]) != "null" {
		t.Fatalf("errors %+v, c %s: want the third create refused by the records quota", a.Errors, a.Data["c"])
	}
	for i, key := range []string{"a", "b"} {
		var post struct{ Photo fileOut }
		if err := json.Unmarshal(a.Data[key], &post); err != nil {
			t.Fatal(err)
		}
		res, body := s.fetch(t, http.MethodGet, post.Photo.URL, alice, nil)
		if res.StatusCode != http.StatusOK || !bytes.Equal(body, photos[i]) {
			t.Errorf("%s's photo: %d, %d bytes, want its %d bytes", key, res.StatusCode, len(body), len(photos[i]))
		}
	}
	if keys := blobKeys(t, stores); len(keys) != 2 {
		t.Errorf("files kept: %v, want the photos of the two records written", keys)
	}
}

// TestFilesTravelWithExports: an export carries the files, and an import into another
// deployment serves them at the same addresses.
func TestFilesTravelWithExports(t *testing.T) {
	s, stores := filesService(t, tenant.FileOptions{}, "folder")
	alice := s.token(t, "media", "alice")
	big := bytes.Repeat([]byte("0123456789abcdef"), 200_000) // three pieces
	a := s.multipartPost(t, alice, `mutation($docs: [Upload]) { createPost(data: {docs: $docs}) { docs { url } } }`,
		map[string]any{"docs": []any{nil, nil}}, []upload{{"variables.docs.0", "big.bin", big}, {"variables.docs.1", "small.txt", []byte("small")}}, true)
	if len(a.Errors) > 0 {
		t.Fatalf("create: %+v", a.Errors)
	}
	var post struct{ Docs []fileOut }
	if err := json.Unmarshal(a.Data["createPost"], &post); err != nil {
		t.Fatal(err)
	}
	src, err := tenant.OpenSource(t.Context(), stores, "media")
	if err != nil {
		t.Fatal(err)
	}
	var export bytes.Buffer
	if err := src.Export(t.Context(), &export, nil); err != nil {
		t.Fatal(err)
	}
	all := export.Bytes()
	cut := slices.Concat(all[:bytes.LastIndex(all, []byte(`{"file"`))], all[bytes.LastIndex(all, []byte(`{"end"`)):])
	other := openStores(t)
	if _, err := tenant.Import(t.Context(), other, bytes.NewReader(cut), tenant.ImportOptions{}); err == nil {
		t.Fatal("an export missing a file's piece was imported")
	}
	if _, err := tenant.Import(t.Context(), other, bytes.NewReader(export.Bytes()), tenant.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	s2 := newServiceOn(t, other, tenant.Options{})
	for i, want := range [][]byte{big, []byte("small")} {
		if res, got := s2.fetch(t, http.MethodGet, post.Docs[i].URL, alice, nil); res.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
			t.Errorf("doc %d after the import: %d, %d bytes, want %d", i, res.StatusCode, len(got), len(want))
		}
	}
}

// TestFileSweep: the sweep removes a file no record names, as a crash between storing an
// upload and writing its record leaves, and keeps those records name.
func TestFileSweep(t *testing.T) {
	s, stores := filesService(t, tenant.FileOptions{}, "folder")
	alice := s.token(t, "media", "alice")
	if a := s.multipartPost(t, alice, `mutation($f: Upload) { createPost(data: {photo: $f}) { id } }`, map[string]any{"f": nil},
		[]upload{{"variables.f", "a.png", pngOf(t, 4, 4)}}, true); len(a.Errors) > 0 {
		t.Fatalf("create: %+v", a.Errors)
	}
	kept := blobKeys(t, stores)
	orphan := store.NewFileKey("posts")
	if err := stores.ProjectBlobs("media").Put(t.Context(), orphan, strings.NewReader("lost"), 4); err != nil {
		t.Fatal(err)
	}
	rt, err := s.reg.Runtime(t.Context(), "media")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := rt.API.SweepFiles(t.Context(), time.Hour); n != 0 || err != nil {
		t.Fatalf("a sweep sparing the last hour removed %d files (%v)", n, err)
	}
	if n, err := rt.API.SweepFiles(t.Context(), -time.Second); n != 1 || err != nil {
		t.Fatalf("sweep: removed %d files (%v), want the orphan", n, err)
	}
	if got := blobKeys(t, stores); !slices.Equal(got, kept) {
		t.Errorf("after the sweep: %v, want %v", got, kept)
	}
}

// TestNodeUpload uploads from node as an app does (gql/testdata/npm/upload.mjs, node's own
// FormData and fetch) through the project's path form, and downloads the file at the url
// the API answers.
func TestNodeUpload(t *testing.T) {
	node := testenv.Need(t, "node")
	s, _ := filesService(t, tenant.FileOptions{}, "folder")
	cmd := exec.CommandContext(t.Context(), node, "upload.mjs", s.url+"/p/media/api/v1/graphql", s.token(t, "media", "alice"))
	cmd.Dir = "../gql/testdata/npm"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node upload.mjs: %v\n%s", err, out)
	}
	t.Logf("node upload.mjs:\n%s", out)
}

// TestFileInChromium: a real headless Chromium opens an image by its signed URL, with no
// token (as an <img> asks for it), while the plain URL is refused without one.
func TestFileInChromium(t *testing.T) {
	browser := testenv.Need(t, "chromium")
	s, _ := filesService(t, tenant.FileOptions{}, "folder")
	alice := s.token(t, "media", "alice")
	a := s.multipartPost(t, alice, createPost, map[string]any{"photo": nil}, []upload{{"variables.photo", "cat.png", pngOf(t, 64, 48)}}, true)
	if len(a.Errors) > 0 {
		t.Fatalf("create: %+v", a.Errors)
	}
	var post struct{ ID string }
	if err := json.Unmarshal(a.Data["createPost"], &post); err != nil {
		t.Fatal(err)
	}
	// Through the path form, which a browser on the machine resolves.
	got := postGraphQL(t, s.url+"/p/media/api/v1/graphql", "", alice, `query($id: ID!) { post(id: $id) { photo { url signedUrl } } }`, map[string]any{"id": post.ID})
	var urls struct{ Post struct{ Photo fileOut } }
	if err := json.Unmarshal([]byte(mustJSON(t, got.Data)), &urls); err != nil || urls.Post.Photo.SignedURL == "" {
		t.Fatalf("urls: %+v %v", got, err)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTime := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTime()
	var width, height int
	var refused string
	err := chromedp.Run(ctx,
		// Chromium shows an image it opens in a page of its own, as one <img>.
		chromedp.Navigate(urls.Post.Photo.SignedURL),
		chromedp.Poll(`(() => { const i = document.images[0]; return i && i.complete && i.naturalWidth > 0 ? i.naturalWidth : null })()`, &width),
		chromedp.Evaluate(`document.images[0].naturalHeight`, &height),
		chromedp.Navigate(urls.Post.Photo.URL),
		chromedp.Evaluate(`document.body.innerText`, &refused),
	)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if width != 64 || height != 48 {
		t.Errorf("the page shows the image at %d×%d, want 64×48", width, height)
	}
	if !strings.Contains(refused, "UNAUTHENTICATED") {
		t.Errorf("the plain URL without a token shows %q, want UNAUTHENTICATED", refused)
	}
}

// TestFilesInBackups: a backup carries the files its records name, and a restore puts them
// back with the records, after a delete removed both.
func TestFilesInBackups(t *testing.T) {
	stores := openStores(t)
	s := newServiceOn(t, stores, tenant.Options{Backups: tenant.BackupOptions{Target: store.BackupFolder(t.TempDir())}})
	putFilesProject(t, s)
	alice := s.token(t, "media", "alice")
	photo := pngOf(t, 10, 10)
	a := s.multipartPost(t, alice, `mutation($f: Upload) { createPost(data: {photo: $f}) { id photo { url } } }`, map[string]any{"f": nil},
		[]upload{{"variables.f", "a.png", photo}}, true)
	var post struct {
		ID    string
		Photo fileOut
	}
	if err := json.Unmarshal(a.Data["createPost"], &post); err != nil || len(a.Errors) > 0 {
		t.Fatalf("create: %+v %v", a.Errors, err)
	}
	for range 2 { // the second backup finds the file kept already
		if _, err := s.reg.TakeBackup(t.Context(), "media"); err != nil {
			t.Fatal(err)
		}
	}
	if d := s.post(t, "media", alice, `mutation($id: ID) { deletePost(uid: $id) { id } }`, map[string]any{"id": post.ID}); len(d.Errors) > 0 || len(blobKeys(t, stores)) != 0 {
		t.Fatalf("delete: %+v, files left %v", d.Errors, blobKeys(t, stores))
	}
	if _, err := s.reg.Restore(t.Context(), "media", time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	if res, got := s.fetch(t, http.MethodGet, post.Photo.URL, alice, nil); res.StatusCode != http.StatusOK || !bytes.Equal(got, photo) {
		t.Errorf("the photo after the restore: %d, %d bytes", res.StatusCode, len(got))
	}
}

// TestFileTypeNames: a table's record type may be called File or Upload in a project without
// File fields, which alone define those types.
func TestFileTypeNames(t *testing.T) {
	s := newService(t)
	for _, c := range []struct {
		doc string
		ok  bool
	}{
		{`{"id": "names1", "tables": {"Files": {"fields": {"name": {"type": "String"}}}}}`, true},
		{`{"id": "names2", "tables": {"things": {"typeName": "Upload", "fields": {"name": {"type": "String"}}}}}`, true},
		{`{"id": "names3", "tables": {"Files": {"fields": {"data": {"type": "File"}}}}}`, false},
	} {
		p, err := tenant.ParseDocument([]byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.reg.Put(t.Context(), p); (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok %v", c.doc, err, c.ok)
		}
	}
}

// filesBehind is filesService in the folder trusting the proxies, with alice's token.
func filesBehind(t *testing.T, proxies []string) (service, string) {
	t.Helper()
	ps, err := tenant.ParseProxies(proxies)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := filesServiceWith(t, tenant.Options{Proxies: ps}, "folder")
	return s, s.token(t, "media", "alice")
}

// TestFileURLsBehindProxies: File.url starts where the request was sent, as a trusted proxy's
// X-Forwarded-Proto, -Host and -Prefix say; any other client's are ignored, so that nobody
// gets links to a host of their choosing answered (or cached) in a project's name.
func TestFileURLsBehindProxies(t *testing.T) {
	forwarded := []string{"X-Forwarded-Host", "files.example", "X-Forwarded-Proto", "https", "X-Forwarded-Prefix", "/edge/"}
	for _, tc := range []struct {
		name    string
		proxies []string
		// want are the starts of the url answered on the project's host and in its path form
		// on the apex host.
		host, path string
	}{
		{"no trusted proxy", nil, "http://media.platform.test/files/", "http://platform.test/p/media/files/"},
		{"another proxy trusted", []string{"10.0.0.0/8"}, "http://media.platform.test/files/", "http://platform.test/p/media/files/"},
		{"the peer trusted", []string{"127.0.0.1"}, "https://files.example/edge/files/", "https://files.example/edge/p/media/files/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, alice := filesBehind(t, tc.proxies)
			a := s.multipartPost(t, alice, createPost, map[string]any{"photo": nil}, []upload{{"variables.photo", "cat.png", pngOf(t, 8, 8)}}, true)
			var post struct{ ID string }
			if len(a.Errors) > 0 || json.Unmarshal(a.Data["createPost"], &post) != nil {
				t.Fatalf("create: %+v", a)
			}
			query, _ := json.Marshal(map[string]any{"query": `query($id: ID!) { post(id: $id) { photo { url signedUrl } } }`, "variables": map[string]any{"id": post.ID}})
			for _, at := range []struct{ endpoint, want string }{
				{"http://media.platform.test/api/v1/graphql", tc.host},
				{"http://platform.test/p/media/api/v1/graphql", tc.path},
			} {
				res, body := s.fetch(t, http.MethodPost, at.endpoint, alice, query, append([]string{"Content-Type", "application/json"}, forwarded...)...)
				var got struct {
					Data struct{ Post struct{ Photo fileOut } }
				}
				if res.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil {
					t.Fatalf("%s: %d %s", at.endpoint, res.StatusCode, body)
				}
				if u := got.Data.Post.Photo; !strings.HasPrefix(u.URL, at.want) || !strings.HasPrefix(u.SignedURL, at.want) {
					t.Errorf("through %s: url %q, signedUrl %q, want them under %s", at.endpoint, u.URL, u.SignedURL, at.want)
				}
			}
			// A PUT answers the File it stored with its url too.
			res, body := s.fetch(t, http.MethodPut, "http://media.platform.test/files/posts/"+post.ID+"/docs?name=a.txt", alice, []byte("text"), forwarded...)
			var put fileOut
			if res.StatusCode != http.StatusOK || json.Unmarshal(body, &put) != nil {
				t.Fatalf("PUT: %d %s", res.StatusCode, body)
			}
			if !strings.HasPrefix(put.URL, tc.host) {
				t.Errorf("PUT answers url %q, want it under %s", put.URL, tc.host)
			}
		})
	}
}
