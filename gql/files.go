package gql

// Fields of type File: their values are store.FileMeta objects kept in the record, their
// bytes in the project's store.Blobs. A create or update stores the bytes of its uploads
// before the record is written and removes the bytes the record held before only once the
// write is committed: a crash between leaves an orphan (SweepFiles removes it), never a
// record pointing at missing bytes.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/platform-dev/platform/store"
)

// Defaults of the file bounds of Config.
const (
	DefaultMaxFileBytes   = 32 << 20
	DefaultMaxUploadBytes = 64 << 20
	DefaultMaxUploadFiles = 20
	// DefaultMaxImagePixels bounds the decoded size of an image a thumbnail is made of: a
	// small file may decode to gigabytes (a decompression bomb).
	DefaultMaxImagePixels = 40_000_000
	// DefaultSignedURLExpiry is how long a signed URL lasts when signedUrl names no expiresIn;
	// MaxSignedURLExpiry bounds expiresIn.
	DefaultSignedURLExpiry = time.Hour
	MaxSignedURLExpiry     = 7 * 24 * time.Hour
)

// FilesPath starts the address of every file of a project: /files/<table>/<uid>/<field>/<id>.
const FilesPath = "/files/"

// fileSDL is the part of the schema a project with File fields adds.
const fileSDL = `
"A file uploaded with the GraphQL multipart request spec (a part named in map), or as the body of a PUT at its field's URL."
scalar Upload

"A file kept with a record. url is stable and answers under the table's read rule; signedUrl answers anyone until it expires."
type File {
  name: String!
  "Bytes."
  size: Int!
  "The media type sniffed from the bytes."
  mimeType: String!
  "The SHA-256 of the bytes, in hex: the download's ETag."
  etag: String!
  url: String!
  "A URL that needs no token, valid for expiresIn seconds (default 3600, at most 604800)."
  signedUrl(expiresIn: Int): String!
}
`

// files are one API's file settings.
type files struct {
	blobs store.Blobs
	// key signs URLs (signedUrl); nil: signed URLs are not offered.
	key                []byte
	maxFile, maxUpload int64
	maxFiles           int
	maxPixels          int64
	now                func() time.Time
	// base is Config.BaseURL.
	base func(*http.Request) string
}

// hasFiles reports whether one of the tables has a File field.
func hasFiles(tables []Table) bool {
	for _, t := range tables {
		if slices.ContainsFunc(t.Fields, func(f store.Field) bool { return f.File != nil }) {
			return true
		}
	}
	return false
}

// Upload is a file a request carried, spooled to a temporary file: its name as the client
// gave it, its size, its SHA-256 and the media type sniffed from its first bytes.
type Upload struct {
	Filename string
	Size     int64
	MimeType string
	SHA256   string
	path     string
}

// meta is what is stored of an upload kept under key, as the store keeps JSON values.
func (u *Upload) meta(key string) map[string]any {
	return map[string]any{"name": u.Filename, "size": u.Size, "mimeType": u.MimeType, "etag": u.SHA256, "key": key}
}

// keptFile is a file a record already holds, named in a [File] field's new value so that
// it stays (a PUT appends to the list).
type keptFile struct{ meta map[string]any }

// fileValue is a stored file as the record type holds it: its metadata and where it lives.
type fileValue struct {
	meta store.FileMeta
	loc  *fileLoc
}

// fileLoc is the record field a file value was read from.
type fileLoc struct {
	files             *files
	table, uid, field string
}

func (f *fileValue) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &f.meta) }
func (f fileValue) MarshalJSON() ([]byte, error)  { return json.Marshal(f.meta) }

func (f fileValue) Name() string     { return f.meta.Name }
func (f fileValue) Size() int32      { return int32(min(f.meta.Size, 1<<31-1)) }
func (f fileValue) MimeType() string { return f.meta.MimeType }
func (f fileValue) Etag() string     { return f.meta.ETag }

// path is the file's address under the project's host.
func (f fileValue) path() string {
	if f.loc == nil {
		return ""
	}
	_, id, _ := strings.Cut(f.meta.Key, "/")
	return FilesPath + f.loc.table + "/" + f.loc.uid + "/" + f.loc.field + "/" + id
}

// URL is the file's stable address, absolute when the request's address is known.
func (f fileValue) URL(ctx context.Context) string {
	base, _ := ctx.Value(fileBaseKey{}).(string)
	return base + f.path()
}

// SignedURL is URL with an expiry and its signature.
func (f fileValue) SignedURL(ctx context.Context, a struct{ ExpiresIn *int32 }) (string, error) {
	exp := DefaultSignedURLExpiry
	if a.ExpiresIn != nil {
		if *a.ExpiresIn < 1 || time.Duration(*a.ExpiresIn)*time.Second > MaxSignedURLExpiry {
			return "", userError(CodeBadUserInput, fmt.Sprintf("expiresIn must be between 1 and %d seconds", int(MaxSignedURLExpiry.Seconds())))
		}
		exp = time.Duration(*a.ExpiresIn) * time.Second
	}
	if f.loc == nil || f.loc.files.key == nil {
		return "", errors.New("signed URLs have no key")
	}
	until := strconv.FormatInt(f.loc.files.now().Add(exp).Unix(), 10)
	return f.URL(ctx) + "?expires=" + until + "&sig=" + f.loc.files.sign(f.path(), until), nil
}

// sign is the signature of a file's path valid until expires (Unix seconds).
func (fs *files) sign(path, expires string) string {
	m := hmac.New(sha256.New, fs.key)
	m.Write([]byte(path + "?expires=" + expires))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// signed reports whether r carries a valid, unexpired signature of its path.
func (fs *files) signed(r *http.Request) (present, valid bool) {
	q := r.URL.Query()
	exp, sig := q.Get("expires"), q.Get("sig")
	if exp == "" && sig == "" {
		return false, false
	}
	until, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || fs.key == nil || fs.now().Unix() > until {
		return true, false
	}
	return true, hmac.Equal([]byte(sig), []byte(fs.sign(r.URL.Path, exp)))
}

// fileBaseKey keys the scheme, host and path prefix of the request in its context, which
// File.url starts with.
type fileBaseKey struct{}

// withBase notes the address r reached the project at (Config.BaseURL); an API without
// files (fs nil) answers ctx.
func (fs *files) withBase(ctx context.Context, r *http.Request) context.Context {
	if fs == nil {
		return ctx
	}
	return context.WithValue(ctx, fileBaseKey{}, fs.base(r))
}

// requestBase is the scheme and host r was sent to, as this server received it.
func requestBase(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// fileType is the record struct's type of a File field's value.
func fileType(f store.Field) reflect.Type {
	rt := reflect.TypeFor[fileValue]()
	if f.Type.List {
		rt = reflect.SliceOf(rt)
	}
	if !f.Required {
		rt = reflect.PointerTo(rt)
	}
	return rt
}

// locate tells the file values of v, a decoded record, where they were read from.
func (t *table) locate(v reflect.Value) {
	if t.files == nil {
		return
	}
	var loc map[string]*fileLoc
	uid := v.Field(0).String()
	for i, f := range t.def.Fields {
		if f.File == nil {
			continue
		}
		fv := v.Field(i + 1)
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
		}
		if loc == nil {
			loc = map[string]*fileLoc{}
		}
		l := &fileLoc{files: t.files, table: t.def.Name, uid: uid, field: f.Name}
		if fv.Kind() == reflect.Slice {
			for j := range fv.Len() {
				fv.Index(j).Addr().Interface().(*fileValue).loc = l
			}
			continue
		}
		fv.Addr().Interface().(*fileValue).loc = l
	}
}

// fileInput checks the value given for the File field f: an upload (a list of them for
// [File]) within the field's limits, or null. It answers the value to store until the
// bytes are (storeFiles), and what the Guard sees of it.
func (t *table) fileInput(f store.Field, v any) (set, seen any, err error) {
	one := func(i int, e any) (any, map[string]any, error) {
		where := "data." + f.Name
		if f.Type.List {
			where += "[" + strconv.Itoa(i) + "]"
		}
		switch u := e.(type) {
		case *keptFile:
			return u, u.meta, nil
		case *Upload:
			if u.Size > f.File.MaxSize {
				e := userError(CodeBadUserInput, fmt.Sprintf("%s: the file %q is %d bytes, more than the %d bytes this field takes", where, u.Filename, u.Size, f.File.MaxSize))
				e.Extra = map[string]any{"reason": "FILE_TOO_LARGE", "maxSize": f.File.MaxSize}
				return nil, nil, e
			}
			if !f.File.Accepts(u.MimeType) {
				e := userError(CodeBadUserInput, fmt.Sprintf("%s: the file %q is %s, which this field does not take (it takes %s)", where, u.Filename, u.MimeType, strings.Join(f.File.MimeTypes, ", ")))
				e.Extra = map[string]any{"reason": "MIME_TYPE_NOT_ALLOWED", "mimeType": u.MimeType, "allowed": f.File.MimeTypes}
				return nil, nil, e
			}
			return u, map[string]any{"name": u.Filename, "size": u.Size, "mimeType": u.MimeType, "etag": u.SHA256}, nil
		}
		return nil, nil, userError(CodeBadUserInput, fmt.Sprintf("%s: want an Upload (a file part of a multipart request), got %s", where, describe(e)))
	}
	if !f.Type.List {
		return one(0, v)
	}
	items := asList(v)
	if len(items) > f.File.MaxCount {
		e := userError(CodeBadUserInput, fmt.Sprintf("data.%s: %d files, more than the %d this field holds", f.Name, len(items), f.File.MaxCount))
		e.Extra = map[string]any{"reason": "TOO_MANY_FILES", "maxCount": f.File.MaxCount}
		return nil, nil, e
	}
	outs, views := make([]any, len(items)), make([]any, len(items))
	for i, e := range items {
		if outs[i], views[i], err = one(i, e); err != nil {
			return nil, nil, err
		}
	}
	return outs, views, nil
}

// storeFiles stores the bytes of the uploads in set and puts their metadata in their place;
// it answers the keys stored, for dropFiles to remove if the write fails.
func (t *table) storeFiles(ctx context.Context, set map[string]any) ([]string, error) {
	var keys []string
	put := func(e any) (any, error) {
		switch u := e.(type) {
		case *keptFile:
			return u.meta, nil
		case *Upload:
			key := store.NewFileKey(t.def.Name)
			f, err := os.Open(u.path)
			if err != nil {
				return nil, fmt.Errorf("open upload: %w", err)
			}
			defer f.Close()
			if err := t.files.blobs.Put(ctx, key, f, u.Size); err != nil {
				return nil, err
			}
			keys = append(keys, key)
			return u.meta(key), nil
		}
		return e, nil
	}
	for _, f := range t.def.Fields {
		v, ok := set[f.Name]
		if f.File == nil || !ok {
			continue
		}
		if list, ok := v.([]any); ok {
			out := make([]any, len(list))
			for i, e := range list {
				var err error
				if out[i], err = put(e); err != nil {
					t.dropFiles(ctx, keys)
					return nil, err
				}
			}
			set[f.Name] = out
			continue
		}
		stored, err := put(v)
		if err != nil {
			t.dropFiles(ctx, keys)
			return nil, err
		}
		set[f.Name] = stored
	}
	return keys, nil
}

// dropFiles removes the bytes of keys; a failure leaves an orphan for SweepFiles, logged.
func (t *table) dropFiles(ctx context.Context, keys []string) {
	ctx = context.WithoutCancel(ctx)
	for _, k := range keys {
		if err := t.files.blobs.Delete(ctx, k); err != nil {
			t.logger.WarnContext(ctx, "remove file", "table", t.def.Name, "key", k, "err", err)
			continue
		}
		for _, f := range t.def.Fields {
			if f.File == nil {
				continue
			}
			for _, size := range f.File.Thumbs {
				_ = t.files.blobs.Delete(ctx, thumbKey(k, size))
			}
		}
	}
}

// fileKeys are the keys of the files rec, a stored record, holds in the fields named (all
// its File fields when names is nil).
func (t *table) fileKeys(rec json.RawMessage, names map[string]bool) []string {
	var keys []string
	for _, f := range t.def.Fields {
		if f.File == nil || names != nil && !names[f.Name] {
			continue
		}
		for _, fm := range t.fileMetas(rec, f.Name) {
			if fm.Key != "" {
				keys = append(keys, fm.Key)
			}
		}
	}
	return keys
}

// touchedFiles are the File fields a write sets or removes; nil when it touches none.
func (t *table) touchedFiles(set map[string]any, unset []string) map[string]bool {
	if t.files == nil {
		return nil
	}
	var out map[string]bool
	for _, f := range t.def.Fields {
		if _, ok := set[f.Name]; f.File != nil && (ok || slices.Contains(unset, f.Name)) {
			if out == nil {
				out = map[string]bool{}
			}
			out[f.Name] = true
		}
	}
	return out
}

// replaced are the keys before held in the fields touched that after no longer holds.
func (t *table) replaced(before, after json.RawMessage, touched map[string]bool) []string {
	now := t.fileKeys(after, touched)
	return slices.DeleteFunc(t.fileKeys(before, touched), func(k string) bool { return slices.Contains(now, k) })
}

// noUploads refuses uploads in a batch mutation: files are written one record at a time.
func (t *table) noUploads(set map[string]any) error {
	if t.touchedFiles(set, nil) != nil {
		return userError(CodeBadUserInput, "files are uploaded with create and update of one record, not with a batch")
	}
	return nil
}

// planFile adds the selections of a File value (s selects a File field) to ps.
func (b *planBuilder) planFile(s *ast.Field, ps *planSel) bool {
	ps.file = true
	return b.each(s.SelectionSet, nil, func(c *ast.Field, cond []condition) bool {
		sel := planSel{key: c.Alias, cond: cond, index: -1, part: c.Name}
		if c.Name == "__typename" {
			sel.part = ""
		}
		for _, arg := range c.Arguments {
			sel.args = append(sel.args, planArg{name: arg.Name, value: arg.Value})
		}
		ps.sels = append(ps.sels, sel)
		return true
	})
}

// file writes the File value (or list of them) s selects of v, a record; false when it is
// null though its type is not.
func (w *execution) file(out []byte, v reflect.Value, s *planSel, path []any) ([]byte, bool) {
	fv := v.Field(s.index)
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return append(out, "null"...), true
		}
		fv = fv.Elem()
	}
	sels := w.selected(s.sels)
	one := func(out []byte, f fileValue, path []any) ([]byte, bool) {
		return w.object(out, "File", sels, path, func(out []byte, p *planSel, path []any) ([]byte, bool) {
			switch p.part {
			case "name":
				return appendJSON(out, f.Name()), true
			case "size":
				return strconv.AppendInt(out, int64(f.Size()), 10), true
			case "mimeType":
				return appendJSON(out, f.MimeType()), true
			case "etag":
				return appendJSON(out, f.Etag()), true
			case "url":
				return appendJSON(out, f.URL(w.ctx)), true
			}
			var a struct{ ExpiresIn *int32 }
			for _, arg := range p.args {
				if n, ok := literal(arg.value, w.vars).(int32); ok {
					a.ExpiresIn = &n
				} else if x, ok := literal(arg.value, w.vars).(float64); ok {
					n := int32(max(min(x, 1<<31-1), -1<<31))
					a.ExpiresIn = &n
				}
			}
			u, err := f.SignedURL(w.ctx, a)
			if err != nil {
				w.fail(err, path)
				return append(out, "null"...), false
			}
			return appendJSON(out, u), true
		})
	}
	if fv.Kind() == reflect.Slice {
		return w.list(out, fv.Len(), path, func(out []byte, i int, path []any) ([]byte, bool) {
			return one(out, fv.Index(i).Interface().(fileValue), path)
		})
	}
	return one(out, fv.Interface().(fileValue), path)
}
