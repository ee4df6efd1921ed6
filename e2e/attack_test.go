package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/platform-dev/platform/cmd/platform/platformtest"
	"github.com/platform-dev/platform/mcpserver/mcptest"
)

// The attack suite (issue 33): every request of the attack table, sent as a stranger would
// (no token, against a public table, or with only what a stranger can obtain), against the
// real binary. TestAttacks checks each answer; BenchmarkAttacks (attack_bench_test.go) sends
// each 8 at a time and asserts the process's memory and its neighbours' latency.

const (
	attackAdminToken = "attack-admin-token-4f1e0c9b2a7d"
	// attackBudget is the server's response budget (PLATFORM_GRAPHQL_MAX_RESULT's default):
	// no answer may be longer than it plus the error envelope.
	attackBudget   = 10 << 20
	attackEnvelope = 64 << 10
	blobBytes      = 100 << 10
	bigRecords     = 90
	workers        = 900
)

// attackSite is a running binary with the projects the attacks aim at: "victim" (public
// employees: 90 records of 100 KB, a 100 KB boss and 900 workers pointing at it) and "quiet"
// (the neighbour whose latency the benchmark watches).
type attackSite struct {
	srv     *platformtest.Server
	bin     string
	idp     *flakyIdP
	quietID string
	timeout time.Duration
	client  *http.Client
	// devTokens are the tokens the seeding used, by project: the log must not hold them.
	devTokens map[string]string
}

// startAttackSite starts the binary with timeout as its GraphQL timeout and seeds it.
func startAttackSite(tb testing.TB, timeout time.Duration) *attackSite {
	tb.Helper()
	bin, err := platformtest.Build(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	srv := platformtest.Start(tb, bin, "", "PLATFORM_ADMIN_TOKEN="+attackAdminToken, "PLATFORM_LOG_LEVEL=debug",
		"PLATFORM_GRAPHQL_TIMEOUT="+timeout.String(), "MCP_REQUESTS_PER_WINDOW=100000", "MCP_MAX_CONCURRENT=1000",
		// A JWKS that failed is fetched again after 2 s, which Retry-After must announce.
		"PLATFORM_JWKS_RETRY_INTERVAL=2s")
	s := &attackSite{srv: srv, bin: bin, idp: newFlakyIdP(tb), devTokens: map[string]string{}, timeout: timeout,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	dev := map[string]any{"jwksURL": "http://" + srv.Addr + "/.well-known/jwks.json", "issuer": "urn:platform:dev-issuer"}
	s.apply(tb, "victim", dev, map[string]any{"employees": map[string]any{
		"fields": map[string]any{
			"name": map[string]any{"type": "String"}, "blob": map[string]any{"type": "String"},
			"managerId": map[string]any{"type": "String"},
		},
		"relations": map[string]any{
			"manager": map[string]any{"table": "employees", "field": "managerId"},
			"reports": map[string]any{"table": "employees", "foreignField": "managerId"},
		},
		"access": map[string]any{"read": "public", "create": "authenticated", "update": "owner", "delete": "owner"},
	}})
	s.apply(tb, "quiet", dev, map[string]any{"products": map[string]any{
		"fields": map[string]any{"name": map[string]any{"type": "String", "required": true}},
		"access": map[string]any{"read": "public", "create": "authenticated", "update": "owner", "delete": "owner"},
	}})
	if _, err := s.guarded(context.Background(), ""); err != nil {
		tb.Fatal(err)
	}

	// The MCP workspace holds the compose bomb once, for every copy of its row to read.
	if err := os.MkdirAll(filepath.Join(srv.Workspace, "compose"), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv.Workspace, "compose", "docker-compose.yml"), []byte(composeLaughs()), 0o644); err != nil {
		tb.Fatal(err)
	}
	// Seeding goes through the API, 9 big records a request (the body limit is 1 MB).
	victim := s.devToken(tb, "victim")
	blob := strings.Repeat("x", blobBytes)
	var boss string
	for i := 0; i <= bigRecords; i += 9 {
		var data []map[string]any
		for j := i; j < min(i+9, bigRecords+1); j++ {
			data = append(data, map[string]any{"name": fmt.Sprintf("big%d", j), "blob": blob})
		}
		out := s.mustGraphQL(tb, "victim", victim, `mutation($d: [employeeInput!]!) { c: createemployees(data: $d) { uid name } }`, map[string]any{"d": data})
		for _, r := range out["c"].([]any) {
			if r.(map[string]any)["name"] == "big0" {
				boss = r.(map[string]any)["uid"].(string)
			}
		}
	}
	var rows []map[string]any
	for i := range workers {
		rows = append(rows, map[string]any{"name": fmt.Sprintf("w%d", i), "managerId": boss})
	}
	s.mustGraphQL(tb, "victim", victim, `mutation($d: [employeeInput!]!) { c: createemployees(data: $d) { uid } }`, map[string]any{"d": rows})
	out := s.mustGraphQL(tb, "quiet", s.devToken(tb, "quiet"), `mutation { c: createproduct(data: {name: "tea"}) { uid } }`, nil)
	s.quietID = out["c"].(map[string]any)["uid"].(string)
	return s
}

func (s *attackSite) apply(tb testing.TB, id string, auth map[string]any, tables map[string]any) {
	tb.Helper()
	if err := s.put(id, auth, tables); err != nil {
		tb.Fatal(err)
	}
}

func (s *attackSite) put(id string, auth map[string]any, tables map[string]any) error {
	auth["audience"] = id
	doc, _ := json.Marshal(map[string]any{"id": id, "auth": auth, "tables": tables})
	status, body, err := s.srv.Do(http.MethodPut, "localhost", "/admin/v1/projects/"+id, attackAdminToken, doc)
	if err != nil || status/100 != 2 {
		return fmt.Errorf("apply %s: %d %s %v", id, status, body, err)
	}
	return nil
}

var guardedIDs atomic.Int64

// guarded applies a new project that trusts the flaky IdP, whose JWKS endpoint for it is in
// mode, and returns its id ("guarded" for the first, whose endpoint serves).
func (s *attackSite) guarded(ctx context.Context, mode string) (string, error) {
	id := "guarded"
	if n := guardedIDs.Add(1); n > 1 {
		id = fmt.Sprintf("guarded%d", n)
	}
	s.idp.set(id, mode)
	return id, s.put(id, map[string]any{"jwksURL": s.idp.srv.URL + "/" + id + ".json", "issuer": flakyIssuer}, map[string]any{"notes": map[string]any{
		"fields": map[string]any{"text": map[string]any{"type": "String"}},
		"access": map[string]any{"read": "authenticated", "create": "authenticated", "update": "owner", "delete": "owner"},
	}})
}

func (s *attackSite) devToken(tb testing.TB, project string) string {
	tb.Helper()
	out, err := exec.Command(s.bin, "token", "--data", s.srv.DataDir, "--project", project, "--sub", "seeder").Output()
	if err != nil {
		tb.Fatalf("platform token: %v", err)
	}
	s.devTokens[project] = strings.TrimSpace(string(out))
	return s.devTokens[project]
}

func (s *attackSite) mustGraphQL(tb testing.TB, project, token, query string, vars map[string]any) map[string]any {
	tb.Helper()
	a, err := s.graphql(context.Background(), project, token, query, vars)
	if err != nil || a.status != http.StatusOK || len(a.errors) > 0 {
		tb.Fatalf("%s: %d %s %v", query[:min(len(query), 80)], a.status, a.raw[:min(len(a.raw), 500)], err)
	}
	return a.data
}

// answer is a GraphQL answer as a client reads it.
type answer struct {
	status int
	header http.Header
	raw    []byte
	data   map[string]any
	errors []map[string]any
	took   time.Duration
}

func (a answer) codes() []string {
	var out []string
	for _, e := range a.errors {
		ext, _ := e["extensions"].(map[string]any)
		c, _ := ext["code"].(string)
		out = append(out, c)
	}
	return out
}

func (s *attackSite) graphql(ctx context.Context, project, token, query string, vars map[string]any) (answer, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.srv.Addr+"/api/v1/graphql", bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Host = project + ".localhost"
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	if a.raw, err = io.ReadAll(resp.Body); err != nil {
		return a, err
	}
	a.took = time.Since(start)
	var parsed struct {
		Data   map[string]any   `json:"data"`
		Errors []map[string]any `json:"errors"`
	}
	if err := json.Unmarshal(a.raw, &parsed); err != nil {
		return a, fmt.Errorf("answer %d is not JSON: %.300s", a.status, a.raw)
	}
	a.data, a.errors = parsed.Data, parsed.Errors
	return a, nil
}

// attack is one row of the table: send sends one copy and says what is wrong with its answer.
type attack struct {
	name string
	send func(ctx context.Context, s *attackSite) error
}

// refusedWithin checks an answer that must be a refusal with one of codes, no longer than the
// budget allows.
func refusedWithin(a answer, codes ...string) error {
	if len(a.raw) > attackBudget+attackEnvelope {
		return fmt.Errorf("answered %d bytes, past the budget of %d", len(a.raw), attackBudget)
	}
	got := a.codes()
	for _, c := range got {
		for _, want := range codes {
			if c == want {
				return nil
			}
		}
	}
	return fmt.Errorf("status %d, codes %v, want one of %v: %.300s", a.status, got, codes, a.raw)
}

func aliases(n int, field string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " a%d: %s", i, field)
	}
	b.WriteString(" }")
	return b.String()
}

// billionLaughs is a 360-byte YAML document whose nested anchors expand to 10^9 strings.
const billionLaughs = `id: laughs
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h,*h]
tables: {}
`

// attacks is the table of issue 33, one row a request.
var attacks = []attack{
	{"aliases of big lists", func(ctx context.Context, s *attackSite) error {
		a, err := s.graphql(ctx, "victim", "", aliases(50, "employees(limit: 1000) { blob }"), nil)
		if err != nil {
			return err
		}
		return refusedWithin(a, "RESULT_TOO_LARGE", "QUERY_TOO_COMPLEX")
	}},
	{"one big record repeated through a relation", func(ctx context.Context, s *attackSite) error {
		a, err := s.graphql(ctx, "victim", "", aliases(4, `employees(where: {name: {startsWith: "w"}}, limit: 1000) { manager { blob } }`), nil)
		if err != nil {
			return err
		}
		return refusedWithin(a, "RESULT_TOO_LARGE", "QUERY_TOO_COMPLEX")
	}},
	{"billion laughs to the admin API", func(ctx context.Context, s *attackSite) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+s.srv.Addr+"/admin/v1/projects/laughs", strings.NewReader(billionLaughs))
		req.Host = "localhost"
		req.Header.Set("Authorization", "Bearer "+attackAdminToken)
		req.Header.Set("Content-Type", "application/yaml")
		status, body, err := send(s.client, req)
		if err != nil {
			return err
		}
		if status != http.StatusBadRequest || !strings.Contains(body, "alias") {
			return fmt.Errorf("admin API answered %d %.300s, want 400 naming the alias limit", status, body)
		}
		return nil
	}},
	{"billion laughs to the console editor", func(ctx context.Context, s *attackSite) error {
		c, err := consoleSignIn(ctx, s)
		if err != nil {
			return err
		}
		status, body, err := c.post(ctx, "/console/projects/check", url.Values{"document": {billionLaughs}})
		if err != nil {
			return err
		}
		if status/100 != 4 || !strings.Contains(body, "alias") {
			return fmt.Errorf("console answered %d %.300s, want a 4xx naming the alias limit", status, body)
		}
		return nil
	}},
	{"billion laughs to platform apply", func(ctx context.Context, s *attackSite) error {
		f := filepath.Join(os.TempDir(), fmt.Sprintf("laughs-%d.yaml", mrand.Int64()))
		if err := os.WriteFile(f, []byte(billionLaughs), 0o600); err != nil {
			return err
		}
		defer os.Remove(f)
		cmd := exec.CommandContext(ctx, s.bin, "apply", "-f", f)
		cmd.Env = append(os.Environ(), "PLATFORM_SERVER=http://"+s.srv.Addr, "PLATFORM_ADMIN_TOKEN="+attackAdminToken)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || !strings.Contains(string(out), "alias") {
			return fmt.Errorf("platform apply: %v, %.300s; want a failure naming the alias limit", err, out)
		}
		return nil
	}},
	{"billion laughs in a docker-compose.yml read by analyze_cloud_resources", func(ctx context.Context, s *attackSite) error {
		req, err := mcptest.NewPost("http://"+s.srv.Addr+"/mcp", mcptest.Request(1, "tools/call",
			map[string]any{"name": "analyze_cloud_resources", "arguments": map[string]any{"path": "compose"}}), "MCP-Protocol-Version", "2025-11-25")
		if err != nil {
			return err
		}
		req.Host = "localhost"
		r, err := mcptest.Send(s.client, req.WithContext(ctx))
		if err != nil {
			return err
		}
		if r.Status != http.StatusOK || r.Body == nil {
			return fmt.Errorf("tools/call answered %d %.300s", r.Status, r.Raw)
		}
		if !strings.Contains(string(r.Raw), "alias") {
			return fmt.Errorf("the answer does not say the file was refused for its aliases: %.500s", r.Raw)
		}
		return nil
	}},
	{"1,000 comparisons in or", func(ctx context.Context, s *attackSite) error {
		var parts []string
		for i := range 1000 {
			parts = append(parts, fmt.Sprintf(`{name: {eq: "w%d"}}`, i))
		}
		a, err := s.graphql(ctx, "victim", "", `{ employees(where: {or: [`+strings.Join(parts, ",")+`]}, limit: 1000) { uid } }`, nil)
		if err != nil {
			return err
		}
		if a.status != http.StatusOK || len(a.errors) > 0 {
			return fmt.Errorf("status %d %.300s, want data", a.status, a.raw)
		}
		if n := len(a.data["employees"].([]any)); n != workers {
			return fmt.Errorf("answered %d employees, want %d", n, workers)
		}
		return nil
	}},
	{"RESP headers announcing 500,000,000 arguments", func(ctx context.Context, s *attackSite) error {
		var d net.Dialer
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for range 6 {
			c, err := d.DialContext(ctx, "tcp", s.srv.RedisAddr)
			if err != nil {
				return err
			}
			conns = append(conns, c)
			if _, err := c.Write([]byte("*500000000\r\n")); err != nil {
				return err
			}
		}
		// The reader has had the header; another connection is still served.
		c, err := d.DialContext(ctx, "tcp", s.srv.RedisAddr)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
			return err
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || line != "+PONG\r\n" {
			return fmt.Errorf("PING beside the headers: %q %v", line, err)
		}
		return nil
	}},
	{"a JWKS endpoint that fails once, then recovers", func(ctx context.Context, s *attackSite) error {
		id, tok, a, err := s.readGuarded(ctx, "fail")
		if err != nil {
			return err
		}
		wait, err := strconv.Atoi(a.header.Get("Retry-After"))
		if a.status != http.StatusServiceUnavailable || err != nil {
			return fmt.Errorf("with the JWKS failing: %d, Retry-After %q, want 503 with Retry-After: %.300s", a.status, a.header.Get("Retry-After"), a.raw)
		}
		s.idp.set(id, "")
		if err := sleep(ctx, time.Duration(wait)*time.Second); err != nil {
			return err
		}
		if a, err = s.graphql(ctx, id, tok, "{ notes { uid } }", nil); err != nil {
			return err
		}
		if a.status != http.StatusOK {
			return fmt.Errorf("%d s after the JWKS recovered (its Retry-After): %d %.300s", wait, a.status, a.raw)
		}
		return nil
	}},
	{"a JWKS endpoint that hangs", func(ctx context.Context, s *attackSite) error {
		_, _, a, err := s.readGuarded(ctx, "hang")
		if err != nil {
			return err
		}
		if a.status != http.StatusServiceUnavailable || a.took > s.timeout+time.Second {
			return fmt.Errorf("with the JWKS hanging: %d after %v, want 503 within the request's timeout: %.300s", a.status, a.took, a.raw)
		}
		return nil
	}},
	{"a token with a crit header", func(ctx context.Context, s *attackSite) error {
		tok, err := s.idp.token("guarded", map[string]any{"crit": []string{"urn:example:x"}, "urn:example:x": true})
		if err != nil {
			return err
		}
		a, err := s.graphql(ctx, "guarded", tok, "{ notes { uid } }", nil)
		if err != nil {
			return err
		}
		if a.status != http.StatusUnauthorized || !slices.Contains(a.codes(), "UNAUTHENTICATED") {
			return fmt.Errorf("a token with crit: %d %.300s, want 401 UNAUTHENTICATED", a.status, a.raw)
		}
		return nil
	}},
	{"the admin token in the console's sign-in URL", func(ctx context.Context, s *attackSite) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.srv.Addr+"/console/login?token="+attackAdminToken, nil)
		req.Host = "localhost"
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noRedirect.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || len(resp.Cookies()) > 0 {
			return fmt.Errorf("the token in the URL: %d with %d cookies, want 400 and no session", resp.StatusCode, len(resp.Cookies()))
		}
		return nil
	}},
}

// readGuarded applies a new project whose JWKS endpoint is in mode and reads its notes with
// a token of the flaky IdP: the project, the token and the answer.
func (s *attackSite) readGuarded(ctx context.Context, mode string) (id, tok string, a answer, err error) {
	if id, err = s.guarded(ctx, mode); err != nil {
		return "", "", a, err
	}
	if tok, err = s.idp.token(id, nil); err != nil {
		return "", "", a, err
	}
	a, err = s.graphql(ctx, id, tok, "{ notes { uid } }", nil)
	return id, tok, a, err
}

// send does req and reads the body.
func send(client *http.Client, req *http.Request) (int, string, error) {
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// consoleClient is a browser signed in to the console: its cookie and CSRF token.
type consoleClient struct {
	s      *attackSite
	cookie *http.Cookie
	csrf   string
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

func consoleSignIn(ctx context.Context, s *attackSite) (*consoleClient, error) {
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.srv.Addr+"/console/login", strings.NewReader(url.Values{"token": {attackAdminToken}}.Encode()))
	req.Host = "localhost"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := noRedirect.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	c := &consoleClient{s: s}
	for _, k := range resp.Cookies() {
		if k.Name == "platform_console" {
			c.cookie = k
		}
	}
	if c.cookie == nil {
		return nil, fmt.Errorf("console sign-in answered %d without a session", resp.StatusCode)
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.srv.Addr+"/console/", nil)
	req.Host = "localhost"
	req.AddCookie(c.cookie)
	_, page, err := send(s.client, req)
	if err != nil {
		return nil, err
	}
	m := csrfMeta.FindStringSubmatch(page)
	if m == nil {
		return nil, fmt.Errorf("no CSRF token on the console's page")
	}
	c.csrf = m[1]
	return c, nil
}

func (c *consoleClient) post(ctx context.Context, path string, form url.Values) (int, string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+c.s.srv.Addr+path, strings.NewReader(form.Encode()))
	req.Host = "localhost"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("X-CSRF-Token", c.csrf)
	req.AddCookie(c.cookie)
	return send(c.s.client, req)
}

// TestAttacks sends every row of the attack table once and checks its answer, then checks
// that the process still serves its other projects and that its heap did not grow past what
// the answers need.
func TestAttacks(t *testing.T) {
	s := startAttackSite(t, 5*time.Second)
	heap0 := s.heapSys()
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := a.send(ctx, s); err != nil {
				t.Fatal(err)
			}
			if err := s.quietServes(ctx); err != nil {
				t.Fatalf("after the attack: %v", err)
			}
		})
	}
	t.Run("generated documents", func(t *testing.T) {
		answered, refused, err := s.generated(context.Background(), 33, 60)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d answered, %d refused", answered, refused)
		if answered == 0 || refused == 0 {
			t.Errorf("%d answered and %d refused: the generator must make both kinds", answered, refused)
		}
	})
	// No log line, at any level, holds a secret the attacks sent.
	for _, secret := range []string{attackAdminToken, s.devTokens["victim"], s.devTokens["quiet"]} {
		if strings.Contains(s.srv.Log(), secret) {
			t.Errorf("the server's log holds a secret the test sent (%.12s...)", secret)
		}
	}
	// The generous bound catches the unbounded allocations (gigabytes), not the answers' own.
	if grew := s.heapSys() - heap0; heap0 <= 0 || grew > 1<<30 {
		t.Errorf("the heap grew from %d MB by %d MB during the attacks", heap0>>20, grew>>20)
	}
}

// quietServes fetches the quiet project's record by uid.
func (s *attackSite) quietServes(ctx context.Context) error {
	a, err := s.graphql(ctx, "quiet", "", `query($u: ID) { products(uid: $u) { uid name } }`, map[string]any{"u": s.quietID})
	if err != nil {
		return err
	}
	if a.status != http.StatusOK || len(a.errors) > 0 {
		return fmt.Errorf("quiet answered %d %.300s", a.status, a.raw)
	}
	return nil
}

// metricValue reads one unlabelled series from the server's metrics endpoint; -1 when it
// cannot.
func (s *attackSite) metricValue(name string) float64 {
	resp, err := http.Get("http://" + s.srv.MetricsAddr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return f
			}
		}
	}
	return -1
}

// flakyIdP is an identity provider whose JWKS endpoints (one a project, /<name>.json) can be
// made to fail or hang; a project's verifier starts cold, so each row names a new one.
type flakyIdP struct {
	key  *ecdsa.PrivateKey
	jwks []byte
	srv  *httptest.Server
	mu   sync.Mutex
	mode map[string]string // "" serves, "fail" answers 500, "hang" waits until the test ends
	done chan struct{}
}

const flakyIssuer = "https://flaky.idp.test/"

func newFlakyIdP(tb testing.TB) *flakyIdP {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	pub, err := key.PublicKey.Bytes()
	if err != nil {
		tb.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	p := &flakyIdP{key: key, mode: map[string]string{}, done: make(chan struct{})}
	p.jwks, _ = json.Marshal(map[string]any{"keys": []any{map[string]any{
		"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": "flaky",
		"x": b64(pub[1:33]), "y": b64(pub[33:]),
	}}})
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		mode := p.mode[strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), ".json")]
		p.mu.Unlock()
		switch mode {
		case "fail":
			http.Error(w, "down for maintenance", http.StatusInternalServerError)
		case "hang":
			select {
			case <-r.Context().Done():
			case <-p.done:
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(p.jwks)
		}
	}))
	tb.Cleanup(func() {
		close(p.done)
		p.srv.Close()
	})
	return p
}

func (p *flakyIdP) set(name, mode string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode[name] = mode
}

// token signs an ID token for project with extra header parameters.
func (p *flakyIdP) token(project string, header map[string]any) (string, error) {
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss": flakyIssuer, "aud": project, "sub": "stranger", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	})
	tok.Header["kid"] = "flaky"
	maps.Copy(tok.Header, header)
	return tok.SignedString(p.key)
}

// generatedDocument builds a random read of the victim's employees: aliases of lists and
// connections, relations both ways (the relation to the same table closes a cycle) up to
// three deep, a fragment, and limits from 1 to 1,000.
func generatedDocument(r *mrand.Rand) string {
	usesFragment := false
	limit := func() int { return []int{1, 10, 100, 1000}[r.IntN(4)] }
	var sel func(depth int) string
	sel = func(depth int) string {
		var parts []string
		for _, f := range []string{"uid", "name", "blob"} {
			if r.IntN(2) == 0 {
				parts = append(parts, f)
			}
		}
		if r.IntN(4) == 0 {
			parts, usesFragment = append(parts, "...big"), true
		}
		if depth < 3 && r.IntN(3) == 0 {
			parts = append(parts, "manager { "+sel(depth+1)+" }")
		}
		if depth < 3 && r.IntN(3) == 0 {
			parts = append(parts, fmt.Sprintf("reports(limit: %d) { %s }", limit(), sel(depth+1)))
		}
		if len(parts) == 0 {
			parts = append(parts, "uid")
		}
		return strings.Join(parts, " ")
	}
	var b strings.Builder
	b.WriteString("{")
	for i := range 1 + r.IntN(6) {
		if r.IntN(4) == 0 {
			fmt.Fprintf(&b, " c%d: employeesConnection(first: %d) { edges { node { %s } } }", i, limit(), sel(1))
		} else {
			fmt.Fprintf(&b, " l%d: employees(limit: %d) { %s }", i, limit(), sel(1))
		}
	}
	b.WriteString(" }")
	if usesFragment {
		b.WriteString(" fragment big on employee { blob name }")
	}
	return b.String()
}

// generated sends count generated documents and checks that no answer passes the budget and
// every refusal is the budget's or the cost estimate's.
func (s *attackSite) generated(ctx context.Context, seed uint64, count int) (answered, refused int, err error) {
	r := mrand.New(mrand.NewPCG(seed, 33))
	for range count {
		doc := generatedDocument(r)
		a, err := s.graphql(ctx, "victim", "", doc, nil)
		if err != nil {
			return answered, refused, fmt.Errorf("%s: %w", doc, err)
		}
		if len(a.errors) == 0 && a.status == http.StatusOK {
			if len(a.raw) > attackBudget {
				return answered, refused, fmt.Errorf("%s: answered %d bytes, past the budget", doc, len(a.raw))
			}
			answered++
			continue
		}
		if err := refusedWithin(a, "RESULT_TOO_LARGE", "QUERY_TOO_COMPLEX"); err != nil {
			return answered, refused, fmt.Errorf("%s: %w", doc, err)
		}
		refused++
	}
	return answered, refused, nil
}
