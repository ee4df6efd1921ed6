package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools"
)

// composeLaughs is a docker-compose file whose anchors expand to 9^9 nodes: about 400
// bytes.
func composeLaughs() string {
	var b strings.Builder
	b.WriteString("x-l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "x-l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 9), ","))
	}
	b.WriteString("services:\n  web:\n    image: nginx:1.27\n    command: *l9\n")
	return b.String()
}

// TestDeclarationFilesPastTheLimitsOverMCP: in a workspace holding a billion-laughs
// docker-compose file, a Terraform file of 400,000 nested brackets (whose parser would
// overflow its stack and end the process) and a Terraform module whose locals double 30
// times, analyze_cloud_resources answers over MCP with the first two files named in its
// errors with the limit each passed, with the module's bucket (its name left unresolved) and
// the resources of an ordinary compose file using `<<: *defaults`, within a bounded
// allocation; security_assessment names the files in its notes.
func TestDeclarationFilesPastTheLimitsOverMCP(t *testing.T) {
	// Terraform's locals are HCL's anchors: each doubles the one before, 16 GB at the last.
	locals := "locals {\n  l0 = \"xxxxxxxxxxxxxxxx\"\n"
	for i := 1; i <= 30; i++ {
		locals += fmt.Sprintf("  l%d = \"${local.l%d}${local.l%d}\"\n", i, i-1, i-1)
	}
	root := testenv.TempTree(t, map[string]string{
		"bomb/docker-compose.yml": composeLaughs(),
		"deep/main.tf":            "locals {\n  a = " + strings.Repeat("[", 400_000) + strings.Repeat("]", 400_000) + "\n}\n",
		"tf/main.tf": locals + "  tags = {team = \"web\"}\n}\n" +
			"resource \"aws_s3_bucket\" \"b\" {\n  bucket = local.l30\n  tags = local.tags\n}\n",
		"app/compose.yaml": `
x-defaults: &defaults
  restart: always
  logging: {driver: json-file}
services:
  web:
    <<: *defaults
    image: nginx:1.27
  worker:
    <<: *defaults
    image: busybox:1.36
    restart: "no"
`,
	})
	hub := &tools.Hub{}
	set, _ := infraSet(t, root, hub)
	url := startMCP(t, set, hub)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, rerr := callTool(t, url, "analyze_cloud_resources", map[string]any{"cost_analysis": false})
	runtime.ReadMemStats(&after)
	if rerr != nil {
		t.Fatal(rerr)
	}
	t.Logf("analyze_cloud_resources allocated %d KB", (after.TotalAlloc-before.TotalAlloc)>>10)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("the call allocated %d MB", grew>>20)
	}
	sc := infraResult(t, res)
	errs := map[string]map[string]any{}
	for _, e := range sc["errors"].([]any) {
		e := e.(map[string]any)
		errs[e["file"].(string)] = e
	}
	for file, want := range map[string][2]string{
		"bomb/docker-compose.yml": {"alias nodes", "YAML aliases expand to more than 10000 nodes"},
		"deep/main.tf":            {"depth", "document nests deeper than 100 levels"},
		"tf/main.tf":              {"expanded size", "Terraform expressions expand past 4194304 bytes"},
	} {
		e := errs[file]
		if e == nil || e["bound"] != want[0] || !strings.Contains(e["message"].(string), want[1]) {
			t.Errorf("%s: error %v, want bound %q and %q", file, e, want[0], want[1])
		}
	}
	resources := map[string]map[string]any{}
	for _, r := range sc["resources"].([]any) {
		r := r.(map[string]any)
		resources[r["address"].(string)] = r
	}
	if resources["compose/web"] == nil || resources["compose/worker"] == nil || resources["aws_s3_bucket.b"] == nil || len(resources) != 3 {
		t.Errorf("resources %v, want the two services of app/compose.yaml and tf/main.tf's bucket", sc["resources"])
	}

	res, rerr = callTool(t, url, "security_assessment", map[string]any{"scope": "infrastructure"})
	if rerr != nil {
		t.Fatal(rerr)
	}
	notes := fmt.Sprint(infraResult(t, res)["notes"])
	for _, want := range []string{"bomb/docker-compose.yml", "YAML aliases expand to more than 10000 nodes", "deep/main.tf", "document nests deeper than 100 levels"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q: %s", want, notes)
		}
	}
}

// TestManifestPastTheDepthLimitOverMCP: analyze_codebase reports a manifest nested past the
// depth limit as a manifest with an error naming the limit, and reads one at the limit, in
// each format it parses (JSON, TOML, XML).
func TestManifestPastTheDepthLimitOverMCP(t *testing.T) {
	nest := func(open, close string, n int) string { return strings.Repeat(open, n) + strings.Repeat(close, n) }
	for _, c := range []struct {
		file, name string
		manifest   func(depth int) string
	}{
		// The manifest's object is one level; "x" nests depth-1 more.
		{"package.json", "app", func(depth int) string {
			return `{"name": "app", "dependencies": {"left-pad": "1.3.0"}, "x": ` + nest("[", "]", depth-1) + `}`
		}},
		{"Cargo.toml", "app", func(depth int) string {
			return "[package]\nname = \"app\"\nversion = \"0.1.0\"\nx = " + nest("[", "]", depth) + "\n"
		}},
		{"pyproject.toml", "app", func(depth int) string {
			return "[project]\nname = \"app\"\nx = " + strings.Repeat("{a = ", depth) + "1" + strings.Repeat("}", depth) + "\n"
		}},
		// <project> is one level; <x> nests depth-1 more.
		{"pom.xml", "g:app", func(depth int) string {
			return "<project><groupId>g</groupId><artifactId>app</artifactId>" + nest("<x>", "</x>", depth-1) + "</project>"
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			root := t.TempDir()
			for dir, depth := range map[string]int{"at": 100, "past": 101} {
				if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, dir, c.file), []byte(c.manifest(depth)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			url := startCodeMCPAt(t, root)
			res, rerr := callTool(t, url, "analyze_codebase", map[string]any{})
			if rerr != nil {
				t.Fatal(rerr)
			}
			got := map[string]map[string]any{}
			for _, m := range codeStructured(t, res)["manifests"].([]any) {
				m := m.(map[string]any)
				got[m["path"].(string)] = m
			}
			if m := got["at/"+c.file]; m == nil || m["error"] != nil || m["name"] != c.name {
				t.Errorf("manifest at the limit: %v", m)
			}
			if m := got["past/"+c.file]; m == nil || !strings.Contains(fmt.Sprint(m["error"]), "document nests deeper than 100 levels") {
				t.Errorf("manifest past the limit: %v", m)
			}
		})
	}
}
