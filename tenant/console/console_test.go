package console_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/telemetry"
	"github.com/platform-dev/platform/tenant"
	"github.com/platform-dev/platform/tenant/console"
)

const adminToken = "console-test-admin-token-0123456789"

// lockedBuffer collects the server's log; handlers write to it from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type fixture struct {
	srv    *httptest.Server
	reg    *tenant.Registry
	stores *store.Stores
	log    *lockedBuffer
}

// start serves the console as `platform serve` mounts it, on real embedded stores, with the
// requests logged as the service logs them (so a test can look for the token in the log).
func start(t *testing.T, cfg console.Config) *fixture {
	t.Helper()
	return startWith(t, cfg, tenant.Options{})
}

// startWith is start with the registry's options.
func startWith(t *testing.T, cfg console.Config, opts tenant.Options) *fixture {
	t.Helper()
	return startOn(t, cfg, opts, store.Config{DataDir: t.TempDir()})
}

// startOn is startWith on stores opened with sc.
func startOn(t *testing.T, cfg console.Config, opts tenant.Options, sc store.Config) *fixture {
	t.Helper()
	ctx := context.Background()
	stores, err := store.Open(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stores.Close(context.Background()) })
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: telemetry.RedactAttr}))
	opts.Logger = logger
	// A JWKS that failed is fetched again soon (TestIdentityVerifierStatus).
	if opts.Auth.RetryInterval == 0 {
		opts.Auth.RetryInterval = 50 * time.Millisecond
	}
	reg, err := tenant.NewRegistry(ctx, stores, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	// Three wrong tokens a minute, so the limit is quick to reach.
	gate, err := tenant.NewAdminGate(tenant.AdminGateConfig{Token: adminToken, Redis: stores.Redis, AttemptsPerMinute: 3, Keys: stores.Keys()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Registry, cfg.Stores, cfg.Gate, cfg.Logger = reg, stores, gate, logger
	con, err := console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := next(c)
			logger.Info("request", "method", c.Request().Method, "uri", c.Request().RequestURI, "status", c.Response().Status)
			return err
		}
	})
	e.Use(reg.Hosts(tenant.HostOptions{Domain: "localhost"}))
	con.Mount(e)
	reg.MountAdmin(e, gate)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return &fixture{srv: srv, reg: reg, stores: stores, log: logs}
}

// browser is what a browser keeps between requests: the session cookie and the page's CSRF
// token.
type browser struct {
	t      *testing.T
	f      *fixture
	host   string
	cookie *http.Cookie
	csrf   string
}

// apply parses doc (JSON or YAML) and puts it in the registry, as an operator's apply does.
func (f *fixture) apply(t *testing.T, doc string) *tenant.Project {
	t.Helper()
	p, err := tenant.ParseDocument([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.reg.Put(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func (f *fixture) browser(t *testing.T) *browser {
	return &browser{t: t, f: f, host: "localhost"}
}

type answer struct {
	status int
	header http.Header
	body   string
}

// do sends a request; htmx marks it as an htmx request and sends the CSRF token, as the
// console's pages make the browser do.
func (b *browser) do(method, path string, form url.Values, htmx bool) answer {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.f.srv.URL+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Host = b.host
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if b.cookie != nil {
		req.AddCookie(b.cookie)
	}
	if htmx {
		req.Header.Set("HX-Request", "true")
		if b.csrf != "" {
			req.Header.Set("X-CSRF-Token", b.csrf)
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "platform_console" {
			if c.MaxAge < 0 {
				b.cookie = nil
			} else {
				b.cookie = c
			}
		}
	}
	// Bodies are compared as a reader sees them: html/template writes "+" as "&#43;".
	return answer{status: resp.StatusCode, header: resp.Header, body: html.UnescapeString(string(raw))}
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

// signIn posts the token as the sign-in form does and reads the CSRF token of the page
// it lands on.
func (b *browser) signIn() {
	b.t.Helper()
	b.signInWith(adminToken)
}

// signInWith signs in with token: the admin token or an operator key.
func (b *browser) signInWith(token string) {
	b.t.Helper()
	a := b.do(http.MethodPost, "/console/login", url.Values{"token": {token}}, false)
	if a.status != http.StatusSeeOther || b.cookie == nil {
		b.t.Fatalf("sign in: %d, cookie %v: %s", a.status, b.cookie, a.body)
	}
	page := b.do(http.MethodGet, "/console/", nil, false)
	m := csrfMeta.FindStringSubmatch(page.body)
	if m == nil {
		b.t.Fatalf("no csrf-token meta after signing in: %s", page.body)
	}
	b.csrf = m[1]
}

func TestSignInAndOut(t *testing.T) {
	f := start(t, console.Config{})
	b := f.browser(t)

	form := b.do(http.MethodGet, "/console/", nil, false)
	if form.status != http.StatusOK || !strings.Contains(form.body, `action="/console/login"`) || !strings.Contains(form.body, `name="token"`) {
		t.Fatalf("sign-in form: %d %s", form.status, form.body)
	}
	csp := form.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("Content-Security-Policy allows unsafe sources: %q", csp)
	}

	// The admin token in the address is refused, right or not, in a form or not: addresses
	// end up in logs.
	for _, form := range []url.Values{nil, {}, {"token": {adminToken}}} {
		for _, param := range []string{"token", "access_token"} {
			a := b.do(http.MethodPost, "/console/login?"+param+"="+url.QueryEscape(adminToken), form, false)
			if a.status != http.StatusBadRequest || !strings.Contains(a.body, "form body") || b.cookie != nil {
				t.Fatalf("token in the address (?%s, form %v): %d, cookie %v: %s", param, form, a.status, b.cookie, a.body)
			}
		}
	}

	wrong := b.do(http.MethodPost, "/console/login", url.Values{"token": {"not-the-token"}}, false)
	if wrong.status != http.StatusUnauthorized || !strings.Contains(wrong.body, "not the admin token") || b.cookie != nil {
		t.Fatalf("wrong token: %d, cookie %v: %s", wrong.status, b.cookie, wrong.body)
	}
	if a := b.do(http.MethodGet, "/console/projects/new", nil, false); a.status != http.StatusSeeOther {
		t.Fatalf("a page without a session: %d, want a redirect to the sign-in form", a.status)
	}

	b.signIn()
	if !b.cookie.HttpOnly || b.cookie.SameSite != http.SameSiteStrictMode || b.cookie.MaxAge <= 0 || b.cookie.MaxAge > 3600 {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, a short Max-Age", b.cookie)
	}
	if page := b.do(http.MethodGet, "/console/", nil, false); !strings.Contains(page.body, "No projects yet") {
		t.Errorf("signed-in home: %s", page.body)
	}

	csrf := b.csrf
	b.csrf = ""
	if a := b.do(http.MethodPost, "/console/logout", nil, true); a.status != http.StatusForbidden || !strings.Contains(a.body, "CSRF") {
		t.Fatalf("sign out without the CSRF token: %d %s", a.status, a.body)
	}
	// The first character changed, whatever it was.
	b.csrf = string(csrf[0]^1) + csrf[1:]
	if a := b.do(http.MethodPost, "/console/logout", nil, true); a.status != http.StatusForbidden {
		t.Fatalf("sign out with a wrong CSRF token: %d %s", a.status, a.body)
	}
	b.csrf = csrf
	stolen := b.cookie
	if a := b.do(http.MethodPost, "/console/logout", nil, true); a.status != http.StatusNoContent || a.header.Get("HX-Redirect") != "/console/" || b.cookie != nil {
		t.Fatalf("sign out: %d %v, cookie %v", a.status, a.header, b.cookie)
	}
	// The session ended on the server too: the old cookie is worth nothing.
	b.cookie = stolen
	if a := b.do(http.MethodGet, "/console/", nil, false); !strings.Contains(a.body, `name="token"`) {
		t.Fatalf("the cookie of an ended session still signs in: %s", a.body)
	}

	if strings.Contains(f.log.String(), adminToken) {
		t.Errorf("the admin token is in the log:\n%s", f.log.String())
	}
	if !strings.Contains(f.log.String(), "console: wrong admin token") {
		t.Errorf("a wrong token was not logged:\n%s", f.log.String())
	}
}

// TestWrongTokensAreLimited guesses through both doors the admin token opens: the console's
// sign-in and the admin API count against one limit.
func TestWrongTokensAreLimited(t *testing.T) {
	f := start(t, console.Config{})
	b := f.browser(t)
	for i := range 2 {
		if a := b.do(http.MethodPost, "/console/login", url.Values{"token": {"guess"}}, false); a.status != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d", i+1, a.status)
		}
	}
	admin := func(token string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/admin/v1/projects", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "localhost"
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := admin("another-guess"); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token on the admin API: %d", res.StatusCode)
	}
	// Once the attempts are spent even the right token waits, or guessing would go on.
	a := b.do(http.MethodPost, "/console/login", url.Values{"token": {adminToken}}, false)
	if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") != "20" || b.cookie != nil {
		t.Fatalf("after 3 wrong tokens: %d, Retry-After %q, cookie %v", a.status, a.header.Get("Retry-After"), b.cookie)
	}
	if res := admin(adminToken); res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "20" {
		t.Fatalf("admin API after 3 wrong tokens: %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
}

func TestConsoleIsOnTheApexHostOnly(t *testing.T) {
	f := start(t, console.Config{})
	f.apply(t, `{"id":"demo","tables":{"notes":{"fields":{"text":{"type":"String"}}}}}`)
	b := f.browser(t)
	b.host = "demo.localhost"
	for _, path := range []string{"/console/", "/console/assets/htmx.min.js"} {
		if a := b.do(http.MethodGet, path, nil, false); a.status != http.StatusNotFound {
			t.Errorf("%s on a project host: %d, want 404", path, a.status)
		}
	}
	if a := b.do(http.MethodPost, "/console/login", url.Values{"token": {adminToken}}, false); a.status != http.StatusNotFound || b.cookie != nil {
		t.Errorf("sign in on a project host: %d", a.status)
	}
	b.host = "localhost"
	a := b.do(http.MethodGet, "/console/assets/htmx.min.js", nil, false)
	if a.status != http.StatusOK || !strings.HasPrefix(a.body, "var htmx=") {
		t.Errorf("htmx on the apex host: %d", a.status)
	}
}

func TestProjectEditor(t *testing.T) {
	f := start(t, console.Config{})
	b := f.browser(t)
	b.signIn()
	ctx := context.Background()

	mistake := `id: shop
tables:
  products:
    fields:
      name: {type: String, required: true}
      price:
        type: Flot
`
	a := b.do(http.MethodPost, "/console/projects/apply", url.Values{"document": {mistake}}, true)
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "tables.products.fields.price.type</code> <span class=\"line\">line 7</span>") {
		t.Fatalf("a wrong field type: %d %s", a.status, a.body)
	}
	if _, err := f.reg.Get(ctx, "shop"); !errors.Is(err, tenant.ErrProjectNotFound) {
		t.Fatalf("a refused document was stored: %v", err)
	}

	fixed := strings.Replace(mistake, "Flot", "Float", 1)
	steps := []struct {
		path, doc string
		want      []string
	}{
		{"check", fixed, []string{"project shop would be created\n  + project shop\n  + table products", "Nothing is stored"}},
		{"apply", fixed, []string{"project shop created (version 1)\n  + project shop\n  + table products"}},
		{"apply", fixed, []string{"project shop unchanged (version 1)</pre>"}},
		{"check", fixed + "      sku: {type: String}\n", []string{"project shop would be configured\n  + field products.sku</pre>"}},
		{"apply", fixed + "      sku: {type: String}\n", []string{"project shop configured (version 2)\n  + field products.sku</pre>"}},
	}
	for _, s := range steps {
		a := b.do(http.MethodPost, "/console/projects/"+s.path, url.Values{"document": {s.doc}}, true)
		for _, w := range s.want {
			if a.status != http.StatusOK || !strings.Contains(a.body, w) {
				t.Fatalf("%s: %d, want %q in\n%s", s.path, a.status, w, a.body)
			}
		}
	}

	list := b.do(http.MethodGet, "/console/", nil, false)
	if !strings.Contains(list.body, `href="/console/projects/shop"`) || !regexp.MustCompile(`products <span class="count">0</span>`).MatchString(list.body) {
		t.Errorf("project list: %s", list.body)
	}
	edit := b.do(http.MethodGet, "/console/projects/shop", nil, false)
	if edit.status != http.StatusOK || !strings.Contains(edit.body, "sku:") || !strings.Contains(edit.body, "type: Float") ||
		!regexp.MustCompile(`type product \{[^}]*sku: String`).MatchString(edit.body) {
		t.Errorf("editor of shop: %d %s", edit.status, edit.body)
	}
	// The YAML the editor shows applies as it is.
	doc := regexp.MustCompile(`(?s)<textarea[^>]*>(.*)</textarea>`).FindStringSubmatch(edit.body)[1]
	if a := b.do(http.MethodPost, "/console/projects/apply", url.Values{"document": {doc}}, true); !strings.Contains(a.body, "project shop unchanged (version 2)") {
		t.Errorf("applying the editor's own document: %s", a.body)
	}

	b.csrf = "forged"
	if a := b.do(http.MethodDelete, "/console/projects/shop", nil, true); a.status != http.StatusForbidden {
		t.Fatalf("delete without the CSRF token: %d", a.status)
	}
	b.signIn()
	if a := b.do(http.MethodDelete, "/console/projects/shop", nil, true); a.status != http.StatusNoContent || a.header.Get("HX-Redirect") != "/console/" {
		t.Fatalf("delete: %d %s", a.status, a.body)
	}
	if _, err := f.reg.Get(ctx, "shop"); !errors.Is(err, tenant.ErrProjectNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if a := b.do(http.MethodGet, "/console/projects/shop", nil, false); a.status != http.StatusNotFound {
		t.Errorf("editor of a deleted project: %d", a.status)
	}
}

func TestRecords(t *testing.T) {
	f := start(t, console.Config{})
	ctx := context.Background()
	p := f.apply(t, `id: shop
tables:
  products:
    fields:
      name: {type: String, required: true}
      price: {type: Float, required: true}
      stock: {type: Int, default: 1}
      tags: {type: "[String]"}
      onSale: {type: Boolean}
      meta: {type: JSON}
    indexes: [{fields: [name], unique: true}]
`)
	b := f.browser(t)
	b.signIn()
	base := "/console/projects/shop/tables/products"

	empty := b.do(http.MethodGet, base, nil, false)
	if empty.status != http.StatusOK || !strings.Contains(empty.body, "No records yet") || !strings.Contains(empty.body, "http://shop.localhost") {
		t.Fatalf("empty table: %d %s", empty.status, empty.body)
	}
	newForm := b.do(http.MethodGet, base+"/new", nil, false)
	if !strings.Contains(newForm.body, `name="field.stock" value="1"`) || !strings.Contains(newForm.body, "[String], one item a line") {
		t.Errorf("new record form lacks the default or the list hint: %s", newForm.body)
	}

	refused := []struct {
		name string
		form url.Values
		want string
	}{
		{"missing required", url.Values{"field.name": {"x"}}, "required"},
		{"bad float", url.Values{"field.name": {"x"}, "field.price": {"cheap"}}, `"cheap" is not a number`},
		{"int out of range", url.Values{"field.name": {"x"}, "field.price": {"1"}, "field.stock": {"3000000000"}}, "not a whole number"},
		{"bad list item", url.Values{"field.name": {"x"}, "field.price": {"1"}, "field.tags": {"a"}, "field.meta": {"{"}}, "not JSON"},
	}
	for _, r := range refused {
		a := b.do(http.MethodPost, base+"/records", r.form, true)
		if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, r.want) {
			t.Errorf("%s: %d, want %q in %s", r.name, a.status, r.want, a.body)
		}
	}

	for i, name := range []string{"apple", "Banana", "cherry", "date", "Éclair"} {
		a := b.do(http.MethodPost, base+"/records", url.Values{
			"field.name": {name}, "field.price": {fmt.Sprint(i + 1)}, "field.stock": {"1"},
			"field.tags": {"fruit\nred"}, "field.onSale": {"true"}, "field.meta": {`{"n":1}`},
		}, true)
		if a.status != http.StatusNoContent || a.header.Get("HX-Redirect") != base {
			t.Fatalf("create %s: %d %s", name, a.status, a.body)
		}
	}
	if a := b.do(http.MethodPost, base+"/records", url.Values{"field.name": {"apple"}, "field.price": {"9"}}, true); a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "name") {
		t.Errorf("a duplicate of a unique field: %d %s", a.status, a.body)
	}
	b.csrf = ""
	if a := b.do(http.MethodPost, base+"/records", url.Values{"field.name": {"fig"}, "field.price": {"9"}}, true); a.status != http.StatusForbidden {
		t.Errorf("create without the CSRF token: %d", a.status)
	}
	b.signIn()

	// Columns come in field order (meta, name, ...): the name is the second after the uid.
	names := regexp.MustCompile(`</code></a></td>\s*<td class="value"[^>]*>[^<]*</td>\s*<td class="value"[^>]*>([^<]*)</td>`)
	list := func(query string) []string {
		t.Helper()
		a := b.do(http.MethodGet, base+query, nil, false)
		if a.status != http.StatusOK {
			t.Fatalf("list %s: %d %s", query, a.status, a.body)
		}
		var out []string
		for _, m := range names.FindAllStringSubmatch(a.body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	lists := []struct {
		query string
		want  string
	}{
		{"", "Éclair date cherry Banana apple"},
		{"?sort=name", "Banana apple cherry date Éclair"},
		{"?sort=name&desc=1", "Éclair date cherry apple Banana"},
		{"?sort=price&field=price&op=gt&value=2.5", "cherry date Éclair"},
		{"?field=name&op=icontains&value=AN", "Banana"},
		{"?field=name&op=icontains&value=éCL", "Éclair"},
		{"?sort=name&field=tags&op=has&value=red", "Banana apple cherry date Éclair"},
		{"?field=onSale&op=isNull&value=true", ""},
	}
	for _, l := range lists {
		if got := strings.Join(list(l.query), " "); got != l.want {
			t.Errorf("list %s: %q, want %q", l.query, got, l.want)
		}
	}
	if a := b.do(http.MethodGet, base+"?field=price&op=gt&value=cheap", nil, false); a.status != http.StatusBadRequest || !strings.Contains(a.body, `price: "cheap" is not a number`) {
		t.Errorf("a filter value of the wrong type: %d %s", a.status, a.body)
	}

	// Edit apple: a new price, tags removed.
	var uid string
	page := b.do(http.MethodGet, base+"?field=name&op=eq&value=apple", nil, false)
	if m := regexp.MustCompile(`/records/([0-9a-f-]{36})"`).FindStringSubmatch(page.body); m != nil {
		uid = m[1]
	} else {
		t.Fatalf("no record link: %s", page.body)
	}
	edit := b.do(http.MethodGet, base+"/records/"+uid, nil, false)
	if !strings.Contains(edit.body, "fruit\nred</textarea>") || !strings.Contains(edit.body, `{"n":1}</textarea>`) || !strings.Contains(edit.body, "<option selected>true</option>") {
		t.Errorf("edit form does not show the record: %s", edit.body)
	}
	a := b.do(http.MethodPut, base+"/records/"+uid, url.Values{"field.name": {"apple"}, "field.price": {"7.25"}, "field.stock": {"3"}}, true)
	if a.status != http.StatusNoContent {
		t.Fatalf("update: %d %s", a.status, a.body)
	}
	var got []map[string]any
	recs, err := f.stores.ProjectRecords(ctx, "shop", "", p.StoreTables())
	if err != nil {
		t.Fatal(err)
	}
	if err := recs.Find(ctx, "products", store.Query{Filter: store.Compare(store.KeyUID, store.Eq, uid)}, &got); err != nil || len(got) != 1 {
		t.Fatalf("read back: %v %v", got, err)
	}
	if got[0]["price"] != 7.25 || got[0]["stock"] != float64(3) || got[0]["tags"] != nil || got[0]["onSale"] != nil {
		t.Errorf("after the update: %v", got[0])
	}

	// Paging: 30 more records, pages of 25 by keyset, nothing lost or repeated.
	for i := range 30 {
		if a := b.do(http.MethodPost, base+"/records", url.Values{"field.name": {fmt.Sprintf("item%02d", i)}, "field.price": {"1"}}, true); a.status != http.StatusNoContent {
			t.Fatalf("create item%02d: %d", i, a.status)
		}
	}
	first := b.do(http.MethodGet, base+"?sort=name", nil, false)
	next := regexp.MustCompile(`href="\?([^"]+)" rel="next"`).FindStringSubmatch(first.body)
	if next == nil || !strings.Contains(first.body, "35 records") {
		t.Fatalf("first page: no next link or count: %s", first.body)
	}
	seen := append(list("?sort=name"), list("?"+next[1])...)
	if len(seen) != 35 || !slices.IsSorted(seen[:30]) || seen[0] != "Banana" || seen[34] != "Éclair" {
		t.Errorf("two pages: %d records %v", len(seen), seen)
	}

	if a := b.do(http.MethodDelete, base+"/records/"+uid, nil, true); a.status != http.StatusOK {
		t.Fatalf("delete: %d %s", a.status, a.body)
	}
	if n, err := recs.Count(ctx, "products", store.Compare("name", store.Eq, "apple")); err != nil || n != 0 {
		t.Errorf("after delete: %d records named apple, %v", n, err)
	}
	if a := b.do(http.MethodGet, "/console/projects/shop/tables/nope", nil, false); a.status != http.StatusNotFound {
		t.Errorf("an unknown table: %d", a.status)
	}
}

// mcpMetrics are the series of mcpserver and telemetry the health page reads, under their
// names, in a registry of the test's own.
type mcpMetrics struct {
	reg                     *prometheus.Registry
	requests, calls, limits *prometheus.CounterVec
	seconds                 *prometheus.HistogramVec
	sessions                atomic.Int64
}

func newMCPMetrics() *mcpMetrics {
	m := &mcpMetrics{
		reg:      prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "platform_http_requests_total"}, []string{"project", "operation", "status"}),
		calls:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "platform_mcp_tool_calls_total"}, []string{"tool", "outcome"}),
		seconds:  prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "platform_mcp_tool_call_duration_seconds"}, []string{"tool"}),
		limits:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "platform_mcp_limiter_decisions_total"}, []string{"limit", "decision"}),
	}
	m.reg.MustRegister(m.requests, m.calls, m.seconds, m.limits, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "platform_mcp_sessions"},
		func() float64 { return float64(m.sessions.Load()) }))
	return m
}

// TestHealth: the stores answer, and the figures come from the metrics registry under the
// names mcpserver and telemetry register them with, sampled into charts; the fragment htmx
// polls is the same.
func TestHealth(t *testing.T) {
	m := newMCPMetrics()
	requests, calls, seconds, limits := m.requests, m.calls, m.seconds, m.limits
	f := start(t, console.Config{Metrics: m.reg, SampleInterval: 20 * time.Millisecond})
	b := f.browser(t)
	b.signIn()
	// Three samples, 30 ms apart: traffic between the first two, a slower call before the third.
	b.do(http.MethodGet, "/console/health", nil, false)
	requests.WithLabelValues("_none", "mcp", "200").Add(30)
	requests.WithLabelValues("shop", "list", "200").Add(10)
	calls.WithLabelValues("analyze_code", "ok").Add(3)
	calls.WithLabelValues("analyze_code", "timeout").Inc()
	seconds.WithLabelValues("analyze_code").Observe(0.5)
	seconds.WithLabelValues("analyze_code").Observe(1.5)
	limits.WithLabelValues("rate", "refused").Add(2)
	limits.WithLabelValues("concurrency", "refused").Inc()
	m.sessions.Store(3)
	time.Sleep(30 * time.Millisecond)
	b.do(http.MethodGet, "/console/health?figures=1", nil, true)
	seconds.WithLabelValues("analyze_code").Observe(0.25)
	time.Sleep(30 * time.Millisecond)

	card := func(name, value string) string {
		return `<h2>` + name + `</h2>
<p class="figure">` + value + `</p>
<svg class="spark" viewBox="0 0 120 28" preserveAspectRatio="none" role="img" aria-label="` + name + `: last 2 samples, highest `
	}
	for _, path := range []string{"/console/health?figures=1", "/console/health"} {
		a := b.do(http.MethodGet, path, nil, path != "/console/health")
		for _, want := range []string{
			`<td>database (sqlite)</td><td class="ok">ok</td>`, `<td>redis</td><td class="ok">ok</td>`,
			card("MCP requests/min", "0.0"), card("HTTP requests/min", "0.0"),
			`<path d="M0.0,1.0 L120.0,27.0"/>`, // a burst of requests, then none
			"<h2>MCP sessions</h2>\n<p class=\"figure\">3</p>",
			"<h2>Rate-limit rejections</h2>\n<p class=\"figure\">2</p>",
			"<h2>Connection-limit rejections</h2>\n<p class=\"figure\">1</p>",
			// Calls, failed, mean since the start and over the window: (0.5+1.5+0.25)/3 s.
			`<td>analyze_code</td><td>4</td><td>1</td><td>750ms</td><td>750ms</td>`,
			`aria-label="analyze_code mean time: last 2 samples, highest 1000.0 ms"><title>last 2 samples, highest 1000.0 ms</title><path d="M0.0,1.0 L120.0,20.5"/>`,
			`hx-trigger="every 20ms"`,
		} {
			if a.status != http.StatusOK || !strings.Contains(a.body, want) {
				t.Errorf("%s: %d, want %q in %s", path, a.status, want, a.body)
			}
		}
	}
	if a := b.do(http.MethodGet, "/console/health?figures=1", nil, true); strings.Contains(a.body, "<html") {
		t.Errorf("the polled figures are a whole page: %s", a.body)
	}
}

// TestFirstLoadIsSmall: the sign-in page and everything it loads stay within the issue's
// 200 KB compressed, come from the console itself, and are sent gzipped to a browser that
// accepts it.
func TestFirstLoadIsSmall(t *testing.T) {
	f := start(t, console.Config{})
	get := func(path string) (plain, sent int, body string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "localhost"
		req.Header.Set("Accept-Encoding", "gzip, deflate, br")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
		if resp.Header.Get("Content-Encoding") != "gzip" {
			// Answers under a kilobyte go as they are.
			if len(raw) >= 1024 {
				t.Errorf("%s (%d bytes) is not compressed: %v", path, len(raw), resp.Header)
			}
			return len(raw), len(raw), string(raw)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		text, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return len(text), len(raw), string(text)
	}
	plain, sent, page := get("/console/")
	assets := 0
	for _, r := range regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(r[1], "/console/assets/") {
			continue
		}
		p, s, _ := get(r[1])
		plain, sent = plain+p, sent+s
		assets++
	}
	t.Logf("first load: page and %d assets, %d bytes, %d bytes gzipped", assets, plain, sent)
	if assets != 2 || sent > 200<<10 {
		t.Errorf("first load: %d assets, %d bytes gzipped; want the script and the style sheet within 200 KB", assets, sent)
	}
	if strings.Contains(page, "://") {
		t.Errorf("the sign-in page loads something from elsewhere: %s", page)
	}
}

// TestIdentity: a project's issuer, audience and keys fetched from its JWKS; under the
// development issuer a token minted here passes the project's own verifier.
func TestIdentity(t *testing.T) {
	dev, err := tenant.OpenDevIssuer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	jwks := httptest.NewServer(dev)
	t.Cleanup(jwks.Close)
	f := start(t, console.Config{DevIssuer: dev})
	ctx := context.Background()
	demo, err := dev.DemoProject(jwks.URL)
	if err != nil {
		t.Fatal(err)
	}
	nowhere := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(nowhere.Close)
	other, err := tenant.ParseDocument([]byte(`{"id":"other","auth":{"jwksURL":"` + nowhere.URL + `/jwks.json","issuer":"https://idp.example/","audience":"other"},
		"tables":{"notes":{"fields":{"text":{"type":"String"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*tenant.Project{demo, other} {
		if _, _, err := f.reg.Put(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	b := f.browser(t)
	b.signIn()

	page := b.do(http.MethodGet, "/console/projects/demo/identity", nil, false)
	for _, want := range []string{"<code>" + tenant.DevIssuerName + "</code>", "<code>demo</code>", "ok: 1 keys", "Mint token"} {
		if page.status != http.StatusOK || !strings.Contains(page.body, want) {
			t.Errorf("identity of demo: %d, want %q in %s", page.status, want, page.body)
		}
	}
	minted := b.do(http.MethodPost, "/console/projects/demo/identity/token", url.Values{"sub": {"alice"}}, true)
	m := regexp.MustCompile(`readonly rows="4" spellcheck="false">([^<]+)</textarea>`).FindStringSubmatch(minted.body)
	if minted.status != http.StatusOK || m == nil {
		t.Fatalf("mint: %d %s", minted.status, minted.body)
	}
	rt, err := f.reg.Runtime(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	claims, err := rt.Verifier.Verify(ctx, m[1])
	if err != nil || claims["sub"] != "alice" {
		t.Fatalf("the minted token: %v %v", claims, err)
	}
	if strings.Contains(f.log.String(), m[1]) {
		t.Error("the minted token is in the log")
	}

	page = b.do(http.MethodGet, "/console/projects/other/identity", nil, false)
	if !strings.Contains(page.body, "fetch JWKS: 404 Not Found") || strings.Contains(page.body, "Mint token") {
		t.Errorf("identity of other: %s", page.body)
	}
	if a := b.do(http.MethodPost, "/console/projects/other/identity/token", url.Values{"sub": {"alice"}}, true); a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "does not trust") {
		t.Errorf("mint for a project of another issuer: %d %s", a.status, a.body)
	}
	if a := b.do(http.MethodPost, "/console/projects/demo/identity/token", url.Values{"sub": {""}}, true); a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "needs a subject") {
		t.Errorf("mint without a subject: %d %s", a.status, a.body)
	}
}

// TestIdentityVerifierStatus: the identity page shows the state of the JWKS client that
// verifies the project's tokens, here after a JWKS server that failed once: its first fetch
// failed, a token after the retry interval fetched it again, and the page names both.
func TestIdentityVerifierStatus(t *testing.T) {
	dev, err := tenant.OpenDevIssuer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var failNext atomic.Bool
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failNext.CompareAndSwap(true, false) {
			http.Error(w, "the key server is restarting", http.StatusInternalServerError)
			return
		}
		dev.ServeHTTP(w, r)
	}))
	t.Cleanup(jwks.Close)
	f := start(t, console.Config{DevIssuer: dev})
	ctx := context.Background()
	demo, err := dev.DemoProject(jwks.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.reg.Put(ctx, demo); err != nil {
		t.Fatal(err)
	}
	b := f.browser(t)
	b.signIn()
	verifier := regexp.MustCompile(`(?s)<td class="verifier">(.*?)</td>`)
	row := func() string {
		t.Helper()
		page := b.do(http.MethodGet, "/console/projects/demo/identity", nil, false)
		m := verifier.FindStringSubmatch(page.body)
		if page.status != http.StatusOK || m == nil {
			t.Fatalf("identity: %d %s", page.status, page.body)
		}
		return m[1]
	}
	if got := row(); !strings.Contains(got, "not fetched yet") {
		t.Errorf("before any token: %q", got)
	}

	minted := b.do(http.MethodPost, "/console/projects/demo/identity/token", url.Values{"sub": {"alice"}}, true)
	m := regexp.MustCompile(`spellcheck="false">([^<]+)</textarea>`).FindStringSubmatch(minted.body)
	if m == nil {
		t.Fatalf("mint: %d %s", minted.status, minted.body)
	}
	rt, err := f.reg.Runtime(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	failNext.Store(true)
	if _, err := rt.Verifier.Verify(ctx, m[1]); !errors.Is(err, tenant.ErrJWKSUnavailable) {
		t.Fatalf("the token while the JWKS fails: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := rt.Verifier.Verify(ctx, m[1]); err != nil {
		t.Fatalf("the token after the retry interval: %v", err)
	}
	st := rt.Verifier.JWKSStatus()
	if !st.Started || st.Keys != 1 || st.LastRefresh.IsZero() || !strings.Contains(st.LastError, "500") || st.LastRefresh.Before(st.LastErrorAt) {
		t.Errorf("status after a failed and a good fetch: %+v", st)
	}
	got := row()
	for _, want := range []string{`<span class="ok">1 keys</span>, last refresh ` + st.LastRefresh.UTC().Format("2006-01-02 15:04:05 UTC"), `<span class="error">last error `, "500"} {
		if !strings.Contains(got, want) {
			t.Errorf("after a failed and a good fetch: want %q in %q", want, got)
		}
	}
}

// TestProjectHistoryAndRestore: the project page lists every version with who applied it
// and a button that rolls back to it; a deleted project is listed apart and comes back.
func TestProjectHistoryAndRestore(t *testing.T) {
	f := start(t, console.Config{})
	b := f.browser(t)
	b.signIn()
	ctx := context.Background()
	v1 := "id: shop\ntables:\n  products:\n    fields:\n      name: {type: String, required: true}\n"
	v2 := v1 + "      sku: {type: String}\n"
	for _, doc := range []string{v1, v2} {
		if a := b.do(http.MethodPost, "/console/projects/apply", url.Values{"document": {doc}}, true); a.status != http.StatusOK {
			t.Fatalf("apply: %d %s", a.status, a.body)
		}
	}
	edit := b.do(http.MethodGet, "/console/projects/shop", nil, false)
	for _, want := range []string{
		`<h2>History</h2>`,
		"<td>console from 127.0.0.1</td>\n<td><pre class=\"diff\">+ field products.sku</pre></td>\n<td>current</td>",
		"<pre class=\"diff\">+ project shop\n+ table products</pre>",
		`hx-post="/console/projects/shop/rollback?to=1"`,
	} {
		if !strings.Contains(edit.body, want) {
			t.Fatalf("the project page lacks %q:\n%s", want, edit.body)
		}
	}
	a := b.do(http.MethodPost, "/console/projects/shop/rollback?to=1", nil, true)
	if a.status != http.StatusOK || !strings.Contains(a.body, "project shop rolled back to version 1 (version 3)\n  - field products.sku</pre>") {
		t.Fatalf("rollback: %d %s", a.status, a.body)
	}
	p, err := f.reg.Get(ctx, "shop")
	if err != nil || p.Version != 3 || p.Tables["products"].Fields["sku"].Type != "" {
		t.Fatalf("after the rollback: %+v, %v", p, err)
	}
	h, err := f.reg.History(ctx, "shop")
	if err != nil || len(h.Versions) != 3 || h.Versions[0].Who != "console from 127.0.0.1 (rollback to version 1)" {
		t.Fatalf("history after the rollback: %+v, %v", h, err)
	}
	if a := b.do(http.MethodPost, "/console/projects/shop/rollback?to=7", nil, true); a.status != http.StatusNotFound {
		t.Errorf("rollback to a missing version: %d %s", a.status, a.body)
	}

	if a := b.do(http.MethodDelete, "/console/projects/shop", nil, true); a.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", a.status, a.body)
	}
	list := b.do(http.MethodGet, "/console/", nil, false)
	if !strings.Contains(list.body, "<h2>Deleted projects</h2>") || !strings.Contains(list.body, `hx-post="/console/projects/shop/undelete"`) {
		t.Fatalf("the project list does not offer the deleted project: %s", list.body)
	}
	if a := b.do(http.MethodPost, "/console/projects/apply", url.Values{"document": {v2}}, true); a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "project deleted") {
		t.Fatalf("apply over the deleted project: %d %s", a.status, a.body)
	}
	if a := b.do(http.MethodPost, "/console/projects/shop/undelete", nil, true); a.status != http.StatusNoContent || a.header.Get("HX-Redirect") != "/console/projects/shop" {
		t.Fatalf("restore: %d %s", a.status, a.body)
	}
	if p, err := f.reg.Get(ctx, "shop"); err != nil || p.Version != 3 {
		t.Fatalf("after the restore: %+v, %v", p, err)
	}
	if a := b.do(http.MethodDelete, "/console/projects/shop", nil, true); a.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", a.status, a.body)
	}
	if a := b.do(http.MethodDelete, "/console/projects/shop?purge=true", nil, true); a.status != http.StatusNoContent {
		t.Fatalf("delete for good: %d %s", a.status, a.body)
	}
	if list := b.do(http.MethodGet, "/console/", nil, false); strings.Contains(list.body, "Deleted projects") {
		t.Errorf("a purged project is still listed: %s", list.body)
	}
}
