package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/cmd/platform/platformtest"
	"github.com/platform-dev/platform/internal/testbackend"
)

// binary is the platform binary, built once for the whole test run.
var binary string

func TestMain(m *testing.M) { os.Exit(platformtest.Main(m, &binary)) }

// server is one running `platform serve`, with the failing-test shorthands these tests use.
type server struct {
	*platformtest.Server
	t     *testing.T
	addr  string
	token string // the generated admin token
	// storeArgs point an offline command (token, export) at the server's stores: its
	// MONGODB_URI when it has one.
	storeArgs []string
}

// startServer runs `platform serve` with the given data folder and extra environment, and
// waits until it serves.
func startServer(t *testing.T, dataDir string, env ...string) *server {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	// On the mongo test backend the data folder's FerretDB keeps the records, and the
	// development issuer stays on as it is on SQLite (auto turns it off with MONGODB_URI).
	env = append(backendEnv(t, dataDir, env), env...)
	ps := platformtest.Start(t, binary, dataDir, env...)
	s := &server{Server: ps, t: t, addr: ps.Addr, token: ps.AdminToken()}
	for _, kv := range env {
		if uri, ok := strings.CutPrefix(kv, "MONGODB_URI="); ok {
			s.storeArgs = []string{"--mongodb-uri", uri}
		}
	}
	return s
}

// backendEnv is the environment that puts a command working on dataDir on the test backend
// (testbackend.Env): nothing on SQLite, or where env names a MongoDB already.
func backendEnv(t *testing.T, dataDir string, env []string) []string {
	t.Helper()
	if !testbackend.Mongo() || slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "MONGODB_URI=") }) {
		return nil
	}
	return []string{"MONGODB_URI=" + testbackend.URI(t, dataDir), "PLATFORM_DEV_ISSUER=on"}
}

func (s *server) logText() string { return s.Log() }
func (s *server) stop()           { s.Stop() }

// do sends a request for host and fails the test when it cannot be sent.
func (s *server) do(method, host, path, token string, body []byte) (int, []byte) {
	s.t.Helper()
	status, out, err := s.Do(method, host, path, token, body)
	if err != nil {
		s.t.Fatalf("%s %s%s: %v", method, host, path, err)
	}
	return status, out
}

const productsDoc = `{"id":"shop","tables":{"products":{"fields":{
  "name":{"type":"String","required":true},"price":{"type":"Float","required":true},"author":{"type":"String"}}}}}`

func TestProjectSurvivesRestart(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, []byte(productsDoc)); st != http.StatusCreated {
		t.Fatalf("PUT: %d %s", st, body)
	}
	s.stop()
	if !strings.Contains(s.logText(), `msg=stopped`) {
		t.Errorf("no clean stop in the log:\n%s", s.logText())
	}

	s2 := startServer(t, data)
	if s2.token != s.token {
		t.Errorf("admin token changed across restarts")
	}
	st, body := s2.do("GET", "localhost", "/admin/v1/projects/shop", s2.token, nil)
	if st != http.StatusOK {
		t.Fatalf("GET after restart: %d %s", st, body)
	}
	var p struct {
		ID      string         `json:"id"`
		Version int            `json:"version"`
		Tables  map[string]any `json:"tables"`
	}
	if err := json.Unmarshal(body, &p); err != nil || p.ID != "shop" || p.Version != 1 || p.Tables["products"] == nil {
		t.Fatalf("project after restart: %s (%v)", body, err)
	}
}

func TestAdminToken(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	fi, err := os.Stat(filepath.Join(data, "admin-token"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("admin-token mode %v, want 0600", fi.Mode().Perm())
	}
	if len(s.token) < 32 {
		t.Errorf("generated token %q is too short", s.token)
	}
	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"none", "", http.StatusUnauthorized},
		{"wrong", "not-the-token", http.StatusUnauthorized},
		{"right", s.token, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := s.do("GET", "localhost", "/admin/v1/projects", tc.token, nil)
			if st != tc.want {
				t.Fatalf("status %d, want %d: %s", st, tc.want, body)
			}
			if st != http.StatusOK && !strings.Contains(string(body), `"UNAUTHENTICATED"`) {
				t.Errorf("body lacks the UNAUTHENTICATED code: %s", body)
			}
		})
	}

	configured := startServer(t, t.TempDir(), "PLATFORM_ADMIN_TOKEN=configured-token-123")
	if st, _ := configured.do("GET", "localhost", "/admin/v1/projects", "configured-token-123", nil); st != http.StatusOK {
		t.Errorf("configured token refused: %d", st)
	}
	if _, err := os.Stat(filepath.Join(configured.DataDir, "admin-token")); err == nil {
		t.Errorf("a token file was written although PLATFORM_ADMIN_TOKEN was set")
	}
}

func TestHostRouting(t *testing.T) {
	s := startServer(t, t.TempDir())
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, []byte(productsDoc)); st != http.StatusCreated {
		t.Fatalf("PUT: %d %s", st, body)
	}
	for _, tc := range []struct {
		name, method, host, path string
		token                    bool
		want                     int
		code                     string
	}{
		{"apex admin", "GET", "localhost", "/admin/v1/projects", true, 200, ""},
		{"apex with port", "GET", "localhost:8080", "/admin/v1/projects", true, 200, ""},
		{"apex upper case", "GET", "LOCALHOST", "/admin/v1/projects", true, 200, ""},
		{"admin on a project host", "GET", "shop.localhost", "/admin/v1/projects", true, 404, "NOT_FOUND"},
		{"graphql on the apex", "POST", "localhost", "/api/v1/graphql", false, 404, "NOT_FOUND"},
		{"unknown project", "POST", "nope.localhost", "/api/v1/graphql", false, 404, "PROJECT_NOT_FOUND"},
		{"invalid project label", "POST", "bad_label.localhost", "/api/v1/graphql", false, 404, "PROJECT_NOT_FOUND"},
		{"nested label", "POST", "a.shop.localhost", "/api/v1/graphql", false, 404, "NOT_FOUND"},
		{"foreign host", "GET", "example.com", "/admin/v1/projects", true, 404, "NOT_FOUND"},
		{"IP address is the apex", "GET", "127.0.0.1", "/admin/v1/projects", true, 200, ""},
		{"IPv6 address is the apex", "GET", "[::1]:8080", "/admin/v1/projects", true, 200, ""},
		{"healthz on a project", "GET", "shop.localhost", "/healthz", false, 200, ""},
		{"healthz on an unknown host", "GET", "example.com", "/healthz", false, 200, ""},
		{"readyz on the apex", "GET", "localhost", "/readyz", false, 200, ""},
		{"readyz on an unknown project", "GET", "nope.localhost", "/readyz", false, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token := ""
			if tc.token {
				token = s.token
			}
			st, body := s.do(tc.method, tc.host, tc.path, token, nil)
			if st != tc.want {
				t.Fatalf("status %d, want %d: %s", st, tc.want, body)
			}
			if tc.code != "" && !strings.Contains(string(body), `"code":"`+tc.code+`"`) {
				t.Errorf("body lacks code %s: %s", tc.code, body)
			}
			if tc.code != "" && !json.Valid(body) {
				t.Errorf("error body is not JSON: %s", body)
			}
		})
	}
}

func TestRejectedDocuments(t *testing.T) {
	// Without the development issuer no demo project is created, so the registry stays empty
	// unless a rejected document slipped in.
	s := startServer(t, t.TempDir(), "PLATFORM_DEV_ISSUER=off")
	const field = `"name":{"type":"String"}`
	for _, tc := range []struct {
		name, id, doc, path string
	}{
		{"not JSON or YAML", "shop", `{"id": "shop", "tables": [}`, ""},
		{"unknown top-level key", "shop", `{"id":"shop","tables":{},"colour":"red"}`, ""},
		{"unknown table key", "shop", `{"id":"shop","tables":{"t":{"fields":{` + field + `},"colour":"red"}}}`, "tables.t"},
		{"index on an unknown field", "shop", `{"id":"shop","tables":{"t":{"fields":{` + field + `},"indexes":[{"fields":["nope"]}]}}}`, "tables.t.indexes.0.fields.0"},
		{"index on a list field", "shop", `{"id":"shop","tables":{"t":{"fields":{"tags":{"type":"[String]"}},"indexes":[{"fields":["tags"]}]}}}`, "tables.t.indexes.0.fields.0"},
		{"index on a JSON field", "shop", `{"id":"shop","tables":{"t":{"fields":{"j":{"type":"JSON"}},"indexes":[{"fields":["j"]}]}}}`, "tables.t.indexes.0.fields.0"},
		{"field twice in an index", "shop", `{"id":"shop","tables":{"t":{"fields":{` + field + `},"indexes":[{"fields":["name","name"]}]}}}`, "tables.t.indexes.0.fields.1"},
		{"index declared twice", "shop", `{"id":"shop","tables":{"t":{"fields":{` + field + `},"indexes":[{"fields":["name"]},{"fields":["name"],"unique":true}]}}}`, "tables.t.indexes.1"},
		{"index without fields", "shop", `{"id":"shop","tables":{"t":{"fields":{` + field + `},"indexes":[{"fields":[]}]}}}`, "tables.t.indexes.0.fields"},
		{"too many indexes", "shop", `{"id":"shop","tables":{"t":{"fields":{` + field + `},"indexes":[` + strings.Repeat(`{"fields":["name"]},`, 16) + `{"fields":["name"]}]}}}`, "tables.t.indexes"},
		{"unknown field key", "shop", `{"id":"shop","tables":{"t":{"fields":{"name":{"type":"String","unique":true}}}}}`, "tables.t.fields.name"},
		{"missing tables", "shop", `{"id":"shop"}`, ""},
		{"missing field type", "shop", `{"id":"shop","tables":{"t":{"fields":{"name":{}}}}}`, "tables.t.fields.name"},
		{"bad type name", "shop", `{"id":"shop","tables":{"products":{"fields":{"price":{"type":"Money"}}}}}`, "tables.products.fields.price.type"},
		{"bad list type", "shop", `{"id":"shop","tables":{"t":{"fields":{"tags":{"type":"[Strin]"}}}}}`, "tables.t.fields.tags.type"},
		{"bad table name", "shop", `{"id":"shop","tables":{"my-table":{"fields":{` + field + `}}}}`, "tables.my-table"},
		{"bad field name", "shop", `{"id":"shop","tables":{"t":{"fields":{"first name":{"type":"String"}}}}}`, "tables.t.fields.first name"},
		{"reserved field uid", "shop", `{"id":"shop","tables":{"t":{"fields":{"uid":{"type":"ID"}}}}}`, "tables.t.fields.uid"},
		{"reserved field createdAt", "shop", `{"id":"shop","tables":{"t":{"fields":{"createdAt":{"type":"String"}}}}}`, "tables.t.fields.createdAt"},
		{"reserved field updatedAt", "shop", `{"id":"shop","tables":{"t":{"fields":{"updatedAt":{"type":"String"}}}}}`, "tables.t.fields.updatedAt"},
		{"reserved field prefix", "shop", `{"id":"shop","tables":{"t":{"fields":{"_owner":{"type":"String"}}}}}`, "tables.t.fields._owner"},
		{"reserved table prefix", "shop", `{"id":"shop","tables":{"_t":{"fields":{` + field + `}}}}`, "tables._t"},
		{"default of the wrong type", "shop", `{"id":"shop","tables":{"t":{"fields":{"price":{"type":"Float","default":"free"}}}}}`, "tables.t.fields.price.default"},
		{"Int default with a fraction", "shop", `{"id":"shop","tables":{"t":{"fields":{"n":{"type":"Int","default":1.5}}}}}`, "tables.t.fields.n.default"},
		{"list default with a bad item", "shop", `{"id":"shop","tables":{"t":{"fields":{"tags":{"type":"[String]","default":["a",1]}}}}}`, "tables.t.fields.tags.default"},
		{"DateTime default not RFC 3339", "shop", `{"id":"shop","tables":{"t":{"fields":{"at":{"type":"DateTime","default":"yesterday"}}}}}`, "tables.t.fields.at.default"},
		{"duplicate type names", "shop", `{"id":"shop","tables":{"product":{"fields":{` + field + `}},"products":{"fields":{` + field + `}}}}`, "tables.products.typeName"},
		{"unknown access rule", "shop", `{"id":"shop","tables":{"t":{"fields":{` + field + `},"access":{"read":"everyone?"}}}}`, "tables.t.access.read"},
		{"id differs from the path", "shop", `{"id":"other","tables":{}}`, "id"},
		{"invalid id in path", "Shop_1", `{"id":"Shop_1","tables":{}}`, "id"},
		{"id in the body not a DNS label", "shop", `{"id":"-shop","tables":{}}`, "id"},
		{"empty body", "shop", ``, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, body := s.do("PUT", "localhost", "/admin/v1/projects/"+tc.id, s.token, []byte(tc.doc))
			if st != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", st, body)
			}
			var eb struct {
				Errors []struct {
					Message    string `json:"message"`
					Extensions struct {
						Code     string                  `json:"code"`
						Problems []struct{ Path string } `json:"problems"`
					} `json:"extensions"`
				} `json:"errors"`
			}
			if err := json.Unmarshal(body, &eb); err != nil || len(eb.Errors) != 1 {
				t.Fatalf("error body: %s (%v)", body, err)
			}
			if eb.Errors[0].Extensions.Code != "BAD_REQUEST" {
				t.Errorf("code %q, want BAD_REQUEST", eb.Errors[0].Extensions.Code)
			}
			if tc.path != "" {
				found := false
				for _, p := range eb.Errors[0].Extensions.Problems {
					found = found || p.Path == tc.path
				}
				if !found || !strings.Contains(eb.Errors[0].Message, tc.path) {
					t.Errorf("no problem at %s: %s", tc.path, body)
				}
			}
		})
	}
	if st, body := s.do("GET", "localhost", "/admin/v1/projects", s.token, nil); st != 200 || !strings.Contains(string(body), `"projects":[]`) {
		t.Errorf("a rejected document was stored: %s", body)
	}
}

func TestApplyCommand(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	dir := t.TempDir()
	file := filepath.Join(dir, "shop.yaml")
	writeFile(t, file, "id: shop\ntables:\n  products:\n    fields:\n      name: {type: String, required: true}\n      price: {type: Float, required: true}\n")
	apply := func(file string) (string, error) {
		cmd := exec.Command(binary, "apply", "-f", file, "--server", "http://"+s.addr, "--data", data)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := apply(file)
	if err != nil || !strings.Contains(out, "project shop created (version 1)") || !strings.Contains(out, "+ table products") {
		t.Fatalf("first apply: %v\n%s", err, out)
	}
	writeFile(t, file, "id: shop\ntables:\n  products:\n    fields:\n      name: {type: String, required: true}\n      price: {type: Float, required: true}\n      stock: {type: Int, default: 0}\n  orders:\n    fields:\n      total: {type: Float}\n")
	out, err = apply(file)
	if err != nil || !strings.Contains(out, "project shop configured (version 2)") || !strings.Contains(out, "+ table orders") || !strings.Contains(out, "+ field products.stock") {
		t.Fatalf("second apply: %v\n%s", err, out)
	}
	_, before := s.do("GET", "localhost", "/admin/v1/projects/shop", s.token, nil)
	out, err = apply(file)
	if err != nil || !strings.Contains(out, "project shop unchanged (version 2)") {
		t.Fatalf("an unchanged apply must change nothing: %v\n%s", err, out)
	}
	if _, after := s.do("GET", "localhost", "/admin/v1/projects/shop", s.token, nil); !bytes.Equal(after, before) {
		t.Errorf("an unchanged apply changed the stored project:\n%s\nwas\n%s", after, before)
	}

	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "id: shop\ntables:\n  products:\n    fields:\n      name: {type: String\n      price: {type: Float}\n")
	out, err = apply(bad)
	if err == nil || !regexp.MustCompile(`\[\d+:\d+\]|line \d+`).MatchString(out) {
		t.Fatalf("a YAML syntax error should fail and name the line: %v\n%s", err, out)
	}
	writeFile(t, bad, "id: shop\ntables:\n  products:\n    fields:\n      price: {type: Money}\n")
	out, err = apply(bad)
	if err == nil || !strings.Contains(out, "tables.products.fields.price.type") {
		t.Fatalf("a bad type should fail and name its path: %v\n%s", err, out)
	}
}

// TestUniqueIndexOnDuplicates: a unique index that the records break is refused with 400
// naming a duplicate value, and the project keeps its previous version; once the duplicate
// is gone the same document applies, and the index refuses new duplicates.
func TestUniqueIndexOnDuplicates(t *testing.T) {
	s := startServer(t, t.TempDir(), "PLATFORM_DEV_ISSUER=off")
	doc := func(unique bool) []byte {
		ix := ""
		if unique {
			ix = `,"indexes":[{"fields":["sku"],"unique":true},{"fields":["price","createdAt"]}]`
		}
		return []byte(`{"id":"shop","tables":{"products":{"fields":{"sku":{"type":"String"},"price":{"type":"Float"}},
			"access":{"read":"public","create":"public","delete":"public"}` + ix + `}}}`)
	}
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, doc(false)); st != http.StatusCreated {
		t.Fatalf("create project: %d %s", st, body)
	}
	gql := func(query string) string {
		t.Helper()
		st, body := s.do("POST", "shop.localhost", "/api/v1/graphql", "", []byte(`{"query":`+strconv.Quote(query)+`}`))
		if st != http.StatusOK {
			t.Fatalf("%s: %d %s", query, st, body)
		}
		return string(body)
	}
	var uids []string
	for range 2 {
		var r struct {
			Data struct{ CreateProduct struct{ UID string } } `json:"data"`
		}
		if err := json.Unmarshal([]byte(gql(`mutation { createProduct(data: {sku: "A-1", price: 2}) { uid } }`)), &r); err != nil || r.Data.CreateProduct.UID == "" {
			t.Fatalf("create: %v", err)
		}
		uids = append(uids, r.Data.CreateProduct.UID)
	}
	st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, doc(true))
	if st != http.StatusBadRequest || !strings.Contains(string(body), "tables.products.indexes.0") || !strings.Contains(string(body), `\"A-1\"`) {
		t.Fatalf("unique index on duplicates: %d %s", st, body)
	}
	if _, body := s.do("GET", "localhost", "/admin/v1/projects/shop", s.token, nil); !strings.Contains(string(body), `"version":1`) || strings.Contains(string(body), "indexes") {
		t.Fatalf("the previous version should stay: %s", body)
	}
	gql(`mutation { deleteProduct(uid: "` + uids[1] + `") { id } }`)
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, doc(true)); st != http.StatusOK {
		t.Fatalf("unique index without duplicates: %d %s", st, body)
	}
	if out := gql(`mutation { createProduct(data: {sku: "A-1", price: 3}) { uid } }`); !strings.Contains(out, `"CONFLICT"`) {
		t.Fatalf("a duplicate after the index: %s", out)
	}
	if out := gql(`{ productsCount(where: {price: {gte: 2}}) }`); !strings.Contains(out, `"productsCount":1`) {
		t.Fatalf("the refused write was stored: %s", out)
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// freeAddr returns a loopback address nobody listens on right now.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestChangeReachesOtherReplica runs two replicas of one machine on one store: both on the
// same data folder (SQLite files are shared between processes), the first with its embedded
// Redis on a fixed loopback port, the second pointed at it. A change applied through one
// must be served by the other within one second.
func TestChangeReachesOtherReplica(t *testing.T) {
	redisAddr := freeAddr(t)
	data := t.TempDir()
	a := startServer(t, data, "PLATFORM_EMBEDDED_REDIS_ADDR="+redisAddr, "PLATFORM_ADMIN_TOKEN=shared-admin-token")
	b := startServer(t, data, "REDIS_URL=redis://"+redisAddr, "PLATFORM_ADMIN_TOKEN=shared-admin-token")
	database := "database: embedded SQLite"
	if testbackend.Mongo() {
		database = "database: MongoDB" // the data folder's FerretDB
	}
	if !strings.Contains(b.logText(), database) || !strings.Contains(b.logText(), "redis: external") {
		t.Fatalf("replica b did not use the shared stores:\n%s", b.logText())
	}
	token := "shared-admin-token"

	// b learns that "shop" does not exist (and caches that).
	if st, _ := b.do("POST", "shop.localhost", "/api/v1/graphql", "", []byte(`{}`)); st != http.StatusNotFound {
		t.Fatalf("shop before it exists: %d", st)
	}
	if st, body := a.do("PUT", "localhost", "/admin/v1/projects/shop", token, []byte(productsDoc)); st != http.StatusCreated {
		t.Fatalf("PUT through a: %d %s", st, body)
	}
	waitFor(t, time.Second, "b serves the new project", func() bool {
		st, _ := b.do("POST", "shop.localhost", "/api/v1/graphql", "", []byte(`{}`))
		return st != http.StatusNotFound
	})

	// And the other way round: a deletion through b leaves a within one second.
	if st, body := b.do("DELETE", "localhost", "/admin/v1/projects/shop", token, nil); st != http.StatusOK {
		t.Fatalf("DELETE through b: %d %s", st, body)
	}
	waitFor(t, time.Second, "a stops serving the deleted project", func() bool {
		st, _ := a.do("POST", "shop.localhost", "/api/v1/graphql", "", []byte(`{}`))
		return st == http.StatusNotFound
	})
}

func waitFor(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if ok() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBadEnvironmentIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--data", t.TempDir())
	cmd.Env = append(os.Environ(), "PLATFORM_GRAPHQL_TIMEOUT=soon")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "PLATFORM_GRAPHQL_TIMEOUT") {
		t.Fatalf("a bad environment value should stop serve and name the variable: %v\n%s", err, out)
	}
}

func TestHealthcheckCommand(t *testing.T) {
	s := startServer(t, t.TempDir())
	for _, tc := range []struct {
		name, addr, path string
		ok               bool
	}{
		{"alive", s.addr, "/healthz", true},
		{"ready", s.addr, "/readyz", true},
		{"nothing listening", freeAddr(t), "/healthz", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(binary, "healthcheck", "--addr", tc.addr, "--path", tc.path).CombinedOutput()
			if (err == nil) != tc.ok {
				t.Fatalf("healthcheck ok=%v, want %v: %s", err == nil, tc.ok, out)
			}
		})
	}
}

// TestBusyPortFailsAtOnce starts serve on an address another process listens on: it must
// fail at once with a message naming the address and the setting, before it creates the data
// folder, starts the tools or binds the metrics port.
func TestBusyPortFailsAtOnce(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	data := filepath.Join(t.TempDir(), "data")
	metrics := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--addr", busy.Addr().String(), "--data", data,
		"--metrics-addr", metrics, "--workspace", t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("serve on a busy port succeeded:\n%s", out)
	}
	want := "address " + busy.Addr().String() + " is already in use"
	if !strings.Contains(string(out), want) || !strings.Contains(string(out), "PLATFORM_ADDR") {
		t.Errorf("output lacks %q and the setting to change:\n%s", want, out)
	}
	for _, unwanted := range []string{"mcp tools ready", "metrics", "database:"} {
		if strings.Contains(string(out), unwanted) {
			t.Errorf("serve got as far as %q before failing:\n%s", unwanted, out)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the data folder was created before the port was bound (stat: %v)", err)
	}
}
