package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
)

// BenchmarkBackupUnderWrites backs up a project of 100,000 records (the peer benchmark's
// products) on the embedded store while paced writers insert records one at a time, and
// restores it. It reports the backup's and the restore's time, and the writes' p99 while the
// backups ran against their p99 in the second before each, with the same writers (the
// target: at most twice), each pooled over every backup, with the number of writes in each.
func BenchmarkBackupUnderWrites(b *testing.B) {
	const (
		n       = 100_000
		writers = 4
		pace    = 5 * time.Millisecond // between a writer's writes: about 800 writes/s in all
	)
	ctx := context.Background()
	s := openSQLiteStores(b)
	recs := seedProducts(b, s, n)
	id := fmt.Sprintf("bench%d", n)
	if _, _, err := s.Projects().Put(ctx, id, `{"id":"`+id+`"}`, store.Applied{}); err != nil {
		b.Fatal(err)
	}
	target := store.BackupFolder(filepath.Join(b.TempDir(), "backups"))

	// The writers record each write's end and latency until stop closes.
	type write struct {
		end  time.Time
		took time.Duration
	}
	var (
		mu     sync.Mutex
		writes []write
		wg     sync.WaitGroup
		stop   = make(chan struct{})
	)
	for w := range writers {
		wg.Go(func() {
			t := time.NewTicker(pace)
			defer t.Stop()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-t.C:
				}
				start := time.Now()
				err := recs.Insert(ctx, "products", "bench", []map[string]any{{"name": fmt.Sprintf("w%d-%d", w, i), "price": 1.5, "sku": fmt.Sprintf("w%d-%d", w, i)}}, nil)
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				writes = append(writes, write{time.Now(), time.Since(start)})
				mu.Unlock()
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	// latencies answers the latencies of the writes that ended in (from, to].
	latencies := func(from, to time.Time) []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		var d []time.Duration
		for _, w := range writes {
			if w.end.After(from) && !w.end.After(to) {
				d = append(d, w.took)
			}
		}
		return d
	}
	p99 := func(d []time.Duration) time.Duration {
		if len(d) == 0 {
			return 0
		}
		d = slices.Sorted(slices.Values(d))
		return d[len(d)*99/100]
	}

	// The writes before a backup are measured over a window long enough for a steady p99.
	const window = time.Second
	time.Sleep(2 * window) // the writers settle
	var backupTime, restoreTime time.Duration
	var before, during []time.Duration // every backup's, pooled
	var size int64
	for b.Loop() {
		began := time.Now()
		bk, err := s.TakeBackup(ctx, target, id, "")
		if err != nil {
			b.Fatal(err)
		}
		ended := time.Now()
		took := ended.Sub(began)
		d, q := latencies(began, ended), latencies(began.Add(-window), began)
		during, before = append(during, d...), append(before, q...)
		backupTime += took
		size = bk.Size

		bf, err := s.OpenBackup(ctx, target, bk)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := bf.Restore(ctx, id, "", []store.Table{benchProducts}); err != nil {
			b.Fatal(err)
		}
		restored := time.Since(start)
		restoreTime += restored
		_ = bf.Close()
		b.Logf("backup %s, write p99 %s during it (%d writes), %s in the %s before (%d writes); restore %s",
			took.Round(time.Millisecond), p99(d).Round(10*time.Microsecond), len(d), p99(q).Round(10*time.Microsecond), window, len(q), restored.Round(time.Millisecond))
		time.Sleep(2 * window) // the restore's writes settle before the next window
	}
	runs := float64(b.N)
	b.ReportMetric(backupTime.Seconds()/runs*1000, "backup-ms")
	b.ReportMetric(restoreTime.Seconds()/runs*1000, "restore-ms")
	b.ReportMetric(float64(size)/(1<<20), "backup-MB")
	b.ReportMetric(p99(before).Seconds()*1000, "write-p99-before-ms")
	b.ReportMetric(p99(during).Seconds()*1000, "write-p99-during-ms")
	b.ReportMetric(float64(len(before))/runs, "writes-before")
	b.ReportMetric(float64(len(during))/runs, "writes-during")
	if p99(before) > 0 {
		b.ReportMetric(float64(p99(during))/float64(p99(before)), "p99-ratio")
	}
	b.ReportMetric(0, "ns/op")
}
