package e2e

import (
	"fmt"
	"sort"
	"testing"

	"github.com/platform-dev/platform/tools"
)

// TestLimitCutsEveryList: a tool that takes `limit` applies it to every list in its answer,
// however deep, so an agent asking for one item of each gets no long list anywhere. The
// lists are found by walking the structured result, not named, so a list a tool adds later
// is held to the same rule.
func TestLimitCutsEveryList(t *testing.T) {
	code := startCodeMCP(t)
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

// walkLists calls fn with the JSON path and length of every array in v.
func walkLists(v any, path string, fn func(path string, n int)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			walkLists(e, path+"."+k, fn)
		}
	case []any:
		fn(path, len(x))
		for i, e := range x {
			walkLists(e, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
}
