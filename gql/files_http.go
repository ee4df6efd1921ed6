package gql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"strings"

	"github.com/platform-dev/platform/store"
)

// ServeFile answers FilesPath/<table>/<uid>/<field>[/<id>]. GET and HEAD answer the file id
// of the record's field (Range, If-None-Match and If-Modified-Since as http.ServeContent
// answers them) to a caller the table's read rule lets read the record, or to anyone with a
// valid signed URL; ?thumb=WxH answers a thumbnail of an image, of a size the field
// declares. PUT stores the body as the field's file (one more file of a [File] field) under
// the update rule, named by ?name= (default "file"), and answers the File as JSON. Errors
// have the GraphQL errors' shape.
func (a *API) ServeFile(w http.ResponseWriter, r *http.Request, g Guard) {
	fail := func(status int, code, msg string, ext map[string]any) {
		writeError(w, mediaJSON, status, code, msg, withRequestID(r.Context(), ext))
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, FilesPath), "/")
	if a.files == nil || len(parts) < 3 || len(parts) > 4 {
		fail(http.StatusNotFound, CodeNotFound, "no file here: a file's address is "+FilesPath+"<table>/<uid>/<field>/<id>, as its url says", nil)
		return
	}
	t, uid := a.lists[parts[0]], parts[1]
	var f store.Field
	if t != nil {
		f, _ = t.def.Field(parts[2])
	}
	if t == nil || f.File == nil {
		fail(http.StatusNotFound, CodeNotFound, fmt.Sprintf("no table has a File field %q: a file's address is %s<table>/<uid>/<field>/<id>", strings.Join(parts[:min(3, len(parts))], "/"), FilesPath), nil)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), a.cfg.Timeout)
	defer cancel()
	ctx = a.files.withBase(ctx, r)
	switch {
	case (r.Method == http.MethodGet || r.Method == http.MethodHead) && len(parts) == 4:
		present, valid := a.files.signed(r)
		if present && !valid {
			fail(http.StatusForbidden, CodeForbidden, "the signed URL has expired or its signature does not match: ask for a new one (File.signedUrl)", nil)
			return
		}
		if !present && g != nil {
			ctx = WithGuard(ctx, g)
		}
		a.download(ctx, w, r, t, f, uid, parts[3], fail)
	case r.Method == http.MethodPut && len(parts) == 3:
		a.put(WithGuard(ctx, g), w, r, t, f, uid, fail)
	default:
		w.Header().Set("Allow", "GET, HEAD (of a file), PUT (of a field)")
		fail(http.StatusMethodNotAllowed, CodeBadRequest, "GET or HEAD "+FilesPath+"<table>/<uid>/<field>/<id> downloads a file; PUT "+FilesPath+"<table>/<uid>/<field> uploads one", nil)
	}
}

// download answers the file id of the field f of the record uid of t, as the caller reads it.
func (a *API) download(ctx context.Context, w http.ResponseWriter, r *http.Request, t *table, f store.Field, uid, id string, fail func(int, string, string, map[string]any)) {
	var meta *store.FileMeta
	err := t.read(ctx, store.Query{Filter: store.Compare(store.KeyUID, store.Eq, uid), Limit: 1}, func(rec store.Record) (bool, error) {
		for _, m := range t.fileMetas(json.RawMessage(rec), f.Name) {
			if m.Key == t.def.Name+"/"+id {
				meta = &m
			}
		}
		return false, nil
	})
	if err != nil {
		a.fileError(ctx, w, err, fail)
		return
	}
	if meta == nil {
		// A record the read rule hides answers as one that is not there.
		fail(http.StatusNotFound, CodeNotFound, fmt.Sprintf("no file %q in %s of the %s %q, or you may not read it", id, f.Name, t.names.typ, uid), nil)
		return
	}
	key, mt := meta.Key, meta.MimeType
	if size := r.URL.Query().Get("thumb"); size != "" {
		var msg string
		if key, msg, err = a.thumbnail(ctx, t, f, *meta, size); msg != "" {
			fail(http.StatusBadRequest, CodeBadRequest, msg, map[string]any{"thumbs": f.File.Thumbs})
			return
		}
		if err != nil {
			a.fileError(ctx, w, err, fail)
			return
		}
		mt = "image/png"
	}
	// The bytes take as long as the client reads them, not the request's time limit (a
	// bucket's reader stops with its context).
	blob, err := a.files.blobs.Open(r.Context(), key)
	if err != nil {
		a.fileError(ctx, w, err, fail)
		return
	}
	defer blob.Close()
	h := w.Header()
	h.Set("Content-Type", mt)
	h.Set("X-Content-Type-Options", "nosniff")
	// The bytes are the uploader's: a page among them must not run as the project's.
	h.Set("Content-Security-Policy", "sandbox")
	h.Set("Cache-Control", "private, no-cache")
	h.Set("Content-Disposition", mime.FormatMediaType(disposition(mt), map[string]string{"filename": meta.Name}))
	if key == meta.Key {
		h.Set("ETag", `"`+meta.ETag+`"`)
	}
	http.ServeContent(w, r, "", blob.ModTime(), blob)
}

// disposition shows media a browser shows safely; anything else is saved.
func disposition(mt string) string {
	if strings.HasPrefix(mt, "image/") && mt != "image/svg+xml" || strings.HasPrefix(mt, "video/") || strings.HasPrefix(mt, "audio/") {
		return "inline"
	}
	return "attachment"
}

// put stores the request's body as the file of the field f of the record uid of t.
func (a *API) put(ctx context.Context, w http.ResponseWriter, r *http.Request, t *table, f store.Field, uid string, fail func(int, string, string, map[string]any)) {
	limit := min(f.File.MaxSize, a.files.maxFile)
	name := r.URL.Query().Get("name")
	u, err := spool(http.MaxBytesReader(w, r.Body, limit+1), name, limit)
	if u != nil {
		defer (&request{uploads: []*Upload{u}}).removeUploads()
	}
	switch {
	case errors.Is(err, errFileTooLarge):
		fail(http.StatusRequestEntityTooLarge, CodeBadUserInput, fmt.Sprintf("the file is larger than the %d bytes %s takes", limit, f.Name), map[string]any{"reason": "FILE_TOO_LARGE", "maxSize": limit})
		return
	case err != nil:
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			fail(http.StatusRequestEntityTooLarge, CodeBadUserInput, fmt.Sprintf("the file is larger than the %d bytes %s takes", limit, f.Name), map[string]any{"reason": "FILE_TOO_LARGE", "maxSize": limit})
			return
		}
		fail(http.StatusBadRequest, CodeBadRequest, "read the body: "+err.Error(), nil)
		return
	}
	var value any = u
	if f.Type.List {
		// The files the record holds stay; the new one comes last.
		var raw json.RawMessage
		if err := t.records.Get(ctx, t.def.Name, uid, store.All, &raw); err != nil && !errors.Is(err, store.ErrNotFound) {
			a.fileError(ctx, w, err, fail)
			return
		}
		var list []any
		for _, m := range t.fileMetas(raw, f.Name) {
			list = append(list, &keptFile{meta: map[string]any{"name": m.Name, "size": m.Size, "mimeType": m.MimeType, "etag": m.ETag, "key": m.Key}})
		}
		value = append(list, u)
	}
	rec, err := t.update(ctx, args{UID: argValue{set: true, v: uid}, Data: argValue{set: true, v: map[string]any{f.Name: value}}})
	if err != nil {
		a.fileError(ctx, w, err, fail)
		return
	}
	fv := rec.Elem().Field(t.fieldIndex(f.Name))
	if fv.Kind() == reflect.Pointer {
		fv = fv.Elem()
	}
	if fv.Kind() == reflect.Slice {
		fv = fv.Index(fv.Len() - 1)
	}
	file := fv.Interface().(fileValue)
	w.Header().Set("Content-Type", contentType(mediaJSON))
	_ = json.NewEncoder(w).Encode(map[string]any{"name": file.Name(), "size": file.Size(), "mimeType": file.MimeType(), "etag": file.Etag(), "url": file.URL(ctx)})
}

// fileError answers an error of a file request: a caller's with the status its code says,
// any other as INTERNAL, logged.
func (a *API) fileError(ctx context.Context, w http.ResponseWriter, err error, fail func(int, string, string, map[string]any)) {
	if errors.Is(err, store.ErrNoBlob) {
		a.cfg.Logger.ErrorContext(ctx, "a record names a file whose bytes are missing", "err", err)
		fail(http.StatusNotFound, CodeNotFound, "the file's bytes are missing", nil)
		return
	}
	var e *Error
	if !errors.As(a.public(ctx, err), &e) {
		fail(http.StatusInternalServerError, CodeInternal, "internal error", nil)
		return
	}
	status := map[string]int{
		CodeBadUserInput: http.StatusBadRequest, CodeForbidden: http.StatusForbidden, CodeNotFound: http.StatusNotFound,
		CodeConflict: http.StatusConflict, CodeQuotaExceeded: http.StatusInsufficientStorage, CodeTimeout: http.StatusGatewayTimeout,
	}[e.Code]
	switch e.Extra["reason"] {
	case "FILE_TOO_LARGE":
		status = http.StatusRequestEntityTooLarge
	case "MIME_TYPE_NOT_ALLOWED":
		status = http.StatusUnsupportedMediaType
	}
	if status == 0 {
		status = http.StatusInternalServerError
	}
	fail(status, e.Code, e.Message, e.Extra)
}

// fileMetas are the files rec, a stored record, holds in its field name.
func (t *table) fileMetas(rec json.RawMessage, name string) []store.FileMeta {
	var m map[string]json.RawMessage
	if len(rec) == 0 || json.Unmarshal(rec, &m) != nil {
		return nil
	}
	var one store.FileMeta
	var list []store.FileMeta
	if json.Unmarshal(m[name], &list) != nil && json.Unmarshal(m[name], &one) == nil && one.Key != "" {
		list = []store.FileMeta{one}
	}
	return list
}
