// Package testenv gives tests of every package what they need from the machine: the commands
// that .ci/run installs (git, node, chromium, redis-server), a real redis-server on a free
// port, file trees and git repositories in the test's own folders.
//
// A test that cannot run without something missing here is skipped on a developer's machine,
// but fails under CI=true: there .ci/run installs everything, and a skip would let a failed
// install pass unseen. The package imports none of the platform's own, so that the tests of
// every package can use it.
package testenv

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// command says how the command name gets onto a machine, and the other names it goes by.
func command(name string) (install string, aliases []string) {
	switch name {
	case "chromium":
		// Ubuntu calls it chromium-browser; Chrome runs the same headless tests.
		return ".ci/run installs it: apt-get install chromium", []string{"chromium-browser", "google-chrome"}
	case "git":
		return ".ci/run installs it: apt-get install git", nil
	case "go":
		return "the machine that runs .ci/run has Go: https://go.dev/dl", nil
	case "node":
		return ".ci/run installs it: apt-get install nodejs npm", nil
	case "python3":
		return ".ci/run installs it: apt-get install python3", nil
	case "redis-server":
		return ".ci/run installs it: apt-get install redis-server", nil
	}
	return "install it", nil
}

// CI reports whether the tests run under CI=true, where nothing they need may be missing.
func CI() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// Need returns the path of the command name. Where it is not on PATH the test is skipped, or
// fails under CI=true.
func Need(tb testing.TB, name string) string {
	tb.Helper()
	install, aliases := command(name)
	for _, n := range append([]string{name}, aliases...) {
		if path, err := exec.LookPath(n); err == nil {
			return path
		}
	}
	missing(tb, fmt.Sprintf("%s is not on PATH (%s)", name, install))
	return ""
}

// NeedFile stops the test when path, something installed for the tests, is missing: it is
// skipped, or fails under CI=true. install is the command that installs it.
func NeedFile(tb testing.TB, path, install string) {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		missing(tb, fmt.Sprintf("%s is missing (.ci/run installs it: %s): %v", path, install, err))
	}
}

// Use reports whether a test that can run with or without the command name (a real
// redis-server beside the embedded Redis, say) runs with it: when name is on PATH, and always
// under CI=true, so that a failed install fails the test (in Need) instead of narrowing it.
func Use(name string) bool {
	if CI() {
		return true
	}
	_, err := exec.LookPath(name)
	return err == nil
}

func missing(tb testing.TB, what string) {
	tb.Helper()
	if CI() {
		tb.Fatalf("%s; under CI=true a test that needs it fails instead of skipping", what)
	}
	tb.Skip(what)
}

// RedisServer runs a real redis-server, without persistence, on a free loopback port until
// the test ends, and returns its host:port and a func that kills it sooner (to test what
// happens when Redis goes away). It needs redis-server (see Need).
func RedisServer(tb testing.TB) (addr string, stop func()) {
	tb.Helper()
	bin := Need(tb, "redis-server")
	// The port is free when asked for, but may be taken before redis-server binds it.
	for attempt := 1; ; attempt++ {
		addr, stop, err := startRedis(tb, bin)
		if err == nil {
			tb.Cleanup(stop)
			return addr, stop
		}
		if attempt == 3 {
			tb.Fatal(err)
		}
	}
}

func startRedis(tb testing.TB, bin string) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	_ = l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tb.TempDir())
	// out is read only once the process has ended, when nothing writes to it any more.
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1})
	defer rdb.Close()
	deadline := time.After(10 * time.Second)
	for rdb.Ping(context.Background()).Err() != nil {
		select {
		case <-exited:
			return "", nil, fmt.Errorf("redis-server on %s exited:\n%s", addr, out.String())
		case <-deadline:
			stop()
			return "", nil, fmt.Errorf("redis-server on %s did not answer within 10 s:\n%s", addr, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return addr, stop, nil
}

// GOROOT returns the root of the Go installation that runs the tests: its src folder is a
// large real tree that every machine with Go has. It needs go (see Need).
func GOROOT(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command(Need(tb, "go"), "env", "GOROOT").Output()
	if err != nil {
		tb.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}
