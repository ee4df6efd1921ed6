package embedded_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/coord/embedded"
)

// TestEmbeddedRedisPipeline: the embedded Redis's own connection loop answers every command
// of large pipelines in order, across the reads of its input buffer, and pub/sub (messages
// written while the subscriber's loop waits), transactions and QUIT still work.
func TestEmbeddedRedisPipeline(t *testing.T) {
	ctx := context.Background()
	srv := start(t)
	opts := &redis.Options{Addr: srv.Addr(), PoolSize: 1}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	const n = 2000 // about 60 KB of commands: many reads of 4 KB
	for round := range 3 {
		cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range n {
				p.Incr(ctx, fmt.Sprintf("key-%d-%s", i, strings.Repeat("x", 10)))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cmds {
			if v := c.(*redis.IntCmd).Val(); v != int64(round+1) {
				t.Fatalf("round %d: reply %d is %d, want %d", round, i, v, round+1)
			}
		}
	}

	sub := redis.NewClient(&redis.Options{Addr: srv.Addr()}).Subscribe(ctx, "ch")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Publish(ctx, "ch", "hello").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-sub.Channel():
		if m.Payload != "hello" {
			t.Errorf("message %q", m.Payload)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no pub/sub message")
	}

	var get *redis.StringCmd
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "tx", "v", 0)
		get = p.Get(ctx, "tx")
		return nil
	}); err != nil || get.Val() != "v" {
		t.Errorf("transaction: %v %q", err, get.Val())
	}

	conn := rdb.Conn()
	defer conn.Close()
	if err := conn.Process(ctx, redis.NewStatusCmd(ctx, "quit")); err != nil {
		t.Errorf("quit: %v", err)
	}
}

// TestEmbeddedRedisAllocatesFromBytesReceived: headers that announce half a billion
// arguments, or a bulk string of 60 MB, on six connections, make the embedded Redis allocate
// nothing much until the bytes arrive; a command past the bound of one command is answered
// with a protocol error and its connection closed; and values both sides of the size read
// at once (64 KB) still go through.
func TestEmbeddedRedisAllocatesFromBytesReceived(t *testing.T) {
	ctx := context.Background()
	srv := start(t)
	opts := &redis.Options{Addr: srv.Addr()}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	dial := func(t *testing.T) net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", opts.Addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	for _, tc := range []struct{ name, header string }{
		{"half a billion arguments", "*500000000\r\n"},
		{"a bulk string of 60 MB", "*1\r\n$60000000\r\nabc"},
	} {
		header := tc.header
		t.Run(tc.name, func(t *testing.T) {
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for range 6 {
				if _, err := dial(t).Write([]byte(header)); err != nil {
					t.Fatal(err)
				}
			}
			// The server reads the headers when it gets to them: watch the heap a while.
			for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				var now runtime.MemStats
				runtime.ReadMemStats(&now)
				if grew := int64(now.HeapSys) - int64(before.HeapSys); grew > 64<<20 {
					t.Fatalf("the heap grew by %d MB for %q on 6 connections", grew>>20, header)
				}
			}
			if err := rdb.Ping(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		})
	}

	t.Run("a command past the bound", func(t *testing.T) {
		c := dial(t)
		if _, err := c.Write([]byte("*2\r\n$40000000\r\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(make([]byte, 40000002)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte("$40000000\r\n")); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		reply, err := io.ReadAll(c)
		if err != nil || string(reply) != "-ERR Protocol error: command larger than 67108864 bytes\r\n" {
			t.Fatalf("reply %q (%v), want the protocol error and the connection closed", reply, err)
		}
	})

	t.Run("values both sides of a direct read", func(t *testing.T) {
		for _, size := range []int{0, 64 << 10, 64<<10 + 1, 5 << 20} {
			v := strings.Repeat("v", size)
			if err := rdb.Set(ctx, "big", v, 0).Err(); err != nil {
				t.Fatal(err)
			}
			if got, err := rdb.Get(ctx, "big").Result(); err != nil || got != v {
				t.Fatalf("%d bytes: got %d bytes back (%v)", size, len(got), err)
			}
		}
	})
}

// BenchmarkEmbeddedRedis sends the MCP server's per-request pipeline (seven commands: the
// rate log, the client's slots, the session) to the embedded Redis and, in the same run, to
// miniredis served by its own connection loop.
func BenchmarkEmbeddedRedis(b *testing.B) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: start(b).Addr()})
	defer rdb.Close()
	mini := redis.NewClient(&redis.Options{Addr: miniredis.RunT(b).Addr()})
	defer mini.Close()
	for _, c := range []struct {
		name string
		rdb  *redis.Client
	}{{"embedded", rdb}, {"miniredis", mini}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
					p.ZRemRangeByScore(ctx, "rl", "-inf", "1")
					p.ZAdd(ctx, "rl", redis.Z{Score: 5, Member: "a"})
					p.ZCard(ctx, "rl")
					p.ZRangeWithScores(ctx, "rl", 0, 0)
					p.PExpire(ctx, "rl", time.Minute)
					p.ZCount(ctx, "conc", "1", "+inf")
					p.HGetAll(ctx, "session")
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// start starts an embedded server for the test.
func start(tb testing.TB) *embedded.Server {
	tb.Helper()
	srv, err := embedded.Start("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	return srv
}
