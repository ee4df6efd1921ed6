package tenant_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestFileURLsInSubscriptions: a subscription's events answer File.url and signedUrl where
// the connection was made, over WebSocket and SSE, as a query on it would
// (TestFileURLsBehindProxies): absolute, on the connection's host or path form, and from a
// trusted proxy where its X-Forwarded-* say; and the file is fetched at them.
func TestFileURLsInSubscriptions(t *testing.T) {
	forwarded := http.Header{"X-Forwarded-Host": {"files.example"}, "X-Forwarded-Proto": {"https"}, "X-Forwarded-Prefix": {"/edge/"}}
	const sub = `subscription { posts { op record { photo { url signedUrl } } } }`
	// direct are the starts of the url on the project's host and in its path form, where a
	// proxy sends what it received at the url's start.
	direct := map[string]string{"media.platform.test/api/v1/graphql": "http://media.platform.test/files/", "platform.test/p/media/api/v1/graphql": "http://platform.test/p/media/files/"}
	for _, tc := range []struct {
		name    string
		proxies []string
		// want are the starts of the url answered at each endpoint.
		want map[string]string
	}{
		{"no trusted proxy", nil, direct},
		{"another proxy trusted", []string{"10.0.0.0/8"}, direct},
		{"the peer trusted", []string{"127.0.0.1"}, map[string]string{"media.platform.test/api/v1/graphql": "https://files.example/edge/files/", "platform.test/p/media/api/v1/graphql": "https://files.example/edge/p/media/files/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, alice := filesBehind(t, tc.proxies)
			addr := strings.TrimPrefix(s.url, "http://")
			photo := pngOf(t, 8, 8)
			// Each transport subscribes at endpoint and answers a reader of its next event,
			// false when none came within a second.
			transports := map[string]func(t *testing.T, endpoint string) func() (json.RawMessage, bool){
				"websocket": func(t *testing.T, endpoint string) func() (json.RawMessage, bool) {
					ws, _, err := dialAt(t, addr, "ws://"+endpoint, forwarded, "graphql-transport-ws")
					if err != nil {
						t.Fatal(err)
					}
					ws.init(alice)
					ws.subscribe("1", sub, nil)
					return func() (json.RawMessage, bool) {
						m, ok := ws.within(time.Second)
						if ok && m.Type != "next" {
							t.Fatalf("want next, got %+v %s", m, m.Payload)
						}
						return m.Payload, ok
					}
				},
				"sse": func(t *testing.T, endpoint string) func() (json.RawMessage, bool) {
					st := sseAt(t, addr, "http://"+endpoint, alice, sub, forwarded)
					return func() (json.RawMessage, bool) { return json.RawMessage(st.next(t)), true }
				},
			}
			for name, open := range transports {
				for endpoint, want := range tc.want {
					t.Run(name+" "+endpoint, func(t *testing.T) {
						next := open(t, endpoint)
						// graphql-transport-ws does not say when a subscription starts: create
						// until it sees one.
						for range 20 {
							a := s.multipartPost(t, alice, createPost, map[string]any{"photo": nil}, []upload{{"variables.photo", "cat.png", photo}}, true)
							if len(a.Errors) > 0 {
								t.Fatalf("create: %+v", a.Errors)
							}
							payload, ok := next()
							if !ok {
								continue
							}
							var ev struct {
								Data struct {
									Posts struct{ Record struct{ Photo fileOut } }
								}
							}
							if err := json.Unmarshal(payload, &ev); err != nil {
								t.Fatalf("event %s: %v", payload, err)
							}
							p := ev.Data.Posts.Record.Photo
							if !strings.HasPrefix(p.URL, want) || !strings.HasPrefix(p.SignedURL, want) {
								t.Fatalf("url %q, signedUrl %q, want them under %s", p.URL, p.SignedURL, want)
							}
							for _, u := range []struct{ url, token string }{{p.URL, alice}, {p.SignedURL, ""}} {
								at := direct[endpoint] + strings.TrimPrefix(u.url, want)
								if res, body := s.fetch(t, http.MethodGet, at, u.token, nil); res.StatusCode != http.StatusOK || !bytes.Equal(body, photo) {
									t.Errorf("GET %s: %d %.200s", at, res.StatusCode, body)
								}
							}
							return
						}
						t.Fatal("the subscription saw none of 20 creates")
					})
				}
			}
		})
	}
}
