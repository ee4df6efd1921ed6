package e2e

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/platform-dev/platform/tools"
)

type upperTool struct{}

func (upperTool) Spec() tools.Spec {
	return tools.Spec{
		Name:        "upper",
		Description: "Upper-cases a word.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`),
	}
}

func (upperTool) Call(_ context.Context, args json.RawMessage) (any, error) {
	var a struct{ Word string }
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	out := []byte(a.Word)
	for i, c := range out {
		if c >= 'a' && c <= 'z' {
			out[i] = c - 'a' + 'A'
		}
	}
	return map[string]string{"word": string(out)}, nil
}

// TestMCPHelpers checks the helpers other e2e tests build on.
func TestMCPHelpers(t *testing.T) {
	url := startMCP(t, tools.Set{Tools: []tools.Tool{upperTool{}}}, &tools.Hub{})

	res, rerr := callTool(t, url, "upper", map[string]any{"word": "mcp"})
	if rerr != nil {
		t.Fatalf("callTool: %v", rerr)
	}
	if got := res["structuredContent"].(map[string]any)["word"]; got != "MCP" {
		t.Errorf("structuredContent.word = %v, want MCP", got)
	}
	if res["isError"] != false {
		t.Errorf("isError = %v", res["isError"])
	}

	_, rerr = callTool(t, url, "upper", map[string]any{})
	if rerr == nil || rerr["code"] != float64(-32003) {
		t.Fatalf("missing argument: want -32003, got %v", rerr)
	}

	health := readResource(t, url, "service://system/health")
	if health["status"] != "ok" {
		t.Errorf("health status = %v", health["status"])
	}
}
