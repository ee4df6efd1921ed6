package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/sys/unix"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/workspace"
)

// fixture copies testdata/repo into a fresh folder and adds what cannot be committed in this
// repository: ignore files (git would honour them here too), a .git folder, symbolic links, a
// named pipe and binary and oversized files. It returns the workspace root and a folder outside it.
func fixture(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "ws")
	outside = filepath.Join(base, "outside")
	if err := os.CopyFS(root, os.DirFS("testdata/repo")); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		".gitignore":           "*.log\nbuild/\n!keep.log\n",
		"sub/.gitignore":       "secret.txt\n",
		"sub/secret.txt":       "ignored by sub/.gitignore",
		"sub/ok.txt":           "kept",
		"other/secret.txt":     "kept: sub/.gitignore does not reach here",
		"debug.log":            "ignored",
		"keep.log":             "re-included by !keep.log",
		"build/out.js":         "ignored folder",
		".git/config":          "[core]\n",
		".git/info/exclude":    "excluded.txt\n",
		"excluded.txt":         "ignored by .git/info/exclude",
		"big.txt":              strings.Repeat("x", 2048),
		"img.bin":              "\x89PNG\x00\x00\x01",
		"../outside/secret.go": "package secret\n",
	}
	testenv.WriteTree(t, root, files)
	links := map[string]string{
		"inside-link.go": filepath.Join(root, "main.go"),
		"escape-link.go": filepath.Join(outside, "secret.go"),
		"escape-dir":     outside,
		"lib-link":       filepath.Join(root, "lib"),
		"dangling-link":  filepath.Join(root, "nothing"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

func walkAll(t *testing.T, ws *workspace.Workspace, dir string) map[string]workspace.File {
	t.Helper()
	got := map[string]workspace.File{}
	err := ws.Walk(context.Background(), dir, func(f workspace.File) error {
		got[f.Rel] = f
		return nil
	})
	if err != nil {
		t.Fatalf("Walk(%s): %v", dir, err)
	}
	return got
}

func TestWalk(t *testing.T) {
	root, _ := fixture(t)
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	ws = ws.WithLimits(workspace.Limits{MaxFileSize: 1024, MaxFiles: 100})
	got := walkAll(t, ws, ws.Roots()[0])

	var rels []string
	for rel := range got {
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	want := []string{
		".gitignore", "big.txt", "gen/zz_generated.go", "img.bin", "inside-link.go", "keep.log",
		"lib/util.py", "main.go", "other/secret.txt", "sub/.gitignore", "sub/ok.txt",
		"vendor/github.com/acme/left/left.go", "web/app.ts",
	}
	if !slices.Equal(rels, want) {
		t.Fatalf("walked files\n got %q\nwant %q", rels, want)
	}

	tests := []struct {
		rel                                   string
		language                              string
		vendored, generated, binary, oversize bool
		hasContent                            bool
	}{
		{rel: "main.go", language: "Go", hasContent: true},
		{rel: "lib/util.py", language: "Python", hasContent: true},
		{rel: "web/app.ts", language: "TypeScript", hasContent: true},
		{rel: "gen/zz_generated.go", language: "Go", generated: true, hasContent: true},
		{rel: "vendor/github.com/acme/left/left.go", language: "Go", vendored: true},
		{rel: "img.bin", binary: true, hasContent: true},
		{rel: "big.txt", language: "Text", oversize: true},
		{rel: "inside-link.go", language: "Go", hasContent: true},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			f := got[tt.rel]
			if f.Language != tt.language || f.Vendored != tt.vendored || f.Generated != tt.generated ||
				f.Binary != tt.binary || f.Oversize != tt.oversize || (f.Content != nil) != tt.hasContent {
				t.Errorf("got language=%q vendored=%v generated=%v binary=%v oversize=%v content=%v",
					f.Language, f.Vendored, f.Generated, f.Binary, f.Oversize, f.Content != nil)
			}
			if f.Path != filepath.Join(root, filepath.FromSlash(tt.rel)) || f.Root != ws.Roots()[0] {
				t.Errorf("Path=%q Root=%q", f.Path, f.Root)
			}
		})
	}
	if f := got["main.go"]; f.Size != int64(len(f.Content)) || f.Size == 0 {
		t.Errorf("main.go size %d, content %d bytes", f.Size, len(f.Content))
	}
}

func TestWalkSubfolderHonoursAncestorIgnores(t *testing.T) {
	root, _ := fixture(t)
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "sub", "trace.log"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := ws.Resolve("path", "sub")
	if err != nil {
		t.Fatal(err)
	}
	got := walkAll(t, ws, dir)
	if len(got) != 2 || got["sub/ok.txt"].Rel == "" || got["sub/.gitignore"].Rel == "" {
		t.Errorf("walk of sub: got %v, want sub/ok.txt and sub/.gitignore only", keys(got))
	}
	// A file the caller names is read even when ignored.
	file, err := ws.Resolve("path", "sub/secret.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := walkAll(t, ws, file); len(got) != 1 || got["sub/secret.txt"].Content == nil {
		t.Errorf("walk of sub/secret.txt: got %v", keys(got))
	}
}

func keys(m map[string]workspace.File) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestWalkOrderAndHash: files are read ahead by several goroutines, yet fn sees them one at a
// time in lexical order, each with the hash of its content; a file larger than the read-ahead
// window keeps the order too.
func TestWalkOrderAndHash(t *testing.T) {
	root := t.TempDir()
	var want []string
	for i := range 300 {
		rel := fmt.Sprintf("d%d/f%03d.txt", i%7, i)
		// Sizes vary so that readers finish out of order.
		body := strings.Repeat(fmt.Sprintf("line %d\n", i), 1+(i*37)%500)
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(rel)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, rel)
	}
	slices.Sort(want)
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	inFn := false
	err = ws.Walk(context.Background(), ws.Roots()[0], func(f workspace.File) error {
		if inFn {
			t.Error("fn called while another call runs")
		}
		inFn = true
		defer func() { inFn = false }()
		if f.Hash != xxhash.Sum64(f.Content) || len(f.Content) == 0 {
			t.Errorf("%s: hash %x, content %d bytes", f.Rel, f.Hash, len(f.Content))
		}
		got = append(got, f.Rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("order\n got %q\nwant %q", got, want)
	}
}

func TestWalkLimitsAndCancellation(t *testing.T) {
	root, _ := fixture(t)
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture has 10 files of its own and 3 vendored ones (vendor/..., and the two
	// .gitignore files, which Linguist counts as vendored); node_modules adds 15 more.
	vendor := filepath.Join(root, "node_modules", "dep")
	if err := os.MkdirAll(vendor, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 15 {
		if err := os.WriteFile(filepath.Join(vendor, fmt.Sprintf("m%02d.js", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	count := func(max int) (own, vendored int, err error) {
		err = ws.WithLimits(workspace.Limits{MaxFileSize: 1 << 20, MaxFiles: max}).Walk(context.Background(), root,
			func(f workspace.File) error {
				if f.Vendored {
					vendored++
				} else {
					own++
				}
				return nil
			})
		return own, vendored, err
	}
	for _, tt := range []struct {
		max, own, vendored int
		err                error
	}{
		{max: 100, own: 10, vendored: 18},
		{max: 12, own: 10, vendored: 12}, // vendored files stop at their allowance, silently
		{max: 10, own: 10, vendored: 10},
		{max: 3, own: 3, vendored: 1, err: workspace.ErrFileLimit}, // stops before node_modules
	} {
		own, vendored, err := count(tt.max)
		if own != tt.own || vendored != tt.vendored || !errors.Is(err, tt.err) {
			t.Errorf("MaxFiles %d: own %d vendored %d err %v, want %d, %d, %v", tt.max, own, vendored, err, tt.own, tt.vendored, tt.err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err = ws.Walk(ctx, root, func(workspace.File) error { n++; cancel(); return nil })
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("cancel: err=%v after %d files, want context.Canceled after 1", err, n)
	}

	stop := errors.New("stop")
	if err := ws.Walk(context.Background(), root, func(workspace.File) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("fn error: got %v", err)
	}
}

func TestResolve(t *testing.T) {
	root, outside := fixture(t)
	// The workspace is opened through a symbolic link to its root: paths spelt either way work.
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(root, alias); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(alias)
	if err != nil {
		t.Fatal(err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path    string
		want    string // relative to the root; "" means refused
		because string // part of the refusal
	}{
		{path: "", want: "."},
		{path: "main.go", want: "main.go"},
		{path: "lib", want: "lib"},
		{path: "lib/", want: "lib"},
		{path: "./lib/util.py", want: "lib/util.py"},
		{path: filepath.Join(root, "web", "app.ts"), want: "web/app.ts"},
		{path: filepath.Join(alias, "web"), want: "web"},
		{path: "inside-link.go", want: "main.go"},
		{path: "lib-link", want: "lib"},
		{path: "../outside/secret.go", because: `must not contain ".."`},
		{path: "lib/../main.go", because: `must not contain ".."`},
		{path: "..", because: `must not contain ".."`},
		{path: "/etc/passwd", because: "outside the workspace"},
		{path: outside, because: "outside the workspace"},
		{path: "escape-link.go", because: "through a symbolic link"},
		{path: "escape-dir", because: "through a symbolic link"},
		{path: "escape-dir/secret.go", because: "through a symbolic link"},
		{path: "dangling-link", because: "does not exist"},
		{path: "missing.go", because: "does not exist"},
		{path: "pipe", because: "not a regular file or folder"},
		{path: "a\x00b", because: "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := ws.Resolve("path", tt.path)
			if tt.want == "" {
				ae, ok := tools.IsArgumentError(err)
				if !ok || ae.Argument != "path" || !strings.Contains(ae.Reason, tt.because) {
					t.Fatalf("Resolve(%q) = %q, %v; want an ArgumentError about %q", tt.path, got, err, tt.because)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.path, err)
			}
			if want := filepath.Join(realRoot, filepath.FromSlash(tt.want)); got != want {
				t.Errorf("Resolve(%q) = %q, want %q", tt.path, got, want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, roots := range [][]string{nil, {file}, {filepath.Join(t.TempDir(), "missing")}} {
		if _, err := workspace.New(roots...); err == nil {
			t.Errorf("New(%q) succeeded", roots)
		}
	}
	a, b := t.TempDir(), t.TempDir()
	ws, err := workspace.New(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b, "x.go"), []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An absolute path into the second root is accepted; relative paths start at the first.
	p, err := ws.Resolve("path", filepath.Join(b, "x.go"))
	if err != nil {
		t.Fatal(err)
	}
	root, rel, ok := ws.Root(p)
	if !ok || rel != "x.go" || root != ws.Roots()[1] {
		t.Errorf("Root(%q) = %q, %q, %v", p, root, rel, ok)
	}
	if _, err := ws.Resolve("path", "x.go"); err == nil {
		t.Error("relative x.go resolved in the first root, where it does not exist")
	}
}

func TestIgnored(t *testing.T) {
	root, outside := fixture(t)
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "build", "deep.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path    string
		ignored bool
	}{
		{".", false},
		{"main.go", false},
		{"debug.log", true},
		{"keep.log", false},
		{"build", true},
		{"build/deep.txt", true},
		{"sub/secret.txt", true},
		{"other/secret.txt", false},
		{"excluded.txt", true},
		{".git/config", true},
		{"not-yet-created.log", true},
	}
	for _, tt := range tests {
		if got := ws.Ignored(filepath.Join(root, tt.path)); got != tt.ignored {
			t.Errorf("Ignored(%s) = %v, want %v", tt.path, got, tt.ignored)
		}
	}
	if !ws.Ignored(filepath.Join(outside, "secret.go")) {
		t.Error("a path outside the roots is not ignored")
	}
}

// TestResolveDevice needs the right to create device nodes (root in most containers); where
// that is missing it is skipped, under CI=true too (no install gives that right), the named
// pipe of TestResolve covering the same refusal.
func TestResolveDevice(t *testing.T) {
	root := t.TempDir()
	dev := filepath.Join(root, "null")
	if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("cannot create a device node here: %v", err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ws.Resolve("path", "null")
	if ae, ok := tools.IsArgumentError(err); !ok || !strings.Contains(ae.Reason, "not a regular file or folder") {
		t.Errorf("device: got %v", err)
	}
	n := 0
	if err := ws.Walk(context.Background(), ws.Roots()[0], func(workspace.File) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("walk listed %d files (err %v) in a folder holding only a device", n, err)
	}
}

// TestTrackedFilesBeatIgnorePatterns: git lists a tracked file even when .gitignore matches
// it (a package.json added with "git add -f", a dist folder committed on purpose), and so does
// Walk; the index of a repository nested in the root counts too.
func TestTrackedFilesBeatIgnorePatterns(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		".gitignore":               "*.json\ndist/\n",
		"package.json":             "{}",
		"other.json":               "{}",
		"dist/keep/index.js":       "x",
		"dist/drop.js":             "x",
		"nested/.gitignore":        "*.py\n",
		"nested/tracked.py":        "x",
		"nested/untracked.py":      "x",
		"nested/src/deep/kept.py":  "x",
		"nested/src/deep/other.py": "x",
	}
	testenv.WriteTree(t, root, files)
	testenv.NewGit(t, root).Run("add", "-f", ".gitignore", "package.json", "dist/keep/index.js")
	testenv.NewGit(t, filepath.Join(root, "nested")).Run("add", "-f", ".gitignore", "tracked.py", "src/deep/kept.py")

	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	got := keys(walkAll(t, ws, ws.Roots()[0]))
	want := []string{".gitignore", "dist/keep/index.js", "nested/.gitignore", "nested/src/deep/kept.py", "nested/tracked.py", "package.json"}
	if !slices.Equal(got, want) {
		t.Errorf("walked %q, want %q", got, want)
	}
	for rel, ignored := range map[string]bool{"package.json": false, "other.json": true, "dist/keep": false,
		"dist/drop.js": true, "nested/src/deep/kept.py": false, "nested/untracked.py": true} {
		if got := ws.Ignored(filepath.Join(root, filepath.FromSlash(rel))); got != ignored {
			t.Errorf("Ignored(%s) = %v, want %v", rel, got, ignored)
		}
	}
}

// TestLargeIgnoreFileIsReadToTheFileSizeLimit: a .gitignore is read as far as
// Limits.MaxFileSize, like any file: patterns past that are not honoured, and a .gitignore of
// gigabytes costs no more than one of the limit.
func TestLargeIgnoreFileIsReadToTheFileSizeLimit(t *testing.T) {
	root := t.TempDir()
	ignore := "first.txt\n" + strings.Repeat("#\n", 1<<10) + "last.txt\n"
	testenv.WriteTree(t, root, map[string]string{".gitignore": ignore, "first.txt": "x", "last.txt": "x", "kept.txt": "x"})
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	got := walkAll(t, ws.WithLimits(workspace.Limits{MaxFileSize: 1 << 10, MaxFiles: 100}), root)
	if _, ok := got["first.txt"]; ok {
		t.Error("a pattern within the limit was not honoured")
	}
	if _, ok := got["last.txt"]; !ok {
		t.Error("a pattern past the limit was honoured: the file was read whole")
	}
}

// TestHidden: a hidden folder (the service's data folder below the default workspace) is
// never listed, read, resolved or watched, whether reached directly or through a link.
func TestHidden(t *testing.T) {
	root, _ := fixture(t)
	testenv.WriteTree(t, root, map[string]string{
		"data/platform.db":        "SQLite format 3\x00",
		"data/projects/demo.db":   "SQLite format 3\x00",
		"data/admin-token":        "secret-admin-token",
		"database.go":             "package main\n",
		"data-not-hidden/keep.go": "package keep\n",
	})
	if err := os.Symlink(filepath.Join(root, "data"), filepath.Join(root, "data-link")); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	ws = ws.WithHidden(filepath.Join(root, "data"))
	got := walkAll(t, ws, root)
	for rel := range got {
		if strings.HasPrefix(rel, "data/") || strings.HasPrefix(rel, "data-link/") {
			t.Errorf("Walk listed %s, in the hidden folder", rel)
		}
	}
	for _, rel := range []string{"database.go", "data-not-hidden/keep.go", "main.go"} {
		if _, ok := got[rel]; !ok {
			t.Errorf("Walk left out %s, outside the hidden folder", rel)
		}
	}
	for _, p := range []string{"data", "data/admin-token", "data-link/admin-token"} {
		_, err := ws.Resolve("path", p)
		var argErr *tools.ArgumentError
		if !errors.As(err, &argErr) {
			t.Errorf("Resolve(%s) = %v, want an argument error", p, err)
		}
		if !ws.Ignored(filepath.Join(root, p)) && p != "data-link/admin-token" {
			t.Errorf("Ignored(%s) = false", p)
		}
	}
	if ws.Ignored(filepath.Join(root, "database.go")) {
		t.Error("Ignored(database.go) = true")
	}
}
