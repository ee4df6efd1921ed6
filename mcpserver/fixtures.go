package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/platform-dev/platform/tools"
)

// The tools the official MCP conformance suite calls (its reference server's test_* tools),
// served only with Config.ConformanceFixtures: they prove the protocol handling (content
// types, logging and progress during a call, tool errors) and have no place on a public
// deployment. Sampling and elicitation need requests from server to client, which this
// server does not make, so their fixtures are absent.

// contentBlocks is a tool result that is already MCP content; it is sent as is.
type contentBlocks []map[string]any

const (
	// A 1x1 red PNG and a silent WAV header: the smallest valid image and audio.
	fixturePNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	fixtureWAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="
)

var (
	fixtureText     = map[string]any{"type": "text", "text": "This is a simple text response for testing."}
	fixtureImage    = map[string]any{"type": "image", "data": fixturePNG, "mimeType": "image/png"}
	fixtureEmbedded = map[string]any{"type": "resource", "resource": map[string]any{
		"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content.",
	}}
)

// fixtureTool is one conformance fixture.
type fixtureTool struct {
	name, description string
	call              func(ctx context.Context) (any, error)
}

func (f fixtureTool) Spec() tools.Spec {
	return tools.Spec{Name: f.name, Description: f.description, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}
}

func (f fixtureTool) Call(ctx context.Context, _ json.RawMessage) (any, error) { return f.call(ctx) }

func fixtureTools() []tools.Tool {
	blocks := func(b ...map[string]any) func(context.Context) (any, error) {
		return func(context.Context) (any, error) { return contentBlocks(b), nil }
	}
	return []tools.Tool{
		fixtureTool{"test_simple_text", "Returns simple text content.", blocks(fixtureText)},
		fixtureTool{"test_image_content", "Returns image content.", blocks(fixtureImage)},
		fixtureTool{"test_audio_content", "Returns audio content.", blocks(map[string]any{"type": "audio", "data": fixtureWAV, "mimeType": "audio/wav"})},
		fixtureTool{"test_embedded_resource", "Returns an embedded resource.", blocks(fixtureEmbedded)},
		fixtureTool{"test_multiple_content_types", "Returns text, image and resource content.", blocks(fixtureText, fixtureImage, fixtureEmbedded)},
		fixtureTool{"test_error_handling", "Always fails.", func(context.Context) (any, error) {
			return nil, errors.New("this tool intentionally returns an error for testing")
		}},
		fixtureTool{"test_tool_with_logging", "Sends log messages while it runs.", func(ctx context.Context) (any, error) {
			if cs, ok := ctx.Value(streamKey{}).(*callStream); ok {
				for _, text := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
					cs.notify(notificationJSON("notifications/message", map[string]any{"level": "info", "logger": "conformance", "data": text}))
				}
			}
			return contentBlocks{{"type": "text", "text": "Tool with logging executed successfully"}}, nil
		}},
		fixtureTool{"test_tool_with_progress", "Reports progress while it runs.", func(ctx context.Context) (any, error) {
			for _, p := range []float64{0, 50, 100} {
				tools.ReportProgress(ctx, p, 100, "")
			}
			return contentBlocks{{"type": "text", "text": "Tool with progress executed successfully"}}, nil
		}},
	}
}

// fixturePrompts are the prompts the conformance suite gets.
func fixturePrompts() []*promptEntry {
	user := func(content map[string]any) []any { return []any{map[string]any{"role": "user", "content": content}} }
	text := func(t string) map[string]any { return map[string]any{"type": "text", "text": t} }
	return []*promptEntry{
		{name: "test_simple_prompt", title: "test_simple_prompt", description: "A prompt without arguments.",
			args: []promptArg{}, messages: func(map[string]string) []any { return user(text("This is a simple prompt for testing.")) }},
		{name: "test_prompt_with_arguments", title: "test_prompt_with_arguments", description: "A prompt with two arguments.",
			args: []promptArg{{Name: "arg1", Description: "First test argument", Required: true}, {Name: "arg2", Description: "Second test argument", Required: true}},
			messages: func(a map[string]string) []any {
				return user(text("Prompt with arguments: arg1='" + a["arg1"] + "', arg2='" + a["arg2"] + "'"))
			}},
		{name: "test_prompt_with_embedded_resource", title: "test_prompt_with_embedded_resource", description: "A prompt that embeds a resource.",
			args: []promptArg{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
			messages: func(a map[string]string) []any {
				return append(user(map[string]any{"type": "resource", "resource": map[string]any{
					"uri": a["resourceUri"], "mimeType": "text/plain", "text": "Embedded resource content for testing.",
				}}), user(text("Please process the embedded resource above."))...)
			}},
		{name: "test_prompt_with_image", title: "test_prompt_with_image", description: "A prompt with an image.",
			args: []promptArg{}, messages: func(map[string]string) []any {
				return append(user(fixtureImage), user(text("Please analyze the image above."))...)
			}},
	}
}

// fixtureResource is a conformance resource with fixed content.
type fixtureResource struct {
	info    tools.ResourceInfo
	content resourceContent
}

func (f fixtureResource) Info() tools.ResourceInfo { return f.info }

func (f fixtureResource) Read(context.Context) (any, error) { return f.content, nil }

func fixtureResources() []tools.Resource {
	text := func(uri, name, body string) tools.Resource {
		return fixtureResource{tools.ResourceInfo{URI: uri, Name: name, Description: name, MIMEType: "text/plain"}, resourceContent{MIMEType: "text/plain", Text: body}}
	}
	return []tools.Resource{
		text("test://static-text", "Static text resource", "This is the content of the static text resource."),
		fixtureResource{tools.ResourceInfo{URI: "test://static-binary", Name: "Static binary resource", Description: "A PNG image", MIMEType: "image/png"},
			resourceContent{MIMEType: "image/png", Blob: fixturePNG}},
		text("test://watched-resource", "Watched resource", "A resource to subscribe to."),
	}
}

func fixtureTemplates() []*resourceTemplate {
	const prefix, suffix = "test://template/", "/data"
	return []*resourceTemplate{{
		uriTemplate: prefix + "{id}" + suffix, name: "Template resource", description: "Data of the item {id}.", mimeType: "application/json",
		match: func(uri string) bool {
			id, ok := strings.CutPrefix(uri, prefix)
			id, ok2 := strings.CutSuffix(id, suffix)
			return ok && ok2 && id != "" && !strings.Contains(id, "/")
		},
		read: func(uri string) resourceContent {
			id := strings.TrimSuffix(strings.TrimPrefix(uri, prefix), suffix)
			b, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return resourceContent{MIMEType: "application/json", Text: string(b)}
		},
	}}
}
