package code

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/platform-dev/platform/tools/code/goscan"
)

// hashWindows gives the Go files of snap their duplication windows and the design-pattern
// evidence of their function bodies, which their first parse leaves out (facts.Unhashed),
// reading them again: only detect_patterns needs them, the windows kept for every file were a
// quarter of the parse cache, and the evidence needs syntax trees of the bodies, which were
// most of a cold analysis's time. The facts with them replace the cached ones, so each file
// is read again once. A file changed since snap was listed keeps neither in this answer.
func (a *Analyzer) hashWindows(ctx context.Context, snap *snapshot) error {
	var todo []*fileInfo
	for _, fi := range snap.files {
		if fi.F != nil && fi.F.Unhashed {
			todo = append(todo, fi)
		}
	}
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(todo))
	for w := range workers {
		wg.Go(func() {
			var scratch blocks
			var comments [][2]int
			var p goParser
			for i := w; i < len(todo) && ctx.Err() == nil; i += workers {
				fi := todo[i]
				src := source(snap.root, fi)
				if src == nil || xxhash.Sum64(src) != fi.Hash {
					continue
				}
				comments = goComments(comments[:0], src)
				scratch = codeBlocks(scratch, src, comments)
				full, err := p.full(fi.Rel, src)
				if err != nil {
					continue
				}
				f := *fi.F
				f.Unhashed = false
				f.Hints = exact(full.Hints)
				f.Signatures = full.Signatures
				f.Blocks = blocks{}
				if scratch.len() > 0 {
					f.Blocks = blocks{slices.Clone(scratch.hashes), slices.Clone(scratch.lines)}
				}
				a.mu.Lock()
				if e := a.cache[cacheKey{hash: fi.Hash, kind: "Go"}]; e != nil && e.f == fi.F {
					e.f = &f
				}
				a.mu.Unlock()
				fi.F = &f
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// goComments appends to dst the byte ranges of src's comments, in order.
func goComments(dst [][2]int, src []byte) [][2]int {
	var s goscan.Scanner
	s.Init(src)
	for {
		tok, start, end := s.Next()
		switch tok {
		case goscan.EOF:
			return dst
		case goscan.Comment:
			dst = append(dst, [2]int{start, end})
		}
	}
}
