// Command loadgen measures the requests per second of a project's GraphQL API for the seed's
// operations: create, list, fetch by uid and update, each run for a while by concurrent
// clients.
//
// Without -url it starts what `platform serve` would on embedded stores (SQLite and the
// GraphQL API of a products table, on a loopback port, in a temporary folder) and also
// measures the read a fetch by uid makes, straight from the store (store get), printing the
// ratio of the two. With -url it loads a running server, sending -token as the bearer token.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// The seed's documents.
const (
	listDoc   = `query products { products { uid name price author createdAt updatedAt } }`
	fetchDoc  = `query products($uid: ID) { products(uid: $uid) { uid name price author createdAt updatedAt } }`
	createDoc = `mutation createproduct($data: productInput!) { createproduct(data: $data) { uid name price author createdAt updatedAt } }`
	updateDoc = `mutation updateproduct($uid: ID, $data: productInput!) { updateproduct(uid: $uid, data: $data) { uid name price author createdAt updatedAt } }`
)

func main() {
	url := flag.String("url", "", "GraphQL endpoint of a running server (empty: start one on embedded stores)")
	token := flag.String("token", "", "bearer token sent with -url")
	duration := flag.Duration("duration", 5*time.Second, "how long each operation runs")
	concurrency := flag.Int("concurrency", 8, "concurrent clients")
	rows := flag.Int("rows", 1000, "products to create (fewer when -duration ends first); the other operations use them")
	flag.Parse()
	if err := run(context.Background(), *url, *token, *duration, *concurrency, *rows); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, token string, d time.Duration, workers, rows int) error {
	if workers < 1 || d <= 0 || rows < 1 {
		return errors.New("-concurrency, -duration and -rows must be positive")
	}
	var recs *store.Records
	if url == "" {
		dir, err := os.MkdirTemp("", "loadgen-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		stores, err := store.Open(ctx, store.Config{DataDir: dir, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return err
		}
		defer stores.Close(context.WithoutCancel(ctx))
		products := gql.Table{TypeName: "product", Table: store.Table{
			Name: "products", Fields: []store.Field{
				{Name: "author", Type: store.FieldType{Scalar: store.String}},
				{Name: "name", Type: store.FieldType{Scalar: store.String}, Required: true},
				{Name: "price", Type: store.FieldType{Scalar: store.Float}, Required: true},
			},
		}}
		recs, err = stores.ProjectRecords(ctx, "loadgen", "", []store.Table{products.Table})
		if err != nil {
			return err
		}
		if err := recs.Ensure(ctx); err != nil {
			return err
		}
		api, err := gql.New(gql.Config{Records: recs, Tables: []gql.Table{products}})
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		url = "http://" + ln.Addr().String() + "/api/v1/graphql"
	}
	c := &client{url: url, token: token, http: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: workers, DialContext: dialLocalhost},
	}}

	fmt.Printf("%d clients, %s per operation, %s\n\n%-8s %10s %10s %10s %8s\n", workers, d, url, "op", "req/s", "p50", "p99", "errors")
	var uids []string
	var mu sync.Mutex
	created, err := measure(d, workers, rows, func(i int) error {
		uid, err := c.create(ctx, i)
		if err == nil {
			mu.Lock()
			uids = append(uids, uid)
			mu.Unlock()
		}
		return err
	})
	if err != nil {
		return err
	}
	created.print("create")
	fmt.Printf("         (%d products)\n", len(uids))
	if len(uids) == 0 {
		return errors.New("no product was created")
	}
	pick := func(i int) string { return uids[(i*7919)%len(uids)] }
	ops := []struct {
		name string
		fn   func(i int) error
	}{
		{"list", func(int) error { return c.do(ctx, listDoc, map[string]any{}) }},
		{"fetch", func(i int) error { return c.do(ctx, fetchDoc, map[string]any{"uid": pick(i)}) }},
		{"update", func(i int) error {
			return c.do(ctx, updateDoc, map[string]any{"uid": pick(i), "data": map[string]any{"price": float64(i%1000) + 0.99}})
		}},
	}
	var fetch stats
	for _, op := range ops {
		s, err := measure(d, workers, 0, op.fn)
		if err != nil {
			return err
		}
		s.print(op.name)
		if op.name == "fetch" {
			fetch = s
		}
	}
	if recs == nil {
		return nil
	}
	find, err := measure(d, workers, 0, func(i int) error {
		var rec map[string]any
		return recs.Get(ctx, "products", pick(i), store.All, &rec)
	})
	if err != nil {
		return err
	}
	find.print("store get")
	fmt.Printf("\nfetch over HTTP / the same read from the store: %.2f (req/s), %.2f (p50)\n", find.rps/fetch.rps, float64(fetch.p50)/float64(find.p50))
	return nil
}

// dialLocalhost connects names under .localhost to the loopback address, as RFC 6761 has
// them resolve (curl and browsers do; the system resolver may not), so that -url can name a
// project host of `make run` such as demo.localhost:8080.
func dialLocalhost(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err == nil && strings.HasSuffix(host, ".localhost") {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

type client struct {
	url, token string
	http       *http.Client
}

// do sends one GraphQL request and fails unless it is answered without errors.
func (c *client) do(ctx context.Context, query string, vars map[string]any) error {
	_, err := c.post(ctx, query, vars)
	return err
}

func (c *client) create(ctx context.Context, i int) (string, error) {
	data, err := c.post(ctx, createDoc, map[string]any{"data": map[string]any{"name": fmt.Sprintf("product %d", i), "price": 19.99}})
	if err != nil {
		return "", err
	}
	var out struct {
		CreateProduct struct{ UID string } `json:"createProduct"`
	}
	if err := json.Unmarshal(data, &out); err != nil || out.CreateProduct.UID == "" {
		return "", fmt.Errorf("create answered %s", data)
	}
	return out.CreateProduct.UID, nil
}

func (c *client) post(ctx context.Context, query string, vars map[string]any) (json.RawMessage, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	var r struct {
		Data   json.RawMessage   `json:"data"`
		Errors []json.RawMessage `json:"errors"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(out, &r) != nil || len(r.Errors) > 0 {
		return nil, fmt.Errorf("status %d: %s", res.StatusCode, out)
	}
	return r.Data, nil
}

type stats struct {
	n, errs  int64
	rps      float64
	p50, p99 time.Duration
	firstErr error
}

func (s stats) print(name string) {
	fmt.Printf("%-8s %10.0f %10s %10s %8d\n", name, s.rps, s.p50.Round(time.Microsecond), s.p99.Round(time.Microsecond), s.errs)
	if s.firstErr != nil {
		fmt.Printf("         first error: %v\n", s.firstErr)
	}
}

// measure runs fn from workers goroutines for d, or until it was called calls times (0: no
// limit), and summarises the calls. It fails when every call failed.
func measure(d time.Duration, workers, calls int, fn func(i int) error) (stats, error) {
	var next, errs atomic.Int64
	var firstErr atomic.Pointer[error]
	lat := make([][]time.Duration, workers)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				i := int(next.Add(1))
				if calls > 0 && i > calls {
					return
				}
				t := time.Now()
				if err := fn(i); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, &err)
					continue
				}
				lat[w] = append(lat[w], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	s := stats{n: int64(len(all)), errs: errs.Load()}
	if err := firstErr.Load(); err != nil {
		s.firstErr = *err
	}
	if len(all) == 0 {
		return s, fmt.Errorf("every call failed: %v", s.firstErr)
	}
	s.rps = float64(len(all)) / elapsed.Seconds()
	s.p50, s.p99 = all[len(all)/2], all[len(all)*99/100]
	return s, nil
}
