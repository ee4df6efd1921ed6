package gql_test

import (
	osexec "os/exec"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/internal/testenv"
)

// TestNodeClients runs real clients from npm against the API: graphql-http's server audit
// (every check, notices included, must pass) and graphql-js's getIntrospectionQuery with
// buildClientSchema, with the default options and with every option on, on a schema whose
// relations make a cycle. .ci/run installs node and the pinned packages (gql/testdata/npm).
func TestNodeClients(t *testing.T) {
	node := testenv.Need(t, "node")
	testenv.NeedFile(t, "testdata/npm/node_modules/graphql-http/package.json", "npm ci --prefix gql/testdata/npm")
	// Orders and products related both ways: the schema has a cycle, which introspection
	// and buildClientSchema must carry.
	orders, prods, _ := shop()
	relateBothWays(&orders, &prods)
	srv := serve(t, gql.Config{Tables: []gql.Table{orders, prods}, Introspection: true})
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, args := range [][]string{{"audit.mjs"}, {"introspect.mjs"}, {"introspect.mjs", "full"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cmd := osexec.CommandContext(t.Context(), node, append([]string{args[0], addr, addr}, args[1:]...)...)
			cmd.Dir = "testdata/npm"
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node %s: %v\n%s", args, err, out)
			}
			t.Logf("node %s: %s", args, out)
		})
	}
}
