package gql_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
)

// serveRealtime serves an API with subscriptions fed by the package's embedded Redis, on
// its three transports; a client must send the token secret.
func serveRealtime(t testing.TB, project string) *httptest.Server {
	t.Helper()
	cfg := gql.Config{Tables: []gql.Table{products()}, Changes: stores.Changes().Project(project)}
	cfg.Records = records(t, cfg.Tables...)
	api, err := gql.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	auth := func(ctx context.Context, authorization string) (context.Context, context.CancelFunc, error) {
		if authorization != "Bearer secret" {
			return nil, nil, errors.New("want the token secret")
		}
		ctx, cancel := context.WithCancel(ctx)
		return ctx, cancel, nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case gql.IsWebSocket(r):
			api.ServeWebSocket(w, r, auth)
		case gql.IsEventStream(r):
			api.ServeSSE(w, r, auth)
		default:
			api.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestNodeSubscriptionClients runs the graphql-ws and graphql-sse clients from npm against
// the API's WebSocket and SSE transports: each sees the cheap product created, not the
// expensive one its where leaves out.
func TestNodeSubscriptionClients(t *testing.T) {
	node, err := osexec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; .ci/run installs it")
	}
	if _, err := os.Stat("testdata/npm/node_modules/graphql-ws/package.json"); err != nil {
		t.Skip("the npm packages are not installed: npm ci --prefix gql/testdata/npm (.ci/run does)")
	}
	srv := serveRealtime(t, "node")
	cmd := osexec.CommandContext(t.Context(), node, "subscribe.mjs", strings.TrimPrefix(srv.URL, "http://"), "secret")
	cmd.Dir = "testdata/npm"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node subscribe.mjs: %v\n%s", err, out)
	}
	want := `{"data":{"products":{"op":"CREATE","record":{"name":"tea","price":5}}}}`
	for _, client := range []string{"graphql-ws", "graphql-sse"} {
		if !strings.Contains(string(out), client+" "+want) {
			t.Errorf("%s did not print %s:\n%s", client, want, out)
		}
	}
	t.Logf("node subscribe.mjs:\n%s", out)
}
