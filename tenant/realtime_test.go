package tenant_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/internal/testbackend"
	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// replica is one server of a deployment: its own stores (sharing the data folder and Redis
// with the other replicas), registry and HTTP listener.
type replica struct {
	url    string
	addr   string
	reg    *tenant.Registry
	stores *store.Stores
}

// liveDeployment is replicas sharing a data folder and a Redis, with the development issuer.
type liveDeployment struct {
	t        testing.TB
	dataDir  string
	redisURL string
	issuer   *tenant.DevIssuer
	jwks     string
	// trustedProxies, when set, name the clients by X-Forwarded-For as platform serve's
	// --trusted-proxies does.
	trustedProxies []string
}

func newLiveDeployment(t testing.TB, redisURL string) *liveDeployment {
	t.Helper()
	iss, err := tenant.OpenDevIssuer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	jwks := httptest.NewServer(iss)
	t.Cleanup(jwks.Close)
	return &liveDeployment{t: t, dataDir: t.TempDir(), redisURL: redisURL, issuer: iss, jwks: jwks.URL + tenant.DevIssuerJWKSPath}
}

func (d *liveDeployment) replica(limits tenant.RealtimeLimits) *replica {
	d.t.Helper()
	return d.replicaWith(tenant.Options{Realtime: limits})
}

func (d *liveDeployment) replicaWith(opts tenant.Options) *replica {
	t := d.t
	t.Helper()
	// Replicas share the deployment's database, as they share its Redis.
	st, err := store.Open(context.Background(), store.Config{DataDir: d.dataDir, RedisURL: d.redisURL, MongoURI: testbackend.URI(t, d.dataDir)})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tenant.NewRegistry(context.Background(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	if d.trustedProxies != nil {
		proxies, err := tenant.ParseProxies(d.trustedProxies)
		if err != nil {
			t.Fatal(err)
		}
		e.IPExtractor = proxies.ClientIP()
	}
	e.Use(reg.Hosts(tenant.HostOptions{Domain: "platform.test"}))
	reg.MountGraphQL(e)
	srv := httptest.NewServer(e)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		reg.Close()
		_ = st.Close(context.Background())
	})
	return &replica{url: srv.URL, addr: srv.Listener.Addr().String(), reg: reg, stores: st}
}

// project applies a project whose products are read by the given rule, with origin allowed
// by its cors settings.
func (d *liveDeployment) project(r *replica, id, read string) {
	d.t.Helper()
	doc := fmt.Sprintf(`{"id":%q,"auth":%s,"cors":{"origins":["https://app.example"]},"tables":{"products":{
		"fields":{"name":{"type":"String","required":true},"price":{"type":"Float","required":true},"author":{"type":"String"}},
		"access":{"read":%q,"create":"authenticated","update":"owner","delete":"owner"}}}}`,
		id, mustMarshal(d.t, d.issuer.Auth(id, d.jwks)), read)
	p, err := tenant.ParseDocument([]byte(doc))
	if err != nil {
		d.t.Fatal(err)
	}
	if _, _, err := r.reg.Put(context.Background(), p); err != nil {
		d.t.Fatal(err)
	}
}

func (d *liveDeployment) token(project, sub string, ttl time.Duration) string {
	d.t.Helper()
	tok, err := d.issuer.Mint(project, sub, ttl, nil)
	if err != nil {
		d.t.Fatal(err)
	}
	return tok
}

func mustMarshal(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// post runs a GraphQL request on the replica and answers its data.
func (r *replica) post(t testing.TB, project, token, query string, vars map[string]any) map[string]json.RawMessage {
	t.Helper()
	a := postGraphQL(t, r.url+"/api/v1/graphql", project+".platform.test", token, query, vars)
	if len(a.Errors) > 0 {
		t.Fatalf("%s: %+v", query, a.Errors)
	}
	return a.Data
}

// create makes a product as the token's caller and answers its uid.
func (r *replica) create(t testing.TB, project, token, name string, price float64) string {
	t.Helper()
	data := r.post(t, project, token, createDoc, map[string]any{"data": map[string]any{"name": name, "price": price}})
	var rec struct{ UID string }
	if err := json.Unmarshal(data["createProduct"], &rec); err != nil {
		t.Fatal(err)
	}
	return rec.UID
}

// dial opens a WebSocket to the project's API on the replica, offering subprotocols.
func (r *replica) dial(t testing.TB, project string, header http.Header, subprotocols ...string) (*wsClient, *http.Response, error) {
	t.Helper()
	_, port, _ := net.SplitHostPort(r.addr)
	return dialAt(t, r.addr, "ws://"+project+".platform.test:"+port+"/api/v1/graphql", header, subprotocols...)
}

// dialAt opens a WebSocket to rawURL on the server listening at addr, whatever rawURL's host.
func dialAt(t testing.TB, addr, rawURL string, header http.Header, subprotocols ...string) (*wsClient, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	c, resp, err := websocket.Dial(ctx, rawURL, &websocket.DialOptions{
		HTTPClient: client, HTTPHeader: header, Subprotocols: subprotocols,
	})
	if err != nil {
		return nil, resp, err
	}
	w := &wsClient{t: t, c: c, in: make(chan received, 16), done: make(chan struct{})}
	t.Cleanup(func() {
		close(w.done)
		_ = c.CloseNow()
	})
	// Messages are read by one goroutine, so a test can wait for one with a time limit: a
	// Read whose context ends closes the connection.
	go func() {
		for {
			_, data, err := c.Read(context.Background())
			select {
			case w.in <- received{data, err}:
			case <-w.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return w, resp, nil
}

// connect dials with graphql-transport-ws and completes connection_init with token.
func (r *replica) connect(t testing.TB, project, token string) *wsClient {
	t.Helper()
	ws, _, err := r.dial(t, project, nil, "graphql-transport-ws")
	if err != nil {
		t.Fatal(err)
	}
	ws.init(token)
	return ws
}

// init completes connection_init with token.
func (w *wsClient) init(token string) {
	w.t.Helper()
	w.send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}})
	if m := w.read(); m.Type != "connection_ack" {
		w.t.Fatalf("after connection_init: %+v", m)
	}
}

type wsClient struct {
	t    testing.TB
	c    *websocket.Conn
	in   chan received
	done chan struct{}
}

type received struct {
	data []byte
	err  error
}

type wsMsg struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

func (w *wsClient) send(v any) {
	w.t.Helper()
	if err := w.c.Write(w.t.Context(), websocket.MessageText, []byte(mustMarshal(w.t, v))); err != nil {
		w.t.Fatal(err)
	}
}

func (w *wsClient) subscribe(id, query string, vars map[string]any) {
	w.t.Helper()
	w.send(map[string]any{"type": "subscribe", "id": id, "payload": map[string]any{"query": query, "variables": vars}})
}

func (w *wsClient) read() wsMsg {
	w.t.Helper()
	m, ok := w.within(10 * time.Second)
	if !ok {
		w.t.Fatal("no message within 10 s")
	}
	return m
}

// within reads the next message if one arrives within d.
func (w *wsClient) within(d time.Duration) (wsMsg, bool) {
	w.t.Helper()
	var m wsMsg
	select {
	case r := <-w.in:
		if r.err != nil {
			w.t.Fatalf("read: %v", r.err)
		}
		if err := json.Unmarshal(r.data, &m); err != nil {
			w.t.Fatalf("message %s: %v", r.data, err)
		}
		return m, true
	case <-time.After(d):
		return m, false
	}
}

// event reads the next message, which must be a next of subscription id, and answers its
// op and record name ("" for none).
func (w *wsClient) event(id string) string {
	w.t.Helper()
	m := w.read()
	if m.Type != "next" || m.ID != id {
		w.t.Fatalf("want next of %s, got %+v %s", id, m, m.Payload)
	}
	return w.describe(m)
}

// events reads n next messages and answers what each subscription saw, in order: the
// subscriptions of one connection run side by side, so only each one's order is given.
func (w *wsClient) events(n int) map[string][]string {
	w.t.Helper()
	out := map[string][]string{}
	for range n {
		m := w.read()
		if m.Type != "next" {
			w.t.Fatalf("want next, got %+v %s", m, m.Payload)
		}
		out[m.ID] = append(out[m.ID], w.describe(m))
	}
	return out
}

func (w *wsClient) describe(m wsMsg) string {
	w.t.Helper()
	var p struct {
		Data   map[string]productEvent `json:"data"`
		Errors []any                   `json:"errors"`
	}
	if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
		w.t.Fatalf("payload %s: %v", m.Payload, err)
	}
	for _, ev := range p.Data {
		name := ""
		if ev.Record != nil {
			name = ev.Record.Name
		}
		return ev.Op + " " + name
	}
	w.t.Fatalf("payload %s has no event", m.Payload)
	return ""
}

type productEvent struct {
	Op     string `json:"op"`
	UID    string `json:"uid"`
	Record *struct {
		Name  string  `json:"name"`
		Price float64 `json:"price"`
	} `json:"record"`
}

// closed reads until the server closes and answers the close code and reason.
func (w *wsClient) closed() (websocket.StatusCode, string) {
	w.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case r := <-w.in:
			var ce websocket.CloseError
			if errors.As(r.err, &ce) {
				return ce.Code, ce.Reason
			}
			if r.err != nil {
				return -1, r.err.Error()
			}
		case <-timeout:
			return -1, "not closed within 10 s"
		}
	}
}

const productSub = `subscription ($where: productWhere) { products(where: $where) { op uid record { name price } } }`

// redisForReplicas answers the URL of a real redis-server for the replicas to share when one
// is installed (always under CI=true, where .ci/run installs it), else of an in-process
// miniredis.
func redisForReplicas(t *testing.T) string {
	t.Helper()
	if !testenv.Use("redis-server") {
		return "redis://" + miniredis.RunT(t).Addr()
	}
	addr, _ := testenv.RedisServer(t)
	return "redis://" + addr
}

// TestSubscriptionsAcrossReplicas: writes on one replica reach the subscribers of another
// through a shared Redis, each under their own read rule and where; a record that leaves a
// subscriber's view arrives as DELETE; another project's subscribers see nothing.
func TestSubscriptionsAcrossReplicas(t *testing.T) {
	d := newLiveDeployment(t, redisForReplicas(t))
	a, b := d.replica(tenant.RealtimeLimits{}), d.replica(tenant.RealtimeLimits{})
	d.project(a, "shop", "owner")
	d.project(a, "other", "public")
	alice, bob := d.token("shop", "alice", time.Hour), d.token("shop", "bob", time.Hour)

	aliceWS := b.connect(t, "shop", alice)
	aliceWS.subscribe("cheap", productSub, map[string]any{"where": map[string]any{"price": map[string]any{"lt": 10}}})
	aliceWS.subscribe("all", productSub, nil)
	bobWS := b.connect(t, "shop", bob)
	bobWS.subscribe("1", productSub, nil)
	otherWS := a.connect(t, "other", d.token("other", "carol", time.Hour))
	otherWS.subscribe("1", productSub, nil)
	// A subscription is running once a change reaches it: a write by bob shows bob's.
	waitRunning(t, a, bob, bobWS)

	// Each step is a write and what alice's two subscriptions see of it, in order.
	tea := ""
	steps := []struct {
		write      func()
		cheap, all string
	}{
		{func() { tea = a.create(t, "shop", alice, "tea", 5) }, "CREATE tea", "CREATE tea"},
		// Tea leaves the cheap view: DELETE there, UPDATE in all.
		{func() {
			a.post(t, "shop", alice, updateDoc, map[string]any{"uid": tea, "data": map[string]any{"price": 12.0}})
		}, "DELETE ", "UPDATE tea"},
		// A write outside the cheap view shows nowhere there; back in, it is an UPDATE.
		{func() {
			a.post(t, "shop", alice, updateDoc, map[string]any{"uid": tea, "data": map[string]any{"price": 11.0}})
		}, "", "UPDATE tea"},
		{func() {
			a.post(t, "shop", alice, updateDoc, map[string]any{"uid": tea, "data": map[string]any{"price": 2.0}})
		}, "UPDATE tea", "UPDATE tea"},
		{func() { a.post(t, "shop", alice, deleteDoc, map[string]any{"uid": tea}) }, "DELETE ", "DELETE "},
	}
	var wantCheap, wantAll []string
	for _, st := range steps {
		st.write()
		if st.cheap != "" {
			wantCheap = append(wantCheap, st.cheap)
		}
		wantAll = append(wantAll, st.all)
	}
	got := aliceWS.events(len(wantCheap) + len(wantAll))
	if fmt.Sprint(got["cheap"]) != fmt.Sprint(wantCheap) || fmt.Sprint(got["all"]) != fmt.Sprint(wantAll) {
		t.Errorf("alice saw cheap %q and all %q, want %q and %q", got["cheap"], got["all"], wantCheap, wantAll)
	}
	// Bob reads only his own products (owner): none of alice's changes reached him, and
	// carol's project saw nothing of shop's. Their next events are their own projects'.
	b.create(t, "shop", bob, "mate", 4)
	if got := bobWS.event("1"); got != "CREATE mate" {
		t.Errorf("bob's first event after alice's writes: %q, want his own CREATE mate", got)
	}
	b.create(t, "other", d.token("other", "carol", time.Hour), "cocoa", 3)
	if got := otherWS.event("1"); got != "CREATE cocoa" {
		t.Errorf("other project's first event: %q, want CREATE cocoa", got)
	}

	// complete stops a subscription: the next change reaches only the other one. The server
	// reads a connection's messages in order, so its pong says complete was handled; a write
	// sent before that could rightly still reach the completed subscription.
	aliceWS.send(map[string]any{"type": "complete", "id": "cheap"})
	aliceWS.send(map[string]any{"type": "ping"})
	if m := aliceWS.read(); m.Type != "pong" {
		t.Errorf("ping: %+v", m)
	}
	a.create(t, "shop", alice, "milk", 1)
	if got := aliceWS.event("all"); got != "CREATE milk" {
		t.Errorf("after completing cheap: %q", got)
	}

	for _, ws := range []*wsClient{aliceWS, bobWS, otherWS} {
		_ = ws.c.Close(websocket.StatusNormalClosure, "")
	}
	settle(t)
}

// waitRunning writes as caller until ws, subscribed as "1" to everything caller may read,
// sees a write: graphql-transport-ws does not say when a subscription starts. The probe it
// saw is deleted again.
func waitRunning(t testing.TB, r *replica, token string, ws *wsClient) {
	t.Helper()
	for range 20 {
		uid := r.create(t, "shop", token, "probe", 1)
		m, ok := ws.within(time.Second)
		if !ok {
			continue
		}
		if got := ws.describe(m); got != "CREATE probe" {
			t.Fatalf("probe: %q", got)
		}
		r.post(t, "shop", token, deleteDoc, map[string]any{"uid": uid})
		if got := ws.event("1"); got != "DELETE " {
			t.Fatalf("probe deleted: %q", got)
		}
		return
	}
	t.Fatal("the subscription saw none of 20 writes")
}

// settle waits until no goroutine runs the API's code: every connection's and
// subscription's goroutines end with them.
func settle(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 1<<20)
	for {
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "platform/gql.") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines of the API left after every client closed:\n%s", stacks)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWebSocketProtocolErrors: every graphql-transport-ws close code, and the answers
// before the upgrade.
func TestWebSocketProtocolErrors(t *testing.T) {
	d := newLiveDeployment(t, "")
	r := d.replica(tenant.RealtimeLimits{Realtime: gql.Realtime{InitTimeout: 300 * time.Millisecond, MaxSubscriptions: 2, MaxMessageBytes: 1024}})
	d.project(r, "shop", "authenticated")
	token := d.token("shop", "alice", time.Hour)
	init := map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}}
	sub := map[string]any{"type": "subscribe", "id": "1", "payload": map[string]any{"query": productSub}}
	cases := []struct {
		name   string
		send   []any
		code   websocket.StatusCode
		reason string
	}{
		{"not JSON", []any{"{"}, 4400, "Invalid message"},
		{"no type", []any{map[string]any{"id": "1"}}, 4400, "Invalid message"},
		{"unknown type", []any{map[string]any{"type": "start"}}, 4400, "unknown type"},
		{"subscribe without id", []any{init, map[string]any{"type": "subscribe", "payload": map[string]any{"query": productSub}}}, 4400, "needs an id"},
		{"subscribe before init", []any{sub}, 4401, "Unauthorized"},
		{"bad token", []any{map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer nope"}}}, 4403, "Forbidden: malformed token"},
		{"no token", []any{map[string]any{"type": "connection_init"}}, 4403, "Forbidden: a bearer token is required"},
		{"payload not an object", []any{map[string]any{"type": "connection_init", "payload": "x"}}, 4400, "payload must be an object"},
		{"no init in time", nil, 4408, "Connection initialisation timeout"},
		{"duplicate id", []any{init, sub, sub}, 4409, "Subscriber for 1 already exists"},
		{"two inits", []any{init, init}, 4429, "Too many initialisation requests"},
		{"message too large", []any{init, map[string]any{"type": "subscribe", "id": "1", "payload": map[string]any{"query": strings.Repeat(" ", 2048) + productSub}}}, websocket.StatusMessageTooBig, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, _, err := r.dial(t, "shop", nil, "graphql-transport-ws")
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range tc.send {
				if s, ok := m.(string); ok {
					_ = ws.c.Write(t.Context(), websocket.MessageText, []byte(s))
					continue
				}
				ws.send(m)
			}
			code, reason := ws.closed()
			if code != tc.code || !strings.Contains(reason, tc.reason) {
				t.Errorf("closed with %d %q, want %d %q", code, reason, tc.code, tc.reason)
			}
		})
	}

	// A token that cannot be checked now, the project's identity provider being unreachable,
	// is no reason to give up: Try Again Later (1013), which graphql-ws clients retry, with
	// when; an HTTP request is answered 503 with Retry-After. (Before, 4403 Forbidden.)
	t.Run("identity provider unreachable", func(t *testing.T) {
		jwks := d.jwks
		d.jwks = "http://127.0.0.1:1/.well-known/jwks.json"
		d.project(r, "down", "authenticated")
		d.jwks = jwks
		ws, _, err := r.dial(t, "down", nil, "graphql-transport-ws")
		if err != nil {
			t.Fatal(err)
		}
		ws.send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + d.token("down", "alice", time.Hour)}})
		if code, reason := ws.closed(); code != 1013 || !strings.HasPrefix(reason, "Try again in ") || !strings.Contains(reason, "JWKS") {
			t.Errorf("closed with %d %q, want 1013 Try again in ...", code, reason)
		}
	})

	t.Run("no subprotocol", func(t *testing.T) {
		ws, _, err := r.dial(t, "shop", nil)
		if err != nil {
			t.Fatal(err)
		}
		if code, _ := ws.closed(); code != 4406 {
			t.Errorf("closed with %d, want 4406", code)
		}
	})
	for origin, want := range map[string]int{
		"https://app.example":                       http.StatusSwitchingProtocols,
		"https://evil.example":                      http.StatusForbidden,
		"http://shop.platform.test:" + port(r.addr): http.StatusSwitchingProtocols,
	} {
		t.Run("origin "+origin, func(t *testing.T) {
			_, resp, _ := r.dial(t, "shop", http.Header{"Origin": {origin}}, "graphql-transport-ws")
			if resp == nil || resp.StatusCode != want {
				t.Errorf("status %v, want %d", resp, want)
			}
		})
	}

	t.Run("errors of one subscription", func(t *testing.T) {
		ws := r.connect(t, "shop", token)
		for i, tc := range []struct{ query, want string }{
			{`subscription { products { nope } }`, "GRAPHQL_VALIDATION_FAILED"},
			{`subscription { products(where: {price: {lt: "x"}}) { uid } }`, "GRAPHQL_VALIDATION_FAILED"},
			{`subscription { products(where: {nope: {eq: 1}}) { uid } }`, "GRAPHQL_VALIDATION_FAILED"},
			{`{ products { uid } }`, "GRAPHQL_VALIDATION_FAILED"},
			{`subscription { products { uid } __typename }`, "GRAPHQL_VALIDATION_FAILED"},
		} {
			id := fmt.Sprint(i)
			ws.subscribe(id, tc.query, nil)
			m := ws.read()
			var errs []struct {
				Message    string
				Extensions map[string]any
			}
			_ = json.Unmarshal(m.Payload, &errs)
			if m.Type != "error" || m.ID != id || len(errs) == 0 || errs[0].Extensions["code"] != tc.want {
				t.Errorf("%s: %+v %s, want error %s", tc.query, m, m.Payload, tc.want)
			}
		}
		// Two subscriptions at most: the third is refused, the connection stays.
		ws.subscribe("a", productSub, nil)
		ws.subscribe("b", productSub, nil)
		ws.subscribe("c", productSub, nil)
		if m := ws.read(); m.Type != "error" || m.ID != "c" || !strings.Contains(string(m.Payload), "runs 2 subscriptions") {
			t.Errorf("third subscription: %+v %s", m, m.Payload)
		}
	})
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// TestTokenExpiryEndsSubscriptions: a token that expires closes the WebSocket with 4403
// and ends an event stream with an error.
func TestTokenExpiryEndsSubscriptions(t *testing.T) {
	d := newLiveDeployment(t, "")
	r := d.replica(tenant.RealtimeLimits{})
	d.project(r, "shop", "authenticated")
	token := d.token("shop", "alice", 2*time.Second)
	ws := r.connect(t, "shop", token)
	ws.subscribe("1", productSub, nil)
	stream := r.sse(t, "shop", token, productSub)
	if code, reason := ws.closed(); code != 4403 || !strings.Contains(reason, "expired") {
		t.Errorf("websocket closed with %d %q, want 4403 token expired", code, reason)
	}
	if got := stream.next(t); !strings.Contains(got, "expired") {
		t.Errorf("event stream: %s, want the expiry error", got)
	}
	if ev := stream.event(t); ev.name != "complete" {
		t.Errorf("after the error: %+v, want complete", ev)
	}
}

// sseStream is one graphql-sse subscription.
type sseStream struct {
	body io.ReadCloser
	rd   *bufio.Reader
}

type sseEvent struct{ name, data string }

// sse opens a subscription over Server-Sent Events.
func (r *replica) sse(t *testing.T, project, token, query string) *sseStream {
	t.Helper()
	return sseAt(t, r.addr, "http://"+project+".platform.test/api/v1/graphql", token, query, nil)
}

// sseAt opens a subscription over Server-Sent Events at rawURL on the server listening at
// addr, whatever rawURL's host, with the headers.
func sseAt(t *testing.T, addr, rawURL, token, query string, header http.Header) *sseStream {
	t.Helper()
	body := mustMarshal(t, map[string]any{"query": query})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	host := u.Host
	u.Host = addr
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("event stream: %d %s", resp.StatusCode, b)
	}
	return &sseStream{body: resp.Body, rd: bufio.NewReader(resp.Body)}
}

func (s *sseStream) event(t *testing.T) sseEvent {
	t.Helper()
	var ev sseEvent
	for {
		line, err := s.rd.ReadString('\n')
		if err != nil {
			t.Fatalf("read event stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && ev.name != "":
			return ev
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
}

func (s *sseStream) next(t *testing.T) string {
	t.Helper()
	ev := s.event(t)
	if ev.name != "next" {
		t.Fatalf("want a next event, got %+v", ev)
	}
	return ev.data
}

// TestSubscriptionsOverSSE: graphql-sse's distinct connections mode delivers the same
// events, under the same rules, and refuses what cannot run before streaming.
func TestSubscriptionsOverSSE(t *testing.T) {
	d := newLiveDeployment(t, "")
	r := d.replica(tenant.RealtimeLimits{})
	d.project(r, "shop", "owner")
	alice, bob := d.token("shop", "alice", time.Hour), d.token("shop", "bob", time.Hour)
	aliceStream := r.sse(t, "shop", alice, productSub)
	bobStream := r.sse(t, "shop", bob, productSub)
	r.create(t, "shop", alice, "tea", 5)
	if got := aliceStream.next(t); !strings.Contains(got, `"op":"CREATE"`) || !strings.Contains(got, `"name":"tea"`) {
		t.Errorf("alice: %s", got)
	}
	r.create(t, "shop", bob, "mate", 4)
	if got := bobStream.next(t); !strings.Contains(got, `"name":"mate"`) {
		t.Errorf("bob's first event: %s, want his own mate (owner rule)", got)
	}

	for _, tc := range []struct {
		name, token, query string
		status             int
	}{
		{"no token", "", productSub, http.StatusUnauthorized},
		{"bad token", "nope", productSub, http.StatusUnauthorized},
		{"invalid document", alice, `subscription { products { nope } }`, http.StatusBadRequest},
		{"a query", alice, `{ products { uid } }`, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, r.url+"/api/v1/graphql", strings.NewReader(mustMarshal(t, map[string]any{"query": tc.query})))
			req.Host = "shop.platform.test"
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "text/event-stream")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.Contains(string(b), `"errors"`) {
				t.Errorf("%d %s, want %d with errors", resp.StatusCode, b, tc.status)
			}
		})
	}
}

// TestRedisLostEndsSubscriptions: a replica whose Redis goes away tells its subscribers
// with an error instead of going silent.
func TestRedisLostEndsSubscriptions(t *testing.T) {
	m := miniredis.RunT(t)
	d := newLiveDeployment(t, "redis://"+m.Addr())
	r := d.replica(tenant.RealtimeLimits{})
	d.project(r, "shop", "authenticated")
	token := d.token("shop", "alice", time.Hour)
	ws := r.connect(t, "shop", token)
	ws.subscribe("1", productSub, nil)
	stream := r.sse(t, "shop", token, productSub)
	r.create(t, "shop", token, "tea", 5)
	if got := ws.event("1"); got != "CREATE tea" {
		t.Fatalf("before: %q", got)
	}
	if got := stream.next(t); !strings.Contains(got, "tea") {
		t.Fatalf("before: %s", got)
	}
	m.Close()
	if msg := ws.read(); msg.Type != "error" || !strings.Contains(string(msg.Payload), "Redis was lost") {
		t.Errorf("websocket after Redis went away: %+v %s", msg, msg.Payload)
	}
	if got := stream.next(t); !strings.Contains(got, "Redis was lost") {
		t.Errorf("event stream after Redis went away: %s", got)
	}
}

// TestConnectionLimits: connections per client address are bounded, answered 429 before
// the upgrade.
func TestConnectionLimits(t *testing.T) {
	d := newLiveDeployment(t, "")
	r := d.replica(tenant.RealtimeLimits{MaxConnsPerIP: 2})
	d.project(r, "shop", "authenticated")
	token := d.token("shop", "alice", time.Hour)
	first := r.connect(t, "shop", token)
	r.connect(t, "shop", token)
	if _, resp, err := r.dial(t, "shop", nil, "graphql-transport-ws"); err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("third connection: %v %v, want 429", resp, err)
	}
	_ = first.c.Close(websocket.StatusNormalClosure, "")
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, _, err := r.dial(t, "shop", nil, "graphql-transport-ws")
		if err == nil {
			break // two connections again, until its init times out
		}
		if time.Now().After(deadline) {
			t.Fatalf("after closing one, a new connection is still refused: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Without a trusted proxy a client cannot leave its count by writing X-Forwarded-For.
	forwardedFor := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	if _, resp, err := r.dial(t, "shop", forwardedFor("203.0.113.9"), "graphql-transport-ws"); err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a third connection naming another address: %v %v, want 429", resp, err)
	}

	// Behind a trusted proxy each forwarded address has its own count.
	d.trustedProxies = []string{"127.0.0.1", "::1"}
	p := d.replica(tenant.RealtimeLimits{MaxConnsPerIP: 1})
	d.project(p, "shop", "authenticated")
	if _, _, err := p.dial(t, "shop", forwardedFor("203.0.113.1"), "graphql-transport-ws"); err != nil {
		t.Fatalf("first client behind the proxy: %v", err)
	}
	if _, resp, err := p.dial(t, "shop", forwardedFor("203.0.113.1"), "graphql-transport-ws"); err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("first client's second connection: %v %v, want 429", resp, err)
	}
	if _, _, err := p.dial(t, "shop", forwardedFor("203.0.113.2"), "graphql-transport-ws"); err != nil {
		t.Errorf("another client behind the proxy: %v", err)
	}
}

// TestProjectConnectionLimit: one project's connections on a replica are bounded, whatever
// their addresses, and another project's are counted apart.
func TestProjectConnectionLimit(t *testing.T) {
	d := newLiveDeployment(t, "")
	r := d.replica(tenant.RealtimeLimits{MaxConnsPerProject: 1})
	d.project(r, "shop", "authenticated")
	d.project(r, "other", "authenticated")
	if _, _, err := r.dial(t, "shop", nil, "graphql-transport-ws"); err != nil {
		t.Fatalf("first connection: %v", err)
	}
	if _, resp, err := r.dial(t, "shop", nil, "graphql-transport-ws"); err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("second connection to the project: %v %v, want 429", resp, err)
	}
	if _, _, err := r.dial(t, "other", nil, "graphql-transport-ws"); err != nil {
		t.Errorf("a connection to another project: %v", err)
	}
}

// TestRealtimeMetrics: connections and subscriptions are gauges that come back down, events
// delivered a counter.
func TestRealtimeMetrics(t *testing.T) {
	metrics := prometheus.NewRegistry()
	d := newLiveDeployment(t, "")
	r := d.replicaWith(tenant.Options{Registerer: metrics})
	d.project(r, "shop", "authenticated")
	token := d.token("shop", "alice", time.Hour)
	ws := r.connect(t, "shop", token)
	ws.subscribe("1", productSub, nil)
	waitRunning(t, r, token, ws)
	stream := r.sse(t, "shop", token, productSub)
	r.create(t, "shop", token, "tea", 5)
	ws.event("1")
	stream.next(t)
	// An event is counted once its write returned, which may be just after the client has it.
	for deadline := time.Now().Add(5 * time.Second); metricValue(t, metrics, "platform_realtime_events_total", "delivered") < 4 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	for _, tc := range []struct {
		name, label string
		want        float64
	}{
		{"platform_realtime_connections", "websocket", 1},
		{"platform_realtime_connections", "sse", 1},
		{"platform_realtime_subscriptions", "websocket", 1},
		{"platform_realtime_subscriptions", "sse", 1},
		// The probe, its deletion and tea to the WebSocket; tea to the stream.
		{"platform_realtime_events_total", "delivered", 4},
	} {
		if got := metricValue(t, metrics, tc.name, tc.label); got != tc.want {
			t.Errorf("%s{%s} = %v, want %v", tc.name, tc.label, got, tc.want)
		}
	}
	_ = ws.c.Close(websocket.StatusNormalClosure, "")
	_ = stream.body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for metricValue(t, metrics, "platform_realtime_connections", "websocket")+metricValue(t, metrics, "platform_realtime_subscriptions", "sse") > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the gauges did not come back to 0 after the clients left")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// metricValue is the value of the series of name whose one label has the value label.
func metricValue(t *testing.T, g prometheus.Gatherer, name, label string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == label {
				if m.GetGauge() != nil {
					return m.GetGauge().GetValue()
				}
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestBatchWritesReachSubscribers: createproducts, updateproducts and deleteproducts tell
// subscribers of each record they wrote, as single writes do, leaving-the-view included.
func TestBatchWritesReachSubscribers(t *testing.T) {
	d := newLiveDeployment(t, redisForReplicas(t))
	a, b := d.replica(tenant.RealtimeLimits{}), d.replica(tenant.RealtimeLimits{})
	d.project(a, "shop", "owner")
	alice := d.token("shop", "alice", time.Hour)
	ws := b.connect(t, "shop", alice)
	ws.subscribe("1", productSub, nil)
	ws.subscribe("cheap", productSub, map[string]any{"where": map[string]any{"price": map[string]any{"lt": 10}}})
	// Both subscriptions run once probes reached both; the probes' events are drained.
	seen := map[string]int{}
	for i := 0; i < 20 && (seen["1"] == 0 || seen["cheap"] == 0); i++ {
		uid := a.create(t, "shop", alice, "probe", 1)
		a.post(t, "shop", alice, deleteDoc, map[string]any{"uid": uid})
		for {
			m, ok := ws.within(time.Second)
			if !ok {
				break
			}
			seen[m.ID]++
		}
	}
	if seen["1"] == 0 || seen["cheap"] == 0 {
		t.Fatalf("the subscriptions saw %v of 20 probes", seen)
	}

	a.post(t, "shop", alice, `mutation ($data: [productInput!]!) { createproducts(data: $data) { uid } }`,
		map[string]any{"data": []any{map[string]any{"name": "tea", "price": 5.0}, map[string]any{"name": "cake", "price": 20.0}}})
	a.post(t, "shop", alice, `mutation { updateproducts(where: {name: {eq: "tea"}}, data: {price: 12}) }`, nil)
	a.post(t, "shop", alice, `mutation { deleteproducts(where: {price: {gt: 0}}) }`, nil)
	want := map[string][]string{
		"1":     {"CREATE tea", "CREATE cake", "UPDATE tea", "DELETE ", "DELETE "},
		"cheap": {"CREATE tea", "DELETE "},
	}
	if got := ws.events(7); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("subscribers saw %q, want %q", got, want)
	}
	_ = ws.c.Close(websocket.StatusNormalClosure, "")
	settle(t)
}

// TestSlowSubscriberIsDropped: a subscriber that stops reading is ended once its queue is
// full, counted as dropped, and never buffered without bound; the project's other
// subscribers go on.
func TestSlowSubscriberIsDropped(t *testing.T) {
	metrics := prometheus.NewRegistry()
	d := newLiveDeployment(t, "")
	r := d.replicaWith(tenant.Options{Registerer: metrics, Realtime: tenant.RealtimeLimits{Realtime: gql.Realtime{Queue: 8}}})
	d.project(r, "shop", "authenticated")
	token := d.token("shop", "alice", time.Hour)
	slow := r.connect(t, "shop", token)
	slow.subscribe("1", productSub, nil)
	waitRunning(t, r, token, slow)
	// From here the slow client reads no more: its reader fills its 16 messages, then the
	// socket's buffers, then the subscription's queue of 8.
	batch := make([]any, 1000)
	for i := range batch {
		batch[i] = map[string]any{"name": "bulk", "price": 1.0}
	}
	dropped := func() float64 { return metricValue(t, metrics, "platform_realtime_events_total", "dropped") }
	for i := 0; i < 100 && dropped() == 0; i++ {
		r.post(t, "shop", token, `mutation ($data: [productInput!]!) { createproducts(data: $data) { uid } }`, map[string]any{"data": batch})
	}
	if dropped() == 0 {
		t.Fatal("a subscriber that stopped reading was never dropped")
	}

	fresh := r.connect(t, "shop", token)
	fresh.subscribe("1", productSub, nil)
	waitRunning(t, r, token, fresh)
	_ = fresh.c.Close(websocket.StatusNormalClosure, "")
	_ = slow.c.CloseNow()
	settle(t)
}
