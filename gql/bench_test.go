package gql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// benchProject is a products table filled with rows records, served over HTTP.
type benchProject struct {
	srv  *httptest.Server
	api  *gql.API
	recs *store.Records
	uids []string
}

func newBenchProject(b *testing.B, rows int) *benchProject {
	b.Helper()
	recs := records(b, products())
	b.Cleanup(func() { _ = recs.Drop(context.Background()) })
	api, err := gql.New(gql.Config{Tables: []gql.Table{products()}, Records: recs})
	if err != nil {
		b.Fatal(err)
	}
	p := &benchProject{srv: httptest.NewServer(api), api: api, recs: recs}
	b.Cleanup(p.srv.Close)
	// Import in batches: the API would take long for large tables.
	now := time.Now().UTC().Format(store.TimeLayout)
	for len(p.uids) < rows {
		var batch []store.Record
		for i := 0; i < 1000 && len(p.uids) < rows; i++ {
			uid, err := store.NewUID()
			if err != nil {
				b.Fatal(err)
			}
			p.uids = append(p.uids, uid)
			batch = append(batch, store.Record(fmt.Sprintf(`{"uid":%q,"_owner":"","createdAt":%q,"updatedAt":%q,"name":"product %d","price":19.99}`, uid, now, now, len(p.uids))))
		}
		if err := recs.Import(context.Background(), "products", batch); err != nil {
			b.Fatal(err)
		}
	}
	return p
}

func (p *benchProject) post(b *testing.B, body []byte) {
	res, err := p.srv.Client().Post(p.srv.URL, "application/json", strings.NewReader(string(body)))
	if err != nil {
		b.Fatal(err)
	}
	out, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || strings.Contains(string(out), `"errors"`) {
		b.Fatalf("status %d, %v: %s", res.StatusCode, err, out)
	}
}

func request(b *testing.B, query string, vars map[string]any) []byte {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkList lists a page of 20 products.
func BenchmarkList(b *testing.B) {
	p := newBenchProject(b, 1000)
	body := request(b, `query products { products(limit: 20) { uid name price author createdAt updatedAt } }`, map[string]any{})
	b.ReportAllocs()
	for b.Loop() {
		p.post(b, body)
	}
}

// BenchmarkFetch fetches one product by uid, as the seed does, in tables of growing size:
// allocations per fetch must not grow with the table.
func BenchmarkFetch(b *testing.B) {
	for _, rows := range []int{100, 10000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			p := newBenchProject(b, rows)
			bodies := make([][]byte, 64)
			for i := range bodies {
				bodies[i] = request(b, seedFetch, map[string]any{"uid": p.uids[(i*7919)%len(p.uids)]})
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p.post(b, bodies[i%len(bodies)])
				i++
			}
		})
	}
}

// BenchmarkFetchVsFindOne measures, in one run, a GraphQL fetch by uid over HTTP, the same
// fetch through the handler without the network, and the same read straight from the store
// (Records.Get into a struct of the same fields); it reports the ratios of the first two to
// the third.
func BenchmarkFetchVsFindOne(b *testing.B) {
	for _, rows := range []int{100, 10000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) { fetchVsFindOne(b, rows) })
	}
}

func fetchVsFindOne(b *testing.B, rows int) {
	p := newBenchProject(b, rows)
	ctx := context.Background()
	var httpTime, handlerTime, findTime time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		uid := p.uids[(i*7919)%len(p.uids)]
		i++
		body := request(b, seedFetch, map[string]any{"uid": uid})

		start := time.Now()
		p.post(b, body)
		httpTime += time.Since(start)

		start = time.Now()
		req := httptest.NewRequest(http.MethodPost, "/api/v1/graphql", strings.NewReader(string(body)))
		rec := httptest.NewRecorder()
		p.api.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("handler: %d %s", rec.Code, rec.Body)
		}
		handlerTime += time.Since(start)

		start = time.Now()
		var doc struct {
			UID       string    `json:"uid"`
			Name      string    `json:"name"`
			Price     float64   `json:"price"`
			Author    string    `json:"author"`
			CreatedAt time.Time `json:"createdAt"`
			UpdatedAt time.Time `json:"updatedAt"`
		}
		if err := p.recs.Get(ctx, "products", uid, store.All, &doc); err != nil {
			b.Fatal(err)
		}
		findTime += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(httpTime.Nanoseconds())/n, "ns/http-fetch")
	b.ReportMetric(float64(handlerTime.Nanoseconds())/n, "ns/handler-fetch")
	b.ReportMetric(float64(findTime.Nanoseconds())/n, "ns/findone")
	b.ReportMetric(float64(httpTime)/float64(findTime), "http/findone")
	b.ReportMetric(float64(handlerTime)/float64(findTime), "handler/findone")
}

// BenchmarkCreate creates products, as the seed does.
func BenchmarkCreate(b *testing.B) {
	p := newBenchProject(b, 0)
	body := request(b, seedCreate, map[string]any{"data": map[string]any{"name": "Widget", "price": 19.99}})
	b.ReportAllocs()
	for b.Loop() {
		p.post(b, body)
	}
}

// BenchmarkUpdate changes the price of products, as the seed does.
func BenchmarkUpdate(b *testing.B) {
	p := newBenchProject(b, 1000)
	bodies := make([][]byte, 64)
	for i := range bodies {
		bodies[i] = request(b, seedUpdate, map[string]any{"uid": p.uids[(i*7919)%len(p.uids)], "data": map[string]any{"price": float64(i)}})
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p.post(b, bodies[i%len(bodies)])
		i++
	}
}
