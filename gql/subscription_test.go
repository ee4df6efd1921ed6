package gql_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	osexec "os/exec"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/internal/testenv"
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
	node := testenv.Need(t, "node")
	testenv.NeedFile(t, "testdata/npm/node_modules/graphql-ws/package.json", "npm ci --prefix gql/testdata/npm")
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

// stream opens an SSE subscription to query as sub.
func (s *shopServer) stream(t *testing.T, sub, query string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.srv.URL, strings.NewReader(body(query, "{}")))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+sub)
	res, err := s.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// refused answers the body and status of a subscription to query as sub that is refused
// before its stream starts.
func (s *shopServer) refused(t *testing.T, sub, query string) (string, int) {
	t.Helper()
	res := s.stream(t, sub, query)
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK {
		t.Fatalf("subscribe as %s to %s: the stream started", sub, query)
	}
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), res.StatusCode
}

// subscribe opens an SSE subscription to query as sub and answers the data of its next
// events as they come; changes made once it returns reach it.
func (s *shopServer) subscribe(t *testing.T, sub, query string) <-chan string {
	t.Helper()
	res := s.stream(t, sub, query)
	if res.StatusCode != http.StatusOK {
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		t.Fatalf("subscribe as %s: %d %s", sub, res.StatusCode, out)
	}
	events := make(chan string, 16)
	go func() {
		defer res.Body.Close()
		defer close(events)
		lines := bufio.NewScanner(res.Body)
		next := false
		for lines.Scan() {
			line := lines.Text()
			if data, ok := strings.CutPrefix(line, "data: "); ok && next {
				events <- data
			}
			next = next && line != "" || line == "event: next"
		}
	}()
	return events
}

// receive answers the next event of events, failing the test when none comes in time.
func receive(t *testing.T, who string, events <-chan string) string {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatalf("%s: the stream ended", who)
		}
		return e
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no event within 5s", who)
	}
	return ""
}

// TestSubscriptionEventRelations: an event carries the relations its record selects, a
// many-to-one and a one-to-many, read under each subscriber's read rule for the related
// tables: two subscribers of one document see different related records.
func TestSubscriptionEventRelations(t *testing.T) {
	orders, prods, makers := shop()
	prods.Relations = []gql.Relation{{Name: "maker", Table: "makers", Field: "makerId"}, {Name: "orders", Table: "orders", ForeignField: "productId"}}
	cfg := gql.Config{Tables: []gql.Table{orders, prods, makers}, Changes: stores.Changes().Project("eventrelations")}
	cfg.Records = records(t, cfg.Tables...)
	s := newShopWith(t, cfg)

	// bob's maker and order are not alice's to read; admin reads everything.
	acme := s.uids(t, "bob", "createmakers", []string{`{name: "Acme"}`})[0]
	tea := s.uids(t, "alice", "createproducts", []string{fmt.Sprintf(`{name: "Tea", price: 3, makerId: %q}`, acme)})[0]
	s.uids(t, "alice", "createorders", []string{fmt.Sprintf(`{qty: 1, productId: %q}`, tea)})
	s.uids(t, "bob", "createorders", []string{fmt.Sprintf(`{qty: 2, productId: %q}`, tea)})

	update := fmt.Sprintf(`mutation($p: Float!) { updateProduct(uid: %q, data: {price: $p}) { uid } }`, tea)
	// What the update costs with nobody subscribed.
	_, write := s.run(t, "alice", update, `{"p": 3.5}`)

	const doc = `subscription { products { op record { name maker { name } orders(orderBy: [{field: qty}]) { qty } } } }`
	alice, admin := s.subscribe(t, "alice", doc), s.subscribe(t, "admin", doc)
	plain := s.subscribe(t, "admin", `subscription { products { op record { name } } }`)
	before := s.recs.Queries()
	s.run(t, "alice", update, `{"p": 4}`)

	for _, c := range []struct {
		who    string
		events <-chan string
		want   string
	}{
		{"alice", alice, `{"data":{"products":{"op":"UPDATE","record":{"name":"Tea","maker":null,"orders":[{"qty":1}]}}}}`},
		{"admin", admin, `{"data":{"products":{"op":"UPDATE","record":{"name":"Tea","maker":{"name":"Acme"},"orders":[{"qty":1},{"qty":2}]}}}}`},
		{"admin without relations", plain, `{"data":{"products":{"op":"UPDATE","record":{"name":"Tea"}}}}`},
	} {
		if got := receive(t, c.who, c.events); got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.who, got, c.want)
		}
	}
	// Each subscriber selecting relations reads them once per relation (2 each); the
	// event without relations reads nothing.
	if n := s.recs.Queries() - before - write; n != 4 {
		t.Errorf("the update's events cost %d store queries, want 4", n)
	}
	s.run(t, "alice", fmt.Sprintf(`mutation { deleteProduct(uid: %q) { id } }`, tea), "{}")
	for _, c := range []struct {
		who    string
		events <-chan string
	}{{"alice", alice}, {"admin", admin}, {"admin without relations", plain}} {
		if got, want := receive(t, c.who, c.events), `{"data":{"products":{"op":"DELETE","record":null}}}`; got != want {
			t.Errorf("%s:\n got  %s\n want %s", c.who, got, want)
		}
	}
}
