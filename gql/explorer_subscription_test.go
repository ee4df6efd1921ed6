package gql_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/internal/testenv"
)

// headersSeen records the Authorization headers of the HTTP requests and WebSocket
// connections an explorer sent.
type headersSeen struct {
	mu      sync.Mutex
	posts   []string
	sockets []string
}

func (h *headersSeen) add(list *[]string, v string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	*list = append(*list, v)
}

func (h *headersSeen) snapshot() (posts, sockets []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.posts...), append([]string(nil), h.sockets...)
}

// TestExplorerSubscriptionInChromium opens the explorer in a real headless Chromium: its
// first screen sends no header the user did not write (the schema loads with none), a
// development token in the address's fragment fills the Authorization header (and leaves
// the address bar), and a subscription typed in the editor runs over the WebSocket and shows
// the product created meanwhile.
func TestExplorerSubscriptionInChromium(t *testing.T) {
	browser := testenv.Need(t, "chromium")
	cfg := gql.Config{Tables: []gql.Table{products()}, Introspection: true, Changes: stores.Changes().Project("explorer-sub")}
	cfg.Records = records(t, cfg.Tables...)
	api, err := gql.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	seen := &headersSeen{}
	auth := func(ctx context.Context, authorization string) (context.Context, context.CancelFunc, error) {
		seen.add(&seen.sockets, authorization)
		ctx, cancel := context.WithCancel(ctx)
		return ctx, cancel, nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/graphql", func(w http.ResponseWriter, r *http.Request) {
		if gql.IsWebSocket(r) {
			api.ServeWebSocket(w, r, auth)
			return
		}
		if r.Method == http.MethodPost {
			seen.add(&seen.posts, r.Header.Get("Authorization"))
		}
		api.ServeHTTP(w, r)
	})
	mux.Handle(gql.ExplorerPath, gql.ExplorerAssets())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	ctx := chromium(t, browser)

	// The first screen: the schema is introspected with no Authorization header.
	if err := chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/api/v1/graphql"),
		chromedp.WaitVisible(".graphiql-execute-button", chromedp.ByQuery),
	); err != nil {
		t.Fatalf("explorer's first screen: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for posts, _ := seen.snapshot(); len(posts) == 0 && time.Now().Before(deadline); posts, _ = seen.snapshot() {
		time.Sleep(50 * time.Millisecond)
	}
	posts, _ := seen.snapshot()
	if len(posts) == 0 {
		t.Fatal("the explorer sent no request on its first screen (the schema's introspection)")
	}
	for _, h := range posts {
		if h != "" {
			t.Errorf("the first screen sent Authorization %q, want none", h)
		}
	}

	// A development token in the fragment; a subscription from the editor.
	done := make(chan struct{})
	defer close(done)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
			body := `{"query":"mutation { createProduct(data: {name: \"Tea\", price: 3.5}) { id } }"}`
			if res, err := http.Post(srv.URL+"/api/v1/graphql", "application/json", strings.NewReader(body)); err == nil {
				res.Body.Close()
			}
		}
	}()
	var result, hash string
	err = chromedp.Run(ctx,
		// A new document: the same address with a fragment would only scroll the old one.
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(srv.URL+"/api/v1/graphql#token=secret"),
		chromedp.WaitVisible(".graphiql-execute-button", chromedp.ByQuery),
		chromedp.Evaluate(`location.hash`, &hash),
		// GraphiQL's editors are CodeMirror 5 instances; the query editor is the first.
		chromedp.Evaluate(`document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue('subscription { products { op record { id name } } }')`, nil),
		// GraphiQL parses the editor's text after a pause, and picks the transport by it.
		chromedp.Sleep(time.Second),
		chromedp.Click(".graphiql-execute-button", chromedp.ByQuery),
		chromedp.Poll(`(() => { const t = (document.querySelector('.result-window') || {}).innerText || ''; return t.includes('"CREATE"') || t.includes('rror') ? t : null })()`, &result),
	)
	if err != nil {
		t.Fatalf("subscription in the explorer: %v (result window: %q)", err, result)
	}
	for _, want := range []string{`"op": "CREATE"`, `"name": "Tea"`, `"id": "`} {
		if !strings.Contains(result, want) {
			t.Errorf("the result window shows %q, want %s", result, want)
		}
	}
	if hash != "" {
		t.Errorf("the address bar keeps the fragment %q, want the token gone from it", hash)
	}
	if _, sockets := seen.snapshot(); len(sockets) == 0 || sockets[len(sockets)-1] != "Bearer secret" {
		t.Errorf("the subscription's connection sent Authorization %q, want the token from the fragment", sockets)
	}
}
