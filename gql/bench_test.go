package gql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
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
		req.Header.Set("Content-Type", "application/json")
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

// BenchmarkWorstCaseLists sends 8 concurrent lists at a table of 100 records of 1 MB each,
// the request that once took gigabytes: one that would read past the 10 MB result limit
// (RESULT_TOO_LARGE) and one page that fits under it (9 records). It reports the peak RSS
// of the process while they run (VmHWM, reset before the loop), in MB.
func BenchmarkWorstCaseLists(b *testing.B) {
	p := newBenchProject(b, 0)
	big := strings.Repeat("x", 1<<20)
	now := time.Now().UTC().Format(store.TimeLayout)
	for range 10 {
		var batch []store.Record
		for range 10 {
			uid, err := store.NewUID()
			if err != nil {
				b.Fatal(err)
			}
			batch = append(batch, store.Record(fmt.Sprintf(`{"uid":%q,"_owner":"","createdAt":%q,"updatedAt":%q,"name":%q,"price":1}`, uid, now, now, big)))
		}
		if err := p.recs.Import(context.Background(), "products", batch); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, query, want string
	}{
		{"too large", `{ products(limit: 100) { name } }`, `"RESULT_TOO_LARGE"`},
		{"9 MB page", `{ products(limit: 9) { name } }`, `"products":[`},
	} {
		b.Run(c.name, func(b *testing.B) {
			body := request(b, c.query, nil)
			runtime.GC()
			// Linux only: elsewhere the benchmark (which CI never runs) is skipped.
			if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
				b.Skipf("cannot reset the peak RSS: %v", err)
			}
			for b.Loop() {
				var wg sync.WaitGroup
				for range 8 {
					wg.Go(func() {
						res, err := p.srv.Client().Post(p.srv.URL, "application/json", strings.NewReader(string(body)))
						if err != nil {
							b.Error(err)
							return
						}
						out, _ := io.ReadAll(res.Body)
						res.Body.Close()
						if !strings.Contains(string(out), c.want) {
							b.Errorf("answer %.200s, want %s", out, c.want)
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(peakRSSMB(b), "peak-RSS-MB")
		})
	}
}

// peakRSSMB reads the process's peak resident set (VmHWM) in MB: Linux only, elsewhere the
// benchmark (which CI never runs) is skipped.
func peakRSSMB(b *testing.B) float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(rest), "%f", &kb)
			return kb / 1024
		}
	}
	b.Skip("no VmHWM in /proc/self/status")
	return 0
}

// BenchmarkCreateThousand creates 1,000 products over HTTP twice per iteration: one
// createProduct request each, then one createproducts request with all of them; it reports
// both times and how many times faster the batch is, measured in the same run. Each way
// writes to a project of its own, so that each pays for its own SQLite checkpoints.
func BenchmarkCreateThousand(b *testing.B) {
	p, q := newBenchProject(b, 0), newBenchProject(b, 0)
	data := make([]any, gql.MaxBatch)
	singles := make([][]byte, gql.MaxBatch)
	for i := range data {
		data[i] = map[string]any{"name": fmt.Sprintf("product %d", i), "price": 19.99}
		singles[i] = request(b, createDoc, map[string]any{"data": data[i]})
	}
	batch := request(b, `mutation($data: [productInput!]!) { createproducts(data: $data) { uid } }`, map[string]any{"data": data})
	var single, many time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		for _, body := range singles {
			p.post(b, body)
		}
		mid := time.Now()
		q.post(b, batch)
		single, many = single+mid.Sub(start), many+time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(float64(single.Nanoseconds())/n, "ns/1000-single-creates")
	b.ReportMetric(float64(many.Nanoseconds())/n, "ns/batch-create-1000")
	b.ReportMetric(float64(single)/float64(many), "batch-speedup")
}

// BenchmarkRelations reads 100 products with their orders (3 each) and 100 orders with their
// product over the same records, served by a project whose relation goes one way, where
// graph-gophers runs the document, and by one whose relations go both ways, where
// products.orders closes the cycle and runs on a nested plan (orders.product stays on
// graph-gophers). queries/op is the store queries a request sends.
func BenchmarkRelations(b *testing.B) {
	orders, prods, _ := shop()
	recs := records(b, orders, prods)
	b.Cleanup(func() { _ = recs.Drop(context.Background()) })
	now := time.Now().UTC().Format(store.TimeLayout)
	var ps, ords []store.Record
	for i := range 100 {
		uid, err := store.NewUID()
		if err != nil {
			b.Fatal(err)
		}
		ps = append(ps, store.Record(fmt.Sprintf(`{"uid":%q,"_owner":"","createdAt":%q,"updatedAt":%q,"name":"product %d","price":19.99}`, uid, now, now, i)))
		for j := range 3 {
			ouid, err := store.NewUID()
			if err != nil {
				b.Fatal(err)
			}
			ords = append(ords, store.Record(fmt.Sprintf(`{"uid":%q,"_owner":"","createdAt":%q,"updatedAt":%q,"productId":%q,"qty":%d}`, ouid, now, now, uid, j)))
		}
	}
	if err := recs.Import(context.Background(), "products", ps); err != nil {
		b.Fatal(err)
	}
	if err := recs.Import(context.Background(), "orders", ords); err != nil {
		b.Fatal(err)
	}
	product := gql.Relation{Name: "product", Table: "products", Field: "productId"}
	ordersOf := gql.Relation{Name: "orders", Table: "orders", ForeignField: "productId"}
	serveWith := func(orderRels, productRels []gql.Relation) *benchProject {
		o, p := orders, prods
		o.Relations, p.Relations = orderRels, productRels
		api, err := gql.New(gql.Config{Tables: []gql.Table{o, p}, Records: recs})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(api)
		b.Cleanup(srv.Close)
		return &benchProject{srv: srv, api: api, recs: recs}
	}
	both := serveWith([]gql.Relation{product}, []gql.Relation{ordersOf})
	productsOrders := request(b, `{ products(limit: 100) { name orders { qty } } }`, nil)
	ordersProduct := request(b, `{ orders(limit: 100) { qty product { name } } }`, nil)
	for _, c := range []struct {
		name string
		p    *benchProject
		body []byte
	}{
		{"ProductsWithOrders/OneWay", serveWith(nil, []gql.Relation{ordersOf}), productsOrders},
		{"ProductsWithOrders/BothWays", both, productsOrders},
		{"OrdersWithProduct/OneWay", serveWith([]gql.Relation{product}, nil), ordersProduct},
		{"OrdersWithProduct/BothWays", both, ordersProduct},
	} {
		b.Run(c.name, func(b *testing.B) {
			before := recs.Queries()
			for b.Loop() {
				c.p.post(b, c.body)
			}
			b.ReportMetric(float64(recs.Queries()-before)/float64(b.N), "queries/op")
		})
	}
}
