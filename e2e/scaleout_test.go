package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/platform-dev/platform/cmd/platform/platformtest"
	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/store"
)

// The scale-out test runs the deployment shape of deploy/k8s on one machine: two `platform
// serve` replicas on one standalone FerretDB and one real redis-server, behind a round-robin
// reverse proxy standing in for the load balancer.

const (
	scaleAdminToken = "scale-out-admin-token"
	scaleRateLimit  = 8 // MCP requests per client per window; the session subtest sends at most 7
	scaleIssuer     = "https://idp.scale-out.test/"
)

func TestScaleOut(t *testing.T) {
	if testing.Short() { // -short leaves out the long tests, under CI=true too
		t.Skip("starts two replicas and two stores; not in -short")
	}
	bin := scaleBuild(t)
	redisAddr, _ := testenv.RedisServer(t)
	redisURL := "redis://" + redisAddr + "/0"
	mongoURI := scaleFerretDB(t)
	idp := newScaleIdP(t)

	env := []string{
		"MONGODB_URI=" + mongoURI,
		"REDIS_URL=" + redisURL,
		"PLATFORM_ADMIN_TOKEN=" + scaleAdminToken,
		fmt.Sprintf("MCP_REQUESTS_PER_WINDOW=%d", scaleRateLimit),
		"MCP_RATE_WINDOW=1m",
		// The proxy below is the load balancer: its X-Forwarded-For names the client.
		"PLATFORM_TRUSTED_PROXIES=127.0.0.0/8",
		"PLATFORM_METRICS_ADDR=127.0.0.1:0",
	}
	a := startScaleReplica(t, bin, "A", env)
	b := startScaleReplica(t, bin, "B", env)
	lb := newScaleProxy(t, a, b)

	t.Run("project change reaches the other replica within a second", func(t *testing.T) {
		a.putProject(t, scaleProject(idp.url, false))
		// B serves (and caches) the first definition ...
		if status, body := b.graphql(t, idp.token(t, "alice"), `query { products { uid name } }`, nil); status != http.StatusOK || scaleHasErrors(body) {
			t.Fatalf("B before the change: %d %s", status, body)
		}
		// ... and a change applied through A replaces it on B through Redis, not through
		// B's periodic refresh (30 s).
		a.putProject(t, scaleProject(idp.url, true))
		deadline := time.Now().Add(time.Second)
		for {
			status, body := b.graphql(t, idp.token(t, "alice"), `query { products { uid author } }`, nil)
			if status == http.StatusOK && !scaleHasErrors(body) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("B still serves the old definition a second after A applied the new one: %d %s", status, body)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("records written through one replica are read through the other", func(t *testing.T) {
		tok := idp.token(t, "alice")
		for i := range 6 {
			writer, reader := a, b
			if i%2 == 1 {
				writer, reader = b, a
			}
			name := fmt.Sprintf("written-through-%s-%d", writer.name, i)
			uid := scaleCreate(t, writer, tok, name, 1.5+float64(i))
			got := scaleFetch(t, reader, tok, uid)
			if got["name"] != name || got["price"] != 1.5+float64(i) {
				t.Errorf("%s reads %v for the record %s wrote as %q", reader.name, got, writer.name, name)
			}
		}
	})

	t.Run("the MCP rate limit holds across both replicas", func(t *testing.T) {
		const client = "192.0.2.10"
		served := map[string]int{}
		var allowed, limited int
		for i := range 2*scaleRateLimit + 2 {
			resp := lb.mcp(t, client, "", map[string]any{"jsonrpc": "2.0", "id": 1000 + i, "method": "ping"})
			served[resp.servedBy]++
			switch {
			case resp.msg.Error == nil:
				if limited > 0 {
					t.Errorf("request %d allowed after the limit was reached", i)
				}
				allowed++
			case resp.msg.Error.Code == -32007:
				limited++
				if resp.msg.ID != float64(1000+i) {
					t.Errorf("rate-limited answer carries id %v, want %d", resp.msg.ID, 1000+i)
				}
				if resp.header.Get("Retry-After") == "" {
					t.Errorf("rate-limited answer without Retry-After")
				}
			default:
				t.Fatalf("request %d: unexpected error %+v", i, resp.msg.Error)
			}
		}
		if allowed != scaleRateLimit {
			t.Errorf("%d pings allowed through two replicas, want the one shared limit of %d", allowed, scaleRateLimit)
		}
		if served["A"] == 0 || served["B"] == 0 {
			t.Errorf("the proxy did not spread the requests over both replicas: %v", served)
		}
	})

	t.Run("an MCP session started on one replica continues on the other", func(t *testing.T) {
		const client = "192.0.2.20"
		init := lb.mcp(t, client, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "scale-out-test", "version": "1"},
		}})
		session := init.header.Get("Mcp-Session-Id")
		if init.msg.Error != nil || session == "" {
			t.Fatalf("initialize through %s: %+v, session %q", init.servedBy, init.msg.Error, session)
		}
		note := lb.mcp(t, client, session, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
		if note.status != http.StatusAccepted {
			t.Fatalf("notifications/initialized through %s: HTTP %d", note.servedBy, note.status)
		}
		// Calls in a row: the round robin sends them to each replica in turn, so one is served
		// by the replica that did not see initialize. A hop of the test's own proxy that breaks
		// (seen once, on a machine under heavy load) is logged and tried again, once.
		served, hopFailures := map[string]bool{}, 0
		for id := 2; !served["A"] || !served["B"]; id++ {
			list, err := lb.tryMCP(client, session, map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/list"})
			if err != nil && hopFailures == 0 {
				hopFailures++
				t.Logf("retrying after a broken proxy hop: %v", err)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if id > 5 {
				t.Fatalf("tools/list was served by %v only; the test needs both replicas", served)
			}
			if list.msg.Error != nil || list.msg.Result["tools"] == nil {
				t.Fatalf("tools/list through %s with the session from %s: %+v %v", list.servedBy, init.servedBy, list.msg.Error, list.msg.Result)
			}
			served[list.servedBy] = true
		}
		// The session id is checked, not ignored: an unknown one is refused by either replica.
		for range 2 {
			bogus := lb.mcp(t, client, "not-a-session", map[string]any{"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
			if bogus.status != http.StatusNotFound {
				t.Errorf("tools/list with an unknown session through %s: HTTP %d, want 404", bogus.servedBy, bogus.status)
			}
		}
	})

	t.Run("killing a replica mid-load loses no acknowledged write", func(t *testing.T) {
		tok := idp.token(t, "bob")
		const writers, target, killAfter = 4, 120, 30
		var (
			mu    sync.Mutex
			acked = map[string]string{} // uid -> name
			seq   atomic.Int64
			kill  sync.Once
			wg    sync.WaitGroup
		)
		for range writers {
			wg.Go(func() {
				for {
					mu.Lock()
					n := len(acked)
					mu.Unlock()
					if n >= target {
						return
					}
					name := fmt.Sprintf("load-%d", seq.Add(1))
					uid, ok := lb.tryCreate(tok, name)
					if !ok {
						continue // not acknowledged: the replica died under it, or the proxy had no backend
					}
					mu.Lock()
					acked[uid] = name
					n = len(acked)
					mu.Unlock()
					if n >= killAfter {
						kill.Do(b.kill)
					}
				}
			})
		}
		wg.Wait()
		if lb.failed.Load() == 0 {
			t.Fatal("no request failed after B was killed: the load did not go on through the kill")
		}
		for uid, name := range acked {
			got := scaleFetch(t, a, tok, uid)
			if got["name"] != name {
				t.Errorf("acknowledged write %s (%s) reads back as %v", uid, name, got)
			}
		}
		t.Logf("%d acknowledged writes, %d requests failed when B was killed", len(acked), lb.failed.Load())
	})
}

// scaleBuild builds the platform binary once for this test.
func scaleBuild(t *testing.T) string {
	t.Helper()
	bin, err := platformtest.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// scaleFerretDB runs FerretDB (SQLite handler) in the test process, outside both replicas,
// as the shared MongoDB-protocol store: the replicas use the mongo backend.
func scaleFerretDB(t *testing.T) string {
	t.Helper()
	uri, stop, err := store.StartFerretDB(context.Background(), t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("start FerretDB: %v", err)
	}
	t.Cleanup(func() {
		if err := stop(context.Background()); err != nil {
			t.Errorf("stop FerretDB: %v", err)
		}
	})
	return uri
}

// scaleIdP is an identity provider: an ES256 key whose JWKS an httptest server publishes.
type scaleIdP struct {
	key *ecdsa.PrivateKey
	url string
}

func newScaleIdP(t *testing.T) *scaleIdP {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := key.PublicKey.Bytes() // uncompressed point: 0x04 || X || Y
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	jwks, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{
		"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": "scale-out",
		"x": b64(pub[1:33]), "y": b64(pub[33:]),
	}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	}))
	t.Cleanup(srv.Close)
	return &scaleIdP{key: key, url: srv.URL + "/jwks.json"}
}

func (p *scaleIdP) token(t *testing.T, sub string) string {
	t.Helper()
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss": scaleIssuer, "aud": "shop", "sub": sub, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	})
	tok.Header["kid"] = "scale-out"
	s, err := tok.SignedString(p.key)
	if err != nil {
		t.Fatalf("sign a token: %v", err)
	}
	return s
}

func scaleProject(jwksURL string, withAuthor bool) map[string]any {
	fields := map[string]any{
		"name":  map[string]any{"type": "String", "required": true},
		"price": map[string]any{"type": "Float", "required": true},
	}
	if withAuthor {
		fields["author"] = map[string]any{"type": "String"}
	}
	return map[string]any{
		"id":   "shop",
		"auth": map[string]any{"jwksURL": jwksURL, "issuer": scaleIssuer, "audience": "shop"},
		"tables": map[string]any{"products": map[string]any{
			"fields": fields,
			"access": map[string]any{"read": "authenticated", "create": "authenticated", "update": "owner", "delete": "owner"},
		}},
	}
}

// scaleReplica is one running `platform serve`, named for the test's messages.
type scaleReplica struct {
	*platformtest.Server
	name, addr string
}

func startScaleReplica(t *testing.T, bin, name string, env []string) *scaleReplica {
	t.Helper()
	ps := platformtest.Start(t, bin, "", env...)
	return &scaleReplica{Server: ps, name: name, addr: ps.Addr}
}

// kill ends the replica with SIGKILL: no graceful shutdown, as when a node dies.
func (r *scaleReplica) kill() { r.Kill() }

func (r *scaleReplica) do(t *testing.T, method, host, path, token string, body any) (int, []byte) {
	t.Helper()
	status, out, err := scaleSend(http.DefaultClient, method, "http://"+r.addr+path, host, token, body)
	if err != nil {
		t.Fatalf("%s %s%s on %s: %v", method, host, path, r.name, err)
	}
	return status, out
}

func (r *scaleReplica) putProject(t *testing.T, doc map[string]any) {
	t.Helper()
	status, body := r.do(t, http.MethodPut, "localhost", "/admin/v1/projects/shop", scaleAdminToken, doc)
	if status != http.StatusOK && status != http.StatusCreated {
		t.Fatalf("PUT project through %s: %d %s", r.name, status, body)
	}
}

func (r *scaleReplica) graphql(t *testing.T, token, query string, vars map[string]any) (int, []byte) {
	t.Helper()
	if vars == nil {
		vars = map[string]any{}
	}
	return r.do(t, http.MethodPost, "shop.localhost", "/api/v1/graphql", token, map[string]any{"query": query, "variables": vars})
}

func scaleSend(c *http.Client, method, url, host, token string, body any) (int, []byte, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, err
	}
	req.Host = host
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

func scaleHasErrors(body []byte) bool {
	var r struct{ Errors []any }
	return json.Unmarshal(body, &r) != nil || len(r.Errors) > 0
}

// The seed's create and fetch documents, verbatim.
const (
	scaleSeedCreate = `mutation createproduct($data: productInput!) { createproduct(data: $data) { uid name price createdAt updatedAt } }`
	scaleSeedFetch  = `query products($uid: ID) { products(uid: $uid) { uid name price author createdAt updatedAt } }`
)

func scaleCreate(t *testing.T, r *scaleReplica, token, name string, price float64) string {
	t.Helper()
	status, body := r.graphql(t, token, scaleSeedCreate, map[string]any{"data": map[string]any{"name": name, "price": price}})
	uid, ok := scaleCreatedUID(status, body)
	if !ok {
		t.Fatalf("createproduct through %s: %d %s", r.name, status, body)
	}
	return uid
}

func scaleCreatedUID(status int, body []byte) (string, bool) {
	var out struct {
		Data struct {
			CreateProduct struct{ UID string } `json:"createProduct"`
		}
		Errors []any
	}
	if status != http.StatusOK || json.Unmarshal(body, &out) != nil || len(out.Errors) > 0 || out.Data.CreateProduct.UID == "" {
		return "", false
	}
	return out.Data.CreateProduct.UID, true
}

func scaleFetch(t *testing.T, r *scaleReplica, token, uid string) map[string]any {
	t.Helper()
	status, body := r.graphql(t, token, scaleSeedFetch, map[string]any{"uid": uid})
	var out struct {
		Data struct{ Products []map[string]any }
	}
	if status != http.StatusOK || scaleHasErrors(body) || json.Unmarshal(body, &out) != nil || len(out.Data.Products) != 1 {
		t.Fatalf("fetch %s through %s: %d %s", uid, r.name, status, body)
	}
	return out.Data.Products[0]
}

// scaleProxy is the load balancer: each request goes to the next replica in turn, and the
// answer says which one served it.
type scaleProxy struct {
	url    string
	client *http.Client
	failed atomic.Int64 // requests the proxy could not complete (a dead replica)
}

func newScaleProxy(t *testing.T, replicas ...*scaleReplica) *scaleProxy {
	t.Helper()
	var next atomic.Uint64
	lb := &scaleProxy{client: &http.Client{Timeout: 30 * time.Second}}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			r := replicas[(next.Add(1)-1)%uint64(len(replicas))]
			pr.SetURL(&url.URL{Scheme: "http", Host: r.addr})
			pr.Out.Host = pr.In.Host // the replicas route on the Host header
			// The test's clients all connect from loopback; each names the client it plays in
			// X-Forwarded-For, which a load balancer keeps and extends.
			pr.Out.Header["X-Forwarded-For"] = pr.In.Header["X-Forwarded-For"]
			pr.SetXForwarded()
			pr.Out.Header.Set("X-Served-By", r.name)
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Set("X-Served-By", resp.Request.Header.Get("X-Served-By"))
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			lb.failed.Add(1)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	lb.url = srv.URL
	return lb
}

// tryCreate creates a product through the proxy; ok means the write was acknowledged.
func (lb *scaleProxy) tryCreate(token, name string) (uid string, ok bool) {
	status, body, err := scaleSend(lb.client, http.MethodPost, lb.url+"/api/v1/graphql", "shop.localhost", token,
		map[string]any{"query": scaleSeedCreate, "variables": map[string]any{"data": map[string]any{"name": name, "price": 9.5}}})
	if err != nil {
		return "", false
	}
	return scaleCreatedUID(status, body)
}

type scaleMCPAnswer struct {
	status   int
	header   http.Header
	servedBy string
	msg      struct {
		ID     any            `json:"id"`
		Result map[string]any `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
}

// mcp posts one JSON-RPC message to /mcp on the apex host, as the given client address (the
// proxy's X-Forwarded-For), and decodes the answer whether it is JSON or an event stream.
func (lb *scaleProxy) mcp(t *testing.T, client, session string, msg map[string]any) scaleMCPAnswer {
	t.Helper()
	a, err := lb.tryMCP(client, session, msg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// tryMCP is mcp, returning what went wrong instead of failing the test.
func (lb *scaleProxy) tryMCP(client, session string, msg map[string]any) (scaleMCPAnswer, error) {
	raw, _ := json.Marshal(msg)
	req, err := http.NewRequest(http.MethodPost, lb.url+"/mcp", bytes.NewReader(raw))
	if err != nil {
		return scaleMCPAnswer{}, err
	}
	req.Host = "localhost"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("X-Forwarded-For", client)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := lb.client.Do(req)
	if err != nil {
		return scaleMCPAnswer{}, fmt.Errorf("POST /mcp %v: %w", msg["method"], err)
	}
	defer resp.Body.Close()
	a := scaleMCPAnswer{status: resp.StatusCode, header: resp.Header, servedBy: resp.Header.Get("X-Served-By")}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return a, fmt.Errorf("read the /mcp answer to %v through %s (HTTP %d, %s): %w",
			msg["method"], a.servedBy, resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	if _, hasID := msg["id"]; !hasID || resp.StatusCode == http.StatusNotFound {
		return a, nil // notifications get 202 and no body; an unknown session 404
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "text/event-stream" {
		var data []byte
		for line := range strings.SplitSeq(string(body), "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				data = []byte(strings.TrimSpace(d))
			}
		}
		body = data
	}
	if err := json.Unmarshal(body, &a.msg); err != nil {
		return a, fmt.Errorf("/mcp %v through %s: HTTP %d, not JSON-RPC: %s", msg["method"], a.servedBy, resp.StatusCode, body)
	}
	return a, nil
}
