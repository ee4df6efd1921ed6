package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/internal/testenv"
)

// quotaDoc is a project of id whose tables anyone may read and write, so that the quotas
// are what refuses.
func quotaDoc(id string, tables ...string) []byte {
	var ts []string
	for _, t := range tables {
		ts = append(ts, fmt.Sprintf(`%q:{"fields":{"name":{"type":"String"}},"access":{"read":"public","create":"public","update":"public","delete":"public"}}`, t))
	}
	return []byte(fmt.Sprintf(`{"id":%q,"tables":{%s}}`, id, strings.Join(ts, ",")))
}

// newQuotaProject creates project id with the table products and sets its quotas.
func newQuotaProject(t *testing.T, s *server, token, id, quotas string) {
	t.Helper()
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/"+id, token, quotaDoc(id, "products")); st != http.StatusCreated {
		t.Fatalf("create %s: %d %s", id, st, body)
	}
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/"+id+"/quotas", token, []byte(quotas)); st != http.StatusOK {
		t.Fatalf("set the quotas of %s: %d %s", id, st, body)
	}
}

// query sends a GraphQL document to project id and answers the status, Retry-After and body.
func (s *server) query(id, doc string) (int, string, string) {
	s.t.Helper()
	resp, body := s.send("POST", id+".localhost", "/api/v1/graphql", map[string]string{"Content-Type": "application/json"}, `{"query":`+strconv.Quote(doc)+`}`)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(body)
}

// TestQuotas covers the quotas one replica enforces from the control database: the admin
// API and the CLI set them (refusing values out of bounds, naming the field), a write past
// a storage quota answers QUOTA_EXCEEDED while reads go on, the request budget and the
// tables quota hold, and the use shows in the report, the CLI and the metrics.
func TestQuotas(t *testing.T) {
	s := startServer(t, t.TempDir(), "PLATFORM_DEV_ISSUER=off")
	newQuotaProject(t, s, s.token, "shop", `{}`)

	for _, c := range []struct{ body, want string }{
		{`{"records":-1}`, "quota records: -1 is out of bounds"},
		{`{"tables":100000}`, "quota tables: 100000 is out of bounds"},
		{`{"recordz":1}`, "quota recordz: no such quota"},
		{`{"records":1.5}`, "quota records: 1.5 is not a whole number"},
		{`[1]`, "the body must be a JSON object of quotas"},
	} {
		st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop/quotas", s.token, []byte(c.body))
		if st != http.StatusBadRequest || !strings.Contains(string(body), c.want) || !strings.Contains(string(body), `"BAD_REQUEST"`) {
			t.Errorf("PUT quotas %s: %d %s; want 400 with %q", c.body, st, body, c.want)
		}
	}
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/nope/quotas", s.token, []byte(`{"records":1}`)); st != http.StatusNotFound {
		t.Errorf("quotas of a missing project: %d %s", st, body)
	}

	cli := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(binary, append([]string{"quotas", "--project", "shop", "--server", "http://" + s.addr, "--admin-token", s.token}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("platform quotas %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := cli("--set", "records=2", "--set", "max-records-per-request=1")
	for _, want := range []string{"records               2         project  0      0.0%", "maxRecordsPerRequest  1         project  -      -", "requestsPerMinute     none      default  0      -"} {
		if !strings.Contains(out, want) {
			t.Errorf("platform quotas --set: no %q in\n%s", want, out)
		}
	}

	create := `mutation { createProduct(data: {name: "a"}) { uid } }`
	for i := range 2 {
		if st, _, body := s.query("shop", create); st != http.StatusOK || strings.Contains(body, "errors") {
			t.Fatalf("create %d within the quota: %d %s", i+1, st, body)
		}
	}
	if _, _, body := s.query("shop", create); !strings.Contains(body, `"code":"QUOTA_EXCEEDED"`) || !strings.Contains(body, `"quota":"records"`) || !strings.Contains(body, "records quota exceeded") {
		t.Errorf("create past the records quota: %s", body)
	}
	if _, _, body := s.query("shop", `{ productsCount }`); body != `{"data":{"productsCount":2}}`+"\n" && body != `{"data":{"productsCount":2}}` {
		t.Errorf("a read past the records quota: %s", body)
	}
	// The request budget: one record per request.
	if _, _, body := s.query("shop", `{ products { uid } }`); !strings.Contains(body, "RESULT_TOO_LARGE") {
		t.Errorf("two records past a budget of one: %s", body)
	}
	if out := cli(); !strings.Contains(out, "records               2         project  2      100.0% exceeded") {
		t.Errorf("platform quotas after the quota is reached:\n%s", out)
	}

	// Bytes: a project already past its bytes quota takes no write, not even an update.
	cli("--set", "records=0", "--set", "bytes-stored=1")
	if _, _, body := s.query("shop", create); !strings.Contains(body, `"code":"QUOTA_EXCEEDED"`) || !strings.Contains(body, `"quota":"bytesStored"`) {
		t.Errorf("create past the bytes quota: %s", body)
	}

	// Tables: checked when a document is applied.
	cli("--set", "bytes-stored=0", "--set", "tables=1")
	st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, quotaDoc("shop", "products", "orders"))
	if st != http.StatusBadRequest || !strings.Contains(string(body), `"code":"QUOTA_EXCEEDED"`) || !strings.Contains(string(body), `"quota":"tables"`) {
		t.Errorf("a second table past a tables quota of 1: %d %s", st, body)
	}
	cli("--set", "tables=2", "--set", "records=3")
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, quotaDoc("shop", "products", "orders")); st != http.StatusOK {
		t.Errorf("a second table within the tables quota: %d %s", st, body)
	}
	_, rep := s.do("GET", "localhost", "/admin/v1/projects/shop/quotas", s.token, nil)
	for _, want := range []string{
		`{"quota":"records","limit":3,"override":3,"default":0,"used":2,"percent":66.7}`,
		`{"quota":"tables","limit":2,"override":2,"default":0,"used":2,"percent":100,"alert":"exceeded"}`,
	} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("GET quotas: no %s in %s", want, rep)
		}
	}
	metrics := s.metrics()
	for _, want := range []string{
		`platform_project_quota_use_ratio{project="shop",quota="records"} 0.6666666666666666`,
		`platform_project_quota_use_ratio{project="shop",quota="tables"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics: no %s", want)
		}
	}
}

// TestQuotasAcrossReplicas: two replicas sharing one real redis-server hold each project
// to its rate, concurrency and subscription quotas together.
func TestQuotasAcrossReplicas(t *testing.T) {
	redisAddr, _ := testenv.RedisServer(t)
	data := t.TempDir()
	const token = "shared-admin-token"
	env := []string{"REDIS_URL=redis://" + redisAddr, "PLATFORM_ADMIN_TOKEN=" + token, "PLATFORM_DEV_ISSUER=off"}
	a := startServer(t, data, env...)
	b := startServer(t, data, env...)
	newQuotaProject(t, a, token, "rate", `{"requestsPerMinute":10}`)
	newQuotaProject(t, a, token, "conc", `{"concurrentRequests":1}`)
	newQuotaProject(t, a, token, "subs", `{"subscriptions":1}`)

	t.Run("requestsPerMinute", func(t *testing.T) {
		ok, refused := 0, 0
		for i := range 14 {
			s := []*server{a, b}[i%2]
			st, retry, body := s.query("rate", `{ productsCount }`)
			switch st {
			case http.StatusOK:
				ok++
			case http.StatusTooManyRequests:
				refused++
				if n, err := strconv.Atoi(retry); err != nil || n < 1 || !strings.Contains(body, `"code":"RATE_LIMITED"`) || !strings.Contains(body, `"quota":"requestsPerMinute"`) {
					t.Errorf("refused request: Retry-After %q, %s", retry, body)
				}
			default:
				t.Fatalf("request %d: %d %s", i, st, body)
			}
		}
		// A request every 6 s is allowed again, so within the test's few milliseconds: 10.
		if ok != 10 || refused != 4 {
			t.Errorf("14 requests over two replicas at 10 a minute: %d served, %d refused; want 10 and 4", ok, refused)
		}
	})

	t.Run("concurrentRequests", func(t *testing.T) {
		// A request whose body is still on its way holds its slot on replica a.
		conn, err := net.Dial("tcp", a.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := `{"query":"{ productsCount }"}`
		fmt.Fprintf(conn, "POST /api/v1/graphql HTTP/1.1\r\nHost: conc.localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:5])
		waitFor(t, 5*time.Second, "replica b refuses a second request in flight", func() bool {
			st, _, body := b.query("conc", `{ productsCount }`)
			return st == http.StatusTooManyRequests && strings.Contains(body, `"quota":"concurrentRequests"`)
		})
		if _, err := io.WriteString(conn, body[5:]); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("the slow request: %v %v", resp, err)
		}
		resp.Body.Close()
		if st, _, body := b.query("conc", `{ productsCount }`); st != http.StatusOK {
			t.Errorf("a request once the first ended: %d %s", st, body)
		}
	})

	t.Run("subscriptions", func(t *testing.T) {
		subscribe := func(s *server) (*http.Response, context.CancelFunc) {
			ctx, cancel := context.WithCancel(t.Context())
			req, err := http.NewRequestWithContext(ctx, "POST", "http://"+s.addr+"/api/v1/graphql", strings.NewReader(`{"query":"subscription { products { uid } }"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Host = "subs.localhost"
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			return resp, cancel
		}
		first, closeFirst := subscribe(a)
		if first.StatusCode != http.StatusOK {
			t.Fatalf("first subscription: %d", first.StatusCode)
		}
		second, closeSecond := subscribe(b)
		var body []byte
		if second.StatusCode != http.StatusOK { // an open stream would never end
			body, _ = io.ReadAll(second.Body)
		}
		closeSecond()
		second.Body.Close()
		if second.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), `"quota":"subscriptions"`) {
			t.Errorf("a second subscription on the other replica: %d %s", second.StatusCode, body)
		}
		closeFirst()
		first.Body.Close()
		waitFor(t, 5*time.Second, "replica b takes a subscription once the first closed", func() bool {
			resp, cancel := subscribe(b)
			defer cancel()
			defer resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	})
}

// metrics answers the server's /metrics page.
func (s *server) metrics() string {
	s.t.Helper()
	resp, err := http.Get("http://" + s.MetricsAddr + "/metrics")
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return string(raw)
}
