package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/store"
)

// TestEmbeddedRedisPipeline: the embedded Redis's own connection loop answers every command
// of large pipelines in order, across the reads of its input buffer, and pub/sub (messages
// written while the subscriber's loop waits), transactions and QUIT still work.
func TestEmbeddedRedisPipeline(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	opts, err := redis.ParseURL(s.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	opts.PoolSize = 1
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

	sub := s.Redis.Subscribe(ctx, "ch")
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

// BenchmarkEmbeddedRedis sends the MCP server's per-request pipeline (seven commands: the
// rate log, the client's slots, the session) to the embedded Redis and, in the same run, to
// miniredis served by its own connection loop.
func BenchmarkEmbeddedRedis(b *testing.B) {
	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx)
	mini := redis.NewClient(&redis.Options{Addr: miniredis.RunT(b).Addr()})
	defer mini.Close()
	for _, c := range []struct {
		name string
		rdb  *redis.Client
	}{{"embedded", s.Redis}, {"miniredis", mini}} {
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
