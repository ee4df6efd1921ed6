package tenant_test

import (
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

// service is the HTTP surface of serve: host routing, the GraphQL API of each project and
// the development issuer's JWKS on the apex host.
type service struct {
	url    string
	reg    *tenant.Registry
	issuer *tenant.DevIssuer
	jwks   string
}

func newService(t *testing.T) service {
	t.Helper()
	return newServiceWith(t, tenant.Options{})
}

// newServiceWith is newService with the registry's options.
func newServiceWith(t *testing.T, opts tenant.Options) service {
	t.Helper()
	return newServiceOn(t, openStores(t), opts)
}

// newServiceOn is newServiceWith on the given stores.
func newServiceOn(t *testing.T, stores *store.Stores, opts tenant.Options) service {
	t.Helper()
	ctx := context.Background()
	reg, err := tenant.NewRegistry(ctx, stores, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	iss, err := tenant.OpenDevIssuer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.Pre(tenant.ProjectPaths("platform.test"))
	e.Use(reg.Hosts(tenant.HostOptions{Domain: "platform.test"}))
	reg.MountGraphQL(e)
	e.GET(tenant.DevIssuerJWKSPath, echo.WrapHandler(iss), tenant.ApexOnly)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return service{url: srv.URL, reg: reg, issuer: iss, jwks: tenant.DevJWKSURL(srv.Listener.Addr())}
}

// post sends a GraphQL request to project's host.
func (s service) post(t *testing.T, project, token, query string, vars map[string]any) gqlAnswer {
	t.Helper()
	return postGraphQL(t, s.url+"/api/v1/graphql", project+".platform.test", token, query, vars)
}

func (s service) token(t *testing.T, project, sub string) string {
	t.Helper()
	tok, err := s.issuer.Mint(project, sub, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestDemoProject: the demo project serve creates on first start, used with development
// tokens through host routing, as the README's quick start does.
func TestDemoProject(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	if changed, err := s.reg.EnsureDemo(ctx, s.issuer, s.jwks); err != nil || !changed {
		t.Fatalf("first start: changed %v, %v; want the demo created", changed, err)
	}
	if changed, err := s.reg.EnsureDemo(ctx, s.issuer, s.jwks); err != nil || changed {
		t.Fatalf("second start: changed %v, %v; want nothing to do", changed, err)
	}

	alice, bob := s.token(t, "demo", "alice"), s.token(t, "demo", "bob")
	created := s.post(t, "demo", alice, createDoc, map[string]any{"data": map[string]any{"name": "Tea", "price": 3.5}})
	if created.code() != "" {
		t.Fatalf("create: %d %+v", created.status, created.Errors)
	}
	var rec struct{ UID string }
	if err := json.Unmarshal(created.Data["createProduct"], &rec); err != nil || rec.UID == "" {
		t.Fatalf("created %s: %v", created.Data["createProduct"], err)
	}
	if got := s.post(t, "demo", bob, `{ products { uid } }`, nil).uids(t, "products"); len(got) != 1 || got[0] != rec.UID {
		t.Errorf("bob lists %v, want alice's product (read is authenticated)", got)
	}
	update := map[string]any{"uid": rec.UID, "data": map[string]any{"price": 4.0}}
	if got := s.post(t, "demo", bob, updateDoc, update).code(); got != "FORBIDDEN" {
		t.Errorf("bob updating alice's product: %q, want FORBIDDEN", got)
	}
	if got := s.post(t, "demo", alice, updateDoc, update).code(); got != "" {
		t.Errorf("alice updating her product: %q", got)
	}
	if got := s.post(t, "demo", bob, deleteDoc, map[string]any{"uid": rec.UID}).code(); got != "FORBIDDEN" {
		t.Errorf("bob deleting alice's product: %q, want FORBIDDEN", got)
	}
	if got := s.post(t, "demo", "", `{ products { uid } }`, nil); got.status != http.StatusUnauthorized || got.code() != "UNAUTHENTICATED" {
		t.Errorf("no token: %d %q, want 401 UNAUTHENTICATED", got.status, got.code())
	}

	// A second project trusting the same issuer refuses the demo's tokens.
	other, err := s.issuer.DemoProject(s.jwks)
	if err != nil {
		t.Fatal(err)
	}
	other.ID, other.Auth = "other", s.issuer.Auth("other", s.jwks)
	if _, _, err := s.reg.Put(ctx, other); err != nil {
		t.Fatal(err)
	}
	if got := s.post(t, "other", alice, `{ products { uid } }`, nil); got.status != http.StatusUnauthorized || got.Errors[0].Extensions["reason"] != "wrong_audience" {
		t.Errorf("demo token on another project: %d %+v", got.status, got.Errors)
	}
	if got := s.post(t, "other", s.token(t, "other", "alice"), `{ products { uid } }`, nil); got.code() != "" {
		t.Errorf("the other project's own token: %+v", got.Errors)
	}
}

// TestDemoFollowsTheAddress: a restart on another port points the demo project at the new
// JWKS address; a demo an operator moved to another issuer stays as it is.
func TestDemoFollowsTheAddress(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	if _, err := s.reg.EnsureDemo(ctx, s.issuer, "http://127.0.0.1:1"+tenant.DevIssuerJWKSPath); err != nil {
		t.Fatal(err)
	}
	if got := s.post(t, "demo", s.token(t, "demo", "alice"), `{ products { uid } }`, nil); got.status != http.StatusServiceUnavailable {
		t.Fatalf("JWKS at a dead address: %d %+v, want 503", got.status, got.Errors)
	}
	if changed, err := s.reg.EnsureDemo(ctx, s.issuer, s.jwks); err != nil || !changed {
		t.Fatalf("restart on a new address: changed %v, %v", changed, err)
	}
	demo, err := s.reg.Get(ctx, tenant.DemoProjectID)
	if err != nil || demo.Auth.JWKSURL != s.jwks {
		t.Fatalf("demo after the restart: %+v %v", demo.Auth, err)
	}
	if got := s.post(t, "demo", s.token(t, "demo", "alice"), `{ products { uid } }`, nil); got.status != http.StatusOK || got.code() != "" {
		t.Fatalf("after the restart: %d %+v", got.status, got.Errors)
	}
	demo.Auth.Issuer = "https://idp.example/"
	if _, _, err := s.reg.Put(ctx, demo); err != nil {
		t.Fatal(err)
	}
	if changed, err := s.reg.EnsureDemo(ctx, s.issuer, "http://127.0.0.1:2"+tenant.DevIssuerJWKSPath); err != nil || changed {
		t.Fatalf("demo trusting another issuer: changed %v, %v; want it left alone", changed, err)
	}
}

// TestGuardsFollowTheToken: each caller's requests run under their own claims, however
// callers alternate and whatever a token was sent with before (a guard is kept per
// verified Authorization header).
func TestGuardsFollowTheToken(t *testing.T) {
	s := newService(t)
	if _, err := s.reg.EnsureDemo(context.Background(), s.issuer, s.jwks); err != nil {
		t.Fatal(err)
	}
	alice, bob := s.token(t, "demo", "alice"), s.token(t, "demo", "bob")
	// A method the API refuses, before any token is verified: bob's guard must not be made
	// from it.
	req, err := http.NewRequest(http.MethodPut, s.url+"/api/v1/graphql", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "demo.platform.test"
	req.Header.Set("Authorization", "Bearer "+bob)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("PUT: %d, want 405", res.StatusCode)
	}
	created := s.post(t, "demo", alice, createDoc, map[string]any{"data": map[string]any{"name": "Tea", "price": 3.5}})
	var rec struct{ UID string }
	if err := json.Unmarshal(created.Data["createProduct"], &rec); err != nil || rec.UID == "" {
		t.Fatalf("created %s: %v", created.Data["createProduct"], err)
	}
	update := map[string]any{"uid": rec.UID, "data": map[string]any{"price": 4.0}}
	for round := range 3 {
		if got := s.post(t, "demo", bob, `{ products { uid } }`, nil).uids(t, "products"); len(got) != 1 {
			t.Errorf("round %d: bob lists %v, want alice's product (read is authenticated)", round, got)
		}
		if got := s.post(t, "demo", bob, updateDoc, update).code(); got != "FORBIDDEN" {
			t.Errorf("round %d: bob updating alice's product: %q, want FORBIDDEN", round, got)
		}
		if got := s.post(t, "demo", alice, updateDoc, update).code(); got != "" {
			t.Errorf("round %d: alice updating her product: %q", round, got)
		}
	}
}

// A project whose JWKS hangs is answered 503 within the deployment's GraphQL timeout: the
// registry keeps the wait for keys within it, whatever FetchTimeout says.
func TestHangingJWKSWithinTheGraphQLTimeout(t *testing.T) {
	const timeout = time.Second
	s := newServiceWith(t, tenant.Options{
		GraphQL: tenant.GraphQLLimits{Timeout: timeout},
		Auth:    tenant.VerifierConfig{FetchTimeout: time.Minute},
	})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(hanging.Close)
	p, err := tenant.ParseDocument(fmt.Appendf(nil, `{"id":"hangs","auth":{"jwksURL":%q,"issuer":%q,"audience":"hangs"},
		"tables":{"notes":{"fields":{"name":{"type":"String"}}}}}`, hanging.URL, tenant.DevIssuerName))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.reg.Put(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	a := s.post(t, "hangs", s.token(t, "hangs", "alice"), `{ notes { uid } }`, nil)
	if took := time.Since(began); a.status != http.StatusServiceUnavailable || took > timeout*3/2 {
		t.Fatalf("%d %+v after %s, want 503 within the GraphQL timeout of %s", a.status, a.Errors, took, timeout)
	}
}

// A subscription over SSE to a project whose identity provider fails is answered as a query
// would be: 503 with Retry-After, not a 401 that would send the client to sign in again.
func TestEventStreamWhileTheJWKSFails(t *testing.T) {
	s := newServiceWith(t, tenant.Options{Auth: tenant.VerifierConfig{RetryInterval: 5 * time.Second}})
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	t.Cleanup(down.Close)
	p, err := tenant.ParseDocument(fmt.Appendf(nil, `{"id":"down","auth":{"jwksURL":%q,"issuer":%q,"audience":"down"},
		"tables":{"notes":{"fields":{"name":{"type":"String"}}}}}`, down.URL, tenant.DevIssuerName))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.reg.Put(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, s.url+"/api/v1/graphql", strings.NewReader(`{"query":"subscription { notes { uid } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "down.platform.test"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.token(t, "down", "alice"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "5" || !strings.Contains(string(body), tenant.CodeIdentityProviderUnavailable) {
		t.Fatalf("%d, Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}
