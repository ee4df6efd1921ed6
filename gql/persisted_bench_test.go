package gql_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/platform-dev/platform/gql"
)

// BenchmarkPersistedFetch fetches one product by uid over HTTP with the document sent whole,
// by its hash from the automatic persisted queries (a Redis GET, the embedded Redis here),
// and by its hash from the project's registered documents (in memory): what naming a
// document by hash costs beside sending it.
func BenchmarkPersistedFetch(b *testing.B) {
	p := newBenchProject(b, 1000)
	hash := gql.DocumentHash(seedFetch)
	cache := stores.PersistedQueries(time.Hour, 100).Project(fmt.Sprintf("bench%d", dbSeq.Add(1)))
	api, err := gql.New(gql.Config{Tables: []gql.Table{products()}, Records: p.recs, Persisted: cache, Registered: map[string]string{}})
	if err != nil {
		b.Fatal(err)
	}
	apq := httptest.NewServer(api)
	b.Cleanup(apq.Close)
	registered, err := gql.New(gql.Config{Tables: []gql.Table{products()}, Records: p.recs, Registered: map[string]string{hash: seedFetch}})
	if err != nil {
		b.Fatal(err)
	}
	reg := httptest.NewServer(registered)
	b.Cleanup(reg.Close)
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
	vars := map[string]any{"uid": p.uids[7]}
	whole, _ := json.Marshal(map[string]any{"query": seedFetch, "variables": vars})
	byHash, _ := json.Marshal(map[string]any{"extensions": ext, "variables": vars})
	first, _ := json.Marshal(map[string]any{"query": seedFetch, "extensions": ext, "variables": vars})
	for _, bc := range []struct {
		name string
		srv  *httptest.Server
		body []byte
	}{
		{"document", p.srv, whole},
		{"apq-hash", apq, byHash},
		{"registered-hash", reg, byHash},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bp := &benchProject{srv: bc.srv}
			bp.post(b, first) // the APQ cache learns the document; the others run it
			b.ReportAllocs()
			for b.Loop() {
				bp.post(b, bc.body)
			}
		})
	}
}
