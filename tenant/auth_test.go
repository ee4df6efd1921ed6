package tenant_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/platform-dev/platform/tenant"
)

// idp is an identity provider: signing keys and an httptest server publishing their JWKS.
type idp struct {
	t       testing.TB
	srv     *httptest.Server
	issuer  string
	jwks    atomic.Pointer[[]byte]
	down    atomic.Bool
	fetches atomic.Int64
}

type signer struct {
	kid    string
	method jwt.SigningMethod
	key    crypto.Signer
}

func newIDP(t testing.TB) *idp {
	t.Helper()
	p := &idp{t: t}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.fetches.Add(1)
		if p.down.Load() {
			http.Error(w, "down for maintenance", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*p.jwks.Load())
	}))
	t.Cleanup(p.srv.Close)
	p.issuer = p.srv.URL + "/"
	p.publish()
	return p
}

func (p *idp) jwksURL() string { return p.srv.URL + "/.well-known/jwks.json" }

// publish replaces the JWKS with the public keys of signers.
func (p *idp) publish(signers ...signer) {
	p.t.Helper()
	set := jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{}}
	for _, s := range signers {
		jwk, err := jwkset.NewJWKFromKey(s.key.Public(), jwkset.JWKOptions{
			Metadata: jwkset.JWKMetadataOptions{KID: s.kid, ALG: jwkset.ALG(s.method.Alg()), USE: jwkset.UseSig},
		})
		if err != nil {
			p.t.Fatal(err)
		}
		set.Keys = append(set.Keys, jwk.Marshal())
	}
	js, err := json.Marshal(set)
	if err != nil {
		p.t.Fatal(err)
	}
	p.jwks.Store(&js)
}

func (p *idp) auth(audience string) *tenant.Auth {
	return &tenant.Auth{JWKSURL: p.jwksURL(), Issuer: p.issuer, Audience: audience}
}

// claims are the claims of a valid token for audience, adjusted by change.
func (p *idp) claims(audience string) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{
		"iss": p.issuer, "aud": audience, "sub": "alice",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
}

func sign(t testing.TB, s signer, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(s.method, claims)
	tok.Header["kid"] = s.kid
	str, err := tok.SignedString(s.key)
	if err != nil {
		t.Fatal(err)
	}
	return str
}

func rsaSigner(t testing.TB, kid string, method jwt.SigningMethod) signer {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid: kid, method: method, key: k}
}

func ecSigner(t testing.TB, kid string) signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid: kid, method: jwt.SigningMethodES256, key: k}
}

func edSigner(t testing.TB, kid string) signer {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid: kid, method: jwt.SigningMethodEdDSA, key: k}
}

// passed stands for a project's API behind Protect.
var passed = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	fmt.Fprint(w, "passed")
})

func rulesOf(t testing.TB, a tenant.Access) *tenant.Rules {
	t.Helper()
	rules, err := tenant.CompileAccess(map[string]tenant.TableDoc{
		"products": {Fields: map[string]tenant.FieldDoc{"name": {Type: "String"}}, Access: a},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// project serves one project's API behind Protect.
func project(t *testing.T, v *tenant.Verifier, rules *tenant.Rules) *httptest.Server {
	srv := httptest.NewServer(tenant.Protect(v, rules, passed))
	t.Cleanup(srv.Close)
	return srv
}

type answer struct {
	status int
	code   string
	reason string
	body   string
	// message is the error message, or the body of a request that passed.
	message string
}

func call(t *testing.T, url, authorization string) answer {
	t.Helper()
	a, _ := callHeader(t, url, authorization)
	return a
}

// callHeader is call, and the answer's header.
func callHeader(t *testing.T, url, authorization string) (answer, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"query":"{ products { uid } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, body: mustRead(t, resp)}
	a.message = a.body
	if resp.StatusCode != http.StatusOK {
		var body tenant.ErrorBody
		if err := json.Unmarshal([]byte(a.body), &body); err != nil || len(body.Errors) != 1 {
			t.Fatalf("error body %q: %v", a.body, err)
		}
		a.code, _ = body.Errors[0].Extensions["code"].(string)
		a.reason, _ = body.Errors[0].Extensions["reason"].(string)
		a.message = body.Errors[0].Message
		if resp.StatusCode == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
			t.Errorf("401 without a Bearer challenge: %q", resp.Header.Get("WWW-Authenticate"))
		}
	}
	return a, resp.Header
}

func mustRead(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestVerification(t *testing.T) {
	p := newIDP(t)
	rs256 := rsaSigner(t, "rsa-1", jwt.SigningMethodRS256)
	ps256 := signer{kid: "rsa-pss", method: jwt.SigningMethodPS256, key: rs256.key}
	es256 := ecSigner(t, "ec-1")
	eddsa := edSigner(t, "ed-1")
	p.publish(rs256, ps256, es256, eddsa)
	impostor := ecSigner(t, "ec-1") // same kid, another key

	vs := tenant.NewVerifiers(tenant.VerifierConfig{Leeway: 30 * time.Second})
	t.Cleanup(vs.Close)
	srv := project(t, vs.For("shop", p.auth("shop")), rulesOf(t, tenant.Access{}))

	pubDER, err := x509.MarshalPKIXPublicKey(rs256.key.Public())
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	hmacWithPublicKey := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, p.claims("shop"))
		tok.Header["kid"] = "rsa-1"
		s, err := tok.SignedString(pubPEM)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	algNone := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, p.claims("shop"))
		tok.Header["kid"] = "rsa-1"
		s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	with := func(change func(c jwt.MapClaims)) jwt.MapClaims {
		c := p.claims("shop")
		change(c)
		return c
	}
	now := time.Now()
	cases := []struct {
		name, header string
		status       int
		code, reason string
		inMessage    string
	}{
		{name: "RS256", header: "Bearer " + sign(t, rs256, p.claims("shop")), status: 200},
		{name: "PS256", header: "Bearer " + sign(t, ps256, p.claims("shop")), status: 200},
		{name: "ES256", header: "Bearer " + sign(t, es256, p.claims("shop")), status: 200},
		{name: "EdDSA", header: "Bearer " + sign(t, eddsa, p.claims("shop")), status: 200},
		{name: "scheme in lower case", header: "bearer " + sign(t, es256, p.claims("shop")), status: 200},
		{name: "audience among several", header: "Bearer " + sign(t, es256, with(func(c jwt.MapClaims) { c["aud"] = []string{"other", "shop"} })), status: 200},
		{name: "expired within the leeway", header: "Bearer " + sign(t, es256, with(func(c jwt.MapClaims) { c["exp"] = now.Add(-10 * time.Second).Unix() })), status: 200},
		{name: "expired", header: "Bearer " + sign(t, rs256, with(func(c jwt.MapClaims) { c["exp"] = now.Add(-2 * time.Minute).Unix() })), status: 401, code: "UNAUTHENTICATED", reason: "expired", inMessage: "token expired"},
		{name: "not yet valid", header: "Bearer " + sign(t, rs256, with(func(c jwt.MapClaims) { c["nbf"] = now.Add(5 * time.Minute).Unix() })), status: 401, code: "UNAUTHENTICATED", reason: "not_yet_valid", inMessage: "nbf"},
		{name: "issued in the future", header: "Bearer " + sign(t, rs256, with(func(c jwt.MapClaims) { c["iat"] = now.Add(5 * time.Minute).Unix() })), status: 401, code: "UNAUTHENTICATED", reason: "not_yet_valid", inMessage: "iat"},
		{name: "wrong issuer", header: "Bearer " + sign(t, es256, with(func(c jwt.MapClaims) { c["iss"] = "https://evil.example/" })), status: 401, code: "UNAUTHENTICATED", reason: "wrong_issuer", inMessage: "wrong issuer"},
		{name: "wrong audience", header: "Bearer " + sign(t, es256, with(func(c jwt.MapClaims) { c["aud"] = "other" })), status: 401, code: "UNAUTHENTICATED", reason: "wrong_audience", inMessage: `"shop"`},
		{name: "no expiry", header: "Bearer " + sign(t, es256, with(func(c jwt.MapClaims) { delete(c, "exp") })), status: 401, code: "UNAUTHENTICATED", reason: "missing_claim", inMessage: "exp"},
		{name: "no subject", header: "Bearer " + sign(t, es256, with(func(c jwt.MapClaims) { delete(c, "sub") })), status: 401, code: "UNAUTHENTICATED", reason: "missing_claim", inMessage: "sub"},
		{name: "alg none", header: "Bearer " + algNone(), status: 401, code: "UNAUTHENTICATED", reason: "disallowed_algorithm", inMessage: `"none"`},
		{name: "HS256 signed with the public key", header: "Bearer " + hmacWithPublicKey(), status: 401, code: "UNAUTHENTICATED", reason: "disallowed_algorithm", inMessage: `"HS256"`},
		{name: "bad signature", header: "Bearer " + sign(t, impostor, p.claims("shop")), status: 401, code: "UNAUTHENTICATED", reason: "bad_signature"},
		{name: "malformed", header: "Bearer not.a-token", status: 401, code: "UNAUTHENTICATED", reason: "malformed"},
		{name: "two segments", header: "Bearer abc.def", status: 401, code: "UNAUTHENTICATED", reason: "malformed"},
		{name: "not bearer", header: "Basic YWxpY2U6c2VjcmV0", status: 401, code: "UNAUTHENTICATED", reason: "malformed"},
		{name: "oversized", header: "Bearer " + strings.Repeat("a", tenant.MaxTokenBytes+1), status: 401, code: "UNAUTHENTICATED", reason: "malformed"},
		{name: "no token where one is needed", status: 401, code: "UNAUTHENTICATED", reason: "no_token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := call(t, srv.URL, tc.header)
			if a.status != tc.status || a.code != tc.code || a.reason != tc.reason {
				t.Fatalf("got %d %s %s (%s), want %d %s %s", a.status, a.code, a.reason, a.body, tc.status, tc.code, tc.reason)
			}
			if tc.status == 200 && a.body != "passed" {
				t.Errorf("body %q, want the API's answer", a.body)
			}
			if !strings.Contains(a.message, tc.inMessage) {
				t.Errorf("message %q does not say %q", a.message, tc.inMessage)
			}
			if _, token, _ := strings.Cut(tc.header, " "); len(token) > 20 && strings.Contains(a.body, token[len(token)-20:]) {
				t.Errorf("the answer echoes the token: %s", a.body)
			}
		})
	}
}

func TestAnonymousCallers(t *testing.T) {
	p := newIDP(t)
	vs := tenant.NewVerifiers(tenant.VerifierConfig{})
	t.Cleanup(vs.Close)
	// A public read lets a request without a token through to the API.
	srv := project(t, vs.For("shop", p.auth("shop")), rulesOf(t, tenant.Access{Read: tenant.RulePublic}))
	if a := call(t, srv.URL, ""); a.status != 200 {
		t.Fatalf("anonymous read of a public table: %d %s", a.status, a.body)
	}
	// A project without an identity provider refuses every token.
	srv = project(t, vs.For("open", nil), rulesOf(t, tenant.Access{Read: tenant.RulePublic}))
	es := ecSigner(t, "ec-1")
	p.publish(es)
	if a := call(t, srv.URL, "Bearer "+sign(t, es, p.claims("open"))); a.status != 401 || a.reason != "no_identity_provider" {
		t.Fatalf("token sent to a project without auth: %d %s", a.status, a.body)
	}
}

// A token of project A is refused by project B, although both trust the same identity
// provider: B's audience differs.
func TestTokenOfAnotherProject(t *testing.T) {
	p := newIDP(t)
	es := ecSigner(t, "ec-1")
	p.publish(es)
	vs := tenant.NewVerifiers(tenant.VerifierConfig{})
	t.Cleanup(vs.Close)
	rules := rulesOf(t, tenant.Access{})
	a := project(t, vs.For("project-a", p.auth("project-a")), rules)
	b := project(t, vs.For("project-b", p.auth("project-b")), rules)
	tokenA := "Bearer " + sign(t, es, p.claims("project-a"))
	if got := call(t, a.URL, tokenA); got.status != 200 {
		t.Fatalf("project A refused its own token: %s", got.body)
	}
	if got := call(t, b.URL, tokenA); got.status != 401 || got.code != "UNAUTHENTICATED" || got.reason != "wrong_audience" {
		t.Fatalf("project B accepted or misreported A's token: %d %s", got.status, got.body)
	}
}

// A kid the cached key set lacks triggers one refresh, which finds a rotated key; another
// unknown kid right after is refused without fetching again.
func TestUnknownKidAndKeyRotation(t *testing.T) {
	p := newIDP(t)
	old := rsaSigner(t, "2026-01", jwt.SigningMethodRS256)
	p.publish(old)
	vs := tenant.NewVerifiers(tenant.VerifierConfig{UnknownKIDRefresh: time.Hour})
	t.Cleanup(vs.Close)
	srv := project(t, vs.For("shop", p.auth("shop")), rulesOf(t, tenant.Access{}))

	if a := call(t, srv.URL, "Bearer "+sign(t, old, p.claims("shop"))); a.status != 200 {
		t.Fatalf("old key: %s", a.body)
	}
	if n := p.fetches.Load(); n != 1 {
		t.Fatalf("%d JWKS fetches after the first token, want 1", n)
	}
	rotated := ecSigner(t, "2026-02")
	p.publish(old, rotated)
	if a := call(t, srv.URL, "Bearer "+sign(t, rotated, p.claims("shop"))); a.status != 200 {
		t.Fatalf("rotated key: %d %s", a.status, a.body)
	}
	if n := p.fetches.Load(); n != 2 {
		t.Fatalf("%d JWKS fetches after the rotated kid, want 2", n)
	}
	stranger := ecSigner(t, "never-published")
	a := call(t, srv.URL, "Bearer "+sign(t, stranger, p.claims("shop")))
	if a.status != 401 || a.reason != "unknown_key" || !strings.Contains(a.body, "never-published") {
		t.Fatalf("unknown kid: %d %s", a.status, a.body)
	}
	if n := p.fetches.Load(); n != 2 {
		t.Fatalf("%d JWKS fetches after an unknown kid within the rate limit, want still 2", n)
	}
}

// A JWKS that cannot be fetched fails that project's token requests with 503, whose
// Retry-After says when the service will fetch it again (RetryInterval, not the longer limit
// on refreshes for unknown kids); another project is unaffected, and a request sent after
// Retry-After finds the JWKS fetched anew. Requests sent before are refused at once, without
// a fetch.
func TestJWKSDown(t *testing.T) {
	healthy, broken := newIDP(t), newIDP(t)
	es := ecSigner(t, "ec-1")
	healthy.publish(es)
	broken.publish(es)
	broken.down.Store(true)
	vs := tenant.NewVerifiers(tenant.VerifierConfig{RetryInterval: 2 * time.Second, UnknownKIDRefresh: time.Hour})
	t.Cleanup(vs.Close)
	rules := rulesOf(t, tenant.Access{})
	good := project(t, vs.For("good", healthy.auth("good")), rules)
	bad := project(t, vs.For("bad", broken.auth("bad")), rules)

	token := "Bearer " + sign(t, es, broken.claims("bad"))
	a, retry := callRetry(t, bad.URL, token)
	if a.status != 503 || a.code != tenant.CodeIdentityProviderUnavailable || a.reason != "jwks_unavailable" || !strings.Contains(a.body, broken.jwksURL()) {
		t.Fatalf("JWKS down: %d %s", a.status, a.body)
	}
	if retry != "2" {
		t.Fatalf("Retry-After %q, want 2 (the retry interval)", retry)
	}
	if a := call(t, good.URL, "Bearer "+sign(t, es, healthy.claims("good"))); a.status != 200 {
		t.Fatalf("the other project: %d %s", a.status, a.body)
	}
	broken.down.Store(false)
	fetches := broken.fetches.Load()
	if a, retry := callRetry(t, bad.URL, token); a.status != 503 || (retry != "1" && retry != "2") {
		t.Fatalf("within Retry-After: %d %s, Retry-After %q", a.status, a.body, retry)
	}
	if n := broken.fetches.Load(); n != fetches {
		t.Fatalf("%d fetches within Retry-After, want none", n-fetches)
	}
	time.Sleep(2 * time.Second)
	if a := call(t, bad.URL, token); a.status != 200 {
		t.Fatalf("after Retry-After, the JWKS back: %d %s", a.status, a.body)
	}
}

// A JWKS that does not answer holds no request past FetchTimeout (nor past the request's
// own deadline): the request is answered 503 with Retry-After, the first one while the first
// fetch hangs, and those after it too.
func TestJWKSHangs(t *testing.T) {
	p := newIDP(t)
	es := ecSigner(t, "ec-1")
	p.publish(es)
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hanging.Close)
	t.Cleanup(func() { close(release) })
	const timeout = time.Second
	vs := tenant.NewVerifiers(tenant.VerifierConfig{FetchTimeout: timeout, RetryInterval: time.Second})
	t.Cleanup(vs.Close)
	srv := project(t, vs.For("shop", &tenant.Auth{JWKSURL: hanging.URL, Issuer: p.issuer, Audience: "shop"}), rulesOf(t, tenant.Access{}))
	token := "Bearer " + sign(t, es, p.claims("shop"))
	for i := range 3 {
		began := time.Now()
		a, retry := callRetry(t, srv.URL, token)
		took := time.Since(began)
		if a.status != 503 || a.reason != "jwks_unavailable" || retry == "" {
			t.Fatalf("request %d: %d %s, Retry-After %q", i+1, a.status, a.body, retry)
		}
		// A margin over the timeout for a shared machine; the bug held twice the timeout.
		if took > timeout*3/2 {
			t.Fatalf("request %d took %s, with a fetch timeout of %s", i+1, took, timeout)
		}
		if i == 1 {
			time.Sleep(time.Second) // past the retry interval: this request fetches again
		}
	}
}

// A token whose header names critical extensions is refused (RFC 7515 §4.1.11), whatever
// they are, although its signature is good; the same token without crit passes.
func TestCritHeaderRefused(t *testing.T) {
	p := newIDP(t)
	es := ecSigner(t, "ec-1")
	p.publish(es)
	vs := tenant.NewVerifiers(tenant.VerifierConfig{})
	t.Cleanup(vs.Close)
	srv := project(t, vs.For("shop", p.auth("shop")), rulesOf(t, tenant.Access{}))
	signWith := func(header map[string]any) string {
		tok := jwt.NewWithClaims(es.method, p.claims("shop"))
		tok.Header["kid"] = es.kid
		for k, v := range header {
			tok.Header[k] = v
		}
		str, err := tok.SignedString(es.key)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + str
	}
	if a := call(t, srv.URL, signWith(nil)); a.status != 200 {
		t.Fatalf("without crit: %d %s", a.status, a.body)
	}
	for name, header := range map[string]map[string]any{
		"an extension":     {"crit": []string{"exp"}, "exp": 1},
		"b64":              {"crit": []string{"b64"}, "b64": false},
		"an empty list":    {"crit": []string{}},
		"not even a list":  {"crit": "x"},
		"a name not there": {"crit": []string{"nowhere"}},
	} {
		a := call(t, srv.URL, signWith(header))
		if a.status != 401 || a.code != "UNAUTHENTICATED" || a.reason != "unsupported_crit" {
			t.Errorf("crit with %s: %d %s", name, a.status, a.body)
		}
	}
}

// callRetry is call, and the answer's Retry-After.
func callRetry(t *testing.T, url, authorization string) (answer, string) {
	t.Helper()
	a, h := callHeader(t, url, authorization)
	return a, h.Get("Retry-After")
}

// A new version of a project keeps its JWKS client (and its keys) while the jwksURL stays
// the same.
func TestVerifierSharedAcrossVersions(t *testing.T) {
	p := newIDP(t)
	es := ecSigner(t, "ec-1")
	p.publish(es)
	vs := tenant.NewVerifiers(tenant.VerifierConfig{})
	t.Cleanup(vs.Close)
	rules := rulesOf(t, tenant.Access{})
	ver1 := vs.For("shop", p.auth("shop"))
	if a := call(t, project(t, ver1, rules).URL, "Bearer "+sign(t, es, p.claims("shop"))); a.status != 200 {
		t.Fatal(a.body)
	}
	// Version 2 changes the audience: the same client, and v2's audience.
	v2 := project(t, vs.For("shop", p.auth("shop-v2")), rules)
	ver1.Close() // the replaced version is closed; the client lives on for version 2
	if a := call(t, v2.URL, "Bearer "+sign(t, es, p.claims("shop"))); a.reason != "wrong_audience" {
		t.Fatalf("version 2 accepted version 1's audience: %s", a.body)
	}
	if a := call(t, v2.URL, "Bearer "+sign(t, es, p.claims("shop-v2"))); a.status != 200 {
		t.Fatal(a.body)
	}
	if n := p.fetches.Load(); n != 1 {
		t.Fatalf("%d JWKS fetches over two versions, want 1", n)
	}
}

// A new jwksURL gets a new client and stops the old one's background refresh, and closing the
// project stops its client.
func TestVerifierClosedWithItsProject(t *testing.T) {
	first, second := newIDP(t), newIDP(t)
	es := ecSigner(t, "ec-1")
	first.publish(es)
	second.publish(es)
	vs := tenant.NewVerifiers(tenant.VerifierConfig{RefreshInterval: 5 * time.Millisecond})
	t.Cleanup(vs.Close)
	rules := rulesOf(t, tenant.Access{})
	ver1 := vs.For("shop", first.auth("shop"))
	if a := call(t, project(t, ver1, rules).URL, "Bearer "+sign(t, es, first.claims("shop"))); a.status != 200 {
		t.Fatal(a.body)
	}
	waitFetches(first, 2) // the background refresh runs

	ver2 := vs.For("shop", second.auth("shop"))
	if a := call(t, project(t, ver2, rules).URL, "Bearer "+sign(t, es, second.claims("shop"))); a.status != 200 {
		t.Fatal(a.body)
	}
	ver1.Close() // closing the replaced version leaves version 2's client alone
	stopped := first.fetches.Load()
	waitFetches(second, 5)
	// One refresh may have been under way when the client was closed.
	if n := first.fetches.Load(); n > stopped+1 {
		t.Fatalf("the old JWKS was fetched %d more times after the project moved", n-stopped)
	}

	ver2.Close() // the project is deleted
	stopped = second.fetches.Load()
	time.Sleep(50 * time.Millisecond)
	if n := second.fetches.Load(); n > stopped+1 {
		t.Fatalf("the JWKS was fetched %d more times after the project was closed", n-stopped)
	}
}

// waitFetches waits until p's JWKS has been fetched n more times.
func waitFetches(p *idp, n int64) {
	for start := p.fetches.Load(); p.fetches.Load() < start+n; {
		time.Sleep(time.Millisecond)
	}
}

// A token that passed is remembered until it expires: sent again, it is accepted without a
// signature check, even while the JWKS cannot be fetched, and refused once expired.
func TestVerifiedTokensAreRemembered(t *testing.T) {
	p := newIDP(t)
	es := ecSigner(t, "ec-1")
	p.publish(es)
	vs := tenant.NewVerifiers(tenant.VerifierConfig{Leeway: -1})
	t.Cleanup(vs.Close)
	srv := project(t, vs.For("shop", p.auth("shop")), rulesOf(t, tenant.Access{}))
	claims := p.claims("shop")
	claims["exp"] = time.Now().Add(1500 * time.Millisecond).Unix()
	token := "Bearer " + sign(t, es, claims)
	if a := call(t, srv.URL, token); a.status != 200 {
		t.Fatal(a.body)
	}
	// A token longer than the cache keeps is checked each time it comes.
	long := p.claims("shop")
	long["pad"] = strings.Repeat("x", tenant.MaxCachedTokenBytes)
	for i := range 2 {
		if a := call(t, srv.URL, "Bearer "+sign(t, es, long)); a.status != 200 {
			t.Fatalf("a long token, call %d: %d %s", i+1, a.status, a.body)
		}
	}
	// The key is withdrawn, but the service has not fetched the JWKS since: the token stands,
	// as it would without the cache.
	p.publish()
	if a := call(t, srv.URL, token); a.status != 200 {
		t.Fatalf("the same token again: %d %s", a.status, a.body)
	}
	for time.Now().Unix() <= claims["exp"].(int64) {
		time.Sleep(50 * time.Millisecond)
	}
	if a := call(t, srv.URL, token); a.status != 401 || a.reason != "expired" {
		t.Fatalf("the remembered token after its exp: %d %s", a.status, a.body)
	}
}

// A remembered token is checked again once the project's key set changes: a key withdrawn
// from the JWKS refuses the tokens it signed from the fetch that sees it gone, although they
// were accepted before and are remembered for much longer; a key added leaves them accepted.
// A token changed in any part is refused, the second time too, while the original is
// remembered.
func TestRememberedTokensFollowTheKeySet(t *testing.T) {
	p := newIDP(t)
	old, added, third := ecSigner(t, "2026-01"), ecSigner(t, "2026-02"), ecSigner(t, "2026-03")
	p.publish(old)
	// The key set is fetched again only for a kid it lacks.
	vs := tenant.NewVerifiers(tenant.VerifierConfig{RefreshInterval: time.Hour, UnknownKIDRefresh: time.Millisecond})
	t.Cleanup(vs.Close)
	srv := project(t, vs.For("shop", p.auth("shop")), rulesOf(t, tenant.Access{}))
	token := "Bearer " + sign(t, old, p.claims("shop"))
	if a := call(t, srv.URL, token); a.status != 200 {
		t.Fatal(a.body)
	}

	header, payload, sig := splitToken(t, token)
	mallory := p.claims("shop")
	mallory["sub"] = "mallory"
	js, err := json.Marshal(mallory)
	if err != nil {
		t.Fatal(err)
	}
	// The middle of the signature: its last character also holds bits the decoder ignores.
	flipped := []byte(sig)
	if flipped[len(sig)/2] == 'A' {
		flipped[len(sig)/2] = 'B'
	} else {
		flipped[len(sig)/2] = 'A'
	}
	for name, tampered := range map[string]string{
		"claims":    "Bearer " + header + "." + base64.RawURLEncoding.EncodeToString(js) + "." + sig,
		"signature": "Bearer " + header + "." + payload + "." + string(flipped),
		"header":    "Bearer " + base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"ES256","kid":"2026-01","typ":"JWT","x":1}`)) + "." + payload + "." + sig,
	} {
		for range 2 {
			if a := call(t, srv.URL, tampered); a.status != 401 || a.reason != "bad_signature" {
				t.Fatalf("token with its %s changed: %d %s", name, a.status, a.body)
			}
		}
	}

	// A token of a new key makes the service fetch the key set again.
	rotate := func(s signer) {
		t.Helper()
		time.Sleep(2 * time.Millisecond) // past the limit on refreshes for unknown kids
		if a := call(t, srv.URL, "Bearer "+sign(t, s, p.claims("shop"))); a.status != 200 {
			t.Fatalf("a token of the new key %s: %d %s", s.kid, a.status, a.body)
		}
	}
	p.publish(old, added)
	rotate(added)
	if a := call(t, srv.URL, token); a.status != 200 {
		t.Fatalf("after a key was added: %d %s", a.status, a.body)
	}
	p.publish(added, third)
	rotate(third)
	if a := call(t, srv.URL, token); a.status != 401 || a.reason != "unknown_key" {
		t.Fatalf("a remembered token after its key was withdrawn: %d %s", a.status, a.body)
	}
}

// splitToken returns the three parts of a compact JWS.
func splitToken(t *testing.T, token string) (header, payload, sig string) {
	t.Helper()
	parts := strings.Split(strings.TrimPrefix(token, "Bearer "), ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d parts", token, len(parts))
	}
	return parts[0], parts[1], parts[2]
}

// BenchmarkVerify is the cost of verification per request with the keys cached: a token
// seen for the first time (a signature check), and one sent again (remembered).
func BenchmarkVerify(b *testing.B) {
	p := newIDP(b)
	rs := rsaSigner(b, "rsa-1", jwt.SigningMethodRS256)
	es := ecSigner(b, "ec-1")
	p.publish(rs, es)
	for _, mode := range []struct {
		name  string
		cache int
	}{{"first use", -1}, {"sent again", 0}} {
		vs := tenant.NewVerifiers(tenant.VerifierConfig{TokenCacheSize: mode.cache})
		b.Cleanup(vs.Close)
		v := vs.For("shop", p.auth("shop"))
		for _, s := range []signer{rs, es} {
			b.Run(s.method.Alg()+"/"+mode.name, func(b *testing.B) {
				req := httptest.NewRequest(http.MethodPost, "/api/v1/graphql", nil)
				req.Header.Set("Authorization", "Bearer "+sign(b, s, p.claims("shop")))
				if _, err := v.Authenticate(req); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if _, err := v.Authenticate(req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// The development issuer keeps one key in the data folder: serve creates it, platform token
// reuses it, and its tokens pass the verifier of a project that trusts it.
func TestDevIssuer(t *testing.T) {
	dir := t.TempDir()
	if _, err := tenant.LoadDevIssuer(dir); err == nil || !strings.Contains(err.Error(), "platform serve") {
		t.Fatalf("token before serve ever ran: %v, want an error saying to start serve", err)
	}
	served, err := tenant.OpenDevIssuer(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, tenant.DevIssuerKeyFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v, want mode 0600", info, err)
	}
	cli, err := tenant.LoadDevIssuer(dir)
	if err != nil {
		t.Fatal(err)
	}
	jwks := httptest.NewServer(served)
	t.Cleanup(jwks.Close)
	resp, err := http.Post(jwks.URL, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST to the JWKS: %s, want 405", resp.Status)
	}

	vs := tenant.NewVerifiers(tenant.VerifierConfig{})
	t.Cleanup(vs.Close)
	srv := project(t, vs.For("demo", served.Auth("demo", jwks.URL+tenant.DevIssuerJWKSPath)), rulesOf(t, tenant.Access{}))
	token, err := cli.Mint("demo", "alice", time.Minute, map[string]any{"aud": "other", "sub": "mallory", "role": "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if a := call(t, srv.URL, "Bearer "+token); a.status != 200 {
		t.Fatalf("token of platform token on the demo project: %d %s", a.status, a.body)
	}
	claims, err := vs.For("demo", served.Auth("demo", jwks.URL)).Verify(context.Background(), token)
	if err != nil || claims["sub"] != "alice" || claims["aud"] != "demo" || claims["role"] != "admin" {
		t.Fatalf("claims %v (%v): extra claims must not override sub or aud", claims, err)
	}
	for _, bad := range []struct {
		project, sub string
		ttl          time.Duration
	}{
		{"demo", "", time.Minute},
		{"Demo", "alice", time.Minute},
		{"demo", "alice", 0},
		{"demo", "alice", 31 * 24 * time.Hour},
	} {
		if _, err := cli.Mint(bad.project, bad.sub, bad.ttl, nil); err == nil {
			t.Errorf("Mint(%q, %q, %v) succeeded", bad.project, bad.sub, bad.ttl)
		}
	}
}
