package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
	"github.com/platform-dev/platform/tenant/console"
)

// TestBrowserIndexAdvice drives the index advice page in headless chromium: after an
// equality query on an unindexed field, the project page links to the advice, which names
// the index on that field with the rows it would save; "Declare this index" shows the dry
// run, "Apply" applies it, and the advice then says the table declares it. With
// CONSOLE_SCREENSHOTS=<folder> it keeps a screenshot of each step there.
func TestBrowserIndexAdvice(t *testing.T) {
	f := startOn(t, console.Config{}, tenant.Options{}, store.Config{DataDir: t.TempDir(), SlowQuery: time.Nanosecond})
	ctx := context.Background()
	p := f.apply(t, `{"id":"shop","tables":{"products":{"fields":{"name":{"type":"String"},"sku":{"type":"String"}}}}}`)
	recs, err := f.stores.ProjectRecords(ctx, "shop", "", p.StoreTables())
	if err != nil {
		t.Fatal(err)
	}
	var fields []map[string]any
	for i := range 300 {
		fields = append(fields, map[string]any{"name": fmt.Sprintf("item-%d", i), "sku": fmt.Sprintf("sku-%d", i)})
	}
	if err := recs.Insert(ctx, "products", "alice", fields, nil); err != nil {
		t.Fatal(err)
	}
	var found []map[string]any
	if err := recs.Find(ctx, "products", store.Query{Filter: store.Compare("sku", store.Eq, "sku-7")}, &found); err != nil || len(found) != 1 {
		t.Fatalf("find by sku: %v, %v", found, err)
	}

	base := strings.Replace(f.srv.URL, "127.0.0.1", "localhost", 1)
	bctx := browse(t, 60*time.Second)
	run, text := steps(t, bctx)
	run("sign in", signIn(base))
	run("advice",
		chromedp.Navigate(base+"/console/projects/shop"),
		chromedp.Click(`//a[text()="Index advice"]`),
		chromedp.WaitVisible("#advice-0", chromedp.ByID),
		shot("advice-1"))
	if got := text("#advice-0 h2"); !strings.Contains(got, "products: list where sku = …") {
		t.Errorf("shape: %q", got)
	}
	if got, saved := text("#advice-0 code.index"), text("#advice-0 td.saved"); got != "sku" || saved != "299" {
		t.Errorf("advice: index %q saving %s rows, want sku saving 299", got, saved)
	}
	run("declare: dry run",
		chromedp.Click(`//button[text()="Declare this index"]`),
		chromedp.WaitVisible("#outcome-0 .outcome", chromedp.ByQuery),
		shot("advice-2-dry-run"))
	if got := text("#outcome-0 pre.diff"); !strings.Contains(got, "~ indexes products") || strings.Contains(text("#outcome-0"), "Applied") {
		t.Fatalf("dry run: %q", got)
	}
	run("apply",
		chromedp.Click(`#advice-0 button.primary`, chromedp.ByQuery),
		chromedp.WaitVisible("#outcome-0 .outcome.applied", chromedp.ByQuery),
		shot("advice-3-applied"))
	applied, err := f.reg.Get(ctx, "shop")
	if err != nil || len(applied.Tables["products"].Indexes) != 1 || applied.Tables["products"].Indexes[0].Fields[0] != "sku" {
		t.Fatalf("after apply: %+v, %v", applied, err)
	}
	run("advice after the apply",
		chromedp.Navigate(base+"/console/projects/shop/advice"),
		chromedp.WaitVisible("#advice-0 p.ok", chromedp.ByQuery))
	phone(t, bctx, base, "advice-4-phone", shot, "/console/projects/shop/advice")
}
