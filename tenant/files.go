package tenant

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/coord"
	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// FileDoc are the limits of a File field as the project document writes them.
type FileDoc struct {
	MaxSize   int64    `json:"maxSize,omitempty"`
	MimeTypes []string `json:"mimeTypes,omitempty"`
	MaxCount  int      `json:"maxCount,omitempty"`
	Thumbs    []string `json:"thumbs,omitempty"`
}

// Defaults and bounds of a File field's limits.
const (
	DefaultFileMaxSize  = 5 << 20
	DefaultFileMaxCount = 10
	MaxFileCount        = 100
	MaxThumbSide        = 4096
)

var (
	fileTypes  = map[string]bool{"File": false, "[File]": true}
	thumbSize  = regexp.MustCompile(`^(0|[1-9][0-9]{0,3})x(0|[1-9][0-9]{0,3})$`)
	mimeFormat = regexp.MustCompile(`^[a-z0-9][a-z0-9!#$&^_.+-]*/(\*|[a-z0-9][a-z0-9!#$&^_.+-]*)$`)
)

// fieldType is the store type of a field: a File field is kept as JSON (its FileMeta).
func (f FieldDoc) fieldType() (store.FieldType, error) {
	if list, ok := fileTypes[f.Type]; ok {
		return store.FieldType{Scalar: store.JSON, List: list}, nil
	}
	return store.ParseFieldType(f.Type)
}

// fileSpec is the store's FileSpec of a File field with the defaults filled in; nil for
// another field.
func (f FieldDoc) fileSpec() *store.FileSpec {
	list, ok := fileTypes[f.Type]
	if !ok {
		return nil
	}
	var d FileDoc
	if f.File != nil {
		d = *f.File
	}
	s := &store.FileSpec{MaxSize: d.MaxSize, MimeTypes: d.MimeTypes, Thumbs: d.Thumbs}
	if s.MaxSize == 0 {
		s.MaxSize = DefaultFileMaxSize
	}
	if list {
		s.MaxCount = d.MaxCount
		if s.MaxCount == 0 {
			s.MaxCount = DefaultFileMaxCount
		}
	}
	return s
}

// checkFile reports what is wrong with a field's file limits: limits on a field that is not
// a File, a default on one, a count on a single file, bad media types and thumbnail sizes.
func checkFile(fpath string, f FieldDoc, de *DocumentError) {
	list, isFile := fileTypes[f.Type]
	switch {
	case !isFile && f.File != nil:
		de.add(fpath+".file", "only a field of type File or [File] takes file limits")
		return
	case !isFile:
		return
	case f.Default != nil:
		de.add(fpath+".default", "a File field takes no default")
	}
	if f.File == nil {
		return
	}
	if f.File.MaxSize < 0 {
		de.add(fpath+".file.maxSize", "must be positive")
	}
	switch {
	case f.File.MaxCount != 0 && !list:
		de.add(fpath+".file.maxCount", "only a [File] field holds several files")
	case f.File.MaxCount < 0 || f.File.MaxCount > MaxFileCount:
		de.add(fpath+".file.maxCount", "must be between 1 and %d", MaxFileCount)
	}
	for i, m := range f.File.MimeTypes {
		if !mimeFormat.MatchString(m) {
			de.add(fmt.Sprintf("%s.file.mimeTypes.%d", fpath, i), "%q is not a media type such as image/png or image/*", m)
		}
	}
	for i, t := range f.File.Thumbs {
		if !thumbSize.MatchString(t) || t == "0x0" {
			de.add(fmt.Sprintf("%s.file.thumbs.%d", fpath, i), "%q is not a size WxH such as 100x100 or 400x0 (0 keeps the proportions, each side at most %d)", t, MaxThumbSide)
		}
	}
}

// FileOptions bound the files of every project (see gql.Config) and sign their URLs.
type FileOptions struct {
	// Key is the deployment's secret each project's URL-signing key is derived from
	// (projectFileKey); without one, a random key signs URLs that hold on this process only.
	Key            []byte
	MaxFileBytes   int64
	MaxUploadBytes int64
	MaxUploadFiles int
	MaxImagePixels int64
	// SweepEvery is how often the files no record names are removed (RunFileSweeps);
	// 0: DefaultFileSweepEvery.
	SweepEvery time.Duration
}

// projectFileKey is the key that signs the URLs of project id's files: derived from the
// deployment's secret, so that every replica signs alike and no project's key signs
// another's URLs.
func projectFileKey(secret []byte, id string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("files\x00" + id))
	return m.Sum(nil)
}

// serveFiles answers a project's files (gql.API.ServeFile): a signed URL needs no token,
// anything else runs as the caller the token names, under the access rules.
func (r *Registry) serveFiles(c echo.Context) error {
	rt, req := RuntimeOf(c), c.Request()
	var g gql.Guard
	if q := req.URL.Query(); !q.Has("sig") || req.Method != http.MethodGet && req.Method != http.MethodHead {
		var ok bool
		if g, ok = tokenGuard(c.Response(), req, rt.Verifier, rt.Rules); !ok {
			return nil
		}
	}
	rt.API.ServeFile(c.Response(), req, g)
	return nil
}

// Defaults of the file sweep (RunFileSweeps).
const (
	DefaultFileSweepEvery = time.Hour
	// fileSweepGrace spares files younger than it: the uploads of writes still running.
	fileSweepGrace = time.Hour
)

// RunFileSweeps removes, at once and then every FileOptions.SweepEvery until ctx ends, the
// files of every project that no record names (gql.API.SweepFiles), on one replica at a
// time: the one that holds the lock.
func (r *Registry) RunFileSweeps(ctx context.Context) {
	t := time.NewTicker(cmp.Or(r.opts.Files.SweepEvery, DefaultFileSweepEvery))
	defer t.Stop()
	for {
		r.sweepFiles(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *Registry) sweepFiles(ctx context.Context) {
	log := r.opts.Logger
	work, unlock, got, err := coord.NewLock(r.stores.Redis, coord.FileSweepLock, coord.FileSweepLockTTL).TryLock(ctx)
	if err != nil || !got {
		if err != nil {
			log.Warn("file sweep: take the lock", "err", err)
		}
		return
	}
	defer unlock()
	projects, err := r.List(work)
	if err != nil {
		log.Error("file sweep: list projects", "err", err)
		return
	}
	for _, p := range projects {
		if projectFiles(r.stores, p) == nil {
			continue
		}
		rt, err := r.Runtime(work, p.ID)
		if err == nil {
			var n int
			if n, err = rt.API.SweepFiles(work, fileSweepGrace); n > 0 {
				log.Info("file sweep: removed files no record names", "project", p.ID, "files", n)
			}
		}
		if err != nil {
			log.Warn("file sweep", "project", p.ID, "err", err)
		}
	}
}
