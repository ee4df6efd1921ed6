package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
	"github.com/platform-dev/platform/tenant/console"
)

// TestBrowserWebhooks drives the webhooks page in headless chromium: the project page links
// to it; a receiver that refuses shows its delivery pending with the attempts and the error;
// once the receiver accepts, the delivery shows delivered with HTTP 204; Retry sends it again
// with the same id.
func TestBrowserWebhooks(t *testing.T) {
	var accept atomic.Bool
	var mu sync.Mutex
	ids := map[string]int{}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !accept.Load() {
			http.Error(w, "not today", http.StatusServiceUnavailable)
			return
		}
		mu.Lock()
		ids[r.Header.Get("webhook-id")]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	f := startOn(t, console.Config{}, tenant.Options{Webhooks: tenant.WebhookOptions{AllowPrivate: true, Attempts: 1000, Backoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Poll: 50 * time.Millisecond}},
		store.Config{DataDir: t.TempDir()})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.reg.RunWebhooks(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	f.apply(t, `{"id":"shop","tables":{"products":{"fields":{"name":{"type":"String"}},
  "webhooks":{"orders":{"url":"`+rcv.URL+`","events":["create"]}}}}}`)
	rt, err := f.reg.Runtime(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Records.Insert(ctx, "products", "alice", []map[string]any{{"name": "pen"}}, nil); err != nil {
		t.Fatal(err)
	}

	base := strings.Replace(f.srv.URL, "127.0.0.1", "localhost", 1)
	bctx := browse(t, 60*time.Second)
	run, text := steps(t, bctx)
	run("sign in", signIn(base))
	run("webhooks",
		chromedp.Navigate(base+"/console/projects/shop"),
		chromedp.Click(`//a[text()="Webhooks"]`),
		chromedp.WaitVisible("#webhook-orders", chromedp.ByID))
	// rowWith reloads the page until the delivery's row holds want, and answers the row.
	rowWith := func(want string) string {
		t.Helper()
		var row string
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(row, want); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the delivery's row never showed %q: %q", want, row)
			}
			run("reload", chromedp.Reload(), chromedp.WaitVisible("#webhook-orders tbody tr", chromedp.ByQuery))
			row = text("#webhook-orders tbody tr")
		}
		return row
	}
	row := rowWith("HTTP 503")
	run("pending", shot("webhooks-1-pending"))
	if state := text("#webhook-orders tbody tr td.state"); state != "pending" || !strings.Contains(row, "not today") {
		t.Errorf("refused delivery: state %q, row %q", state, row)
	}
	accept.Store(true)
	if row := rowWith("delivered"); !strings.Contains(row, "HTTP 204") {
		t.Errorf("delivered row: %q", row)
	}
	run("retry",
		chromedp.Click(`//button[text()="Retry"]`),
		chromedp.WaitVisible("#webhooks p.ok", chromedp.ByQuery),
		shot("webhooks-2-retried"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n, distinct := 0, len(ids)
		for _, c := range ids {
			n = c
		}
		mu.Unlock()
		if n == 2 && distinct == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the retry the receiver got %v, want one id twice", ids)
		}
		time.Sleep(50 * time.Millisecond)
	}
	phone(t, bctx, base, "webhooks-3-phone", shot, "/console/projects/shop/webhooks")
}
