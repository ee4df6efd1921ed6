package workspace

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// tracked is what the git indexes met by a walk list, root-relative: files, and the folders
// that hold them (which ignore patterns must not prune).
type tracked struct {
	files, dirs map[string]bool
}

// gitIndex is the list of one repository's index, as last read.
type gitIndex struct {
	modTime time.Time
	size    int64
	names   []string // slash-separated, relative to the repository's folder
}

// indexCache keeps decoded indexes until the file changes: a walk meets the same index on
// every call.
type indexCache struct {
	mu     sync.Mutex
	byPath map[string]*gitIndex
}

// loadIndex adds what the repository whose .git lies in the folder domain tracks, when one
// does. A .git file (a worktree or submodule) names the folder that holds the index.
func (wk *walker) loadIndex(domain []string) {
	dir := filepath.Join(wk.root, filepath.Join(domain...))
	names, err := wk.w.index.names(dir)
	if err != nil || len(names) == 0 {
		return // no repository here, or an index git itself would refuse: nothing to add
	}
	if wk.tracked.files == nil {
		wk.tracked = tracked{files: map[string]bool{}, dirs: map[string]bool{}}
	}
	base := strings.Join(domain, "/")
	for _, n := range names {
		rel := path.Join(base, n)
		wk.tracked.files[rel] = true
		for d := path.Dir(rel); d != "." && d != base && !wk.tracked.dirs[d]; d = path.Dir(d) {
			wk.tracked.dirs[d] = true
		}
	}
}

// names returns the paths the index of the repository at dir lists, nil when dir holds none.
func (c *indexCache) names(dir string) ([]string, error) {
	gitDir := filepath.Join(dir, ".git")
	fi, err := os.Lstat(gitDir)
	if err != nil {
		return nil, nil
	}
	if fi.Mode().IsRegular() {
		data, err := os.ReadFile(gitDir)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", gitDir, err)
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return nil, fmt.Errorf("%s: not a gitdir link", gitDir)
		}
		gitDir = strings.TrimSpace(target)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(dir, gitDir)
		}
	}
	file := filepath.Join(gitDir, "index")
	st, err := os.Stat(file)
	if err != nil {
		return nil, nil // a repository without an index tracks nothing yet
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.byPath[file]; e != nil && e.modTime.Equal(st.ModTime()) && e.size == st.Size() {
		return e.names, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("open git index: %w", err)
	}
	defer f.Close()
	var idx index.Index
	if err := index.NewDecoder(f).Decode(&idx); err != nil {
		return nil, fmt.Errorf("decode git index %s: %w", file, err)
	}
	e := &gitIndex{modTime: st.ModTime(), size: st.Size(), names: make([]string, 0, len(idx.Entries))}
	for _, en := range idx.Entries {
		e.names = append(e.names, en.Name)
	}
	c.byPath[file] = e
	return e.names, nil
}
