package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestDeploymentBoundsEdges: at the defaults of `platform serve`, each user-facing bound of
// a request works exactly at the bound and is refused one past it with a clear error, never
// INTERNAL: GraphQL's where (with an access rule joined to it), limit, document and body
// sizes, the admin API's project document, and the MCP request body.
func TestDeploymentBoundsEdges(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	// A project like the demo whose records each caller reads only of its own, so that
	// every where is joined to the rule's filter.
	st, raw := s.do("GET", "localhost", "/admin/v1/projects/demo", s.token, nil)
	if st != http.StatusOK {
		t.Fatalf("GET demo: %d %s", st, raw)
	}
	var demo map[string]any
	if err := json.Unmarshal(raw, &demo); err != nil {
		t.Fatal(err)
	}
	auth := demo["auth"].(map[string]any)
	auth["audience"] = "edges"
	doc := func(pad int) []byte {
		b, _ := json.Marshal(map[string]any{"id": "edges", "auth": auth, "tables": map[string]any{"notes": map[string]any{
			"fields": map[string]any{"name": map[string]any{"type": "String", "required": true}, "n": map[string]any{"type": "Int"}},
			"access": map[string]any{"read": "owner", "create": "authenticated", "update": "owner", "delete": "owner"},
		}}})
		return append(b, strings.Repeat(" ", pad)...)
	}
	const maxDocument = 1 << 20
	base := len(doc(0))
	if st, raw := s.do("PUT", "localhost", "/admin/v1/projects/edges", s.token, doc(maxDocument-base)); st != http.StatusCreated {
		t.Fatalf("PUT a document of exactly %d bytes: %d %.300s", maxDocument, st, raw)
	}
	st, raw = s.do("PUT", "localhost", "/admin/v1/projects/edges", s.token, doc(maxDocument-base+1))
	if st != http.StatusBadRequest || !strings.Contains(string(raw), "BAD_REQUEST") || !strings.Contains(string(raw), fmt.Sprint(maxDocument)) {
		t.Fatalf("PUT a document of %d bytes: %d %.300s", maxDocument+1, st, raw)
	}

	alice := mintToken(t, data, "edges", "alice")
	bob := mintToken(t, data, "edges", "bob")
	gql := func(token, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, "http://"+s.addr+"/api/v1/graphql", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "edges.localhost"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	request := func(query string, vars map[string]any) string {
		b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		return string(b)
	}
	for _, c := range []struct{ token, name string }{{alice, "mine"}, {bob, "bobs"}} {
		if st, out := gql(c.token, request(`mutation($n: String!) { createnote(data: {name: $n}) { uid } }`, map[string]any{"n": c.name})); st != 200 || strings.Contains(out, "errors") {
			t.Fatalf("create: %d %s", st, out)
		}
	}
	or := func(n int) map[string]any {
		l := make([]any, 0, n)
		for i := range n - 1 {
			l = append(l, map[string]any{"n": map[string]any{"gt": 1000 + i}})
		}
		return map[string]any{"or": append(l, map[string]any{"name": map[string]any{"ne": "neither"}})}
	}
	const (
		maxLimit = 1000     // --graphql-max-limit
		maxQuery = 64 << 10 // --graphql-max-query
		maxBody  = 1 << 20  // --graphql-max-body
	)
	padded := func(n int) string {
		q := `{ notesCount }`
		return q + strings.Repeat(" ", n-len(q))
	}
	bodyOf := func(n int) string {
		b := request(`{ notesCount }`, map[string]any{"pad": ""})
		return strings.Replace(b, `"pad":""`, `"pad":"`+strings.Repeat("a", n-len(b))+`"`, 1)
	}
	cases := []struct {
		name, body string
		status     int
		want       string // in the answer
	}{
		{"where of 1000 comparisons", request(`query($w: noteWhere) { notes(where: $w) { name } }`, map[string]any{"w": or(1000)}), 200, `{"data":{"notes":[{"name":"mine"}]}}`},
		{"where of 1001 comparisons", request(`query($w: noteWhere) { notes(where: $w) { name } }`, map[string]any{"w": or(1001)}), 200, `"BAD_USER_INPUT"`},
		{"limit at the maximum", request(fmt.Sprintf(`{ notes(limit: %d) { name } }`, maxLimit), nil), 200, `{"data":{"notes":[{"name":"mine"}]}}`},
		{"limit past the maximum", request(fmt.Sprintf(`{ notes(limit: %d) { name } }`, maxLimit+1), nil), 200, `"BAD_USER_INPUT"`},
		{"document at the maximum", request(padded(maxQuery), nil), 200, `{"data":{"notesCount":1}}`},
		{"document past the maximum", request(padded(maxQuery+1), nil), 200, `"GRAPHQL_VALIDATION_FAILED"`},
		{"body at the maximum", bodyOf(maxBody), 200, `{"data":{"notesCount":1}}`},
		{"body past the maximum", bodyOf(maxBody + 1), 413, `"BAD_REQUEST"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, out := gql(alice, c.body)
			if st != c.status || !strings.Contains(out, c.want) {
				t.Fatalf("%d %.300s; want %d with %s", st, out, c.status, c.want)
			}
		})
	}

	t.Run("mcp body", func(t *testing.T) {
		const maxRequest = 1 << 20 // MaxRequestBytes
		ping := func(n int) (int, string) {
			b := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
			req, _ := http.NewRequest(http.MethodPost, "http://"+s.addr+"/mcp", strings.NewReader(b+strings.Repeat(" ", n-len(b))))
			req.Host = "localhost"
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(out)
		}
		if st, out := ping(maxRequest); st != 200 || !strings.Contains(out, `"result"`) {
			t.Fatalf("a body of %d bytes: %d %s", maxRequest, st, out)
		}
		if st, out := ping(maxRequest + 1); st != http.StatusRequestEntityTooLarge || !strings.Contains(out, "-32001") {
			t.Fatalf("a body of %d bytes: %d %s", maxRequest+1, st, out)
		}
	})
}
