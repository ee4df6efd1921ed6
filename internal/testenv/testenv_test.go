package testenv_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/internal/testenv"
)

// TestMissing runs this test binary again for tests whose command or file is missing: under
// CI=true they fail, saying what is missing and how .ci/run installs it; elsewhere they are
// skipped with the same words.
func TestMissing(t *testing.T) {
	switch os.Getenv("TESTENV_CHILD") {
	case "command":
		testenv.Need(t, "redis-server")
		t.Log("ran past Need")
		return
	case "file":
		testenv.NeedFile(t, "testdata/node_modules/none/package.json", "npm ci --prefix testdata")
		t.Log("ran past NeedFile")
		return
	}
	for _, tt := range []struct {
		child, ci, want string
	}{
		{"command", "true", "--- FAIL"},
		{"command", "", "--- SKIP"},
		{"command", "false", "--- SKIP"},
		{"file", "true", "--- FAIL"},
		{"file", "", "--- SKIP"},
	} {
		t.Run(tt.child+"/CI="+tt.ci, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMissing$", "-test.v")
			env := []string{"TESTENV_CHILD=" + tt.child, "CI=" + tt.ci}
			if tt.child == "command" {
				env = append(env, "PATH="+t.TempDir()) // nothing is installed
			}
			cmd.Env = append(os.Environ(), env...)
			out, err := cmd.CombinedOutput()
			s := string(out)
			if !strings.Contains(s, tt.want) || strings.Contains(s, "ran past") || (err != nil) != (tt.want == "--- FAIL") {
				t.Fatalf("want %s (exit %v):\n%s", tt.want, err, s)
			}
			wantWords := map[string]string{
				"command": "redis-server is not on PATH (.ci/run installs it: apt-get install redis-server)",
				"file":    "testdata/node_modules/none/package.json is missing (.ci/run installs it: npm ci --prefix testdata)",
			}[tt.child]
			if !strings.Contains(s, wantWords) {
				t.Errorf("the message does not say %q:\n%s", wantWords, s)
			}
			if tt.ci == "true" && !strings.Contains(s, "under CI=true") {
				t.Errorf("the failure does not say why it is not a skip:\n%s", s)
			}
		})
	}
}

// TestUse: a test with a way round a missing command takes it only outside CI.
func TestUse(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CI", "")
	if testenv.Use("git") {
		t.Error("Use(git) with nothing on PATH")
	}
	t.Setenv("CI", "true")
	if !testenv.Use("git") {
		t.Error("Use(git) false under CI=true: the test would take its way round a failed install")
	}
}

func TestRedisServer(t *testing.T) {
	addr, stop := testenv.RedisServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1})
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := rdb.Get(ctx, "k").Result(); got != "v" || err != nil {
		t.Fatalf("GET k = %q, %v", got, err)
	}
	stop()
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Error("redis-server still answers after stop")
	}
}

func TestGit(t *testing.T) {
	g := testenv.NewGit(t, t.TempDir())
	g.Commit("first", map[string]string{"a/b/c.txt": "one\n", "top.txt": "top\n"})
	g.Commit("second", map[string]string{"a/b/c.txt": "two\n"})
	if err := os.Remove(filepath.Join(g.Dir, "top.txt")); err != nil {
		t.Fatal(err)
	}
	g.Commit("third", nil)
	if got := g.Run("log", "--format=%s %an %ad", "--date=iso-strict"); got != "third t 2026-11-01T00:00:00+00:00\nsecond t 2026-11-01T00:00:00+00:00\nfirst t 2026-11-01T00:00:00+00:00\n" {
		t.Errorf("log:\n%s", got)
	}
	if got := g.Run("ls-files"); got != "a/b/c.txt\n" {
		t.Errorf("tracked after removing top.txt: %q", got)
	}
	if got := g.Run("show", "HEAD~1:a/b/c.txt"); got != "two\n" {
		t.Errorf("a/b/c.txt at the second commit: %q", got)
	}
}

func TestTempTree(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{"x/y.txt": "y", "z.txt": "z"})
	testenv.WriteTree(t, dir, map[string]string{"z.txt": "new"})
	for name, want := range map[string]string{"x/y.txt": "y", "z.txt": "new"} {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name))); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
}
