// Package workspace confines the analyses to the folders an operator allowed and walks them
// the way a developer sees a repository.
//
// A Workspace is a list of roots (absolute, symlinks evaluated). Resolve turns a path a client
// sent into an absolute path below a root, and refuses, with a *tools.ArgumentError, a path
// that contains "..", that leaves every root once symlinks are evaluated, that does not exist,
// or that names a device, socket or named pipe. Walk lists the files below a resolved folder:
//
//   - .gitignore files (in the folder, its ancestors up to the root, and its descendants) and
//     .git/info/exclude are honoured with git's semantics; .git folders are never entered;
//   - but git's index decides first: a file a repository tracks (one whose .git lies at or
//     below a root) is listed even when an ignore pattern matches it, as git itself does;
//   - a symbolic link is reported only when it points at a regular file inside a root, and
//     symbolic links to folders are never followed, so a walk cannot loop or leave the roots;
//   - every File carries its language (go-enry, the Go port of GitHub Linguist) and whether it
//     is vendored, generated or binary; vendored files are listed without reading them;
//   - files larger than Limits.MaxFileSize are listed but not read, and the walk stops with
//     ErrFileLimit after Limits.MaxFiles files, so a stranger cannot make it read without end;
//     vendored files have an allowance of their own (Limits.MaxFiles again), past which they
//     are left out, so that a committed node_modules does not hide the project's own code;
//   - the walk stops with ctx.Err() as soon as ctx is cancelled.
//
// Ignored answers the same question for one path, for watchers that must drop the events of
// files no walk would list.
package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/go-enry/go-enry/v2"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/platform-dev/platform/tools"
)

// ErrFileLimit ends a walk that reached Limits.MaxFiles. The files reported before it are
// complete; callers usually keep them and say that the listing was cut.
var ErrFileLimit = errors.New("workspace: file limit reached")

// Limits bound what one walk reads.
type Limits struct {
	MaxFileSize int64 // files larger than this are listed with Oversize set and no Content
	MaxFiles    int   // the walk ends with ErrFileLimit after this many files (vendored ones apart)
}

// DefaultLimits suit repositories of a few hundred thousand lines: 1 MiB a file, 50,000 files.
func DefaultLimits() Limits { return Limits{MaxFileSize: 1 << 20, MaxFiles: 50_000} }

// Workspace is a set of folders the analyses may read. It is safe for concurrent use.
type Workspace struct {
	roots  []string
	hidden []string // folders below the roots that are never listed, read or resolved
	limits Limits
	index  *indexCache
	class  *classCache
}

// File is one file found by Walk.
type File struct {
	Path     string // absolute path (of the link, when the file is reached through a symlink)
	Root     string // the root the file lies below
	Rel      string // path relative to Root, slash-separated
	Size     int64
	Language string // Linguist name ("Go", "TypeScript", ...), "" when unknown
	// Vendored files (third-party code by Linguist's rules, e.g. node_modules/, vendor/) are
	// listed without Content.
	Vendored  bool
	Generated bool // generated code, by name or by content (e.g. "Code generated ... DO NOT EDIT")
	Binary    bool
	Oversize  bool   // larger than Limits.MaxFileSize: not read
	Content   []byte // the file's bytes, nil when Vendored or Oversize
	Hash      uint64 // xxhash of Content (github.com/cespare/xxhash/v2), 0 without Content
}

// New returns a workspace over roots. Each root must be an existing folder; it is stored as an
// absolute path with symlinks evaluated. The first root is the base of relative paths.
func New(roots ...string) (*Workspace, error) {
	if len(roots) == 0 {
		return nil, errors.New("workspace: no root given")
	}
	w := &Workspace{limits: DefaultLimits(), index: &indexCache{byPath: map[string]*gitIndex{}}, class: &classCache{m: map[classKey]classOf{}, vendor: map[string]bool{}}}
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("workspace root %q: %w", r, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("workspace root %q: %w", r, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("workspace root %q: %w", r, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("workspace root %q: not a folder", r)
		}
		w.roots = append(w.roots, real)
	}
	return w, nil
}

// WithLimits returns a copy of w that walks with l.
func (w *Workspace) WithLimits(l Limits) *Workspace {
	c := *w
	c.limits = l
	return &c
}

// WithHidden returns a copy of w that never lists, reads, watches or resolves anything in
// dirs: the service's own data. Its SQLite files are the case in point: SQLite keeps POSIX
// locks, and closing any descriptor a process holds on a file drops all of that process's
// locks on it, so merely reading a live database from the same process lets another
// process (a CLI run, a second replica) take it for unused and delete its write-ahead log,
// and the admin token kept beside them is no one's analysis. A dir that does not exist yet
// is hidden by its absolute path.
func (w *Workspace) WithHidden(dirs ...string) *Workspace {
	c := *w
	c.hidden = slices.Clone(w.hidden)
	for _, d := range dirs {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		c.hidden = append(c.hidden, abs)
	}
	return &c
}

// isHidden reports whether p (absolute) is a hidden folder or lies below one.
func (w *Workspace) isHidden(p string) bool {
	for _, h := range w.hidden {
		if _, ok := within(h, p); ok {
			return true
		}
	}
	return false
}

// Roots returns the roots, absolute with symlinks evaluated, the first being the default.
func (w *Workspace) Roots() []string { return slices.Clone(w.roots) }

// Root returns the root that abs lies below (or is) and abs relative to it, slash-separated
// ("." for the root itself). ok is false when abs is below no root.
func (w *Workspace) Root(abs string) (root, rel string, ok bool) {
	for _, r := range w.roots {
		if rel, ok := within(r, abs); ok {
			return r, rel, true
		}
	}
	return "", "", false
}

// within reports whether p is root or below it, and p relative to root.
func within(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Resolve turns the client's path p, given as argument arg, into an absolute path with
// symlinks evaluated that lies below a root. An empty p means the first root; a relative p is
// taken from the first root. Every refusal is a *tools.ArgumentError naming arg.
func (w *Workspace) Resolve(arg, p string) (string, error) {
	if p == "" {
		return w.roots[0], nil
	}
	if strings.ContainsRune(p, 0) {
		return "", tools.InvalidArgument(arg, "path contains a NUL byte")
	}
	if slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..") {
		return "", tools.InvalidArgument(arg, "path %q must not contain \"..\"", p)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(w.roots[0], p)
	}
	abs = filepath.Clean(abs)
	// The unevaluated path must already be below a root: this keeps the error for
	// "/etc/passwd" about the workspace rather than about what the file is.
	if _, _, ok := w.Root(abs); !ok && !w.belowRootAlias(abs) {
		return "", tools.InvalidArgument(arg, "path %q is outside the workspace roots %v", p, w.roots)
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", tools.InvalidArgument(arg, "path %q does not exist", p)
	}
	if err != nil {
		return "", tools.InvalidArgument(arg, "path %q cannot be resolved: %v", p, err)
	}
	if _, _, ok := w.Root(real); !ok {
		return "", tools.InvalidArgument(arg, "path %q leads outside the workspace roots (through a symbolic link)", p)
	}
	if w.isHidden(real) {
		return "", tools.InvalidArgument(arg, "path %q is the service's own data, which no tool reads", p)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", tools.InvalidArgument(arg, "path %q: %v", p, err)
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return "", tools.InvalidArgument(arg, "path %q is not a regular file or folder (%s)", p, fi.Mode().Type())
	}
	return real, nil
}

// belowRootAlias reports whether abs lies below a root as the client may have spelt it before
// symlinks were evaluated (e.g. /tmp/x when the root is /private/tmp/x).
func (w *Workspace) belowRootAlias(abs string) bool {
	dir := abs
	for {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			if _, _, ok := w.Root(real); ok {
				return true
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// Walk calls fn for every file below dir (an absolute path below a root, as Resolve returns;
// dir may also be a single file), in lexical order. An error from fn ends the walk and is
// returned; so is ctx.Err() and ErrFileLimit.
//
// Listing is sequential (ignore files and limits depend on what came before), but files are
// read and classified by one goroutine per core ahead of fn: Linguist's classifier costs more
// than reading, and fn (a parser feeding its own workers) should not wait for it.
func (w *Workspace) Walk(ctx context.Context, dir string, fn func(File) error) error {
	root, rel, ok := w.Root(dir)
	if !ok {
		return fmt.Errorf("walk %q: outside the workspace roots", dir)
	}
	wk := &walker{w: w, root: root, start: dir}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("walk %q: %w", dir, err)
	}
	// Patterns of the ancestors apply below them: load the root's and every folder's down to dir.
	wk.loadExclude()
	parts := splitRel(rel)
	for i := 0; i < len(parts); i++ {
		wk.loadIgnore(parts[:i])
		wk.loadIndex(parts[:i])
	}
	if !fi.IsDir() {
		pf, err := wk.list(dir, fs.FileInfoToDirEntry(fi))
		if pf == nil || err != nil {
			return err
		}
		wk.load(ctx, pf)
		return deliver(ctx, pf, fn)
	}

	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	order := make(chan *pending, readAhead) // listed files, in the order fn must see them
	work := make(chan *pending, readAhead)  // the same files, for the readers
	var readers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		readers.Go(func() {
			for pf := range work {
				wk.load(lctx, pf)
			}
		})
	}
	var listErr error
	go func() {
		defer close(order)
		defer close(work)
		listErr = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if cerr := lctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil {
				if p == dir {
					return fmt.Errorf("walk %q: %w", dir, err)
				}
				return nil // an unreadable entry below dir is left out, not fatal
			}
			if d.IsDir() {
				if p == dir {
					wk.loadIgnore(parts)
					wk.loadIndex(parts)
					return nil
				}
				return wk.dir(p, d)
			}
			pf, err := wk.list(p, d)
			if pf == nil || err != nil {
				return err
			}
			// Once in order, a file must reach the readers: deliver waits for it.
			order <- pf
			work <- pf
			return nil
		})
	}()
	var fnErr error
	for pf := range order {
		if fnErr == nil {
			if fnErr = deliver(ctx, pf, fn); fnErr != nil {
				cancel() // stop listing and reading; what is queued is drained
			}
		}
	}
	readers.Wait()
	if fnErr != nil {
		return fnErr
	}
	return listErr
}

// readAhead is how many listed files may wait for fn: enough to keep the readers busy while
// fn is slow on one file, few enough that their contents (1 MiB at most each) stay small.
const readAhead = 64

// pending is a listed file that is read and classified while the files before it are handed
// to fn.
type pending struct {
	f      File
	target string        // the file to read: the link's target for a symbolic link
	ok     bool          // read and classified; false when it vanished or the walk stopped
	done   chan struct{} // closed when load is over
}

// deliver waits for pf to be loaded and calls fn with it; a file that could not be read since
// it was listed is left out, as a file that vanished.
func deliver(ctx context.Context, pf *pending, fn func(File) error) error {
	select {
	case <-pf.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !pf.ok {
		return nil
	}
	return fn(pf.f)
}

// Ignored reports whether Walk would leave out the file or folder at p (absolute): it lies in
// a .git folder or a hidden one (WithHidden), or is excluded by the ignore files of its
// root. A path below no root is ignored. Watchers use it to drop events that no analysis would see, such as a database
// folder in .gitignore that changes all the time.
func (w *Workspace) Ignored(p string) bool {
	root, rel, ok := w.Root(p)
	if !ok || w.isHidden(p) {
		return true
	}
	parts := splitRel(rel)
	if slices.Contains(parts, ".git") {
		return true
	}
	wk := &walker{w: w, root: root}
	wk.loadExclude()
	for i := range parts {
		wk.loadIgnore(parts[:i])
		wk.loadIndex(parts[:i])
		if i > 0 && wk.ignored(parts[:i], true) && !wk.tracked.dirs[strings.Join(parts[:i], "/")] {
			return true
		}
	}
	if len(parts) == 0 {
		return false
	}
	fi, err := os.Lstat(p)
	isDir := err == nil && fi.IsDir()
	if isDir && wk.tracked.dirs[rel] || !isDir && wk.tracked.files[rel] {
		return false
	}
	return wk.ignored(parts, isDir)
}

type walker struct {
	w        *Workspace
	root     string
	start    string // the path Walk was given: walked even when ignored, since it was asked for
	patterns []gitignore.Pattern
	tracked  tracked
	count    int // files listed, vendored ones apart
	vendored int
}

// splitRel splits a slash-separated root-relative path into its elements ("." has none).
func splitRel(rel string) []string {
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

func (wk *walker) loadExclude() {
	wk.readPatterns(filepath.Join(wk.root, ".git", "info", "exclude"), nil)
}

func (wk *walker) loadIgnore(domain []string) {
	wk.readPatterns(filepath.Join(wk.root, filepath.Join(domain...), ".gitignore"), domain)
}

// readPatterns appends the patterns of one ignore file. Patterns of sibling folders can stay in
// the list: a pattern only matches below its own domain. Later patterns take precedence, which
// is git's order (deeper files override shallower ones).
func (wk *walker) readPatterns(file string, domain []string) {
	data, err := readFile(file, 0, wk.w.limits.MaxFileSize) // a larger one counts by its first MaxFileSize bytes
	if err != nil {
		return // no ignore file, or unreadable: nothing to honour
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		wk.patterns = append(wk.patterns, gitignore.ParsePattern(line, domain))
	}
}

func (wk *walker) ignored(parts []string, isDir bool) bool {
	return len(wk.patterns) > 0 && gitignore.NewMatcher(wk.patterns).Match(parts, isDir)
}

func (wk *walker) dir(p string, d fs.DirEntry) error {
	_, rel, _ := wk.w.Root(p)
	parts := splitRel(rel)
	if d.Name() == ".git" || wk.w.isHidden(p) || (wk.ignored(parts, true) && !wk.tracked.dirs[rel]) ||
		(wk.vendored >= wk.w.limits.MaxFiles && enry.IsVendor(rel+"/")) {
		return filepath.SkipDir
	}
	wk.loadIgnore(parts)
	wk.loadIndex(parts)
	return nil
}

// list decides whether the file at p is listed, counts it against the limits, and returns it
// to be loaded; nil when it is left out.
func (wk *walker) list(p string, d fs.DirEntry) (*pending, error) {
	_, rel, ok := wk.w.Root(p)
	if !ok {
		return nil, nil
	}
	if p != wk.start && !wk.tracked.files[rel] && wk.ignored(splitRel(rel), false) {
		return nil, nil
	}
	target := p
	if d.Type()&fs.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, nil // dangling link
		}
		if _, _, ok := wk.w.Root(real); !ok {
			return nil, nil // never read outside the roots
		}
		target = real
	}
	if wk.w.isHidden(target) {
		return nil, nil
	}
	fi, err := os.Stat(target)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil // folders behind links, devices, sockets and pipes are not files to analyse
	}
	f := File{Path: p, Root: wk.root, Rel: rel, Size: fi.Size(), Vendored: wk.w.class.vendored(rel)}
	// Vendored files have their own allowance, so that a committed node_modules cannot use up
	// the listing before the project's own code is reached; past it they are left out.
	switch {
	case f.Vendored && wk.vendored >= wk.w.limits.MaxFiles:
		return nil, nil
	case f.Vendored:
		wk.vendored++
	case wk.count >= wk.w.limits.MaxFiles:
		return nil, ErrFileLimit
	default:
		wk.count++
	}
	f.Oversize = !f.Vendored && fi.Size() > wk.w.limits.MaxFileSize
	return &pending{f: f, target: target, done: make(chan struct{})}, nil
}

// load reads and classifies a listed file, unless the walk has stopped.
func (wk *walker) load(ctx context.Context, pf *pending) {
	defer close(pf.done)
	if ctx.Err() != nil {
		return
	}
	if !pf.f.Vendored && !pf.f.Oversize {
		content, err := readFile(pf.target, pf.f.Size, wk.w.limits.MaxFileSize)
		if err != nil {
			return // vanished or unreadable since listed
		}
		pf.f.Content = content
		tools.Charge(ctx, int64(len(content)))
	}
	wk.w.class.classify(&pf.f)
	pf.ok = true
}

// readFile reads at most limit bytes: the size can grow between Stat and Read. The buffer
// starts at the size Stat gave, so that reading a tree does not grow one from 512 bytes for
// every file (io.ReadAll's copies were a fifth of a warm walk of GOROOT).
func readFile(name string, size, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := bytes.NewBuffer(make([]byte, 0, min(max(size, 0), limit)+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
