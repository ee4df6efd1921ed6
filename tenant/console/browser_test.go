package console_test

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/platform-dev/platform/tenant/console"
)

// TestBrowser drives the console in headless Debian chromium as an operator would: a wrong
// token, sign in, a document with a mistake, the fix, a record added, listed and deleted, a
// change without the CSRF token refused, sign out. With CONSOLE_SCREENSHOTS=<folder> it
// keeps a screenshot of each step there (docs/console.md shows them).
func TestBrowser(t *testing.T) {
	chromium, err := osexec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium (.ci/run installs Debian's): the console is tested through HTTP only here")
	}
	f := start(t, console.Config{})
	base := strings.Replace(f.srv.URL, "127.0.0.1", "localhost", 1)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium),
		chromedp.WindowSize(1100, 800), chromedp.NoSandbox)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	// hx-confirm asks with window.confirm: the operator says yes.
	chromedp.ListenTarget(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(true)) }()
		}
	})

	shots := os.Getenv("CONSOLE_SCREENSHOTS")
	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			if shots == "" {
				return nil
			}
			var png []byte
			if err := chromedp.FullScreenshot(&png, 100).Do(ctx); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
		})
	}
	run := func(step string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		var s string
		run("read "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
		return s
	}

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
	run("delete it",
		chromedp.Click(`//button[text()="Delete"]`),
		chromedp.WaitNotPresent(`//td[text()="Blue mug"]`))

	var status int
	err = chromedp.Run(ctx, chromedp.Evaluate(`fetch("/console/logout", {method: "POST"}).then(r => r.status)`, &status,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if err != nil || status != 403 {
		t.Fatalf("sign out without the CSRF token: %d %v, want 403", status, err)
	}
	run("sign out",
		chromedp.Click(`//button[text()="Sign out"]`),
		chromedp.WaitVisible("#token", chromedp.ByID))
}
