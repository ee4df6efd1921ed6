package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools"
)

// TestLimitCutsEveryList: a tool that takes `limit` applies it to every list in its answer,
// however deep, so an agent asking for one item of each gets no long list anywhere. The
// lists are found by walking the structured result, not named, so a list a tool adds later
// is held to the same rule.
func TestLimitCutsEveryList(t *testing.T) {
	code := startCodeMCP(t)
	changed := startCodeMCPAt(t, changedRepository(t))
	hub := &tools.Hub{}
	set, _ := infraSet(t, infraFixture, hub)
	infra := startMCP(t, set, hub)
	calls := []struct {
		url  string
		tool string
		args map[string]any
	}{
		{code, "analyze_codebase", map[string]any{"depth": 20}},
		{code, "analyze_codebase", map[string]any{"path": "web"}}, // package.json: a dependency and a devDependency
		{code, "find_dependencies", map[string]any{"component": "internal/store", "depth": 10}},
		{code, "find_dependencies", map[string]any{"component": "py"}},
		{code, "find_dependencies", map[string]any{"component": "Registry", "type": "exports"}},
		{code, "detect_patterns", map[string]any{}},
		{code, "find_symbol", map[string]any{"name": "Registry"}},
		{code, "find_references", map[string]any{"symbol": "Registry"}},
		{infra, "security_assessment", map[string]any{"scope": "both"}},
		{changed, "changes_impact", map[string]any{"since": "HEAD", "depth": 10}},
	}
	// Every tool that takes limit is called above.
	called := map[string]bool{}
	for _, c := range calls {
		called[c.tool] = true
	}
	for _, url := range []string{code, infra, changed} {
		list, rerr := rpc(t, url, "tools/list", map[string]any{})
		if rerr != nil {
			t.Fatal(rerr)
		}
		for _, x := range list["tools"].([]any) {
			tl := x.(map[string]any)
			props, _ := codeField(tl["inputSchema"], "properties").(map[string]any)
			if _, ok := props["limit"]; ok && !called[tl["name"].(string)] {
				t.Errorf("%s takes limit but is not called here", tl["name"])
			}
		}
	}
	for _, c := range calls {
		t.Run(fmt.Sprint(c.tool, c.args), func(t *testing.T) {
			args := map[string]any{"limit": 1}
			for k, v := range c.args {
				args[k] = v
			}
			res, rerr := callTool(t, c.url, c.tool, args)
			if rerr != nil {
				t.Fatalf("JSON-RPC error %v", rerr)
			}
			sc := codeStructured(t, res)
			lists := 0
			var long []string
			walkLists(sc, "$", func(path string, n int) {
				lists++
				if n > 1 {
					long = append(long, fmt.Sprintf("%s (%d)", path, n))
				}
			})
			sort.Strings(long)
			if len(long) > 0 {
				t.Errorf("limit 1, but %d of %d lists are longer: %v", len(long), lists, long)
			}
		})
	}
}

// changedRepository is the code fixture committed to a new git repository, then changed in
// several files, for changes_impact to have several changes with several dependents.
func changedRepository(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(codeFixture)); err != nil {
		t.Fatal(err)
	}
	testenv.NewGit(t, root).Commit("fixture", nil)
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".go" {
			return err
		}
		n++
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, "\nfunc changed%d() int { return %d }\n", n, n)
		return errors.Join(err, f.Close())
	})
	if err != nil || n < 2 {
		t.Fatalf("change the fixture's Go files (%d): %v", n, err)
	}
	return root
}

// walkLists calls fn with the JSON path and length of every array in v but line ranges
// ([start, end], two numbers), which are one value.
func walkLists(v any, path string, fn func(path string, n int)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			walkLists(e, path+"."+k, fn)
		}
	case []any:
		if len(x) == 2 {
			_, a := x[0].(float64)
			_, b := x[1].(float64)
			if a && b {
				return
			}
		}
		fn(path, len(x))
		for i, e := range x {
			walkLists(e, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
}
