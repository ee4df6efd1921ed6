// Package code is the code analysis behind the MCP tools analyze_codebase, find_dependencies
// and detect_patterns, the navigation tools find_symbol, find_references, file_outline and
// changes_impact, and the resource service://code/analysis.
//
// Files are listed by tools/workspace (which confines every read to the workspace roots, and
// lists what git's index tracks and .gitignore does not exclude) and parsed with real parsers:
// go/parser for Go, and tree-sitter grammars for Python, JavaScript, TypeScript (and TSX),
// Java and Rust. Other languages Linguist knows are counted by lines only, and so are
// generated, minified and oversized files. Manifests (go.mod, package.json, pyproject.toml,
// requirements*.txt, pom.xml, build.gradle, Cargo.toml) and tsconfig.json are read with their
// formats' parsers. Imports are resolved per language the way the language does (graph.go,
// javascript.go, rust.go); find_dependencies and detect_patterns answer from the graph of one
// project (module root) at a time (projects.go).
//
// Parsing runs on every core, and what a file yields is cached by a hash of its content, so a
// second analysis only re-reads files and re-parses those that changed. A watcher (fsnotify)
// refreshes the workspace analysis when files change and tells the tools.Hub, which lets the
// MCP server notify subscribers of service://code/analysis.
package code

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/fsnotify/fsnotify"
	"github.com/go-enry/go-enry/v2"

	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/workspace"
)

// ResourceURI is the resource that serves the latest analysis of the first workspace root.
const ResourceURI = "service://code/analysis"

const (
	// maxCacheEntries bounds the parse cache; past it, entries not used by the latest scan go.
	maxCacheEntries = 200_000
	// debounce gathers the burst of events of one save or checkout into one refresh, and
	// maxDelay bounds how long a stream of events can postpone it.
	debounce = 400 * time.Millisecond
	maxDelay = 3 * time.Second
	// tsConfigKind is the cache kind of tsconfig.json and jsconfig.json files.
	tsConfigKind = "tsconfig"
	// maxParseBytes bounds the size of a file given to tree-sitter, whose tree costs about a
	// hundred times the source; minifiedLineBytes is the mean line length past which code
	// is taken for minified.
	maxParseBytes     = 512 << 10
	minifiedLineBytes = 300
	// progressEvery is how many files a scan lists between two progress reports.
	progressEvery = 500
	// partialReserve is the least time kept, before a caller's deadline, to answer with what
	// was read.
	partialReserve = 2 * time.Second
	// maxWatchedDirs keeps the watcher within the system's inotify limits on huge trees.
	maxWatchedDirs = 8192
)

// Analyzer runs the code analyses over a workspace. It is safe for concurrent use.
type Analyzer struct {
	ws      *workspace.Workspace
	hub     *tools.Hub
	log     *slog.Logger
	parsers sync.Pool // *parserSet: tree-sitter parsers are costly to set up and not shareable
	grams   map[string]*grammar

	mu    sync.Mutex
	cache map[cacheKey]*cacheEntry
	gen   uint64

	latestMu sync.Mutex
	latest   *CodebaseReport
	digest   uint64

	watcher *fsnotify.Watcher
	stop    context.CancelFunc
	done    chan struct{}
}

type cacheKey struct {
	hash uint64
	kind string // language, or manifest kind
}

type cacheEntry struct {
	f   *facts
	gen uint64
}

// parserSet is one worker's parsers, by grammar key.
type parserSet map[string]fileParser

// New starts an analyzer over ws. Changes below the workspace roots are watched until ctx ends
// or Close is called; each one refreshes the analysis served by Resource and calls
// hub.Updated(ResourceURI). hub and logger may be nil.
func New(ctx context.Context, ws *workspace.Workspace, hub *tools.Hub, logger *slog.Logger) (*Analyzer, error) {
	if ws == nil {
		return nil, errors.New("code: nil workspace")
	}
	if hub == nil {
		hub = &tools.Hub{}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &Analyzer{ws: ws, hub: hub, log: logger, grams: grammars(), cache: map[cacheKey]*cacheEntry{}, done: make(chan struct{})}
	a.parsers.New = func() any { return parserSet{} }
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("code: start watcher: %w", err)
	}
	a.watcher = w
	// Watches are in place when New returns, so that no change after it is missed.
	for _, r := range ws.Roots() {
		a.watchTree(r)
	}
	wctx, cancel := context.WithCancel(ctx)
	a.stop = cancel
	go a.watch(wctx)
	return a, nil
}

// Close stops the watcher.
func (a *Analyzer) Close() error {
	a.stop()
	<-a.done
	return nil
}

// Tools returns analyze_codebase, find_dependencies, detect_patterns and the navigation tools
// find_symbol, find_references, file_outline and changes_impact.
func (a *Analyzer) Tools() []tools.Tool {
	return []tools.Tool{analyzeTool{a}, dependenciesTool{a}, patternsTool{a}, symbolTool{a}, referencesTool{a}, outlineTool{a}, impactTool{a}}
}

// Resource returns service://code/analysis.
func (a *Analyzer) Resource() tools.Resource { return resource{a} }

// fileInfo is one listed file and, when it was read, what its parse yielded.
type fileInfo struct {
	Rel       string
	Lang      string
	Size      int64
	Hash      uint64 // of the content read, 0 when not read
	Vendored  bool
	Generated bool
	Binary    bool
	Oversize  bool
	F         *facts // nil for files not read (vendored, binary, oversize)
}

// counted reports whether the file takes part in code figures: vendored, generated and
// binary files are recognised and left out.
func (fi *fileInfo) counted() bool {
	return fi.F != nil && !fi.Vendored && !fi.Generated && !fi.Binary && fi.Lang != ""
}

// skipped says why the file is not analysed whole, "" when it is. Vendored files (third-party
// or built code by Linguist's rules: vendor/, node_modules/, dist/, minified bundles), binary
// files and files over the workspace's read limit ("too large") are listed, not read;
// generated files are left out of the code figures; minified files and files over the parse
// budget ("too large" too) are counted by lines, not parsed. The first reason that applies is
// the one given.
func (fi *fileInfo) skipped() string {
	switch {
	case fi.Vendored:
		return "vendored"
	case fi.Binary:
		return "binary"
	case fi.Oversize:
		return "too large"
	case fi.Generated:
		return "generated"
	case fi.F != nil:
		return fi.F.Skipped
	}
	return ""
}

// snapshot is the state of one folder below a root at one moment.
type snapshot struct {
	root      string // absolute root
	base      string // the folder analysed, relative to root ("." for the root)
	files     []*fileInfo
	byRel     map[string]*fileInfo
	truncated bool // the walk stopped at the file limit
	partial   bool // the walk stopped early to answer before the caller's deadline
}

// partialNote says, for an answer built from a walk stopped early, how far it got; "" when
// the walk was complete.
func (s *snapshot) partialNote() string {
	if !s.partial {
		return ""
	}
	return fmt.Sprintf("partial answer: the listing stopped after %d files to answer within the request's time limit; "+
		"what was read is cached, so calling again gets further (or ask for a narrower path)", len(s.files))
}

// errStopped ends a walk that must leave time to answer.
var errStopped = errors.New("code: listing stopped before the deadline")

type job struct {
	fi  *fileInfo
	src []byte
	key cacheKey
}

// scan lists and parses every file below dir (absolute, resolved), reusing cached parses.
func (a *Analyzer) scan(ctx context.Context, dir string) (*snapshot, error) {
	root, base, ok := a.ws.Root(dir)
	if !ok {
		return nil, fmt.Errorf("scan %q: outside the workspace", dir)
	}
	snap := &snapshot{root: root, base: base, byRel: map[string]*fileInfo{}}
	a.mu.Lock()
	a.gen++
	gen := a.gen
	a.mu.Unlock()

	jobs := make(chan job, 64)
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var parseErr error
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ps := a.parsers.Get().(parserSet)
			defer func() {
				// A cancelled parse can leave a tree-sitter parser's cancellation flag set:
				// such parsers are dropped, not pooled.
				if ctx.Err() == nil {
					a.parsers.Put(ps)
				}
			}()
			for j := range jobs {
				f, err := a.parseFile(ctx, ps, j)
				if err == nil && ctx.Err() != nil {
					err = ctx.Err() // a parse that raced a cancellation is not trusted nor cached
				}
				if err != nil {
					errMu.Lock()
					parseErr = err
					errMu.Unlock()
					continue
				}
				j.fi.F = f
				a.mu.Lock()
				a.cache[j.key] = &cacheEntry{f: f, gen: gen}
				a.mu.Unlock()
			}
		}()
	}
	// With a deadline, the listing stops early enough to aggregate and send what was read: a
	// quarter of the time left, and at least partialReserve, is kept for that.
	var stopAt time.Time
	if dl, ok := ctx.Deadline(); ok {
		stopAt = dl.Add(-max(partialReserve, time.Until(dl)/4))
	}
	walkErr := a.ws.Walk(ctx, dir, func(f workspace.File) error {
		if !stopAt.IsZero() && time.Now().After(stopAt) {
			return errStopped
		}
		fi := &fileInfo{Rel: f.Rel, Lang: f.Language, Size: f.Size, Hash: f.Hash, Vendored: f.Vendored,
			Generated: f.Generated, Binary: f.Binary, Oversize: f.Oversize}
		snap.files = append(snap.files, fi)
		if n := len(snap.files); n%progressEvery == 0 {
			tools.ReportProgress(ctx, float64(n), 0, fmt.Sprintf("listed and read %d files", n))
		}
		snap.byRel[fi.Rel] = fi
		if f.Content == nil || f.Binary {
			return nil
		}
		kind := manifestKind(f.Rel)
		if kind == "" && isTSConfig(f.Rel) {
			kind = tsConfigKind
		}
		if kind == "" {
			kind = grammarKey(f.Rel, f.Language)
		}
		if kind == "" {
			// Neither a manifest nor a language: nothing to count or parse.
			return nil
		}
		key := cacheKey{hash: f.Hash, kind: kind}
		a.mu.Lock()
		e := a.cache[key]
		if e != nil {
			e.gen = gen
		}
		a.mu.Unlock()
		if e != nil {
			fi.F = e.f
			return nil
		}
		select {
		case jobs <- job{fi: fi, src: f.Content, key: key}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(jobs)
	wg.Wait()
	switch {
	case errors.Is(walkErr, workspace.ErrFileLimit):
		snap.truncated, walkErr = true, nil
	case errors.Is(walkErr, errStopped):
		snap.partial, walkErr = true, nil
	}
	if walkErr != nil {
		return nil, walkErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if parseErr != nil {
		return nil, parseErr
	}
	a.evict(gen)
	return snap, nil
}

// grammarKey is the parser a file needs: a grammar name, "Go", or the bare language for files
// only counted by lines. Linguist calls .tsx files TSX, which has its own grammar (JSX in
// TypeScript); a .tsx file it took for TypeScript gets that grammar too.
func grammarKey(rel, lang string) string {
	if lang == "TypeScript" && strings.EqualFold(path.Ext(rel), ".tsx") {
		return "TSX"
	}
	return lang
}

func (a *Analyzer) parseFile(ctx context.Context, ps parserSet, j job) (*facts, error) {
	if kind := manifestKind(j.fi.Rel); kind != "" {
		f := &facts{Language: j.fi.Lang, Manifest: parseManifest(j.fi.Rel, kind, j.src)}
		f.Lines = countLines(j.src, nil)
		return f, nil
	}
	if j.key.kind == tsConfigKind {
		f := &facts{Language: j.fi.Lang, Lines: countLines(j.src, nil)}
		cfg, err := parseTSConfig(j.src)
		if err != nil {
			// A broken tsconfig resolves nothing, as for the compiler; its files still count.
			a.log.Debug("code: tsconfig", "file", j.fi.Rel, "err", err)
		}
		f.TSConfig = cfg
		return f, nil
	}
	if reason := skipReason(j, a.grams[j.key.kind] != nil); reason != "" {
		return &facts{Language: j.fi.Lang, Skipped: reason, Lines: countLines(j.src, nil)}, nil
	}
	f, err := a.parseWith(ctx, ps, j)
	if err != nil && ctx.Err() == nil {
		// Retry once with a fresh parser: the failure may be the parser's, not the file's.
		delete(ps, j.key.kind)
		f, err = a.parseWith(ctx, ps, j)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A file the parser gives up on is still counted, as unparsed text.
		a.log.Debug("code: parse failed", "file", j.fi.Rel, "err", err)
		return &facts{Language: j.fi.Lang, ParseError: true, ErrorMsg: err.Error(), Lines: countLines(j.src, nil)}, nil
	}
	f.Language = j.fi.Lang
	f.compact()
	return f, nil
}

// parseWith parses with the worker's parser for the file's grammar, creating it on first use.
// A panic inside a parser (cgo grammars meet every kind of malformed input) becomes this
// file's parse error: it runs in the watcher's goroutines too, where it would end the process.
func (a *Analyzer) parseWith(ctx context.Context, ps parserSet, j job) (f *facts, err error) {
	defer func() {
		if p := recover(); p != nil {
			a.log.Warn("code: parser panicked; the file is counted as unparsed text", "file", j.fi.Rel, "panic", p)
			f, err = nil, fmt.Errorf("parse %s: parser panicked: %v", j.fi.Rel, p)
		}
	}()
	p := ps[j.key.kind]
	if p == nil {
		switch g := a.grams[j.key.kind]; {
		case j.key.kind == "Go":
			p = &goParser{}
		case g != nil:
			p = newTSParser(g)
		default:
			return &facts{Language: j.fi.Lang, Lines: countLines(j.src, nil)}, nil
		}
		ps[j.key.kind] = p
	}
	return p.parse(ctx, j.fi.Rel, j.src)
}

// skipReason says why a file of a tree-sitter language is not worth its parse: generated or
// minified code says nothing about the design and can cost gigabytes of syntax tree (a 600 KB
// generated bundle did), and maxParseBytes bounds what one file can cost. Go files are all
// parsed: go/parser's trees are small, and generated Go packages are imported by name; files
// of languages without a grammar (treeSitter false) are only counted anyway.
func skipReason(j job, treeSitter bool) string {
	if !treeSitter {
		return ""
	}
	switch {
	case j.fi.Generated:
		return "generated"
	case minified(j.src):
		return "minified"
	case len(j.src) > maxParseBytes:
		return "too large"
	}
	return ""
}

// minified reports code written on few very long lines: more than minifiedLineBytes a line
// on average, over more than one line's worth of bytes.
func minified(src []byte) bool {
	lines := bytes.Count(src, []byte{'\n'}) + 1
	return len(src) > 4*minifiedLineBytes && len(src)/lines > minifiedLineBytes
}

// evict drops parses no recent scan used once the cache is over its bound.
func (a *Analyzer) evict(gen uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.cache) <= maxCacheEntries {
		return
	}
	for k, e := range a.cache {
		if e.gen < gen {
			delete(a.cache, k)
		}
	}
}

// ---- watcher ----

// watchTree adds a watch on every folder below dir that an analysis would read.
func (a *Analyzer) watchTree(dir string) {
	n := len(a.watcher.WatchList())
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if _, rel, ok := a.ws.Root(p); !ok || (p != dir && (skipWatch(rel, d.Name()) || a.ws.Ignored(p))) {
			return filepath.SkipDir
		}
		if n >= maxWatchedDirs {
			return filepath.SkipAll
		}
		if err := a.watcher.Add(p); err != nil {
			a.log.Warn("code: cannot watch folder", "dir", p, "err", err)
			return filepath.SkipDir
		}
		n++
		return nil
	})
}

// skipWatch reports folders whose changes never change an analysis: git's own, and vendored
// trees such as node_modules (ignored folders are skipped too, by the caller).
func skipWatch(rel, name string) bool {
	return name == ".git" || enry.IsVendor(rel+"/")
}

func (a *Analyzer) watch(ctx context.Context) {
	defer close(a.done)
	defer a.watcher.Close()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var pendingSince time.Time // first event not yet refreshed; zero when none
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case ev, ok := <-a.watcher.Events:
			if !ok {
				return
			}
			if (ev.Has(fsnotify.Chmod) && !ev.Has(fsnotify.Write)) || a.ws.Ignored(ev.Name) {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					a.watchTree(ev.Name)
				}
			}
			// Wait for the burst to end, but not for ever when a file is written non-stop.
			now := time.Now()
			if pendingSince.IsZero() {
				pendingSince = now
			}
			timer.Reset(max(0, min(debounce, pendingSince.Add(maxDelay).Sub(now))))
		case err, ok := <-a.watcher.Errors:
			if !ok {
				return
			}
			a.log.Warn("code: watcher", "err", err)
		case <-timer.C:
			pendingSince = time.Time{}
			if _, err := a.refresh(ctx); err != nil && ctx.Err() == nil {
				a.log.Warn("code: refresh analysis", "err", err)
			}
		}
	}
}

// refresh analyses the first root again, keeps the report for Resource, and tells the hub when
// it differs from the previous one.
func (a *Analyzer) refresh(ctx context.Context) (*CodebaseReport, error) {
	root := a.ws.Roots()[0]
	snap, err := a.scan(ctx, root)
	if err != nil {
		return nil, err
	}
	rep := buildCodebaseReport(snap, analyzeArgs{Depth: defaultDepth, Limit: defaultLimit})
	data, err := json.Marshal(rep)
	if err != nil {
		return nil, fmt.Errorf("encode analysis: %w", err)
	}
	d := xxhash.Sum64(data)
	a.latestMu.Lock()
	changed := a.latest != nil && d != a.digest
	a.latest, a.digest = rep, d
	a.latestMu.Unlock()
	if changed {
		a.hub.Updated(ResourceURI)
	}
	return rep, nil
}

type resource struct{ a *Analyzer }

func (resource) Info() tools.ResourceInfo {
	return tools.ResourceInfo{
		URI:         ResourceURI,
		Name:        "Code Analysis",
		Description: "The latest analyze_codebase report of the workspace (default arguments), refreshed when files change.",
		MIMEType:    "application/json",
	}
}

func (r resource) Read(ctx context.Context) (any, error) {
	r.a.latestMu.Lock()
	rep := r.a.latest
	r.a.latestMu.Unlock()
	if rep != nil {
		return rep, nil
	}
	return r.a.refresh(ctx)
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
