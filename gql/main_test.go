package gql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/internal/testbackend"
	"github.com/platform-dev/platform/store"
)

// stores are the stores every test of the package shares, on the backend testbackend.Env
// names; each test works in a database of its own.
var stores *store.Stores

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "gql-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, stop, err := testbackend.Config(ctx, store.Config{DataDir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop(context.Background())
	stores, err = store.Open(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open stores:", err)
		return 1
	}
	defer stores.Close(context.Background())
	if stores.Backend != testbackend.Name() {
		fmt.Fprintf(os.Stderr, "stores opened on %s, not on %s\n", stores.Backend, testbackend.Name())
		return 1
	}
	return m.Run()
}

var dbSeq atomic.Int64

// records returns the records of the tables in a fresh project database, the tables and
// their indexes created.
func records(t testing.TB, tables ...gql.Table) *store.Records {
	t.Helper()
	defs := make([]store.Table, len(tables))
	for i, tb := range tables {
		defs[i] = tb.Table
	}
	recs, err := stores.ProjectRecords(context.Background(), fmt.Sprintf("test%d", dbSeq.Add(1)), "", defs)
	if err != nil {
		t.Fatal(err)
	}
	if err := recs.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	return recs
}

// table is a table of the API.
func table(name, typeName string, fields ...store.Field) gql.Table {
	return gql.Table{Table: store.Table{Name: name, Fields: fields}, TypeName: typeName}
}

// products is the seed's table.
func products() gql.Table {
	return table("products", "product",
		store.Field{Name: "author", Type: store.FieldType{Scalar: store.String}},
		store.Field{Name: "name", Type: store.FieldType{Scalar: store.String}, Required: true},
		store.Field{Name: "price", Type: store.FieldType{Scalar: store.Float}, Required: true},
	)
}

// serve builds an API for tables over recs and serves it.
func serve(t testing.TB, cfg gql.Config) *httptest.Server {
	t.Helper()
	if cfg.Records == nil {
		cfg.Records = records(t, cfg.Tables...)
	}
	api, err := gql.New(cfg)
	if err != nil {
		t.Fatalf("gql.New: %v", err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return srv
}

// post sends body to the server's endpoint and returns the status and the response body.
func post(t testing.TB, srv *httptest.Server, body string) (int, string) {
	t.Helper()
	res, err := srv.Client().Post(srv.URL+"/api/v1/graphql", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	return res.StatusCode, string(b)
}

// exec sends a query with variables and decodes the 200 response.
func exec(t testing.TB, srv *httptest.Server, query string, vars any) result {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	status, out := post(t, srv, string(body))
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	var r result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	r.raw = out
	return r
}

type result struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
	raw string
}

// ok fails the test when the result has errors.
func (r result) ok(t testing.TB) result {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("unexpected errors: %s", r.raw)
	}
	return r
}

// code is the code of the only error.
func (r result) code(t testing.TB) string {
	t.Helper()
	if len(r.Errors) != 1 {
		t.Fatalf("want one error, got %s", r.raw)
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// decode reads the data under key into v.
func (r result) decode(t testing.TB, key string, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Data[key], v); err != nil {
		t.Fatalf("decode %s of %s: %v", key, r.raw, err)
	}
}

func decodeBody(res *http.Response, v any) error { return json.NewDecoder(res.Body).Decode(v) }
