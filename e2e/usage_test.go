package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/platform-dev/platform/cmd/platform/platformtest"
	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tenant"
)

// usageProject is public to read and write, so that the requests need no token.
var usageProject = []byte(`{"id": "meter", "tables": {"items": {
	"fields": {"name": {"type": "String", "required": true}},
	"access": {"read": "public", "create": "public"}}}}`)

// TestUsageAcrossReplicasAndRestart meters requests spread over two replicas sharing one
// MongoDB-protocol store and a real redis-server, with one replica restarted half way: the
// usage the admin API answers is every request, error, byte and record the clients saw,
// exactly. USAGE_REQUESTS sets the number of reads (default 2,000; the figure in
// docs/performance.md is of 100,000).
func TestUsageAcrossReplicasAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two replicas and two stores; not in -short")
	}
	reads := 2000
	if v := os.Getenv("USAGE_REQUESTS"); v != "" {
		var err error
		if reads, err = strconv.Atoi(v); err != nil {
			t.Fatalf("USAGE_REQUESTS=%q: %v", v, err)
		}
	}
	bin := scaleBuild(t)
	redisAddr, _ := testenv.RedisServer(t)
	env := []string{
		"MONGODB_URI=" + scaleFerretDB(t),
		"REDIS_URL=redis://" + redisAddr + "/0",
		"PLATFORM_ADMIN_TOKEN=" + scaleAdminToken,
		// Longer than the test: only the flush at shutdown writes, which is what a restart
		// must not lose.
		"PLATFORM_USAGE_FLUSH=1h",
	}
	a := platformtest.Start(t, bin, "", env...)
	b := platformtest.Start(t, bin, "", env...)
	if status, body, err := a.Do(http.MethodPut, "localhost", "/admin/v1/projects/meter", scaleAdminToken, usageProject); err != nil || status/100 != 2 {
		t.Fatalf("PUT project: %d %s %v", status, body, err)
	}

	var want struct{ requests, queries, good, mutations, errors, bytes, written atomic.Int64 }
	send := func(s *platformtest.Server, query string) []byte {
		body, _ := json.Marshal(map[string]any{"query": query})
		status, out, err := s.Do(http.MethodPost, "meter.localhost", "/api/v1/graphql", "", body)
		if err != nil {
			t.Errorf("request: %v", err)
			return nil
		}
		want.requests.Add(1)
		want.bytes.Add(int64(len(out)))
		if status >= 400 || scaleHasErrors(out) {
			want.errors.Add(1)
		}
		return out
	}
	// Two records, then reads spread over both replicas, and one bad query in fifty.
	for i, s := range []*platformtest.Server{a, b} {
		send(s, fmt.Sprintf(`mutation { createitem(data: {name: "n%d"}) { uid } }`, i))
		want.mutations.Add(1)
		want.written.Add(1)
	}
	spread := func(servers []*platformtest.Server, n int) {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < n; i += 8 {
					q := `{ items { name } }`
					if i%50 == 0 {
						q = `{ items { nope } }`
					} else {
						want.good.Add(1)
					}
					want.queries.Add(1)
					send(servers[i%len(servers)], q)
				}
			})
		}
		wg.Wait()
	}
	spread([]*platformtest.Server{a, b}, reads/2)
	// A restart: SIGTERM, the replica adds what it counted, and a new one takes its place.
	a.Stop()
	a = platformtest.Start(t, bin, "", env...)
	spread([]*platformtest.Server{a, b}, reads-reads/2)
	a.Stop()
	b.Stop()
	c := platformtest.Start(t, bin, "", env...)

	status, raw, err := c.Do(http.MethodGet, "localhost", "/admin/v1/projects/meter/usage", scaleAdminToken, nil)
	if err != nil || status != http.StatusOK {
		t.Fatalf("GET usage: %d %s %v", status, raw, err)
	}
	var u tenant.ProjectUsage
	if err := json.Unmarshal(raw, &u); err != nil {
		t.Fatal(err)
	}
	got := u.Total
	for _, check := range []struct {
		what      string
		got, want int64
	}{
		{"requests", got.Requests, want.requests.Load()},
		{"queries", got.Queries, want.queries.Load()},
		{"mutations", got.Mutations, want.mutations.Load()},
		{"errors", got.Errors, want.errors.Load()},
		{"bytes answered", got.BytesOut, want.bytes.Load()},
		{"records written", got.RecordsWritten, want.written.Load()},
		// Every good read lists both records.
		{"records read", got.RecordsRead, 2 * want.good.Load()},
		{"records stored", got.RecordsStored, 2},
	} {
		if check.got != check.want {
			t.Errorf("%s: metered %d, sent %d", check.what, check.got, check.want)
		}
	}
	if len(u.Hours) == 0 || got.StoreMs <= 0 || got.BytesStored <= 0 {
		t.Errorf("usage %s: want today's hours, some store time and bytes stored", raw)
	}
	t.Logf("%d requests over 2 replicas and a restart: metered %d, %d errors, %d bytes answered, %d records read", want.requests.Load(), got.Requests, got.Errors, got.BytesOut, got.RecordsRead)

	status, csv, err := c.Do(http.MethodGet, "localhost", "/admin/v1/projects/meter/usage?format=csv", scaleAdminToken, nil)
	if err != nil || status != http.StatusOK || !strings.HasPrefix(string(csv), "project,period,start,requests,") ||
		!strings.Contains(string(csv), "\nmeter,hour,") {
		t.Errorf("GET usage as CSV: %d %s %v", status, csv, err)
	}

	out, err := exec.Command(bin, "projects", "--sort", "usage", "--server", "http://"+c.Addr, "--admin-token", scaleAdminToken).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "meter") || !strings.Contains(string(out), strconv.FormatInt(want.requests.Load(), 10)) {
		t.Errorf("platform projects --sort usage: %v\n%s", err, out)
	}
}
