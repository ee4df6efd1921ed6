package code

import (
	"bytes"
	"context"
	"go/scanner"
	"go/token"
	"runtime"
	"slices"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// hashWindows gives the Go files of snap their duplication windows, which their parse leaves
// out (facts.Unhashed), reading them again: only detect_patterns needs the windows, and kept
// for every file they were a quarter of the parse cache. The facts with windows replace the
// cached ones, so each file is hashed once. A file changed since snap was listed keeps no
// windows in this answer.
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
			for i := w; i < len(todo) && ctx.Err() == nil; i += workers {
				fi := todo[i]
				src := source(snap.root, fi)
				if src == nil || xxhash.Sum64(src) != fi.Hash {
					continue
				}
				comments = goComments(comments[:0], src)
				scratch = codeBlocks(scratch, src, comments)
				f := *fi.F
				f.Unhashed = false
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

// goComments appends to dst the byte ranges of src's comments, in order. It finds them with
// Go's scanner, which skips strings and runes as the parser does, and measures each in src:
// the scanner's text of a comment has its carriage returns taken out.
func goComments(dst [][2]int, src []byte) [][2]int {
	fset := token.NewFileSet()
	tf := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(tf, src, nil, scanner.ScanComments)
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			return dst
		}
		if tok != token.COMMENT {
			continue
		}
		start := tf.Offset(pos)
		end := len(src)
		if src[start+1] == '/' {
			if i := bytes.IndexByte(src[start:], '\n'); i >= 0 {
				end = start + i
			}
		} else if i := bytes.Index(src[start+2:], []byte("*/")); i >= 0 {
			end = start + 2 + i + 2
		}
		dst = append(dst, [2]int{start, end})
	}
}
