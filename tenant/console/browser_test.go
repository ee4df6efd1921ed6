package console_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tenant/console"
)

// TestBrowser drives the console in headless Debian chromium as an operator would: a wrong
// token, sign in, a document with a mistake, the fix, a record added, listed and deleted, the
// health page's live figures, a change without the CSRF token refused, sign out; and the
// main pages at a phone's width (390x844): nothing wider than the screen, keyboard focus
// visible. With CONSOLE_SCREENSHOTS=<folder> it keeps a screenshot of each step there
// (docs/console.md shows them).
func TestBrowser(t *testing.T) {
	m := newMCPMetrics()
	f := start(t, console.Config{Metrics: m.reg, SampleInterval: 300 * time.Millisecond})
	base := strings.Replace(f.srv.URL, "127.0.0.1", "localhost", 1)
	ctx := browse(t, 90*time.Second)
	run, text := steps(t, ctx)

	run("wrong token",
		chromedp.Navigate(base+"/console/"),
		chromedp.SendKeys("#token", "not-the-token", chromedp.ByID),
		chromedp.Submit("#token", chromedp.ByID),
		chromedp.WaitVisible("p.error", chromedp.ByQuery))
	if got := text("p.error"); !strings.Contains(got, "not the admin token") {
		t.Fatalf("wrong token: %q", got)
	}
	run("sign in",
		shot("1-sign-in"),
		chromedp.SendKeys("#token", adminToken, chromedp.ByID),
		chromedp.Submit("#token", chromedp.ByID),
		chromedp.WaitVisible(`//h1[text()="Projects"]`))

	mistake := "id: shop\ntables:\n  products:\n    fields:\n      name: {type: String, required: true}\n      price: {type: Flot}\n"
	run("apply a document with a mistake",
		chromedp.Navigate(base+"/console/projects/new"),
		chromedp.SetValue("#document", mistake, chromedp.ByID),
		chromedp.Click(`//button[text()="Apply"]`),
		chromedp.WaitVisible(".problems", chromedp.ByQuery),
		shot("2-problem"))
	if got := text(".problems"); !strings.Contains(got, "tables.products.fields.price.type line 6") {
		t.Fatalf("the mistake is not shown at its path: %q", got)
	}
	run("fix and apply",
		chromedp.SetValue("#document", strings.Replace(mistake, "Flot", "Float", 1), chromedp.ByID),
		chromedp.Click(`//button[text()="Apply"]`),
		chromedp.WaitVisible(".outcome.applied", chromedp.ByQuery),
		shot("3-applied"))
	if got := text("pre.diff"); !strings.HasPrefix(got, "project shop created (version 1)\n  + project shop\n  + table products") {
		t.Fatalf("apply: %q", got)
	}

	run("add a record",
		chromedp.Navigate(base+"/console/projects/shop/tables/products/new"),
		chromedp.SendKeys(`[name="field.name"]`, "Blue mug", chromedp.ByQuery),
		chromedp.SendKeys(`[name="field.price"]`, "4.5", chromedp.ByQuery),
		shot("4-record-form"),
		chromedp.Click(`//button[text()="Create"]`),
		chromedp.WaitVisible(`//td[text()="Blue mug"]`),
		shot("5-records"))
	if got := text("h1 .count"); got != "1 record" {
		t.Fatalf("after adding: %q", got)
	}
	phone(t, ctx, base, "7-phone-records", shot, "/console/", "/console/projects/new", "/console/projects/shop",
		"/console/projects/shop/tables/products/new", "/console/projects/shop/identity", "/console/health",
		"/console/projects/shop/tables/products")
	run("delete it",
		chromedp.WaitVisible(`//td[text()="Blue mug"]`),
		chromedp.Click(`//button[text()="Delete"]`),
		chromedp.WaitNotPresent(`//td[text()="Blue mug"]`))

	// MCP traffic while the health page is open: htmx polls it, and the charts grow.
	run("health", chromedp.Navigate(base+"/console/health"), chromedp.WaitVisible(".cards", chromedp.ByQuery))
	m.sessions.Store(2)
	for i := range 10 {
		m.requests.WithLabelValues("_none", "mcp", "200").Add(float64(20 + 7*(i%4)))
		m.calls.WithLabelValues("analyze_codebase", "ok").Add(float64(2 + i%3))
		m.seconds.WithLabelValues("analyze_codebase").Observe(0.2 + 0.05*float64(i%5))
		m.calls.WithLabelValues("consult_expert", "ok").Inc()
		m.seconds.WithLabelValues("consult_expert").Observe(0.04 + 0.01*float64(i%3))
		if i%4 == 3 {
			m.limits.WithLabelValues("rate", "refused").Inc()
		}
		m.sessions.Add(int64(i % 2))
		time.Sleep(300 * time.Millisecond)
	}
	run("health after polling", chromedp.WaitVisible(`//td[text()="consult_expert"]`), shot("6-health"))
	// htmx swaps the figures every 300 ms: one script reads them at once.
	var health struct {
		Tools   string
		Paths   int
		Blocked []string
	}
	run("charts", chromedp.Evaluate(`({Tools: document.querySelector(".tools").textContent,
		Paths: document.querySelectorAll("svg.spark path").length, Blocked: blocked})`, &health))
	if !strings.Contains(health.Tools, "analyze_codebase") || health.Paths < 10 || len(health.Blocked) > 0 {
		t.Errorf("health after polling: tools %q, %d charts drawn, blocked by the CSP %q; want both tools, the cards' and tools' charts, nothing blocked",
			health.Tools, health.Paths, health.Blocked)
	}

	var status int
	err := chromedp.Run(ctx, chromedp.Evaluate(`fetch("/console/logout", {method: "POST"}).then(r => r.status)`, &status,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if err != nil || status != 403 {
		t.Fatalf("sign out without the CSRF token: %d %v, want 403", status, err)
	}
	run("sign out",
		chromedp.Click(`//button[text()="Sign out"]`),
		chromedp.WaitVisible("#token", chromedp.ByID))
	phone(t, ctx, base, "", shot, "/console/")
}

// phone shows each page at a phone's size (390x844 CSS pixels, as a mobile browser lays it
// out) and checks that nothing is wider than the screen and that the first element the Tab
// key reaches shows its focus; the screenshot named is of the last page. The window's size
// comes back afterwards.
func phone(t *testing.T, ctx context.Context, base, name string, shot func(string) chromedp.Action, pages ...string) {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := chromedp.Run(ctx, chromedp.EmulateViewport(1100, 800)); err != nil {
			t.Fatal(err)
		}
	}()
	for _, p := range pages {
		var width struct {
			Scroll, Inner int
			Blocked       []string
		}
		var focus struct{ Tag, Style, Width string }
		err := chromedp.Run(ctx,
			chromedp.Navigate(base+p),
			chromedp.WaitReady("main", chromedp.ByQuery),
			chromedp.Evaluate(`({Scroll: document.documentElement.scrollWidth, Inner: innerWidth, Blocked: blocked})`, &width),
			chromedp.KeyEvent(kb.Tab),
			chromedp.Evaluate(`(() => { const e = document.activeElement, s = getComputedStyle(e);
				return {Tag: e.tagName, Style: s.outlineStyle, Width: s.outlineWidth}; })()`, &focus))
		if err != nil {
			t.Fatalf("phone %s: %v", p, err)
		}
		if width.Inner != 390 || width.Scroll > width.Inner {
			t.Errorf("phone %s: the page is %d pixels wide on a screen of %d", p, width.Scroll, width.Inner)
		}
		if len(width.Blocked) > 0 {
			t.Errorf("phone %s: the CSP blocked %q", p, width.Blocked)
		}
		if focus.Tag == "BODY" || focus.Style == "none" || focus.Width == "0px" {
			t.Errorf("phone %s: Tab focuses %s with outline %s %s; want a visible focus", p, focus.Tag, focus.Style, focus.Width)
		}
	}
	if name != "" {
		if err := chromedp.Run(ctx, shot(name)); err != nil {
			t.Fatal(err)
		}
	}
}

// browse starts a headless chromium (1100x800) for a test: it answers window.confirm (which
// hx-confirm asks) with yes, and every page notes in window.blocked what the
// Content-Security-Policy blocked. It ends with the test, or after timeout.
func browse(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	chromium := testenv.Need(t, "chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium),
		chromedp.WindowSize(1100, 800), chromedp.NoSandbox)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancel(); cancelBrowser(); cancelAlloc() })
	chromedp.ListenTarget(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(true)) }()
		}
	})
	if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(`window.blocked = [];
			document.addEventListener("securitypolicyviolation", e => blocked.push(e.violatedDirective + " " + e.blockedURI));`).Do(ctx)
		return err
	})); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// steps are how a test drives ctx: run runs a step's actions and fails the test at the first
// that fails; text reads the text of the element sel selects.
func steps(t *testing.T, ctx context.Context) (run func(step string, actions ...chromedp.Action), text func(sel string) string) {
	run = func(step string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	text = func(sel string) string {
		t.Helper()
		var s string
		run("read "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
		return s
	}
	return run, text
}

// signIn signs in to the console at base with the admin token.
func signIn(base string) chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.Navigate(base + "/console/"),
		chromedp.SendKeys("#token", adminToken, chromedp.ByID),
		chromedp.Submit("#token", chromedp.ByID),
		chromedp.WaitVisible(`//h1[text()="Projects"]`),
	}
}

// shot keeps a screenshot of the page as name.png in $CONSOLE_SCREENSHOTS, when it is set
// (docs/console.md shows them).
func shot(name string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		dir := os.Getenv("CONSOLE_SCREENSHOTS")
		if dir == "" {
			return nil
		}
		var png []byte
		if err := chromedp.FullScreenshot(&png, 100).Do(ctx); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	})
}
