package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/mcpserver/mcptest"
	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/cloud"
	"github.com/platform-dev/platform/tools/expert"
	"github.com/platform-dev/platform/tools/security"
	"github.com/platform-dev/platform/tools/workspace"
)

// infraSet builds the three infrastructure tools (and the cloud resource) over root.
func infraSet(t *testing.T, root string, hub *tools.Hub) (tools.Set, *security.Assessor) {
	t.Helper()
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := cloud.New(t.Context(), ws, hub, nil)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := security.New(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := expert.New(expert.Config{}, ws, expert.Sources{Security: sec, Cloud: cl}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tools.Set{Tools: []tools.Tool{cl, sec, ex}, Resources: []tools.Resource{cl}}, sec
}

func infraResult(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	if res["isError"] != false {
		t.Fatalf("isError: %v", res)
	}
	sc, ok := res["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("no structuredContent: %v", res)
	}
	// The text content carries the same JSON.
	content, _ := res["content"].([]any)
	text, _ := content[0].(map[string]any)["text"].(string)
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text), &fromText); err != nil {
		t.Fatalf("text is not JSON: %v", err)
	}
	a, _ := json.Marshal(sc)
	b, _ := json.Marshal(fromText)
	if !bytes.Equal(a, b) {
		t.Fatal("structuredContent and text differ")
	}
	return sc
}

func wantRPCCode(t *testing.T, what string, rerr map[string]any, code int) {
	t.Helper()
	if rerr == nil || rerr["code"] != float64(code) {
		t.Errorf("%s: want error %d, got %v", what, code, rerr)
	}
}

const infraFixture = "../tools/security/testdata/ws"

func TestInfrastructureToolsOverMCP(t *testing.T) {
	hub := &tools.Hub{}
	set, _ := infraSet(t, infraFixture, hub)
	url := startMCP(t, set, hub)

	list, rerr := rpc(t, url, "tools/list", map[string]any{})
	if rerr != nil {
		t.Fatal(rerr)
	}
	names := map[string]bool{}
	for _, x := range list["tools"].([]any) {
		names[x.(map[string]any)["name"].(string)] = true
	}
	for _, n := range []string{"analyze_cloud_resources", "security_assessment", "consult_expert"} {
		if !names[n] {
			t.Errorf("tools/list lacks %s", n)
		}
	}

	t.Run("analyze_cloud_resources", func(t *testing.T) {
		res, rerr := callTool(t, url, "analyze_cloud_resources", nil)
		if rerr != nil {
			t.Fatal(rerr)
		}
		sc := infraResult(t, res)
		sum := sc["summary"].(map[string]any)
		// infra/main.tf: 5 resources; k8s: Deployment and Secret; compose: 1 service;
		// clean/: 3 Terraform resources, 1 Deployment, its NetworkPolicy and PodDisruptionBudget.
		if sum["resources"] != float64(14) || sc["cost"] == nil {
			t.Errorf("summary %v, cost %v", sum, sc["cost"])
		}
		res, rerr = callTool(t, url, "analyze_cloud_resources", map[string]any{"service": "ebs", "region": "us-east-1", "cost_analysis": false})
		if rerr != nil {
			t.Fatal(rerr)
		}
		sc = infraResult(t, res)
		rs := sc["resources"].([]any)
		if len(rs) != 1 || rs[0].(map[string]any)["address"] != "aws_ebs_volume.plain" || sc["cost"] != nil {
			t.Errorf("filtered: %v", sc)
		}
		_, rerr = callTool(t, url, "analyze_cloud_resources", map[string]any{"cost_analysis": "yes"})
		wantRPCCode(t, "cost_analysis of the wrong type", rerr, -32003)
		_, rerr = callTool(t, url, "analyze_cloud_resources", map[string]any{"path": "/etc"})
		wantRPCCode(t, "path outside the workspace", rerr, -32003)
	})

	t.Run("security_assessment", func(t *testing.T) {
		res, rerr := callTool(t, url, "security_assessment", map[string]any{"scope": "both", "severity": "critical"})
		if rerr != nil {
			t.Fatal(rerr)
		}
		sc := infraResult(t, res)
		fs := sc["findings"].([]any)
		if len(fs) != 4 {
			t.Fatalf("critical findings %v", fs)
		}
		first := fs[0].(map[string]any)
		if first["ruleId"] != "secret/aws-access-token" || first["location"] != "config/deploy.env:3" ||
			first["cwe"] != "CWE-798" || !strings.Contains(first["message"].(string), "AKIA****") {
			t.Errorf("first finding %v", first)
		}
		if strings.Contains(fmt.Sprint(sc), "AKIAZ3MHQB7XK4RL2PNA") { // gitleaks:allow (the fixture secret)
			t.Error("secret shown in clear")
		}
		res, rerr = callTool(t, url, "security_assessment", map[string]any{"scope": "infrastructure", "severity": "high", "format": "sarif"})
		if rerr != nil {
			t.Fatal(rerr)
		}
		sc = infraResult(t, res)
		runs, _ := sc["runs"].([]any)
		if sc["version"] != "2.1.0" || len(runs) != 1 || len(runs[0].(map[string]any)["results"].([]any)) != 12 {
			t.Errorf("sarif %v", sc)
		}
		_, rerr = callTool(t, url, "security_assessment", map[string]any{})
		wantRPCCode(t, "scope missing", rerr, -32003)
		_, rerr = callTool(t, url, "security_assessment", map[string]any{"scope": "all"})
		wantRPCCode(t, "scope outside the enum", rerr, -32003)
		_, rerr = callTool(t, url, "security_assessment", map[string]any{"scope": "code", "severity": 3})
		wantRPCCode(t, "severity of the wrong type", rerr, -32003)
		_, rerr = callTool(t, url, "security_assessment", map[string]any{"scope": "code", "path": "../.."})
		wantRPCCode(t, "path with ..", rerr, -32003)
	})

	t.Run("consult_expert", func(t *testing.T) {
		res, rerr := callTool(t, url, "consult_expert", map[string]any{
			"domain": "security", "query": "What must we fix first?", "context": map[string]any{"path": "infra"}})
		if rerr != nil {
			t.Fatal(rerr)
		}
		sc := infraResult(t, res)
		if sc["answeredBy"] != "knowledge-base" || len(sc["guidance"].([]any)) == 0 {
			t.Errorf("answer %v", sc)
		}
		cited := fmt.Sprint(sc["findings"])
		for _, loc := range []string{"infra/docker/compose.yaml:6", "infra/main.tf:33", "infra/main.tf:7"} {
			if !strings.Contains(cited, loc) {
				t.Errorf("finding %s not cited: %s", loc, cited)
			}
		}
		_, rerr = callTool(t, url, "consult_expert", map[string]any{"domain": "legal", "query": "may we?"})
		wantRPCCode(t, "domain outside the five", rerr, -32003)
		_, rerr = callTool(t, url, "consult_expert", map[string]any{"domain": "security"})
		wantRPCCode(t, "query missing", rerr, -32003)
		_, rerr = callTool(t, url, "consult_expert", map[string]any{"domain": "devops", "query": "x", "context": "infra"})
		wantRPCCode(t, "context of the wrong type", rerr, -32003)
	})
}

// TestCloudResourceNotifiesSubscribers subscribes to service://infrastructure/cloud in a
// session and expects notifications/resources/updated on the GET stream after a declaration
// file changes, then the new content on resources/read.
func TestCloudResourceNotifiesSubscribers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.tf", "provider \"aws\" {\n  region = \"us-east-1\"\n}\n")
	hub := &tools.Hub{}
	set, _ := infraSet(t, dir, hub)
	url := startMCP(t, set, hub)

	session := infraSession(t, url)
	infraPost(t, url, session, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	infraPost(t, url, session, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": map[string]any{"uri": cloud.URI}})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("MCP-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: HTTP %d", resp.StatusCode)
	}

	write("db.tf", "resource \"aws_db_instance\" \"x\" {\n  engine         = \"postgres\"\n  instance_class = \"db.t3.micro\"\n}\n")
	sc := bufio.NewScanner(resp.Body)
	got := false
	for !got && sc.Scan() {
		line := sc.Text()
		if data, ok := strings.CutPrefix(line, "data:"); ok {
			var msg struct {
				Method string `json:"method"`
				Params struct {
					URI string `json:"uri"`
				} `json:"params"`
			}
			if json.Unmarshal([]byte(strings.TrimSpace(data)), &msg) == nil &&
				msg.Method == "notifications/resources/updated" && msg.Params.URI == cloud.URI {
				got = true
			}
		}
	}
	if !got {
		t.Fatalf("no notifications/resources/updated for %s (stream ended: %v)", cloud.URI, sc.Err())
	}
	doc := readResource(t, url, cloud.URI)
	// postgres db.t3.micro: 0.018 x 730 = 13.14
	if doc["summary"].(map[string]any)["resources"] != float64(1) || doc["cost"].(map[string]any)["monthlyTotal"] != 13.14 {
		t.Errorf("resource after the change: %v", doc)
	}
}

func infraSession(t *testing.T, url string) string {
	t.Helper()
	resp := infraPost(t, url, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "e2e", "version": "1"}}})
	id := resp.Header.Get("MCP-Session-Id")
	if id == "" {
		t.Fatal("initialize returned no MCP-Session-Id")
	}
	return id
}

func infraPost(t *testing.T, url, session string, msg any) *http.Response {
	t.Helper()
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header.Set("MCP-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("POST %v: HTTP %d", msg, resp.StatusCode)
	}
	return resp
}

// observedTool wraps a real tool to see when its Call returns, and with what.
type observedTool struct {
	tools.Tool
	done chan error
}

func (o observedTool) Call(ctx context.Context, args json.RawMessage) (any, error) {
	out, err := o.Tool.Call(ctx, args)
	o.done <- err
	return out, err
}

// TestLongAssessmentAnswersTruncated runs security_assessment on a generated workspace far
// larger than the request timeout allows: before the timeout, the caller gets the findings of
// the files scanned so far, flagged truncated, and the assessment itself has stopped.
func TestLongAssessmentAnswersTruncated(t *testing.T) {
	if testing.Short() { // -short leaves out the long tests, under CI=true too
		t.Skip("generates a large workspace")
	}
	dir := t.TempDir()
	var src strings.Builder
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&src, "def handler_%d(cursor, uid):\n    token = compute(uid) # %d\n    return cursor.execute(\"SELECT * FROM t WHERE id = %%s\", (uid,))\n\n", i, i)
	}
	for d := 0; d < 40; d++ {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%02d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := 0; f < 100; f++ {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("mod%03d.py", f)), []byte(src.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	hub := &tools.Hub{}
	set, sec := infraSet(t, dir, hub)
	obs := observedTool{Tool: sec, done: make(chan error, 1)}
	set.Tools[1] = obs

	// startMCP uses a one-minute timeout; this test needs the timeout to pass first, so it
	// builds the same server with a short one.
	url := mcptest.Serve(t, miniredis.RunT(t).Addr(), mcpserver.Config{RequestsPerWindow: 1000, Window: time.Minute, MaxConcurrent: 100,
		RequestTimeout: 3 * time.Second}, set, hub, nil).URL

	start := time.Now()
	res, rerr := callTool(t, url, "security_assessment", map[string]any{"scope": "both"})
	if rerr != nil {
		t.Fatalf("assessment past the budget: %v, want a truncated answer", rerr)
	}
	if sc := infraResult(t, res); sc["truncated"] != true {
		t.Errorf("answer not flagged truncated: %v", sc["notes"])
	}
	select {
	case err := <-obs.done:
		if err != nil {
			t.Errorf("assessment ended with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("assessment still running %s after the request started", time.Since(start))
	}
}
