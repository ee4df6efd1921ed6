package tenant_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// BenchmarkSeed writes the PocketBase comparison's records (../shared/peers/pocketbase:
// record i has name "item-i", price i%1000+0.5, sku "sku-i", author on even i) through the
// whole project path, 200 per request, into the kit's products table (indexes on sku and
// price, create: authenticated): "aliases" as the kit's seed sends them (200 aliased
// createproduct mutations, the records written in the document), "batch" as one
// createproducts call with the records in a variable. Each way writes into a project of its
// own; ns/record is the time of a request over the records it wrote.
func BenchmarkSeed(b *testing.B) {
	const per = 200
	s := newStack(b)
	ctx := context.Background()
	reg, srv := graphQLServer(b, s.stores, tenant.Options{}, "localhost")
	tokens := map[string]string{}
	for _, id := range []string{"aliases", "batch"} {
		tokens[id] = "Bearer " + s.token(id, "alice", nil)
		// the kit's collection: the seed's products with sku, indexed as the kit's
		p := s.seedDocument(id, tenant.Access{Read: tenant.RulePublic, Create: tenant.RuleAuthenticated, Update: tenant.RuleOwner, Delete: tenant.RuleOwner})
		tbl := p.Tables["products"]
		tbl.Fields["sku"] = tenant.FieldDoc{Type: "String"}
		tbl.Indexes = []tenant.IndexDoc{{Fields: []string{"sku"}}, {Fields: []string{"price"}}}
		p.Tables["products"] = tbl
		if _, _, err := reg.Put(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	record := func(i int) map[string]any {
		r := map[string]any{"name": fmt.Sprintf("item-%d", i), "price": float64(i%1000) + 0.5, "sku": fmt.Sprintf("sku-%d", i)}
		if i%2 == 0 {
			r["author"] = fmt.Sprintf("author-%d", i%10)
		}
		return r
	}
	aliases := func(from int) []byte {
		var sb strings.Builder
		sb.WriteString("mutation {")
		for i := from; i < from+per; i++ {
			lit, err := json.Marshal(record(i))
			if err != nil {
				b.Fatal(err)
			}
			// a GraphQL input literal: the JSON with its keys unquoted, as the kit writes it
			l := string(lit)
			for _, k := range []string{"name", "price", "sku", "author"} {
				l = strings.Replace(l, `"`+k+`":`, k+":", 1)
			}
			fmt.Fprintf(&sb, " m%d: createproduct(data: %s) { uid }", i, l)
		}
		sb.WriteString(" }")
		body, err := json.Marshal(map[string]any{"query": sb.String()})
		if err != nil {
			b.Fatal(err)
		}
		return body
	}
	batch := func(from int) []byte {
		data := make([]any, per)
		for i := range data {
			data[i] = record(from + i)
		}
		body, err := json.Marshal(map[string]any{"query": `mutation($data: [productInput!]!) { createproducts(data: $data) { uid } }`, "variables": map[string]any{"data": data}})
		if err != nil {
			b.Fatal(err)
		}
		return body
	}
	post := func(id string, body []byte) time.Duration {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/graphql", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Host = id + ".localhost"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", tokens[id])
		start := time.Now()
		res, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, err := io.ReadAll(res.Body)
		res.Body.Close()
		took := time.Since(start)
		if err != nil || res.StatusCode != http.StatusOK || bytes.Contains(out, []byte(`"errors"`)) || bytes.Count(out, []byte(`"uid"`)) != per {
			b.Fatalf("seed %s: %d %v: %.300s", id, res.StatusCode, err, out)
		}
		return took
	}
	var aliasTime, batchTime time.Duration
	from := 0
	for b.Loop() {
		// built before the clock starts: that is the client's work
		a, m := aliases(from), batch(from)
		aliasTime += post("aliases", a)
		batchTime += post("batch", m)
		from += per
	}
	n := float64(b.N * per)
	b.ReportMetric(float64(aliasTime.Nanoseconds())/n, "ns/record-aliases")
	b.ReportMetric(float64(batchTime.Nanoseconds())/n, "ns/record-batch")
}

// graphQLServer is a registry on stores whose projects' GraphQL endpoints a test server
// serves at <id>.<domain>.
func graphQLServer(t testing.TB, stores *store.Stores, opts tenant.Options, domain string) (*tenant.Registry, *httptest.Server) {
	t.Helper()
	reg, err := tenant.NewRegistry(context.Background(), stores, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	e := echo.New()
	e.Use(reg.Hosts(tenant.HostOptions{Domain: domain}))
	reg.MountGraphQL(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return reg, srv
}
