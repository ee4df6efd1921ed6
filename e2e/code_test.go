package e2e

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/code"
	"github.com/platform-dev/platform/tools/workspace"
)

// codeFixture is the polyglot repository whose true figures tools/code's tests spell out.
const codeFixture = "../tools/code/testdata/polyglot"

func startCodeMCP(t *testing.T) string {
	t.Helper()
	return startCodeMCPAt(t, codeFixture)
}

// startCodeMCPAt serves the code tools over the workspace root.
func startCodeMCPAt(t *testing.T, root string) string {
	t.Helper()
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	hub := &tools.Hub{}
	a, err := code.New(context.Background(), ws, hub, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return startMCP(t, tools.Set{Tools: a.Tools(), Resources: []tools.Resource{a.Resource()}}, hub)
}

// codeStructured returns a successful call's structuredContent, after checking that the text
// content carries the same JSON.
func codeStructured(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	if res["isError"] != false {
		t.Fatalf("isError: %v", res)
	}
	sc, ok := res["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("no structuredContent: %v", res)
	}
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no content: %v", res)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text), &fromText); err != nil || !reflect.DeepEqual(fromText, sc) {
		t.Errorf("text content differs from structuredContent (%v)", err)
	}
	return sc
}

type codeCase struct {
	name string
	tool string
	args map[string]any
	// want checks a successful result; nil means the call must fail with wantCode (a JSON-RPC
	// error) or, when wantCode is 0, with isError true and a text containing wantText.
	want     func(t *testing.T, sc map[string]any)
	wantCode float64
	wantText string
}

func runCodeCases(t *testing.T, url string, cases []codeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, rerr := callTool(t, url, tc.tool, tc.args)
			switch {
			case tc.want != nil:
				if rerr != nil {
					t.Fatalf("JSON-RPC error %v", rerr)
				}
				tc.want(t, codeStructured(t, res))
			case tc.wantCode != 0:
				if rerr == nil || rerr["code"] != tc.wantCode {
					t.Fatalf("want error %v, got result %v error %v", tc.wantCode, res, rerr)
				}
				if data, _ := rerr["data"].(map[string]any); data == nil || data["details"] == "" {
					t.Errorf("error without data.details: %v", rerr)
				}
			default:
				if rerr != nil || res["isError"] != true {
					t.Fatalf("want isError, got result %v error %v", res, rerr)
				}
				text, _ := res["content"].([]any)[0].(map[string]any)["text"].(string)
				if !strings.Contains(text, tc.wantText) {
					t.Errorf("error text %q does not mention %q", text, tc.wantText)
				}
			}
		})
	}
}

func codeList(sc map[string]any, key string) []any {
	l, _ := sc[key].([]any)
	return l
}

func codeField(v any, key string) any {
	m, _ := v.(map[string]any)
	return m[key]
}

const codeInvalidParams = float64(-32003)

func TestCodeToolsList(t *testing.T) {
	url := startCodeMCP(t)
	res, rerr := rpc(t, url, "tools/list", map[string]any{})
	if rerr != nil {
		t.Fatal(rerr)
	}
	names := map[string]map[string]any{}
	for _, tl := range res["tools"].([]any) {
		m := tl.(map[string]any)
		names[m["name"].(string)] = m
	}
	for _, n := range []string{"analyze_codebase", "find_dependencies", "detect_patterns"} {
		tl := names[n]
		if tl == nil || tl["inputSchema"] == nil || tl["outputSchema"] == nil || tl["description"] == "" {
			t.Errorf("tools/list %s: %v", n, tl)
		}
	}
	req := codeField(names["find_dependencies"]["inputSchema"], "required")
	if !reflect.DeepEqual(req, []any{"component"}) {
		t.Errorf("find_dependencies required = %v", req)
	}
}

func TestAnalyzeCodebaseOverMCP(t *testing.T) {
	url := startCodeMCP(t)
	language := func(sc map[string]any, name string) map[string]any {
		for _, l := range codeList(sc, "languages") {
			if codeField(l, "name") == name {
				return l.(map[string]any)
			}
		}
		return nil
	}
	runCodeCases(t, url, []codeCase{
		{name: "defaults", tool: "analyze_codebase", args: map[string]any{}, want: func(t *testing.T, sc map[string]any) {
			if sc["depth"] != 3.0 || sc["path"] != "." {
				t.Errorf("defaults: depth %v path %v", sc["depth"], sc["path"])
			}
			if py := language(sc, "Python"); py["code"] != 555.0 || py["comment"] != 6.0 || py["blank"] != 49.0 {
				t.Errorf("Python %v", py)
			}
			if goLang := language(sc, "Go"); goLang["code"] != 74.0 || goLang["comment"] != 24.0 || goLang["blank"] != 29.0 {
				t.Errorf("Go %v", goLang)
			}
			if len(codeList(sc, "manifests")) != 5 || len(codeList(sc, "entryPoints")) != 6 {
				t.Errorf("manifests %d entry points %d", len(codeList(sc, "manifests")), len(codeList(sc, "entryPoints")))
			}
		}},
		{name: "path and language alias", tool: "analyze_codebase", args: map[string]any{"path": "rust", "language": "rs"}, want: func(t *testing.T, sc map[string]any) {
			if l := codeList(sc, "languages"); len(l) != 1 || codeField(l[0], "code") != 23.0 || sc["language"] != "Rust" {
				t.Errorf("rust: %v", l)
			}
		}},
		{name: "depth 0", tool: "analyze_codebase", args: map[string]any{"depth": 0}, want: func(t *testing.T, sc map[string]any) {
			if codeField(sc["tree"], "children") != nil || len(codeList(sc, "files")) != 0 {
				t.Errorf("depth 0: %v", sc["tree"])
			}
		}},
		{name: "depth 20", tool: "analyze_codebase", args: map[string]any{"depth": 20}, want: func(t *testing.T, sc map[string]any) {
			if len(codeList(sc, "files")) != 20 {
				t.Errorf("depth 20 lists %d files with symbols, want every parsed source file (20)", len(codeList(sc, "files")))
			}
		}},
		{name: "limit 1", tool: "analyze_codebase", args: map[string]any{"limit": 1}, want: func(t *testing.T, sc map[string]any) {
			if len(codeList(sc, "hotspots")) != 1 || codeField(sc["omitted"], "hotspots") == nil || sc["hint"] == "" {
				t.Errorf("limit 1: %v %v", codeList(sc, "hotspots"), sc["omitted"])
			}
		}},
		{name: "limit 1000", tool: "analyze_codebase", args: map[string]any{"limit": 1000}, want: func(t *testing.T, sc map[string]any) {
			if sc["omitted"] != nil {
				t.Errorf("limit 1000 omitted %v", sc["omitted"])
			}
		}},
		{name: "depth 21", tool: "analyze_codebase", args: map[string]any{"depth": 21}, wantCode: codeInvalidParams},
		{name: "depth -1", tool: "analyze_codebase", args: map[string]any{"depth": -1}, wantCode: codeInvalidParams},
		{name: "depth fraction rounding past the maximum", tool: "analyze_codebase", args: map[string]any{"depth": 20.6}, wantCode: codeInvalidParams},
		{name: "depth as string", tool: "analyze_codebase", args: map[string]any{"depth": "3"}, wantCode: codeInvalidParams},
		{name: "limit 0", tool: "analyze_codebase", args: map[string]any{"limit": 0}, wantCode: codeInvalidParams},
		{name: "limit 1001", tool: "analyze_codebase", args: map[string]any{"limit": 1001}, wantCode: codeInvalidParams},
		{name: "path as number", tool: "analyze_codebase", args: map[string]any{"path": 7}, wantCode: codeInvalidParams},
		{name: "language as list", tool: "analyze_codebase", args: map[string]any{"language": []string{"Go"}}, wantCode: codeInvalidParams},
		{name: "unknown language", tool: "analyze_codebase", args: map[string]any{"language": "klingon"}, wantCode: codeInvalidParams},
		{name: "unknown argument", tool: "analyze_codebase", args: map[string]any{"paht": "."}, wantCode: codeInvalidParams},
		{name: "dot-dot path", tool: "analyze_codebase", args: map[string]any{"path": "../polyglot"}, wantCode: codeInvalidParams},
		{name: "absolute path outside", tool: "analyze_codebase", args: map[string]any{"path": "/etc"}, wantCode: codeInvalidParams},
		{name: "device", tool: "analyze_codebase", args: map[string]any{"path": "/dev/null"}, wantCode: codeInvalidParams},
		{name: "missing path", tool: "analyze_codebase", args: map[string]any{"path": "nowhere"}, wantCode: codeInvalidParams},
	})
}

func TestFindDependenciesOverMCP(t *testing.T) {
	url := startCodeMCP(t)
	runCodeCases(t, url, []codeCase{
		{name: "folder with cycle", tool: "find_dependencies", args: map[string]any{"component": "internal/store"}, want: func(t *testing.T, sc map[string]any) {
			cycles := codeList(sc, "cycles")
			if len(cycles) != 1 || !reflect.DeepEqual(codeField(cycles[0], "path"),
				[]any{"internal/store", "internal/handler", "internal/service", "internal/store"}) {
				t.Errorf("cycles %v", cycles)
			}
			if sc["type"] != "both" || sc["depth"] != 1.0 || codeList(sc, "imports") == nil || codeList(sc, "exports") == nil {
				t.Errorf("defaults: %v", sc)
			}
		}},
		{name: "imports of a file", tool: "find_dependencies", args: map[string]any{"component": "web/src/index.ts", "type": "imports"}, want: func(t *testing.T, sc map[string]any) {
			imps := codeList(sc, "imports")
			if len(imps) != 2 || codeField(imps[0], "target") != "web/src/greet.ts" || codeField(imps[1], "version") != "^4.18.2" || sc["exports"] != nil {
				t.Errorf("imports %v", imps)
			}
		}},
		{name: "exports of a module", tool: "find_dependencies", args: map[string]any{"component": "app.util", "type": "exports"}, want: func(t *testing.T, sc map[string]any) {
			if codeField(sc["resolved"], "kind") != "module" || sc["imports"] != nil || len(codeList(sc, "exports")) != 2 {
				t.Errorf("exports %v", sc)
			}
		}},
		{name: "symbol with depth 10", tool: "find_dependencies", args: map[string]any{"component": "Registry", "depth": 10}, want: func(t *testing.T, sc map[string]any) {
			if codeField(sc["resolved"], "kind") != "symbol" {
				t.Errorf("resolved %v", sc["resolved"])
			}
		}},
		{name: "limit 1", tool: "find_dependencies", args: map[string]any{"component": "py", "limit": 1}, want: func(t *testing.T, sc map[string]any) {
			if len(codeList(sc, "imports")) != 1 || codeField(sc["omitted"], "imports") != 1.0 {
				t.Errorf("limit 1: %v", sc)
			}
		}},
		{name: "unknown component", tool: "find_dependencies", args: map[string]any{"component": "internal/stor"}, wantText: "internal/store"},
		{name: "missing component", tool: "find_dependencies", args: map[string]any{}, wantCode: codeInvalidParams},
		{name: "empty component", tool: "find_dependencies", args: map[string]any{"component": ""}, wantCode: codeInvalidParams},
		{name: "component as number", tool: "find_dependencies", args: map[string]any{"component": 42}, wantCode: codeInvalidParams},
		{name: "type all", tool: "find_dependencies", args: map[string]any{"component": "py", "type": "all"}, wantCode: codeInvalidParams},
		{name: "type as bool", tool: "find_dependencies", args: map[string]any{"component": "py", "type": true}, wantCode: codeInvalidParams},
		{name: "depth 0", tool: "find_dependencies", args: map[string]any{"component": "py", "depth": 0}, wantCode: codeInvalidParams},
		{name: "depth 11", tool: "find_dependencies", args: map[string]any{"component": "py", "depth": 11}, wantCode: codeInvalidParams},
		{name: "dot-dot component", tool: "find_dependencies", args: map[string]any{"component": "../../../go.mod"}, wantCode: codeInvalidParams},
		{name: "absolute outside", tool: "find_dependencies", args: map[string]any{"component": "/etc/passwd"}, wantCode: codeInvalidParams},
	})
}

func TestDetectPatternsOverMCP(t *testing.T) {
	url := startCodeMCP(t)
	names := func(sc map[string]any) map[string]int {
		out := map[string]int{}
		for _, f := range codeList(sc, "findings") {
			out[codeField(f, "name").(string)]++
		}
		return out
	}
	runCodeCases(t, url, []codeCase{
		{name: "project", tool: "detect_patterns", args: map[string]any{}, want: func(t *testing.T, sc map[string]any) {
			n := names(sc)
			for _, want := range []string{"import-cycle", "god-file", "singleton", "duplicated-code", "layer-violation"} {
				if n[want] == 0 {
					t.Errorf("no %s finding: %v", want, n)
				}
			}
			first := codeList(sc, "findings")[0]
			if codeField(first, "name") != "import-cycle" || codeField(first, "why") == "" || codeField(first, "action") == "" {
				t.Errorf("first finding %v", first)
			}
		}},
		{name: "directory scope", tool: "detect_patterns", args: map[string]any{"scope": "directory", "path": "py", "pattern_type": "anti-pattern"}, want: func(t *testing.T, sc map[string]any) {
			if n := names(sc); n["god-file"] != 1 || n["import-cycle"] != 0 {
				t.Errorf("py anti-patterns %v", n)
			}
		}},
		{name: "file scope", tool: "detect_patterns", args: map[string]any{"scope": "file", "path": "java/src/main/java/com/acme/util/Registry.java", "pattern_type": "singleton"}, want: func(t *testing.T, sc map[string]any) {
			if n := names(sc); n["singleton"] != 1 || len(n) != 1 {
				t.Errorf("Registry.java %v", n)
			}
		}},
		{name: "design only", tool: "detect_patterns", args: map[string]any{"pattern_type": "design"}, want: func(t *testing.T, sc map[string]any) {
			for _, f := range codeList(sc, "findings") {
				if codeField(f, "kind") != "design" {
					t.Errorf("design filter let through %v", codeField(f, "name"))
				}
			}
		}},
		{name: "architectural", tool: "detect_patterns", args: map[string]any{"pattern_type": "architectural", "limit": 1}, want: func(t *testing.T, sc map[string]any) {
			if len(codeList(sc, "findings")) != 1 || sc["omitted"] == nil {
				t.Errorf("limit 1: %v", sc)
			}
		}},
		{name: "scope universe", tool: "detect_patterns", args: map[string]any{"scope": "universe"}, wantCode: codeInvalidParams},
		{name: "scope as number", tool: "detect_patterns", args: map[string]any{"scope": 1}, wantCode: codeInvalidParams},
		{name: "unknown pattern", tool: "detect_patterns", args: map[string]any{"pattern_type": "spaghetti"}, wantCode: codeInvalidParams},
		{name: "pattern as object", tool: "detect_patterns", args: map[string]any{"pattern_type": map[string]any{}}, wantCode: codeInvalidParams},
		{name: "file scope without path", tool: "detect_patterns", args: map[string]any{"scope": "file"}, wantCode: codeInvalidParams},
		{name: "file scope on a folder", tool: "detect_patterns", args: map[string]any{"scope": "file", "path": "py"}, wantCode: codeInvalidParams},
		{name: "dot-dot path", tool: "detect_patterns", args: map[string]any{"scope": "directory", "path": "py/../.."}, wantCode: codeInvalidParams},
		{name: "limit 0", tool: "detect_patterns", args: map[string]any{"limit": 0}, wantCode: codeInvalidParams},
	})
}

func TestCodeAnalysisResourceOverMCP(t *testing.T) {
	url := startCodeMCP(t)
	res, rerr := rpc(t, url, "resources/list", map[string]any{})
	if rerr != nil {
		t.Fatal(rerr)
	}
	found := false
	for _, r := range res["resources"].([]any) {
		if codeField(r, "uri") == code.ResourceURI {
			found = codeField(r, "name") == "Code Analysis" && codeField(r, "mimeType") == "application/json"
		}
	}
	if !found {
		t.Errorf("resources/list: %v", res)
	}
	doc := readResource(t, url, code.ResourceURI)
	if lines := codeField(doc["summary"], "lines"); codeField(lines, "code") != 757.0 {
		t.Errorf("resource summary %v", doc["summary"])
	}
}
