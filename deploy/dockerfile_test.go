package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"golang.org/x/mod/modfile"
)

// TestDockerfile parses the Dockerfile with BuildKit's own parser and linter (Docker cannot
// run here), then checks the final stage against the code: a non-root user, the port the
// service listens on, settings the service reads, and subcommands that exist.
func TestDockerfile(t *testing.T) {
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ast, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("parse Dockerfile: %v", err)
	}
	for _, w := range ast.Warnings {
		t.Errorf("Dockerfile line %d: %s", w.Location.Start.Line, w.Short)
	}
	var lints []string
	lint := linter.New(&linter.Config{Warn: func(rule, desc, url, msg string, loc []parser.Range) {
		lints = append(lints, fmt.Sprintf("%s: %s", rule, msg))
	}})
	stages, _, err := instructions.Parse(ast.AST, lint)
	if err != nil {
		t.Fatalf("Dockerfile instructions: %v", err)
	}
	for _, l := range lints {
		t.Errorf("Dockerfile lint %s", l)
	}
	if len(stages) < 2 {
		t.Fatalf("want a multi-stage build, got %d stage(s)", len(stages))
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.ParseLax("go.mod", gomod, nil)
	if err != nil || mod.Go == nil {
		t.Fatalf("go.mod: %v", err)
	}
	if image, want := stages[0].BaseName, "golang:"+mod.Go.Version+"-"; !strings.HasPrefix(image, want) {
		t.Errorf("the build stage is %s: want %s<debian release>, the go version of go.mod", image, want)
	}

	ref := loadReference(t)
	final := stages[len(stages)-1]
	var (
		user                  string
		exposed               []string
		entrypoint, cmd, hcmd []string
	)
	addr, _ := ref.env("PLATFORM_ADDR")
	listen := addr.Default
	for _, c := range final.Commands {
		switch c := c.(type) {
		case *instructions.UserCommand:
			user = c.User
		case *instructions.ExposeCommand:
			exposed = append(exposed, c.Ports...)
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				if !ref.known(kv.Key) {
					t.Errorf("Dockerfile sets %s, which `platform config-reference` does not list", kv.Key)
				}
				if kv.Key == "PLATFORM_ADDR" {
					listen = kv.Value
				}
			}
		case *instructions.EntrypointCommand:
			entrypoint = c.CmdLine
		case *instructions.CmdCommand:
			cmd = c.CmdLine
		case *instructions.HealthCheckCommand:
			if len(c.Health.Test) < 2 || c.Health.Test[0] != "CMD" {
				t.Errorf("HEALTHCHECK %q: want the exec form (the base image has no shell)", c.Health.Test)
				continue
			}
			hcmd = c.Health.Test[1:]
		}
	}
	if name, _, _ := strings.Cut(user, ":"); name == "" || name == "root" || name == "0" {
		t.Errorf("final stage runs as %q: want a non-root user", user)
	}
	if port := portOf(t, listen); !slices.ContainsFunc(exposed, func(p string) bool { return strings.TrimSuffix(p, "/tcp") == port }) {
		t.Errorf("EXPOSE %q does not include %s, the port the service listens on", exposed, port)
	}
	if len(entrypoint) != 1 || len(cmd) == 0 {
		t.Fatalf("ENTRYPOINT %q CMD %q: want the binary as entrypoint and its subcommand as CMD", entrypoint, cmd)
	}
	// The image's commands must be subcommands of this binary.
	for _, args := range [][]string{cmd, hcmd[min(1, len(hcmd)):]} {
		if len(args) == 0 {
			t.Errorf("missing command (HEALTHCHECK %q)", hcmd)
			continue
		}
		if out, err := exec.Command(binary, args[0], "--help").CombinedOutput(); err != nil || strings.Contains(string(out), "unknown command") {
			t.Errorf("the image runs `platform %s`, which the binary does not know: %v\n%s", args[0], err, out)
		}
	}
	if len(hcmd) > 0 && hcmd[0] != entrypoint[0] {
		t.Errorf("HEALTHCHECK runs %q, want the service binary %q", hcmd[0], entrypoint[0])
	}
}
