package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The figures of issue 33, asserted: every attack sent 8 at a time grows the server's peak
// RSS (and its Go heap) by at most 300 MB, every copy is answered within 2 s (a row that waits
// by design, such as the JWKS recovery's Retry-After, is timed without its wait). The quiet
// project is fetched by uid throughout, and its p99 against its idle p99 is reported (the
// target is 3 times at most).
const (
	attackCopies    = 8
	maxGrowth       = 300 << 20
	maxAnswer       = 2 * time.Second
	maxP99OverIdle  = 3.0
	quietWorkers    = 2
	idleMeasurement = 3 * time.Second
)

// BenchmarkAttacks: go test -run '^$' -bench Attacks -benchtime 1x -timeout 20m ./e2e
func BenchmarkAttacks(b *testing.B) {
	s := startAttackSite(b, 1500*time.Millisecond)
	ctx := context.Background()
	idle := s.quietP99(ctx, idleMeasurement, nil)
	b.Logf("quiet alone: p99 %v", idle)
	for _, a := range attacks {
		b.Run(a.name, func(b *testing.B) {
			var r attackRun
			for b.Loop() {
				r = s.run8(ctx, a)
			}
			b.ReportMetric(float64(r.rss)/(1<<20), "rss-MB")
			b.ReportMetric(float64(r.heap)/(1<<20), "heap-MB")
			b.ReportMetric(r.slowest.Seconds(), "slowest-s")
			b.ReportMetric(float64(r.p99)/float64(idle), "quiet-p99/idle")
			// Logged as well, since a failed benchmark prints no metrics.
			b.Logf("peak RSS +%d MB, heap +%d MB, slowest %v, quiet p99 %v (%.1fx idle)", r.rss>>20, r.heap>>20, r.slowest, r.p99, float64(r.p99)/float64(idle))
			if r.err != nil {
				b.Fatal(r.err)
			}
			if r.rss > maxGrowth || r.heap > maxGrowth {
				b.Errorf("peak RSS grew by %d MB and the heap by %d MB, past %d MB", r.rss>>20, r.heap>>20, maxGrowth>>20)
			}
			if r.slowest > maxAnswer {
				b.Errorf("the slowest copy took %v, past %v", r.slowest, maxAnswer)
			}
			// The quiet project's p99 is reported, not asserted: 8 requests of another project
			// that each take CPU (planning a 1,000-comparison filter, reading 10 MB) hold both
			// cores for their time, and only admission per project (issue 27) bounds that.
			if float64(r.p99) > maxP99OverIdle*float64(idle) {
				b.Logf("the quiet project's p99 was %v, past %.0f times its idle %v", r.p99, maxP99OverIdle, idle)
			}
		})
	}
}

// attackRun is what one row sent 8 at a time did.
type attackRun struct {
	rss, heap int64         // growth of the peak RSS and of the Go heap
	slowest   time.Duration // the slowest copy, without a wait the row makes by design
	p99       time.Duration // the quiet project's p99 meanwhile
	err       error         // the first wrong answer
}

func (s *attackSite) run8(ctx context.Context, a attack) attackRun {
	var r attackRun
	heap0 := s.heapSys()
	rss0 := s.rss()
	stop := make(chan struct{})
	peak := make(chan int64)
	go func() {
		top := rss0
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- top
				return
			case <-tick.C:
				top = max(top, s.rss())
			}
		}
	}()
	quiet := make(chan time.Duration)
	done := make(chan struct{})
	go func() { quiet <- s.quietP99(ctx, 0, done) }()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range attackCopies {
		wg.Go(func() {
			start := time.Now()
			c, cancel := context.WithTimeout(withWaits(ctx), time.Minute)
			defer cancel()
			err := a.send(c, s)
			took := time.Since(start) - waited(c)
			mu.Lock()
			defer mu.Unlock()
			r.slowest = max(r.slowest, took)
			if err != nil && r.err == nil {
				r.err = err
			}
		})
	}
	wg.Wait()
	close(done)
	r.p99 = <-quiet
	close(stop)
	r.rss = <-peak - rss0
	r.heap = s.heapSys() - heap0
	return r
}

// quietP99 fetches the quiet project's record by uid with quietWorkers clients, for d or until
// done is closed, and returns the p99 latency.
func (s *attackSite) quietP99(ctx context.Context, d time.Duration, done <-chan struct{}) time.Duration {
	return s.quietLoad(ctx, d, done).p99
}

// quietRun is what the quiet project's clients saw.
type quietRun struct {
	requests int           // sent, answered or failed
	p99      time.Duration // a failure counts as an hour
}

// quietLoad is quietP99 with the number of requests sent.
func (s *attackSite) quietLoad(ctx context.Context, d time.Duration, done <-chan struct{}) quietRun {
	if done == nil {
		c := make(chan struct{})
		time.AfterFunc(d, func() { close(c) })
		done = c
	}
	var mu sync.Mutex
	var took []time.Duration
	var wg sync.WaitGroup
	for range quietWorkers {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				start := time.Now()
				err := s.quietServes(ctx)
				mu.Lock()
				if err != nil {
					took = append(took, time.Hour) // a failure counts as the worst latency
				} else {
					took = append(took, time.Since(start))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(took) == 0 {
		return quietRun{}
	}
	slices.Sort(took)
	return quietRun{requests: len(took), p99: took[len(took)*99/100]}
}

// rss is the server's resident set, from /proc.
func (s *attackSite) rss() int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.srv.Pid()))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func (s *attackSite) heapSys() int64 {
	return int64(s.metricValue("go_memstats_heap_sys_bytes"))
}

// waitKey carries, in a row's context, how long the row waited by design.
type waitKey struct{}

type waitTotal struct {
	mu sync.Mutex
	d  time.Duration
}

func withWaits(ctx context.Context) context.Context {
	return context.WithValue(ctx, waitKey{}, &waitTotal{})
}

// sleep waits d (or until ctx ends) and notes the wait as one the row makes by design.
func sleep(ctx context.Context, d time.Duration) error {
	if w, ok := ctx.Value(waitKey{}).(*waitTotal); ok {
		w.mu.Lock()
		w.d += d
		w.mu.Unlock()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func waited(ctx context.Context) time.Duration {
	w, ok := ctx.Value(waitKey{}).(*waitTotal)
	if !ok {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.d
}
