package tenant_test

import (
	osexec "os/exec"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tenant"
)

// TestURQLClient drives a project with a real client library, urql (@urql/core, pinned in
// gql/testdata/npm, which .ci/run installs), from node: create, fetch by uid, list, update and
// delete with a token in the Authorization header, under owner rules, so that every answer
// depends on the token: the script checks each, that another caller's product stays hidden,
// and that the same client without the token is refused.
func TestURQLClient(t *testing.T) {
	node := testenv.Need(t, "node")
	const clients = "../gql/testdata/npm"
	testenv.NeedFile(t, clients+"/node_modules/@urql/core/package.json", "npm ci --prefix gql/testdata/npm")
	s := newStack(t)
	p := s.project(tenant.Access{Read: tenant.RuleOwner, Create: tenant.RuleAuthenticated, Update: tenant.RuleOwner, Delete: tenant.RuleOwner})
	bobs := p.seed(t, "bob", "Coffee", 2.5)
	cmd := osexec.CommandContext(t.Context(), node, "urql.mjs", p.url, s.token(p.id, "alice", nil), bobs)
	cmd.Dir = clients
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node urql.mjs: %v\n%s", err, out)
	}
	t.Logf("node urql.mjs:\n%s", out)
}
