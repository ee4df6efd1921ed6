package console_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tenant/console"
)

// TestBrowserOperatorKeys drives the keys and audit pages in headless chromium: the admin
// creates a read key for one project on the keys page and copies it, signs in with it, sees
// that project alone and what the scope allows, and filters the audit log. With
// CONSOLE_SCREENSHOTS=<folder> it keeps a screenshot of each page there.
func TestBrowserOperatorKeys(t *testing.T) {
	chromium := testenv.Need(t, "chromium")
	f := start(t, console.Config{})
	for _, id := range []string{"shop", "blog"} {
		f.apply(t, `{"id":"`+id+`","tables":{"items":{"fields":{"name":{"type":"String"}}}}}`)
	}
	base := strings.Replace(f.srv.URL, "127.0.0.1", "localhost", 1)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.WindowSize(1100, 800), chromedp.NoSandbox)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	chromedp.ListenTarget(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(true)) }()
		}
	})
	shot := func(name string) chromedp.Action {
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
	run := func(step string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	signIn := func(token string) chromedp.Action {
		return chromedp.Tasks{
			chromedp.Navigate(base + "/console/"),
			chromedp.SendKeys("#token", token, chromedp.ByID),
			chromedp.Submit("#token", chromedp.ByID),
			chromedp.WaitVisible(`//h1[text()="Projects"]`),
		}
	}

	var key string
	run("add a record to shop",
		signIn(adminToken),
		chromedp.Navigate(base+"/console/projects/shop/tables/items/new"),
		chromedp.SendKeys(`[name="field.name"]`, "Blue mug", chromedp.ByQuery),
		chromedp.Click(`//button[text()="Create"]`),
		chromedp.WaitVisible(`//td[text()="Blue mug"]`))
	run("create a key on the keys page",
		chromedp.Click(`//nav/a[text()="Keys"]`),
		chromedp.WaitVisible(`//h1[text()="Operator keys"]`),
		chromedp.SendKeys("#key-name", "shop-reader", chromedp.ByID),
		chromedp.SendKeys("#key-scope", "project:shop:read", chromedp.ByID),
		chromedp.Click(`//button[text()="Create key"]`),
		chromedp.WaitVisible("#new-key-value", chromedp.ByID),
		shot("8-keys"),
		chromedp.Text("#new-key-value", &key, chromedp.ByID))
	if !strings.HasPrefix(key, "pk_") {
		t.Fatalf("the keys page shows the new key as %q", key)
	}

	var rows []string
	var who string
	run("sign in with it",
		// The key was shown by an htmx swap of the page: its Sign out button acts once htmx
		// has settled the new content.
		chromedp.WaitNotPresent(".htmx-settling, .htmx-swapping", chromedp.ByQuery),
		chromedp.Click(`//button[text()="Sign out"]`),
		chromedp.WaitVisible("#token", chromedp.ByID),
		signIn(key),
		chromedp.Evaluate(`[...document.querySelectorAll("main table tbody tr td:first-child")].map(td => td.textContent)`, &rows),
		chromedp.AttributeValue(".who", "title", &who, nil))
	if len(rows) != 1 || rows[0] != "shop" || !strings.Contains(who, "reads project shop, and changes nothing") {
		t.Fatalf("a shop read key sees %q, scope said %q", rows, who)
	}
	var hasKeys bool
	run("nav", chromedp.Evaluate(`!!document.querySelector('nav a[href="/console/keys"]')`, &hasKeys))
	if hasKeys {
		t.Errorf("a read key is offered the keys page")
	}

	var actions []string
	run("filter the audit log",
		chromedp.Click(`//nav/a[text()="Audit log"]`),
		chromedp.WaitVisible(`//h1[text()="Audit log"]`),
		chromedp.SetValue("#audit-since", "1h", chromedp.ByID),
		chromedp.Submit("#audit-since", chromedp.ByID),
		chromedp.WaitVisible("#audit", chromedp.ByID),
		shot("9-audit"),
		chromedp.Evaluate(`[...document.querySelectorAll("#audit tbody tr td:nth-child(4)")].map(td => td.textContent)`, &actions))
	if len(actions) != 1 || actions[0] != "record.create" {
		t.Errorf("shop's audit shows %q, want the record the admin added (the key belongs to no project)", actions)
	}
	var refused string
	run("the whole log is the operators'",
		chromedp.Navigate(base+"/console/audit"),
		chromedp.Text("p.error", &refused, chromedp.ByQuery))
	if !strings.Contains(refused, "does not allow this") {
		t.Errorf("the whole log for a project key: %q", refused)
	}
}
