package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
)

// TestClientTooling runs the tools app developers use against `platform serve`, from node,
// through the path form /p/<project>/api/v1/graphql (no DNS or /etc/hosts change): Apollo
// Client (normalised cache with no typePolicies, a subscription through GraphQLWsLink,
// automatic persisted queries), GraphQL Code Generator over the live endpoint with a
// subscription document and persisted documents, then `platform documents` registering
// those in registered-only mode, which refuses any other document. .ci/run installs node
// and the pinned packages (gql/testdata/npm).
func TestClientTooling(t *testing.T) {
	node := testenv.Need(t, "node")
	const clients = "../../gql/testdata/npm"
	testenv.NeedFile(t, clients+"/node_modules/@apollo/client/package.json", "npm ci --prefix gql/testdata/npm")
	s := startServer(t, "")
	token, stderr, err := run(t, "token", "--data", s.DataDir, "--project", "demo", "--sub", "alice")
	if err != nil {
		t.Fatalf("platform token: %v\n%s", err, stderr)
	}
	endpoint := "http://" + s.addr + "/p/demo/api/v1/graphql"
	out := t.TempDir()
	nodeRun := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), node, args...)
		cmd.Dir = clients
		got, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("node %s: %v\n%s", args[0], err, got)
		}
		t.Logf("node %s:\n%s", args[0], got)
		return string(got)
	}
	nodeRun("apollo.mjs", endpoint, strings.TrimSpace(token))
	nodeRun("codegen.mjs", endpoint, strings.TrimSpace(token), out)
	manifest := filepath.Join(out, "gql", "persisted-documents.json")
	registered, stderr, err := run(t, "documents", "--project", "demo", "-f", manifest, "--registered-only", "--server", "http://"+s.addr, "--admin-token", s.token)
	if err != nil || !strings.Contains(registered, "3 registered documents; registered documents only") {
		t.Fatalf("platform documents: %v\n%s%s", err, registered, stderr)
	}
	nodeRun("trusted.mjs", endpoint, strings.TrimSpace(token), manifest)
	// The change is audited.
	if audit, stderr, err := run(t, "audit", "--server", "http://"+s.addr, "--admin-token", s.token); err != nil || !strings.Contains(audit, "documents.register") {
		t.Errorf("platform audit: %v\n%s%s", err, audit, stderr)
	}
}
