package console_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
	"github.com/platform-dev/platform/tenant/console"
)

// usageFixture is a console with project shop and usage on the two days before today and
// in today's first hour: 10, 30 and 5 requests.
func usageFixture(t *testing.T) (*fixture, time.Time) {
	t.Helper()
	f := startWith(t, console.Config{}, tenant.Options{})
	ctx := context.Background()
	f.apply(t, `{"id":"shop","tables":{"notes":{"fields":{"text":{"type":"String"}}}}}`)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	if err := f.stores.Usage().Add(ctx, []store.Usage{
		{Project: "shop", Start: today.AddDate(0, 0, -2), Requests: 10, Errors: 1},
		{Project: "shop", Start: today.AddDate(0, 0, -1), Requests: 30, Errors: 4},
		{Project: "shop", Start: today, Requests: 5},
	}); err != nil {
		t.Fatal(err)
	}
	return f, today
}

// TestUsagePage: a project's usage page charts a measure by day over the range (today the
// sum of its hours) and today by hour, lists every measure, and shows a mistake in the
// range or the measure.
func TestUsagePage(t *testing.T) {
	f, today := usageFixture(t)
	b := f.browser(t)
	b.signIn()
	if page := b.do(http.MethodGet, "/console/projects/shop", nil, false); !strings.Contains(page.body, `href="/console/projects/shop/usage"`) {
		t.Errorf("the project page links no usage: %s", page.body)
	}
	page := b.do(http.MethodGet, "/console/projects/shop/usage", nil, false)
	days := regexp.MustCompile(`(?s)<svg class="bars" id="usage-days".*?</svg>`).FindString(page.body)
	day := func(d int) string { return today.AddDate(0, 0, d).Format(time.DateOnly) }
	if page.status != http.StatusOK || strings.Count(days, "<rect") != 30 ||
		!strings.Contains(days, `height="119.0"><title>`+day(-1)+`: 30</title>`) ||
		!strings.Contains(days, `<title>`+day(-2)+`: 10</title>`) || !strings.Contains(days, `<title>`+day(0)+`: 5</title>`) {
		t.Errorf("usage page: %d, days chart %s", page.status, days)
	}
	if !strings.Contains(page.body, `id="usage-hours"`) || !strings.Contains(page.body, `<tr class="total"><td>`+day(-29)+` to `+day(0)+`</td><td>45</td>`) {
		t.Errorf("usage page: no hours chart or no total of 45 requests: %s", page.body)
	}
	page = b.do(http.MethodGet, "/console/projects/shop/usage?measure=errors&from="+day(-1), nil, false)
	if days := regexp.MustCompile(`(?s)<svg class="bars" id="usage-days".*?</svg>`).FindString(page.body); strings.Count(days, "<rect") != 2 ||
		!strings.Contains(days, `<title>`+day(-1)+`: 4</title>`) || !strings.Contains(page.body, "Errors by day") {
		t.Errorf("errors from yesterday: %s", days)
	}
	for _, tc := range []struct{ path, want string }{
		{"/console/projects/shop/usage?measure=nope", `no measure "nope"`},
		{"/console/projects/shop/usage?from=2026-13-01", "give a day as YYYY-MM-DD"},
		{"/console/projects/shop/usage?from=2020-01-01", "more than the 366"},
	} {
		if page := b.do(http.MethodGet, tc.path, nil, false); page.status != http.StatusBadRequest || !strings.Contains(page.body, tc.want) {
			t.Errorf("GET %s: %d, want 400 with %q: %s", tc.path, page.status, tc.want, page.body)
		}
	}
}

// TestUsageBrowser: the usage page in chromium draws its bars within the CSP, switches
// measure, and fits a phone's screen.
func TestUsageBrowser(t *testing.T) {
	f, today := usageFixture(t)
	base := strings.Replace(f.srv.URL, "127.0.0.1", "localhost", 1)
	ctx := browse(t, 60*time.Second)
	var drawn struct {
		Bars    int
		Tallest float64
		Blocked []string
	}
	var heading string
	if err := chromedp.Run(ctx,
		signIn(base),
		chromedp.Navigate(base+"/console/projects/shop/usage"),
		chromedp.WaitVisible("#usage-days", chromedp.ByQuery),
		chromedp.Evaluate(`({Bars: document.querySelectorAll("#usage-days rect").length,
			Tallest: Math.max(...[...document.querySelectorAll("#usage-days rect")].map(r => r.getBoundingClientRect().height)),
			Blocked: blocked})`, &drawn),
		chromedp.Click(`//a[text()="Errors"]`),
		chromedp.WaitVisible(`//h2[starts-with(text(), "Errors by day")]`),
		chromedp.Text("h2", &heading, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if drawn.Bars != 30 || drawn.Tallest < 100 || len(drawn.Blocked) > 0 {
		t.Errorf("usage chart: %d bars, the tallest %.0f px, blocked by the CSP %q; want 30, drawn tall, nothing blocked", drawn.Bars, drawn.Tallest, drawn.Blocked)
	}
	if want := fmt.Sprintf("Errors by day, %s to %s (UTC)", today.AddDate(0, 0, -29).Format(time.DateOnly), today.Format(time.DateOnly)); heading != want {
		t.Errorf("after choosing errors: %q, want %q", heading, want)
	}
	phone(t, ctx, base, "", func(string) chromedp.Action { return chromedp.ActionFunc(func(context.Context) error { return nil }) },
		"/console/projects/shop/usage")
}
