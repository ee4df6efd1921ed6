package gql_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/internal/testenv"
)

// chromium starts a headless Chromium at browser for the test, 90 s at most.
func chromium(t *testing.T, browser string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancelTime := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelTime)
	return ctx
}

// TestExplorerInChromium loads the explorer in a real headless Chromium, runs a query from its
// editor and reads the answer off the page. .ci/run installs Debian's chromium.
func TestExplorerInChromium(t *testing.T) {
	browser := testenv.Need(t, "chromium")
	srv := serveExplorer(t, gql.Config{Tables: []gql.Table{products()}, Introspection: true})
	create(t, srv, map[string]any{"name": "Tea", "price": 3.5})

	ctx := chromium(t, browser)
	var result string
	err := chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/api/v1/graphql"),
		chromedp.WaitVisible(".graphiql-execute-button", chromedp.ByQuery),
		// GraphiQL's editors are CodeMirror 5 instances; the query editor is the first.
		chromedp.Evaluate(`document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue('{ products { name price } }')`, nil),
		chromedp.Click(".graphiql-execute-button", chromedp.ByQuery),
		// Poll waits for a truthy value: the result window's text once it shows a record.
		chromedp.Poll(`(() => { const t = (document.querySelector('.result-window') || {}).innerText || ''; return t.includes('"name"') ? t : null })()`, &result),
	)
	if err != nil {
		t.Fatalf("explorer in %s: %v (result window: %q)", browser, err, result)
	}
	for _, want := range []string{`"name": "Tea"`, `"price": 3.5`} {
		if !strings.Contains(result, want) {
			t.Errorf("the result window shows %q, want %s", result, want)
		}
	}
}
