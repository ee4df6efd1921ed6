package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/platform-dev/platform/cmd/platform/platformtest"
)

// benchReceiver is a Go receiver on a fixed address that can go down and come back: it
// notes when each record's event arrived (first arrival) and how many requests it got.
type benchReceiver struct {
	addr string

	mu       sync.Mutex
	first    map[string]time.Time // by record uid
	lag      map[string]time.Duration
	requests int
	srv      *http.Server
}

func (br *benchReceiver) up(tb testing.TB) {
	tb.Helper()
	l, err := net.Listen("tcp", br.addr)
	if err != nil {
		tb.Fatal(err)
	}
	br.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		body, _ := io.ReadAll(r.Body)
		var ev struct {
			Timestamp string
			Data      struct{ UID string }
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		committed, _ := time.Parse(time.RFC3339Nano, ev.Timestamp)
		br.mu.Lock()
		br.requests++
		if _, seen := br.first[ev.Data.UID]; !seen {
			br.first[ev.Data.UID] = at
			br.lag[ev.Data.UID] = at.Sub(committed)
		}
		br.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() { _ = br.srv.Serve(l) }()
}

func (br *benchReceiver) down() { _ = br.srv.Close() }

func (br *benchReceiver) has(uids []string) int {
	br.mu.Lock()
	defer br.mu.Unlock()
	n := 0
	for _, u := range uids {
		if _, ok := br.first[u]; ok {
			n++
		}
	}
	return n
}

func (br *benchReceiver) waitAll(tb testing.TB, uids []string, within time.Duration) time.Duration {
	tb.Helper()
	start := time.Now()
	for br.has(uids) < len(uids) {
		if time.Since(start) > within {
			tb.Fatalf("%d of %d events received within %v", br.has(uids), len(uids), within)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

func (br *benchReceiver) lags(uids []string) []time.Duration {
	br.mu.Lock()
	defer br.mu.Unlock()
	out := make([]time.Duration, 0, len(uids))
	for _, u := range uids {
		out = append(out, br.lag[u])
	}
	slices.Sort(out)
	return out
}

// webhookBenchDown is how long the receiver is down (WEBHOOK_BENCH_DOWN, default 1m).
func webhookBenchDown(tb testing.TB) time.Duration {
	if s := os.Getenv("WEBHOOK_BENCH_DOWN"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			tb.Fatal(err)
		}
		return d
	}
	return time.Minute
}

// BenchmarkWebhookDelivery measures, through the binary, the time from a change's commit to
// its event's arrival at a receiver on the same machine (p50, p99 of 500 creates sent one
// after the other), the events per second of 2000 creates sent by 8 clients, and that no
// event is lost while the receiver is down for a minute (writes all along), nor when the
// server is killed with SIGKILL with deliveries pending.
//
//	go test -run '^$' -bench WebhookDelivery -benchtime 1x ./cmd/platform
func BenchmarkWebhookDelivery(b *testing.B) {
	br := &benchReceiver{addr: freeAddr(b), first: map[string]time.Time{}, lag: map[string]time.Duration{}}
	br.up(b)
	defer br.down()
	data := b.TempDir()
	// The default back-off (1 s doubling to 1 h, 20 attempts): an event made early in a
	// minute's outage waits up to about a minute more for its next attempt.
	env := []string{"PLATFORM_WEBHOOKS_ALLOW_PRIVATE=true"}
	s := platformtest.Start(b, binary, data, env...)
	doc := `{"id":"shop","tables":{"products":{"fields":{"name":{"type":"String","required":true},"price":{"type":"Float","required":true}},
  "access":{"read":"public","create":"public","update":"public","delete":"public"},
  "webhooks":{"all":{"url":"http://` + br.addr + `/","events":["create","update","delete"]}}}}}`
	if st, body, err := s.Do("PUT", "localhost", "/admin/v1/projects/shop", s.AdminToken(), []byte(doc)); err != nil || st != http.StatusCreated {
		b.Fatalf("PUT: %d %s %v", st, body, err)
	}
	create := func(s *platformtest.Server, name string) string {
		body := []byte(`{"query":"mutation { createProduct(data: {name: \"` + name + `\", price: 1}) { uid } }"}`)
		st, res, err := s.Do("POST", "shop.localhost", "/api/v1/graphql", "", body)
		var out struct {
			Data struct{ CreateProduct struct{ UID string } }
		}
		if err == nil {
			err = json.Unmarshal(res, &out)
		}
		if err != nil || st != http.StatusOK || out.Data.CreateProduct.UID == "" {
			b.Fatalf("create: %d %s %v", st, res, err)
		}
		return out.Data.CreateProduct.UID
	}
	for b.Loop() {
		// Commit to receipt, one change at a time.
		var uids []string
		for i := range 500 {
			uid := create(s, "seq"+strconv.Itoa(i))
			uids = append(uids, uid)
			br.waitAll(b, []string{uid}, 10*time.Second)
		}
		lags := br.lags(uids)
		b.ReportMetric(float64(lags[len(lags)/2].Microseconds())/1e3, "p50-ms")
		b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds())/1e3, "p99-ms")
		b.Logf("commit to receipt, 500 creates one at a time: p50 %v, p99 %v, max %v", lags[len(lags)/2], lags[len(lags)*99/100], lags[len(lags)-1])

		// A burst from 8 clients.
		burst := make([]string, 2000)
		start := time.Now()
		var wg sync.WaitGroup
		for c := range 8 {
			wg.Go(func() {
				for i := c; i < len(burst); i += 8 {
					burst[i] = create(s, "burst"+strconv.Itoa(i))
				}
			})
		}
		wg.Wait()
		br.waitAll(b, burst, time.Minute)
		rate := float64(len(burst)) / time.Since(start).Seconds()
		lags = br.lags(burst)
		b.ReportMetric(rate, "burst-events/s")
		b.Logf("2000 creates from 8 clients: all received in %v (%.0f events/s), commit to receipt p50 %v, p99 %v", time.Since(start), rate, lags[len(lags)/2], lags[len(lags)*99/100])

		// The receiver down for a minute, writes all along.
		down := webhookBenchDown(b)
		br.down()
		var during []string
		for end := time.Now().Add(down); time.Now().Before(end); time.Sleep(down / 300) {
			during = append(during, create(s, "down"))
		}
		br.up(b)
		took := br.waitAll(b, during, 3*time.Minute)
		b.Logf("receiver down %v while %d creates were made: all %d received %v after it came back", down, len(during), br.has(during), took)

		// SIGKILL with deliveries pending: the receiver is down while the writes commit.
		br.down()
		var killed []string
		for i := range 200 {
			killed = append(killed, create(s, "killed"+strconv.Itoa(i)))
		}
		s.Kill()
		br.up(b)
		restart := time.Now()
		s = platformtest.Start(b, binary, data, env...)
		br.waitAll(b, killed, 2*time.Minute)
		b.Logf("server killed (SIGKILL) with %d deliveries pending: all %d received %v after the restart began", len(killed), br.has(killed), time.Since(restart))
		b.ReportMetric(float64(len(during)+len(killed)-br.has(during)-br.has(killed)), "lost")
		br.mu.Lock()
		b.Logf("requests received %d for %d records (duplicates are allowed: at least once)", br.requests, len(br.first))
		br.mu.Unlock()
	}
}
