package tenant_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform-dev/platform/coord"
	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// TestScheduledBackupsOneReplicaAtATime runs the backup schedule on two replicas that share
// the stores and Redis, started at the same moment: one takes the round, the other leaves it,
// and every project is backed up once.
func TestScheduledBackupsOneReplicaAtATime(t *testing.T) {
	s := openStores(t)
	target := store.BackupFolder(filepath.Join(t.TempDir(), "backups"))
	ctx, cancel := context.WithCancel(context.Background())
	var logs [2]lockedLog
	var regs [2]*tenant.Registry
	for i := range regs {
		logger := slog.New(slog.NewTextHandler(&logs[i], &slog.HandlerOptions{Level: slog.LevelDebug}))
		reg, err := tenant.NewRegistry(ctx, s, tenant.Options{Logger: logger, Backups: tenant.BackupOptions{Target: target, Every: time.Hour, Keep: 3}})
		if err != nil {
			t.Fatal(err)
		}
		defer reg.Close()
		regs[i] = reg
	}
	const projects = 20
	putProjects(t, regs[0], projects)

	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, reg := range regs {
		wg.Go(func() {
			<-start
			reg.RunBackups(ctx)
		})
	}
	close(start)
	defer func() { cancel(); wg.Wait() }()
	done := func() bool { return strings.Contains(logs[0].String()+logs[1].String(), "scheduled backups done") }
	for deadline := time.Now().Add(60 * time.Second); !done(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no round finished in 60 s:\n%s\n%s", logs[0].String(), logs[1].String())
		}
	}
	for i := range projects {
		id := fmt.Sprintf("p%d", i)
		list, err := regs[0].Backups(ctx, id)
		if err != nil || len(list) != 1 {
			t.Fatalf("backups of %s: %+v, %v; want one\n%s\n%s", id, list, err, logs[0].String(), logs[1].String())
		}
	}
	if n, err := s.Redis.Exists(ctx, coord.BackupLock).Result(); err != nil || n != 0 {
		t.Errorf("the lock is still held after the round: %d, %v", n, err)
	}
	t.Logf("replica 0: %d backups; replica 1: %d", strings.Count(logs[0].String(), "backup taken"), strings.Count(logs[1].String(), "backup taken"))
}

// lockedLog collects a logger's output, written from several goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
