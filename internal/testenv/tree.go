package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// WriteTree writes files (slash-separated path relative to dir -> content) below dir,
// making folders as needed and replacing files that exist.
func WriteTree(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// TempTree writes files (as WriteTree) below a new folder of the test and returns it.
func TempTree(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir := tb.TempDir()
	WriteTree(tb, dir, files)
	return dir
}

// Git is a repository made by the git command, as users' repositories are, so that the
// tools reading it with go-git are tested on what git writes. Every run makes the same
// commits: a fixed author and date, and no user or system configuration.
type Git struct {
	// Dir is the work tree.
	Dir string

	tb  testing.TB
	bin string
}

// NewGit makes dir a new git repository. It needs git (see Need).
func NewGit(tb testing.TB, dir string) *Git {
	tb.Helper()
	g := &Git{Dir: dir, tb: tb, bin: Need(tb, "git")}
	g.Run("init", "-q", "--initial-branch=main")
	return g
}

// Run runs git with args in the work tree and returns its output; a failure fails the test.
func (g *Git) Run(args ...string) string {
	g.tb.Helper()
	cmd := exec.Command(g.bin, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = g.Dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_DATE=2026-11-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-11-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.tb.Fatalf("git %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// Commit writes files (as WriteTree) and commits every change of the work tree.
func (g *Git) Commit(msg string, files map[string]string) {
	g.tb.Helper()
	WriteTree(g.tb, g.Dir, files)
	g.Run("add", "-A")
	g.Run("commit", "-q", "--allow-empty", "-m", msg)
}
