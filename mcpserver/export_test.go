package mcpserver

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartRedisServer runs the redis-server binary at path on a free loopback port for the
// test and returns its address and a func that kills it (also run at cleanup).
func StartRedisServer(t testing.TB, path string) (addr string, stop func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(stop)
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	for i := 0; rdb.Ping(context.Background()).Err() != nil; i++ {
		if i == 100 {
			t.Fatalf("redis-server on %s did not answer", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return addr, stop
}
