package tenant_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/pressure"
	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// BenchmarkFetchVsStore is issue 13's figure: the seed's fetch by uid through the whole
// project path (host routing to the project's runtime, a verified ES256 token, the owner read
// rule, GraphQL over HTTP) against the same read straight from the store (Records.Get with the
// owner condition the rule adds, into a struct of the same fields), in one loop so that the
// ratios come from the same moments of a shared machine. "service" serves the request
// in-process (the Echo server's ServeHTTP on a recorded response), "http" sends it over a
// loopback connection with the standard client, and "floor" sends the same request over
// loopback to a handler that answers a fixed body: what the transport alone costs.
// store/service and store/http are speeds relative to the store's: 1 is as fast as the read
// itself. "admitted" serves it in-process as "service" does, through a second registry on the
// same stores behind a fair share (pressure.FairShare, as `platform serve` wires it): its
// ratio to "service" is what admission costs a request that finds a free slot.
func BenchmarkFetchVsStore(b *testing.B) {
	s := newStack(b)
	ctx := context.Background()
	reg, err := tenant.NewRegistry(ctx, s.stores, tenant.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(reg.Close)
	p := s.seedDocument("shop", tenant.Access{Read: tenant.RuleOwner})
	if _, _, err := reg.Put(ctx, p); err != nil {
		b.Fatal(err)
	}
	recs, err := s.stores.ProjectRecords(ctx, "shop", "", p.StoreTables())
	if err != nil {
		b.Fatal(err)
	}
	uids := make([]string, 100)
	for i := range uids {
		var out map[string]any
		if err := recs.Insert(ctx, "products", "alice", []map[string]any{{"name": fmt.Sprintf("product %d", i), "price": 19.99}}, &out); err != nil {
			b.Fatal(err)
		}
		uids[i] = out[store.KeyUID].(string)
	}

	share, err := pressure.NewFairShare(pressure.FairShareConfig{})
	if err != nil {
		b.Fatal(err)
	}
	// Both servers load the project as a replica that did not apply it does.
	mount := func(opts tenant.Options) *echo.Echo {
		reg, err := tenant.NewRegistry(ctx, s.stores, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(reg.Close)
		e := echo.New()
		e.Use(reg.Hosts(tenant.HostOptions{Domain: "localhost"}))
		reg.MountGraphQL(e)
		return e
	}
	e, ea := mount(tenant.Options{}), mount(tenant.Options{FairShare: share})
	srv := httptest.NewServer(e)
	b.Cleanup(srv.Close)
	answer := []byte(`{"data":{"products":[]}}`)
	floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	b.Cleanup(floor.Close)
	token := "Bearer " + s.token("shop", "alice", nil)
	const query = `query products($uid: ID) { products(uid: $uid) { uid name price author createdAt updatedAt } }`
	newRequest := func(url string, body []byte) *http.Request {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Host = "shop.localhost"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", token)
		return req
	}
	// check fails the benchmark unless the answer is the record asked for.
	check := func(status int, body []byte, uid string) {
		var a struct {
			Data struct {
				Products []struct{ UID string } `json:"products"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &a); err != nil || status != http.StatusOK || len(a.Data.Products) != 1 || a.Data.Products[0].UID != uid {
			b.Fatalf("fetch %s: %d %s", uid, status, body)
		}
	}
	owner := store.Compare(store.KeyOwner, store.Eq, "alice")

	var storeTime, serviceTime, admittedTime, httpTime, floorTime time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		uid := uids[(i*7919)%len(uids)]
		i++
		body, err := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"uid": uid}})
		if err != nil {
			b.Fatal(err)
		}

		readStore := func() {
			start := time.Now()
			var rec struct {
				UID       string    `json:"uid"`
				Name      string    `json:"name"`
				Price     float64   `json:"price"`
				Author    string    `json:"author"`
				CreatedAt time.Time `json:"createdAt"`
				UpdatedAt time.Time `json:"updatedAt"`
			}
			if err := recs.Get(ctx, "products", uid, owner, &rec); err != nil || rec.UID != uid {
				b.Fatalf("get %s: %v", uid, err)
			}
			storeTime += time.Since(start)
		}
		serve := func(e *echo.Echo, took *time.Duration) {
			// The request is built before the clock starts: that is the client's work.
			req := newRequest("/api/v1/graphql", body)
			start := time.Now()
			w := httptest.NewRecorder()
			e.ServeHTTP(w, req)
			*took += time.Since(start)
			check(w.Code, w.Body.Bytes(), uid)
		}
		// The second read of a uid finds more of it in the caches than the first: each goes
		// first every other time.
		if i%2 == 0 {
			readStore()
			serve(e, &serviceTime)
			serve(ea, &admittedTime)
		} else {
			serve(ea, &admittedTime)
			serve(e, &serviceTime)
			readStore()
		}

		req := newRequest(srv.URL+"/api/v1/graphql", body)
		start := time.Now()
		res, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, err := io.ReadAll(res.Body)
		res.Body.Close()
		httpTime += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		check(res.StatusCode, out, uid)

		req = newRequest(floor.URL+"/api/v1/graphql", body)
		start = time.Now()
		res, err = floor.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		floorTime += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(storeTime.Nanoseconds())/n, "ns/store")
	b.ReportMetric(float64(serviceTime.Nanoseconds())/n, "ns/service")
	b.ReportMetric(float64(admittedTime.Nanoseconds())/n, "ns/admitted")
	b.ReportMetric(float64(httpTime.Nanoseconds())/n, "ns/http")
	b.ReportMetric(float64(floorTime.Nanoseconds())/n, "ns/floor")
	b.ReportMetric(float64(storeTime)/float64(serviceTime), "store/service")
	b.ReportMetric(float64(storeTime)/float64(httpTime), "store/http")
	b.ReportMetric(float64(admittedTime)/float64(serviceTime), "admitted/service")
}
