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

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// benchProject is a products table filled with rows records, served over HTTP.
type benchProject struct {
	srv  *httptest.Server
	api  *gql.API
	coll *mongo.Collection
	uids []string
}

func newBenchProject(b *testing.B, rows int) *benchProject {
	b.Helper()
	db := stores.Mongo.Database(fmt.Sprintf("p_bench%d", dbSeq.Add(1)))
	b.Cleanup(func() { _ = db.Drop(context.Background()) })
	api, err := gql.New(gql.Config{Tables: []store.Table{products()}, Records: store.NewRecords(db)})
	if err != nil {
		b.Fatal(err)
	}
	p := &benchProject{srv: httptest.NewServer(api), api: api, coll: db.Collection("products")}
	b.Cleanup(p.srv.Close)
	// Insert through the driver in batches: the API would take long for large tables.
	now := time.Now().UTC().Truncate(time.Millisecond)
	for len(p.uids) < rows {
		var docs []any
		for i := 0; i < 1000 && len(p.uids) < rows; i++ {
			uid, err := store.NewUID()
			if err != nil {
				b.Fatal(err)
			}
			p.uids = append(p.uids, uid)
			docs = append(docs, bson.D{{Key: "_id", Value: uid}, {Key: "name", Value: fmt.Sprintf("product %d", len(p.uids))},
				{Key: "price", Value: 19.99}, {Key: "_owner", Value: ""}, {Key: "createdAt", Value: now}, {Key: "updatedAt", Value: now}})
		}
		if _, err := p.coll.InsertMany(context.Background(), docs); err != nil {
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
// fetch through the handler without the network, and the FindOne the driver makes for it;
// it reports the ratios of the first two to the third.
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
			UID       string    `bson:"_id"`
			Name      string    `bson:"name"`
			Price     float64   `bson:"price"`
			Author    string    `bson:"author"`
			CreatedAt time.Time `bson:"createdAt"`
			UpdatedAt time.Time `bson:"updatedAt"`
		}
		if err := p.coll.FindOne(ctx, bson.D{{Key: "_id", Value: uid}}).Decode(&doc); err != nil {
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
