package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// FileSpec is what a field of type File (or [File]) accepts. Its stored value is a FileMeta
// (a JSON object, a list of them for [File]); the bytes are kept in the project's Blobs.
type FileSpec struct {
	// MaxSize bounds one file, in bytes.
	MaxSize int64
	// MimeTypes are the accepted media types, as sniffed from the bytes: "image/png", or
	// "image/*" for any image; none accepts any type.
	MimeTypes []string
	// MaxCount bounds the files of a [File] field.
	MaxCount int
	// Thumbs are the thumbnail sizes that may be asked of an image, "WxH" (0 for one side
	// keeps the image's proportions).
	Thumbs []string
}

// Accepts reports whether the field accepts a file of the media type mime.
func (s FileSpec) Accepts(mime string) bool {
	if len(s.MimeTypes) == 0 {
		return true
	}
	for _, m := range s.MimeTypes {
		if m == mime || strings.HasSuffix(m, "/*") && strings.HasPrefix(mime, m[:len(m)-1]) {
			return true
		}
	}
	return false
}

// FileMeta is the stored value of a file: what the API shows of it, and the key of its bytes.
type FileMeta struct {
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	MimeType string `json:"mimeType"`
	// ETag is the SHA-256 of the bytes, in hex.
	ETag string `json:"etag"`
	Key  string `json:"key"`
}

// NewFileKey makes the key a new file of table is kept under: the table, then random bytes,
// so that a replaced file never shares the key of the one it replaces.
func NewFileKey(table string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return table + "/" + hex.EncodeToString(b[:])
}

// ErrNoBlob is returned for a key whose bytes are not kept.
var ErrNoBlob = errors.New("no such file")

// Blob is the bytes of one file, open for reading from any offset.
type Blob interface {
	io.ReadSeekCloser
	Size() int64
	ModTime() time.Time
}

// Blobs keep one project's file bytes by key. Put makes a file appear whole or not at all.
type Blobs interface {
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	Open(ctx context.Context, key string) (Blob, error)
	Delete(ctx context.Context, key string) error
	// Walk calls fn with the key and age of every file kept.
	Walk(ctx context.Context, fn func(key string, modTime time.Time) error) error
	// Usage is the bytes kept.
	Usage(ctx context.Context) (int64, error)
}

func hasFileFields(tables []Table) bool {
	for _, t := range tables {
		for _, f := range t.Fields {
			if f.File != nil {
				return true
			}
		}
	}
	return false
}

// ProjectBlobs returns the file store of a project: the configured bucket, or the folder
// files/<project> beside the projects' databases in the data folder.
func (s *Stores) ProjectBlobs(projectID string) Blobs {
	if s.files != nil {
		return s.files.project(projectID)
	}
	return localBlobs{dir: filepath.Join(s.dataDir, "files", projectID)}
}

// localBlobs keep files in a folder, one file per key.
type localBlobs struct{ dir string }

func (b localBlobs) path(key string) (string, error) {
	if key == "" || strings.Contains(key, "..") || strings.HasPrefix(key, "/") || strings.Contains(key, "\\") {
		return "", fmt.Errorf("file key %q: %w", key, ErrNoBlob)
	}
	return filepath.Join(b.dir, filepath.FromSlash(key)), nil
}

// Put writes the bytes to a temporary name beside the file, syncs them, and renames them
// into place, then syncs the folder: a crash leaves either no file or the whole file.
func (b localBlobs) Put(_ context.Context, key string, r io.Reader, size int64) error {
	p, err := b.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("put file %s: %w", key, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return fmt.Errorf("put file %s: %w", key, err)
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, r)
	if err == nil && n != size {
		err = fmt.Errorf("wrote %d bytes of %d", n, size)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err == nil {
		err = syncDir(filepath.Dir(p))
	}
	if err != nil {
		return fmt.Errorf("put file %s: %w", key, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

type localBlob struct {
	*os.File
	info fs.FileInfo
}

func (l localBlob) Size() int64        { return l.info.Size() }
func (l localBlob) ModTime() time.Time { return l.info.ModTime() }

func (b localBlobs) Open(_ context.Context, key string) (Blob, error) {
	p, err := b.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open file %s: %w", key, ErrNoBlob)
	}
	if err != nil {
		return nil, fmt.Errorf("open file %s: %w", key, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open file %s: %w", key, err)
	}
	return localBlob{File: f, info: info}, nil
}

func (b localBlobs) Delete(_ context.Context, key string) error {
	p, err := b.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete file %s: %w", key, err)
	}
	return nil
}

func (b localBlobs) Walk(ctx context.Context, fn func(string, time.Time) error) error {
	err := filepath.WalkDir(b.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(b.dir, p)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel), info.ModTime())
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func (b localBlobs) Usage(ctx context.Context) (int64, error) {
	var n int64
	err := filepath.WalkDir(b.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	return n, err
}

// fileKey is the form of the keys NewFileKey makes.
var fileKey = regexp.MustCompile(`^[_A-Za-z][_A-Za-z0-9]{0,62}/[0-9a-f]{32}$`)

// IsFileKey reports whether key is one NewFileKey makes: not a thumbnail's, nor anything a
// file of an export could name to reach elsewhere.
func IsFileKey(key string) bool { return fileKey.MatchString(key) }
