// Package testbackend opens the stores of the GraphQL API's tests on the backend the
// environment names, so that one suite covers both: PLATFORM_TEST_BACKEND=mongo runs them on
// the mongo backend over an embedded FerretDB (no MongoDB server can be installed on the
// machines that run the tests), anything else on the embedded SQLite backend. `make test`
// runs the API's packages a second time with it set.
package testbackend

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/platform-dev/platform/store"
)

// Env is the environment variable that names the backend: "mongo", or "sqlite" (the default).
const Env = "PLATFORM_TEST_BACKEND"

// Mongo reports whether the tests run on the mongo backend.
func Mongo() bool { return os.Getenv(Env) == "mongo" }

// Name is the backend the tests run on, as store.Stores.Backend names it.
func Name() string {
	if Mongo() {
		return "mongo"
	}
	return "sqlite"
}

// SQLiteOnly skips a test that is about the SQLite backend itself (its files, its SQL) when
// the tests run on mongo; why says what of SQLite it tests.
func SQLiteOnly(tb testing.TB, why string) {
	tb.Helper()
	if Mongo() {
		tb.Skipf("about the SQLite backend (%s): runs only with %s unset", why, Env)
	}
}

// Config completes cfg for the test backend: on mongo it starts an embedded FerretDB with
// its files in cfg.DataDir and sets cfg.MongoURI to it. stop ends that server (a no-op on
// SQLite). It serves a TestMain, which has no testing.TB; tests use Open.
func Config(ctx context.Context, cfg store.Config) (_ store.Config, stop func(context.Context) error, err error) {
	if !Mongo() || cfg.MongoURI != "" {
		return cfg, func(context.Context) error { return nil }, nil
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg.MongoURI, stop, err = store.StartFerretDB(ctx, filepath.Join(cfg.DataDir, "ferretdb"), logger)
	if err != nil {
		return cfg, nil, fmt.Errorf("test backend mongo: %w", err)
	}
	return cfg, stop, nil
}

// servers are the FerretDBs started by Open, by data folder: stores opened on one data folder
// (replicas of one deployment, a restart) share its database, as they share the SQLite files.
var servers = struct {
	sync.Mutex
	uri map[string]string
}{uri: map[string]string{}}

// Open opens stores with cfg on the test backend and closes them when the test ends. On mongo
// the data folder's FerretDB is started by the first Open of that folder and stopped when
// that test ends.
func Open(tb testing.TB, cfg store.Config) *store.Stores {
	tb.Helper()
	if Mongo() && cfg.MongoURI == "" && !cfg.RedisOnly {
		cfg.MongoURI = URI(tb, cfg.DataDir)
	}
	s, err := store.Open(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("open stores on %s: %v", Name(), err)
	}
	tb.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// URI answers the MongoDB URI of dataDir's FerretDB, starting it the first time; "" when the
// tests run on SQLite.
func URI(tb testing.TB, dataDir string) string {
	tb.Helper()
	if !Mongo() {
		return ""
	}
	servers.Lock()
	defer servers.Unlock()
	if uri, ok := servers.uri[dataDir]; ok {
		return uri
	}
	cfg, stop, err := Config(context.Background(), store.Config{DataDir: dataDir})
	if err != nil {
		tb.Fatal(err)
	}
	servers.uri[dataDir] = cfg.MongoURI
	tb.Cleanup(func() {
		servers.Lock()
		delete(servers.uri, dataDir)
		servers.Unlock()
		_ = stop(context.Background())
	})
	return cfg.MongoURI
}
