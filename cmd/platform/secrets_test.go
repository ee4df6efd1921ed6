package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"
)

// TestNoSecretInLogs runs the binary at debug level through every door a secret comes in by
// (the admin API, the console's sign-in, GraphQL over HTTP, WebSocket and SSE, MCP), with
// answers from 2xx to 5xx, and then reads everything it logged: no line may hold a token it
// was sent, the admin token, or a session cookie.
func TestNoSecretInLogs(t *testing.T) {
	// The project's identity provider, and one that fails (its projects answer 503).
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwk, err := jwkset.NewJWKFromKey(key.Public(), jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: "k1", ALG: jwkset.AlgES256, USE: jwkset.UseSig}})
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := json.Marshal(jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{jwk.Marshal()}})
	if err != nil {
		t.Fatal(err)
	}
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	}))
	t.Cleanup(idp.Close)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	t.Cleanup(down.Close)

	s := startServer(t, t.TempDir(), "PLATFORM_LOG_LEVEL=debug")
	var secrets []string
	// keep notes a secret the run used, to look for in the log at the end.
	keep := func(secret string) string {
		secrets = append(secrets, secret)
		return secret
	}
	keep(s.token)
	mint := func(audience string, change func(c jwt.MapClaims, h map[string]any)) string {
		now := time.Now()
		claims := jwt.MapClaims{"iss": idp.URL + "/", "aud": audience, "sub": "alice", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
		tok.Header["kid"] = "k1"
		if change != nil {
			change(claims, tok.Header)
		}
		signed, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return keep(signed)
	}

	// The admin API: right, wrong and missing tokens, a token in the address, documents
	// good and bad.
	project := func(id, jwksURL string) []byte {
		return fmt.Appendf(nil, `{"id":%q,"auth":{"jwksURL":%q,"issuer":%q,"audience":%q},
			"tables":{"notes":{"fields":{"name":{"type":"String"}},"access":{"read":"authenticated","create":"authenticated"}}}}`,
			id, jwksURL, idp.URL+"/", id)
	}
	for _, tc := range []struct {
		method, path, token string
		body                []byte
		want                int
	}{
		{"PUT", "/admin/v1/projects/secrets", s.token, project("secrets", idp.URL), http.StatusCreated},
		{"PUT", "/admin/v1/projects/broken", s.token, project("broken", down.URL), http.StatusCreated},
		{"PUT", "/admin/v1/projects/bad", s.token, []byte(`{"id":"bad","tables":{"t":{"fields":{"x":{"type":"Nope"}}}}}`), http.StatusBadRequest},
		{"GET", "/admin/v1/projects", s.token, nil, http.StatusOK},
		{"GET", "/admin/v1/projects/nope", s.token, nil, http.StatusNotFound},
		{"GET", "/admin/v1/projects", keep("wrong-admin-token-guess"), nil, http.StatusUnauthorized},
		{"GET", "/admin/v1/projects?token=" + url.QueryEscape(s.token), "", nil, http.StatusBadRequest},
		{"GET", "/admin/v1/projects?access_token=" + url.QueryEscape(s.token), s.token, nil, http.StatusBadRequest},
	} {
		if st, body := s.do(tc.method, "localhost", tc.path, tc.token, tc.body); st != tc.want {
			t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.path, st, tc.want, body)
		}
	}

	// The console: the sign-in form, refused with the token in the address, a session
	// cookie and its CSRF token, and a page that is not there.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	consoleReq := func(method, path string, form url.Values, cookie *http.Cookie) *http.Response {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequest(method, "http://"+s.addr+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "localhost"
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := consoleReq("POST", "/console/login?token="+url.QueryEscape(s.token), nil, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || len(resp.Cookies()) != 0 {
		t.Errorf("console sign-in with the token in the address: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	resp = consoleReq("POST", "/console/login", url.Values{"token": {"wrong-console-guess"}}, nil)
	resp.Body.Close()
	keep("wrong-console-guess")
	resp = consoleReq("POST", "/console/login", url.Values{"token": {s.token}}, nil)
	resp.Body.Close()
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "platform_console" {
			session = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || session == nil {
		t.Fatalf("console sign-in: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	keep(session.Value)
	resp = consoleReq("GET", "/console/", nil, session)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindSubmatch(page); m != nil {
		keep(string(m[1]))
	} else {
		t.Errorf("no CSRF token on the signed-in page: %d %s", resp.StatusCode, page)
	}
	resp = consoleReq("GET", "/console/projects/nope", nil, session)
	resp.Body.Close()

	// GraphQL over HTTP: a good token, an expired one, another project's, one with crit, a
	// token in the address of a project whose identity provider fails (503, logged as an
	// error with its address).
	gql := func(project, token, query string) int {
		t.Helper()
		st, body := s.do("POST", project+".localhost", "/api/v1/graphql", token, []byte(fmt.Sprintf(`{"query":%q}`, query)))
		if st == http.StatusOK && strings.Contains(string(body), `"errors"`) && !strings.Contains(query, "nosuchfield") {
			t.Errorf("%s on %s: %s", query, project, body)
		}
		return st
	}
	good := mint("secrets", nil)
	for _, tc := range []struct {
		name, project, token, query string
		want                        int
	}{
		{"create", "secrets", good, `mutation { createNote(data: {name: "n"}) { uid } }`, http.StatusOK},
		{"read", "secrets", good, `{ notes { uid name } }`, http.StatusOK},
		{"invalid query", "secrets", good, `{ notes { nosuchfield } }`, http.StatusOK},
		{"expired", "secrets", mint("secrets", func(c jwt.MapClaims, _ map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() }), `{ notes { uid } }`, http.StatusUnauthorized},
		{"wrong audience", "secrets", mint("broken", nil), `{ notes { uid } }`, http.StatusUnauthorized},
		{"crit", "secrets", mint("secrets", func(_ jwt.MapClaims, h map[string]any) { h["crit"] = []string{"x"}; h["x"] = 1 }), `{ notes { uid } }`, http.StatusUnauthorized},
		{"not a JWT", "secrets", keep("opaque-token-value"), `{ notes { uid } }`, http.StatusUnauthorized},
		{"identity provider down", "broken", mint("broken", nil), `{ notes { uid } }`, http.StatusServiceUnavailable},
	} {
		if st := gql(tc.project, tc.token, tc.query); st != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, st, tc.want)
		}
	}
	inAddress := mint("broken", nil)
	st, body := s.do("GET", "broken.localhost", "/api/v1/graphql?query="+url.QueryEscape("{ notes { uid } }")+"&access_token="+inAddress, inAddress, nil)
	if st != http.StatusServiceUnavailable {
		t.Errorf("GET with a token in the address, identity provider down: %d %s", st, body)
	}

	// WebSocket: the token travels in connection_init.
	_, port, _ := net.SplitHostPort(s.addr)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	dialer := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, s.addr)
	}}}
	for _, token := range []string{mint("secrets", nil), mint("secrets", func(c jwt.MapClaims, _ map[string]any) { c["aud"] = "other" })} {
		ws, _, err := websocket.Dial(ctx, "ws://secrets.localhost:"+port+"/api/v1/graphql", &websocket.DialOptions{HTTPClient: dialer, Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{
			fmt.Sprintf(`{"type":"connection_init","payload":{"Authorization":"Bearer %s"}}`, token),
			`{"type":"subscribe","id":"1","payload":{"query":"subscription { notes { uid } }"}}`,
		} {
			if err := ws.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
				break
			}
		}
		_, _, _ = ws.Read(ctx) // connection_ack, or the close that refuses the token
		_ = ws.Close(websocket.StatusNormalClosure, "")
	}

	// SSE: a subscription over an event stream, with a bearer token.
	sseCtx, stopSSE := context.WithTimeout(t.Context(), 10*time.Second)
	req, err := http.NewRequestWithContext(sseCtx, "POST", "http://"+s.addr+"/api/v1/graphql", strings.NewReader(`{"query":"subscription { notes { uid } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "secrets.localhost"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+mint("secrets", nil))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("event stream: %d", resp.StatusCode)
	}
	// A record created now reaches the stream.
	gql("secrets", good, `mutation { createNote(data: {name: "m"}) { uid } }`)
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || line == "" {
		t.Errorf("event stream: %q %v", line, err)
	}
	stopSSE()
	resp.Body.Close()

	// MCP, whose callers send no token, but might.
	for _, path := range []string{"/mcp", "/mcp?token=" + keep("mcp-token-in-address")} {
		resp, body := s.send("POST", "localhost", path, map[string]string{
			"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Authorization": "Bearer " + keep("mcp-bearer-"+fmt.Sprint(len(path))),
		}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"no_such_tool"}}`)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("MCP call %s: %d %s", path, resp.StatusCode, body)
		}
	}

	s.stop()
	log := s.logText()
	for _, secret := range secrets {
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, secret) {
				t.Errorf("a secret (%.12s...) is in the log: %s", secret, line)
			}
		}
	}
	// The lines that would have held them were written.
	for _, want := range []string{`level=DEBUG msg=request method=POST host=localhost uri="/console/login?token=REDACTED"`, `level=ERROR msg=request method=GET host=broken.localhost`} {
		if !strings.Contains(log, want) {
			t.Errorf("no line with %q in the log:\n%s", want, log)
		}
	}
}
