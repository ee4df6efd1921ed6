package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/platform-dev/platform/cmd/platform/platformtest"
	"github.com/platform-dev/platform/internal/testenv"
)

// conformanceCLI is where .ci/run installs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned there); MCP_CONFORMANCE_BIN names another.
const conformanceCLI = "../.ci/conformance/node_modules/.bin/conformance"

// TestMCPConformance runs every server scenario of the official MCP conformance suite (the
// active and the pending ones) against the platform binary. Every scenario passes except
// those listed, with their reasons, in testdata/mcp-conformance-baseline.yml (none today);
// the suite also fails when one of those passes.
func TestMCPConformance(t *testing.T) {
	cli := os.Getenv("MCP_CONFORMANCE_BIN")
	if cli == "" {
		cli = conformanceCLI
	}
	testenv.NeedFile(t, cli, "npm install --prefix .ci/conformance @modelcontextprotocol/conformance, at the version pinned there")
	testenv.Need(t, "node")
	baseline, err := filepath.Abs("testdata/mcp-conformance-baseline.yml")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := platformtest.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The suite is one client sending a few hundred requests within a minute: above the
	// public per-client limits, which other tests cover. It calls its fixture tools.
	srv := platformtest.Start(t, bin, "", "MCP_REQUESTS_PER_WINDOW=100000", "MCP_MAX_CONCURRENT=1000", "PLATFORM_METRICS_ADDR=",
		"MCP_CONFORMANCE_FIXTURES=true")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "server", "--url", "http://"+srv.Addr+"/mcp",
		"--suite", "all", "--expected-failures", baseline, "--output-dir", t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance suite: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
