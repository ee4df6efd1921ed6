package code

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/platform-dev/platform/tools/code/goscan"
)

// hashWindows gives the Go files of snap their duplication windows and the facts of a full
// parse (the design-pattern evidence of function bodies, methods' signatures), which their
// first parse leaves out (facts.Unhashed), reading them again: only detect_patterns needs
// them, the windows kept for every file were a quarter of the parse cache, and the evidence
// needs syntax trees of the bodies, which were most of a cold analysis's time. The new facts
// replace the cached ones, so each file is read again once. A file changed since snap was
// listed keeps neither in this answer.
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
				// The full parse's facts are the first pass's with the evidence and the signatures,
				// and with the syntax errors inside function bodies that the first pass misses.
				f := *full
				f.Language, f.Lines, f.Unhashed = fi.F.Language, fi.F.Lines, false
				f.compact()
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
