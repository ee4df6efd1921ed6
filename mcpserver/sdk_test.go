//lint:file-ignore SA1019 logging is deprecated in 2026-07-28 but the seed announces it and 2025 clients use it.

package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/platform-dev/platform/mcpserver"
	"github.com/platform-dev/platform/tools"
)

// TestSDKInterop drives the server with the official MCP Go SDK client over its Streamable
// HTTP transport, once per protocol revision (the default is the newest, which the SDK
// reaches through server/discover).
func TestSDKInterop(t *testing.T) {
	forEachRedis(t, func(t *testing.T, rb redisBackend) {
		for _, version := range []string{"", "2025-11-25", "2025-06-18", "2025-03-26"} {
			name := version
			if name == "" {
				name = "default"
			}
			t.Run(name, func(t *testing.T) { sdkSession(t, rb, version) })
		}
	})
}

func sdkSession(t *testing.T, rb redisBackend, version string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	doc := &docResource{uri: mcpserver.URICodeAnalysis, doc: map[string]any{"files": 1.0}}
	hub := &tools.Hub{}
	set := allTools(newSlowTool())
	set.Resources = []tools.Resource{doc}
	ts := newServer(t, rb.addr, uniquePrefix(), mcpserver.Config{}, set, hub)

	updated := make(chan string, 10)
	logs := make(chan *mcp.LoggingMessageParams, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "interop-test", Version: "1.0.0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updated <- req.Params.URI
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			logs <- req.Params
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.url, MaxRetries: 1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	init := cs.InitializeResult()
	want := version
	if want == "" {
		want = "2026-07-28"
	}
	if init.ProtocolVersion != want {
		t.Errorf("negotiated %q, want %q", init.ProtocolVersion, want)
	}
	if init.ServerInfo == nil || init.ServerInfo.Name != "service-mcp-server" || init.ServerInfo.Version != "1.0.0" {
		t.Errorf("server info %+v", init.ServerInfo)
	}
	if c := init.Capabilities; c.Resources == nil || !c.Resources.Subscribe || !c.Resources.ListChanged || c.Tools == nil || !c.Tools.ListChanged {
		t.Errorf("capabilities %+v", c)
	}

	if err := cs.Ping(ctx, nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 4 || lt.Tools[0].Name != "echo" {
		t.Fatalf("list tools: %v %+v", err, lt)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi", "mode": "shout"}})
	if err != nil {
		t.Fatalf("call tool: %v", err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("call result %+v", res)
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if string(sc) != `{"message":"HI","repeat":1}` {
		t.Errorf("structuredContent %s", sc)
	}
	if text, ok := res.Content[0].(*mcp.TextContent); !ok || text.Text != `{"message":"HI","repeat":1}` {
		t.Errorf("content %+v", res.Content[0])
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"mode": "shout"}}); err == nil {
		t.Error("a call without the required argument succeeded")
	}

	lr, err := cs.ListResources(ctx, nil)
	if err != nil || len(lr.Resources) != 3 {
		t.Fatalf("list resources: %v %+v", err, lr)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.URISystemHealth})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].MIMEType != "application/json" {
		t.Fatalf("read health: %v %+v", err, rr)
	}
	var health map[string]any
	if err := json.Unmarshal([]byte(rr.Contents[0].Text), &health); err != nil || health["status"] != "ok" {
		t.Errorf("health %v %v", err, health)
	}

	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: mcpserver.URICodeAnalysis}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	// The legacy session's GET stream or the 2026 listen stream opens asynchronously;
	// keep signalling until the notification arrives.
	doc.set(map[string]any{"files": 2.0})
	waitFor(t, updated, mcpserver.URICodeAnalysis, func() { hub.Updated(mcpserver.URICodeAnalysis) })
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.URICodeAnalysis})
	if err != nil || rr.Contents[0].Text != `{"files":2}` {
		t.Errorf("read after update: %v %+v", err, rr)
	}

	if want == "2026-07-28" {
		// Stateless: there is no session to hold a log level; the rest is done.
		return
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatalf("set level: %v", err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}); err != nil {
		t.Fatal(err)
	}
	// The invalid call above was logged at error, which any level lets through; on the
	// legacy GET stream, which opens asynchronously, it may arrive only now.
	for {
		select {
		case m := <-logs:
			if m.Level == "error" && strings.Contains(fmt.Sprint(m.Data), "Invalid params") {
				continue
			}
			if m.Level != "debug" && m.Level != "info" {
				t.Errorf("log level %q: %v", m.Level, m.Data)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no log message")
		}
		break
	}
}

// waitFor repeats poke until want arrives on ch.
func waitFor(t *testing.T, ch <-chan string, want string, poke func()) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	poke()
	for {
		select {
		case got := <-ch:
			if got == want {
				return
			}
		case <-tick.C:
			poke()
		case <-deadline:
			t.Fatalf("no notification for %s", want)
		}
	}
}

// TestSDKProgressPromptsCancel drives progress notifications, prompts, completions and
// cancellation with the official Go SDK client, at the newest revision (stateless) and at
// 2025-11-25 (a session).
func TestSDKProgressPromptsCancel(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("version="+version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			slow := newSlowTool()
			set := allTools(slow)
			set.Tools = append(set.Tools, stepTool{})
			ts := newServer(t, startMini(t), uniquePrefix(), mcpserver.Config{}, set, nil)
			progress := make(chan *mcp.ProgressNotificationParams, 10)
			client := mcp.NewClient(&mcp.Implementation{Name: "sdk-test", Version: "1.0.0"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					progress <- req.Params
				},
			})
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.url, MaxRetries: 1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "steps", Arguments: map[string]any{"steps": 2}, Meta: mcp.Meta{"progressToken": "p1"}})
			if err != nil || res.IsError {
				t.Fatalf("steps: %v %+v", err, res)
			}
			for i := 1; i <= 2; i++ {
				select {
				case p := <-progress:
					if p.ProgressToken != "p1" || p.Progress != float64(i) || p.Total != 2 || p.Message != fmt.Sprintf("step %d of 2", i) {
						t.Errorf("progress %d: %+v", i, p)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("no progress notification %d", i)
				}
			}

			lp, err := cs.ListPrompts(ctx, nil)
			if err != nil || len(lp.Prompts) != 5 {
				t.Fatalf("list prompts: %v %+v", err, lp)
			}
			gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "echo", Arguments: map[string]string{"message": "hi"}})
			if err != nil || len(gp.Messages) != 1 || !strings.Contains(gp.Messages[0].Content.(*mcp.TextContent).Text, `"message":"hi"`) {
				t.Errorf("get prompt: %v %+v", err, gp)
			}
			cr, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "echo"},
				Argument: mcp.CompleteParamsArgument{Name: "mode", Value: "S"}})
			if err != nil || len(cr.Completion.Values) != 1 || cr.Completion.Values[0] != "shout" {
				t.Errorf("complete: %v %+v", err, cr)
			}

			callCtx, stop := context.WithCancel(ctx)
			go func() {
				<-slow.started
				stop()
			}()
			if _, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}); err == nil {
				t.Error("the cancelled call returned a result")
			}
			select {
			case <-slow.cancelled:
			case <-time.After(10 * time.Second):
				t.Error("cancelling the call did not cancel the tool")
			}
		})
	}
}
