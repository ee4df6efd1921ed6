package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/platform-dev/platform/tenant"
	"github.com/platform-dev/platform/tenant/console"
)

// quotaShop creates project shop with n records of products.
func quotaShop(t *testing.T, f *fixture, n int) {
	t.Helper()
	ctx := context.Background()
	f.apply(t, `{"id":"shop","tables":{"products":{"fields":{"name":{"type":"String"}}}}}`)
	rt, err := f.reg.Runtime(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := rt.Records.Insert(ctx, "products", "", []map[string]any{{"name": "mug"}}, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestQuotaForm: the form sets the project's quotas, refuses what is not a quota value
// naming the field, and empty fields take the defaults again.
func TestQuotaForm(t *testing.T) {
	f := startWith(t, console.Config{}, tenant.Options{Quotas: tenant.Quotas{Tables: 5}})
	quotaShop(t, f, 2)
	b := f.browser(t)
	b.signIn()
	a := b.do(http.MethodPost, "/console/projects/shop/quotas", url.Values{"q.records": {"abc"}}, true)
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, `quota records: "abc" is not a whole number`) {
		t.Errorf("a word for records: %d %s", a.status, a.body)
	}
	a = b.do(http.MethodPost, "/console/projects/shop/quotas", url.Values{"q.tables": {"-2"}}, true)
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "quota tables: -2 is out of bounds") {
		t.Errorf("negative tables: %d %s", a.status, a.body)
	}
	a = b.do(http.MethodPost, "/console/projects/shop/quotas", url.Values{"q.records": {"2"}, "q.tables": {""}}, true)
	if a.status != http.StatusOK || !strings.Contains(a.body, "quotas saved") || !strings.Contains(a.body, "<strong>records</strong>: 2 of 2 (100%), the whole quota") {
		t.Errorf("records 2: %d %s", a.status, a.body)
	}
	rep, err := f.reg.QuotaReport(context.Background(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	if l := rep.Quotas[2]; l.Quota != "records" || l.Limit != 2 || l.Override != 2 || *l.Used != 2 || l.Alert != tenant.AlertExceeded {
		t.Errorf("records after the form: %+v", l)
	}
	if l := rep.Quotas[4]; l.Quota != "tables" || l.Limit != 5 || l.Override != 0 {
		t.Errorf("tables after the form: %+v, want the default 5", l)
	}
}

// TestBrowserQuotas sets a project's quotas in chromium and sees the 80% and 100% alerts
// on the quotas page and the project page; the quotas page fits a phone.
func TestBrowserQuotas(t *testing.T) {
	f := start(t, console.Config{})
	quotaShop(t, f, 4)
	base := strings.Replace(f.srv.URL, "127.0.0.1", "localhost", 1)
	ctx := browse(t, 60*time.Second)
	run, text := steps(t, ctx)
	run("sign in", signIn(base))
	run("set records to 5",
		chromedp.Navigate(base+"/console/projects/shop/quotas"),
		chromedp.SetValue(`[name="q.records"]`, "5", chromedp.ByQuery),
		chromedp.Click(`//button[text()="Save quotas"]`),
		chromedp.WaitVisible("p.ok", chromedp.ByQuery))
	if got := text("#quota-records"); !strings.Contains(got, "80% warning") {
		t.Errorf("records at 4 of 5: %q, want an 80%% warning", got)
	}
	run("the project page", chromedp.Navigate(base+"/console/projects/shop"), chromedp.WaitVisible("#quota-alerts", chromedp.ByQuery))
	if got := text("#quota-alerts"); !strings.Contains(got, "records: 4 of 5 (80%), past 80%") {
		t.Errorf("project page alerts: %q", got)
	}
	run("set records to 4",
		chromedp.Navigate(base+"/console/projects/shop/quotas"),
		chromedp.SetValue(`[name="q.records"]`, "4", chromedp.ByQuery),
		chromedp.Click(`//button[text()="Save quotas"]`),
		chromedp.WaitVisible("p.ok", chromedp.ByQuery))
	if got := text("#quota-records"); !strings.Contains(got, "100% exceeded") {
		t.Errorf("records at 4 of 4: %q, want exceeded", got)
	}
	run("the project page again", chromedp.Navigate(base+"/console/projects/shop"), chromedp.WaitVisible("#quota-alerts", chromedp.ByQuery))
	if got := text("#quota-alerts"); !strings.Contains(got, "records: 4 of 4 (100%), the whole quota") {
		t.Errorf("project page alerts: %q", got)
	}
	phone(t, ctx, base, "", func(string) chromedp.Action { return chromedp.ActionFunc(func(context.Context) error { return nil }) }, "/console/projects/shop/quotas")
}
