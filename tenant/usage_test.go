package tenant_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// usageServer serves the admin API (token "secret") and the projects' APIs under
// platform.test, metering with a flush every 20 ms, with project "shop" whose products
// anyone may read and create.
func usageServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv, _ := usageServerStores(t)
	return srv
}

// usageServerStores is usageServer and its stores.
func usageServerStores(t *testing.T) (*httptest.Server, *store.Stores) {
	t.Helper()
	stores := openStores(t)
	srv := adminServerOn(t, stores, tenant.Options{Usage: tenant.UsageOptions{Flush: 20 * time.Millisecond}})
	status, body := request(t, srv, http.MethodPut, "platform.test", "/admin/v1/projects/shop", `{"id":"shop","tables":{"products":{
		"fields":{"name":{"type":"String","required":true}},"access":{"read":"public","create":"public"}}}}`, nil)
	if status/100 != 2 {
		t.Fatalf("PUT project: %d %s", status, body)
	}
	return srv, stores
}

// usageOf waits until the project's usage satisfies done (the replica flushes every 20 ms).
func usageOf(t *testing.T, srv *httptest.Server, done func(tenant.UsagePeriod) bool) tenant.ProjectUsage {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, body := request(t, srv, http.MethodGet, "platform.test", "/admin/v1/projects/shop/usage", "", nil)
		var u tenant.ProjectUsage
		if status != http.StatusOK || json.Unmarshal([]byte(body), &u) != nil {
			t.Fatalf("GET usage: %d %s", status, body)
		}
		if done(u.Total) {
			return u
		}
		if time.Now().After(deadline) {
			t.Fatalf("usage never got there: %s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestUsageCountsEveryKind: queries, mutations, errors, bytes, records, a realtime
// connection's time and the events it was sent all reach the project's usage.
func TestUsageCountsEveryKind(t *testing.T) {
	srv := usageServer(t)
	gql := func(query string) string {
		_, body := request(t, srv, http.MethodPost, "shop.platform.test", "/api/v1/graphql", `{"query":`+mustJSON(t, query)+`}`, nil)
		return body
	}
	// A subscriber over SSE, sent the one record created below.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/api/v1/graphql", strings.NewReader(`{"query":"subscription { products { op uid } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "shop.platform.test"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	res, err := srv.Client().Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("subscribe: %v %v", res, err)
	}
	usageOf(t, srv, func(u tenant.UsagePeriod) bool { return u.Subscriptions == 1 })

	var bytes int
	for _, q := range []string{`mutation { createproduct(data: {name: "tea"}) { uid } }`, `{ products { name } }`, `{ products { name } }`, `{ products { nope } }`} {
		bytes += len(gql(q))
	}
	rd := bufio.NewReader(res.Body)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("read the event stream: %v", err)
		}
		if strings.HasPrefix(line, "event: next") {
			break
		}
	}
	time.Sleep(50 * time.Millisecond)
	res.Body.Close()

	u := usageOf(t, srv, func(u tenant.UsagePeriod) bool { return u.Requests == 5 && u.ConnectionMinutes > 0 })
	got := u.Total
	if got.Queries != 3 || got.Mutations != 1 || got.Errors != 1 || got.RecordsWritten != 1 || got.RecordsRead != 2 ||
		got.EventsDelivered != 1 || got.RecordsStored != 1 || got.BytesStored <= 0 || got.StoreMs <= 0 {
		t.Errorf("usage %+v: want 3 queries, 1 mutation, 1 error, 1 record written, 2 read, 1 event delivered, 1 stored", got)
	}
	// The SSE stream's bytes count too: the answers' bytes are a part of them.
	if got.BytesOut <= int64(bytes) {
		t.Errorf("bytes answered %d, want more than the %d of the queries' answers", got.BytesOut, bytes)
	}
	if len(u.Hours) != 1 || len(u.Days) != 0 || u.Hours[0].Requests != 5 {
		t.Errorf("today comes by hour, nothing before: %+v", u)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUsageAPIRefusesBadRanges: the usage API's parameters are checked and bounded.
func TestUsageAPIRefusesBadRanges(t *testing.T) {
	srv := usageServer(t)
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/admin/v1/projects/shop/usage?from=2026-02-30", 400, "YYYY-MM-DD"},
		{"/admin/v1/projects/shop/usage?to=yesterday", 400, "YYYY-MM-DD"},
		{"/admin/v1/projects/shop/usage?from=2026-03-02&to=2026-03-01", 400, "is after to"},
		{"/admin/v1/projects/shop/usage?from=2024-01-01&to=2026-01-01", 400, "more than the 366"},
		{"/admin/v1/projects/nope/usage", 404, "does not exist"},
		{"/admin/v1/projects/Bad_Id/usage", 400, "BAD_REQUEST"},
		{"/admin/v1/usage?sort=nope", 400, "sort by usage"},
		{"/admin/v1/usage?limit=0", 400, "from 1 to 1000"},
		{"/admin/v1/usage?limit=1001", 400, "from 1 to 1000"},
		{"/admin/v1/projects/shop/usage?from=2025-01-01&to=2026-01-01", 200, `"from":"2025-01-01","to":"2026-01-01"`},
		{"/admin/v1/usage?sort=errors&limit=5", 200, `"sort":"errors"`},
	} {
		status, body := request(t, srv, http.MethodGet, "platform.test", tc.path, "", nil)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s: %d %s; want %d with %q", tc.path, status, body, tc.status, tc.want)
		}
	}
}

// TestUsageCSVAndListing: the usage of a project as CSV (by Accept or format=csv), and the
// listing of the heaviest projects.
func TestUsageCSVAndListing(t *testing.T) {
	srv := usageServer(t)
	request(t, srv, http.MethodPost, "shop.platform.test", "/api/v1/graphql", `{"query":"{ products { name } }"}`, nil)
	usageOf(t, srv, func(u tenant.UsagePeriod) bool { return u.Requests == 1 })
	for _, h := range []map[string]string{{"Accept": "text/csv"}, nil} {
		path := "/admin/v1/projects/shop/usage"
		if h == nil {
			path += "?format=csv"
		}
		status, body := request(t, srv, http.MethodGet, "platform.test", path, "", h)
		lines := strings.Split(strings.TrimSpace(body), "\n")
		if status != http.StatusOK || len(lines) != 2 ||
			lines[0] != "project,period,start,requests,queries,mutations,subscriptions,errors,bytesOut,storeMs,recordsRead,recordsWritten,recordsStored,bytesStored,connectionMinutes,eventsDelivered" ||
			!strings.HasPrefix(lines[1], "shop,hour,"+time.Now().UTC().Format("2006-01-02T15")+":00:00Z,1,1,0,0,0,") {
			t.Errorf("GET %s %v: %d\n%s", path, h, status, body)
		}
	}
	status, body := request(t, srv, http.MethodGet, "platform.test", "/admin/v1/usage?sort=usage", "", nil)
	var l tenant.UsageListing
	if status != http.StatusOK || json.Unmarshal([]byte(body), &l) != nil || len(l.Projects) != 1 || l.Projects[0].Project != "shop" || l.Projects[0].Requests != 1 {
		t.Errorf("GET /admin/v1/usage: %d %s", status, body)
	}
}

// TestUsageMetricsBoundTheProjectLabel: with room for two projects, the two most requested
// have their own label and the third is counted under _other, so that 10,000 projects cost
// as many series as three.
func TestUsageMetricsBoundTheProjectLabel(t *testing.T) {
	stores := openStores(t)
	prom := prometheus.NewRegistry()
	reg, err := tenant.NewRegistry(context.Background(), stores, tenant.Options{
		Registerer: prom, MetricsProjects: 2, Usage: tenant.UsageOptions{Flush: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	e := echo.New()
	e.Use(reg.Hosts(tenant.HostOptions{Domain: "platform.test"}))
	reg.MountGraphQL(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	for id, n := range map[string]int{"a": 3, "b": 2, "c": 1} {
		p, err := tenant.ParseDocument([]byte(`{"id":"` + id + `","tables":{"products":{"fields":{"name":{"type":"String"}},"access":{"read":"public"}}}}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := reg.Put(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		for range n {
			request(t, srv, http.MethodPost, id+".platform.test", "/api/v1/graphql", `{"query":"{ products { name } }"}`, nil)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := map[string]float64{}
		mfs, err := prom.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "platform_project_requests_total" {
				for _, m := range mf.GetMetric() {
					got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
		want := map[string]float64{"a": 3, "b": 2, "_other": 1}
		if maps.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("platform_project_requests_total by project = %v, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestUsageListingSorts: the listing sums each project's days in the range and puts the
// heaviest by the asked measure first, ties by id, cut at limit.
func TestUsageListingSorts(t *testing.T) {
	srv, stores := usageServerStores(t)
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	if err := stores.Usage().Add(t.Context(), []store.Usage{
		{Project: "a", Start: day, Requests: 5, Errors: 3},
		{Project: "b", Start: day, Requests: 9, Errors: 1},
		{Project: "b", Start: day.AddDate(0, 0, 1), Requests: 1},
		{Project: "c", Start: day, Requests: 2, Errors: 3},
		{Project: "d", Start: day.AddDate(0, 0, -1), Requests: 100},
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query string
		want  string
	}{
		{"sort=usage", "b:10 a:5 c:2"},
		{"sort=requests&limit=2", "b:10 a:5"},
		{"sort=errors", "a:5 c:2 b:10"},
		{"sort=usage&from=2026-03-09&to=2026-03-09", "d:100"},
	} {
		if !strings.Contains(tc.query, "from=") {
			tc.query += "&from=2026-03-10&to=2026-03-11"
		}
		status, body := request(t, srv, http.MethodGet, "platform.test", "/admin/v1/usage?"+tc.query, "", nil)
		var l tenant.UsageListing
		if status != http.StatusOK || json.Unmarshal([]byte(body), &l) != nil {
			t.Fatalf("GET ?%s: %d %s", tc.query, status, body)
		}
		var got []string
		for _, p := range l.Projects {
			got = append(got, fmt.Sprintf("%s:%d", p.Project, p.Requests))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("GET ?%s: %v, want %s", tc.query, got, tc.want)
		}
	}
}

// TestUsageSampleFailuresBackOff: a project whose stored size cannot be sampled (a table of
// it dropped under the store) is sampled again after a back-off, not at every flush, and the
// usage it is counted keeps being written meanwhile.
func TestUsageSampleFailuresBackOff(t *testing.T) {
	dir := t.TempDir()
	stores, err := store.Open(t.Context(), store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stores.Close(context.Background()) })
	logs := &syncBuffer{}
	srv := adminServerOn(t, stores, tenant.Options{Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Usage: tenant.UsageOptions{Flush: 20 * time.Millisecond, Sample: 300 * time.Millisecond}})
	status, body := request(t, srv, http.MethodPut, "platform.test", "/admin/v1/projects/shop", `{"id":"shop","tables":{
		"products":{"fields":{"name":{"type":"String"}},"access":{"read":"public"}},
		"gone":{"fields":{"name":{"type":"String"}},"access":{"read":"public"}}}}`, nil)
	if status/100 != 2 {
		t.Fatalf("PUT project: %d %s", status, body)
	}
	request(t, srv, http.MethodPost, "shop.platform.test", "/api/v1/graphql", `{"query":"{ products { name } }"}`, nil)
	db, err := sql.Open("sqlite", filepath.Join(dir, "projects", "shop.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DROP TABLE t_gone`); err != nil {
		t.Fatal(err)
	}
	const requests = 50
	for range requests {
		request(t, srv, http.MethodPost, "shop.platform.test", "/api/v1/graphql", `{"query":"{ products { name } }"}`, nil)
		time.Sleep(20 * time.Millisecond)
	}
	usageOf(t, srv, func(u tenant.UsagePeriod) bool { return u.Requests == requests+1 })
	// In one second of requests, the sample is due at every flush (50 of them); failed, it
	// is tried again after 300 ms (the back-off starts at a minute but never passes Sample).
	failed := strings.Count(logs.String(), "sample what a project stores")
	if failed == 0 || failed > 6 {
		t.Errorf("the sample failed %d times in %d flushes, want 1 to 6:\n%s", failed, requests, logs)
	}
}
