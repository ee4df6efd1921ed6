package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/platform-dev/platform/store"
)

// exportFiles writes every file the project keeps (not the thumbnails, made again on
// demand) as pieces of at most store.ExportFilePiece bytes, and answers how many.
func (s *Source) exportFiles(ctx context.Context, enc *json.Encoder) (int64, error) {
	if s.files == nil {
		return 0, nil
	}
	var n int64
	buf := make([]byte, store.ExportFilePiece)
	err := s.files.Walk(ctx, func(key string, _ time.Time) error {
		if !store.IsFileKey(key) {
			return nil
		}
		b, err := s.files.Open(ctx, key)
		if err != nil {
			return err
		}
		defer b.Close()
		for last := false; !last; {
			k, err := io.ReadFull(b, buf)
			last = errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
			if err != nil && !last {
				return fmt.Errorf("read file %s: %w", key, err)
			}
			if err := enc.Encode(store.ExportLine{File: &store.ExportFile{Key: key, Data: buf[:k], Last: last}}); err != nil {
				return fmt.Errorf("write export: %w", err)
			}
		}
		n++
		return nil
	})
	return n, err
}

// importFile adds a piece of a file to the one being read, and stores the file once its last
// piece is in: before the records are put in place, so that none names missing bytes (an
// import that fails after leaves files no record names, which SweepFiles removes).
func (t *Target) importFile(ctx context.Context, f *store.ExportFile) error {
	if !store.IsFileKey(f.Key) {
		return badExport(fmt.Errorf("a file named %q, which is not a file's key", f.Key))
	}
	if t.file != nil && t.file.key != f.Key {
		return badExport(fmt.Errorf("the file %q begins before the last piece of %q", f.Key, t.file.key))
	}
	if t.file == nil {
		tmp, err := os.CreateTemp("", "platform-import-*")
		if err != nil {
			return fmt.Errorf("import file %s: %w", f.Key, err)
		}
		t.file = &importing{key: f.Key, tmp: tmp}
	}
	if _, err := t.file.tmp.Write(f.Data); err != nil {
		return fmt.Errorf("import file %s: %w", f.Key, err)
	}
	if !f.Last {
		return nil
	}
	defer t.dropImporting()
	size, err := t.file.tmp.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = t.file.tmp.Seek(0, io.SeekStart)
	}
	if err == nil {
		err = t.stores.ProjectBlobs(t.project.ID).Put(ctx, f.Key, t.file.tmp, size)
	}
	if err != nil {
		return fmt.Errorf("import file %s: %w", f.Key, err)
	}
	t.files++
	return nil
}

// importing is a file whose pieces are being read.
type importing struct {
	key string
	tmp *os.File
}

// dropImporting removes the temporary copy of the file being read.
func (t *Target) dropImporting() {
	if t.file != nil {
		t.file.tmp.Close()
		os.Remove(t.file.tmp.Name())
		t.file = nil
	}
}

// projectFiles are the files of project p; nil when it has no File field.
func projectFiles(stores *store.Stores, p *Project) store.Blobs {
	for _, t := range p.Tables {
		for _, f := range t.Fields {
			if f.fileSpec() != nil {
				return stores.ProjectBlobs(p.ID)
			}
		}
	}
	return nil
}
