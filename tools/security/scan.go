package security

import (
	"context"
	"crypto/sha256"
	"io"
	"os"

	"github.com/go-enry/go-enry/v2"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/platform-dev/platform/tools/workspace"
)

// fileKey identifies the scan of one file: gitleaks' rules look at the path as well as the
// content, and the scope decides which rules run.
type fileKey struct {
	rel      string
	sum      [sha256.Size]byte
	code     bool // code rules ran
	secrets  bool // secret rules ran
	docker   bool // Dockerfile rules ran
	vendored bool
}

// cacheEntries bounds the per-file cache: a key and an empty result take about 150 bytes, so
// a full cache of mostly clean files stays near 30 MB.
const cacheEntries = 200_000

// fileCache keeps the findings of every file scanned, by path and content hash, so an
// unchanged file is never scanned twice and an edited one is scanned again.
type fileCache = lru.Cache[fileKey, []Finding]

func newFileCache() *fileCache {
	c, err := lru.New[fileKey, []Finding](cacheEntries)
	if err != nil {
		panic(err) // only for a size <= 0
	}
	return c
}

// vendoredContent reads a vendored file the walk listed without content, within the walk's
// own size limit for the project's files; nil when it is too large, binary or unreadable.
func vendoredContent(f workspace.File) []byte {
	limit := workspace.DefaultLimits().MaxFileSize
	if f.Size > limit {
		return nil
	}
	fh, err := os.Open(f.Path) // the walk checked that a link's target lies inside a root
	if err != nil {
		return nil
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, limit))
	if err != nil || enry.IsBinary(b) {
		return nil
	}
	return b
}

// scanFile runs the per-file rules on one file, from the cache when its content was scanned
// before (cached reports whether it was). A scan cut short by ctx is not cached. An error is
// a Dockerfile that does not parse; the other rules still ran.
func (a *Assessor) scanFile(ctx context.Context, k fileKey, f workspace.File, content []byte) (fs []Finding, cached bool, err error) {
	k.sum = sha256.Sum256(content)
	if fs, ok := a.cache.Get(k); ok {
		return fs, true, nil
	}
	var out []Finding
	if k.docker {
		var dfs []Finding
		dfs, err = dockerfileFindings(f.Rel, content)
		out = append(out, dfs...)
	}
	if k.secrets {
		out = append(out, secrets(ctx, a.secrets, f.Rel, k.vendored, content)...)
	}
	if k.code {
		out = append(out, codeFindings(ctx, f.Rel, f.Language, content)...)
	}
	for i := range out {
		out[i].Vendored, out[i].secret = k.vendored, ""
	}
	if ctx.Err() == nil && err == nil {
		a.cache.Add(k, out)
	}
	return out, false, err
}
