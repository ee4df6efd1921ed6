// Package platformtest runs the real platform binary for tests, as net/http/httptest runs a
// handler: Build compiles it once per test run, Start runs `platform serve` on free loopback
// ports with the test's own folders and waits until it serves, and the test's cleanup stops
// it gracefully. Tests of the binary, of the deployment manifests and of several replicas
// share it, so they start the service the same way.
package platformtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Build compiles the platform binary into dir and returns its path.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "platform")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/platform-dev/platform/cmd/platform").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build platform: %w\n%s", err, out)
	}
	return bin, nil
}

// Server is one running `platform serve`.
type Server struct {
	// Addr and MetricsAddr are where it listens (MetricsAddr is empty when metrics are off;
	// serve logs it before it logs that it serves, so both are set when Start returns).
	Addr, MetricsAddr string
	// DataDir is its data folder, Workspace the folder its MCP tools read.
	DataDir, Workspace string
	// RedisAddr is the embedded Redis's host:port ("" when REDIS_URL names another).
	RedisAddr string

	tb     testing.TB
	cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex
	log    bytes.Buffer
}

var (
	servingLine = regexp.MustCompile(`msg="platform serving" addr=(\S+)`)
	metricsLine = regexp.MustCompile(`msg="metrics serving" addr=(\S+)`)
	redisLine   = regexp.MustCompile(`msg="redis: embedded.*url=redis://([^/\s]+)`)
)

// Start runs `binary serve` on a free port with dataDir (a new temporary folder when empty),
// an empty workspace, and env added to the environment; metrics listen on a free port unless
// env sets PLATFORM_METRICS_ADDR. It returns once the server serves, and stops it (SIGTERM)
// when the test ends.
func Start(tb testing.TB, binary, dataDir string, env ...string) *Server {
	tb.Helper()
	if dataDir == "" {
		dataDir = tb.TempDir()
	}
	s := &Server{tb: tb, DataDir: dataDir, Workspace: tb.TempDir(), exited: make(chan struct{})}
	s.cmd = exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--data", dataDir, "--workspace", s.Workspace)
	return s.start(env)
}

// StartIn runs `binary serve` in dir with the folders a newcomer's `make run` gets: the data
// folder ./data inside the workspace, dir itself.
func StartIn(tb testing.TB, binary, dir string, env ...string) *Server {
	tb.Helper()
	s := &Server{tb: tb, DataDir: filepath.Join(dir, "data"), Workspace: dir, exited: make(chan struct{})}
	s.cmd = exec.Command(binary, "serve", "--addr", "127.0.0.1:0")
	s.cmd.Dir = dir
	return s.start(env)
}

func (s *Server) start(env []string) *Server {
	tb := s.tb
	tb.Helper()
	s.cmd.Env = append(os.Environ(), "PLATFORM_METRICS_ADDR=127.0.0.1:0")
	s.cmd.Env = append(s.cmd.Env, env...)
	// Readiness is read from the log, so the log stays text whatever env says.
	s.cmd.Env = append(s.cmd.Env, "PLATFORM_LOG_FORMAT=text")
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.log.WriteString(line + "\n")
			if m := metricsLine.FindStringSubmatch(line); m != nil {
				s.MetricsAddr = m[1]
			}
			if m := redisLine.FindStringSubmatch(line); m != nil {
				s.RedisAddr = m[1]
			}
			s.mu.Unlock()
			if m := servingLine.FindStringSubmatch(line); m != nil {
				ready <- m[1]
			}
		}
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	tb.Cleanup(func() {
		s.Stop()
		if tb.Failed() {
			tb.Logf("platform serve log:\n%s", s.Log())
		}
	})
	select {
	case s.Addr = <-ready:
	case <-s.exited:
		tb.Fatalf("platform serve exited before serving:\n%s", s.Log())
	case <-time.After(60 * time.Second):
		tb.Fatalf("platform serve did not start within 60s:\n%s", s.Log())
	}
	return s
}

// Log returns what the server has logged so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// AdminToken is the admin token the server generated in its data folder ("" when it was
// given one).
func (s *Server) AdminToken() string {
	b, err := os.ReadFile(filepath.Join(s.DataDir, "admin-token"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Pid is the process id, for reading its figures in /proc.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Exited is closed when the process has ended.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Terminate sends SIGTERM and returns at once.
func (s *Server) Terminate() { _ = s.cmd.Process.Signal(syscall.SIGTERM) }

// Stop sends SIGTERM and waits for the process to end; one that ignores it for 30 s is
// killed and fails the test.
func (s *Server) Stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.Terminate()
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		s.tb.Errorf("platform serve ignored SIGTERM for 30s:\n%s", s.Log())
	}
}

// Kill ends the process with SIGKILL, as when a machine dies, and waits for it.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// Do sends a request to the server for host (the apex "localhost" or "<project>.localhost"),
// with a bearer token when token is set and a JSON body when body is not nil.
func (s *Server) Do(method, host, path, token string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, "http://"+s.Addr+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Host = host
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// Main is a whole TestMain for packages that run the binary: it builds it into a temporary
// folder, sets *binary, runs the tests, removes the folder and returns the exit code.
func Main(m *testing.M, binary *string) int {
	dir, err := os.MkdirTemp("", "platform-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *binary, err = Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
