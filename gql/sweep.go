package gql

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/platform-dev/platform/store"
)

// SweepFiles removes the files no record names (and their thumbnails) that are older than
// grace: those a crash left between storing an upload and writing its record, or between
// a write and the removal of what it replaced. grace spares the uploads of writes still
// running. It answers how many files it removed.
func (a *API) SweepFiles(ctx context.Context, grace time.Duration) (int, error) {
	if a.files == nil {
		return 0, nil
	}
	named := map[string]bool{}
	for _, t := range a.lists {
		if t.files == nil {
			continue
		}
		err := t.records.Each(ctx, t.def.Name, store.Query{}, func(rec store.Record) (bool, error) {
			for _, k := range t.fileKeys([]byte(rec), nil) {
				named[k] = true
			}
			return true, nil
		})
		if err != nil {
			return 0, fmt.Errorf("sweep files: read %s: %w", t.def.Name, err)
		}
	}
	var orphans []string
	cutoff := a.files.now().Add(-grace)
	err := a.files.blobs.Walk(ctx, func(key string, mod time.Time) error {
		base, _, _ := strings.Cut(key, "_") // a thumbnail goes with its file
		if !named[base] && mod.Before(cutoff) {
			orphans = append(orphans, key)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sweep files: %w", err)
	}
	for i, k := range orphans {
		if err := a.files.blobs.Delete(ctx, k); err != nil {
			return i, fmt.Errorf("sweep files: %w", err)
		}
	}
	return len(orphans), nil
}
