package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/platform-dev/platform/tools"
)

// The tools the official MCP conformance suite calls (its reference server's test_* tools),
// served only with Config.ConformanceFixtures: they prove the protocol handling (content
// types, logging and progress during a call, tool errors) and have no place on a public
// deployment. The sampling and elicitation fixtures send requests to the client (see
// clientreq.go); no production tool does.

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
	call              func(ctx context.Context, args json.RawMessage) (any, error)
	schema            string // the input schema, "" for none
}

func (f fixtureTool) Spec() tools.Spec {
	schema := f.schema
	if schema == "" {
		schema = `{"type":"object","properties":{}}`
	}
	return tools.Spec{Name: f.name, Description: f.description, InputSchema: json.RawMessage(schema)}
}

func (f fixtureTool) Call(ctx context.Context, args json.RawMessage) (any, error) {
	return f.call(ctx, args)
}

func fixtureTools() []tools.Tool {
	blocks := func(b ...map[string]any) func(context.Context, json.RawMessage) (any, error) {
		return func(context.Context, json.RawMessage) (any, error) { return contentBlocks(b), nil }
	}
	return []tools.Tool{
		fixtureTool{name: "test_simple_text", description: "Returns simple text content.", call: blocks(fixtureText)},
		fixtureTool{name: "test_image_content", description: "Returns image content.", call: blocks(fixtureImage)},
		fixtureTool{name: "test_audio_content", description: "Returns audio content.", call: blocks(map[string]any{"type": "audio", "data": fixtureWAV, "mimeType": "audio/wav"})},
		fixtureTool{name: "test_embedded_resource", description: "Returns an embedded resource.", call: blocks(fixtureEmbedded)},
		fixtureTool{name: "test_multiple_content_types", description: "Returns text, image and resource content.", call: blocks(fixtureText, fixtureImage, fixtureEmbedded)},
		fixtureTool{name: "test_error_handling", description: "Always fails.", call: func(context.Context, json.RawMessage) (any, error) {
			return nil, errors.New("this tool intentionally returns an error for testing")
		}},
		fixtureTool{name: "test_tool_with_logging", description: "Sends log messages while it runs.", call: func(ctx context.Context, _ json.RawMessage) (any, error) {
			if cs, ok := ctx.Value(streamKey{}).(*callStream); ok {
				for _, text := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
					cs.notify(notificationJSON("notifications/message", map[string]any{"level": "info", "logger": "conformance", "data": text}))
				}
			}
			return textBlock("Tool with logging executed successfully"), nil
		}},
		fixtureTool{name: "test_tool_with_progress", description: "Reports progress while it runs.", call: func(ctx context.Context, _ json.RawMessage) (any, error) {
			for _, p := range []float64{0, 50, 100} {
				tools.ReportProgress(ctx, p, 100, "")
			}
			return textBlock("Tool with progress executed successfully"), nil
		}},
		fixtureTool{name: "json_schema_2020_12_tool", description: "Tool with JSON Schema 2020-12 features.", call: blocks(fixtureText),
			schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
				"$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
				"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},"additionalProperties":false}`},
		fixtureTool{name: "test_sampling", description: "Asks the client's LLM to answer the prompt (sampling/createMessage).",
			schema: `{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`,
			call: func(ctx context.Context, args json.RawMessage) (any, error) {
				var a struct{ Prompt string }
				_ = json.Unmarshal(args, &a)
				res, err := askClient(ctx, "sampling/createMessage", map[string]any{
					"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": a.Prompt}}},
					"maxTokens": 100,
				})
				if err != nil {
					return nil, err
				}
				var m struct {
					Content struct{ Text string }
				}
				_ = json.Unmarshal(res, &m)
				return textBlock("LLM response: " + m.Content.Text), nil
			}},
		fixtureTool{name: "test_elicitation", description: "Asks the user for a name and an email (elicitation/create).",
			schema: `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`,
			call: func(ctx context.Context, args json.RawMessage) (any, error) {
				var a struct{ Message string }
				_ = json.Unmarshal(args, &a)
				return elicit(ctx, "User response: ", a.Message, map[string]any{
					"username": map[string]any{"type": "string", "description": "User's response"},
					"email":    map[string]any{"type": "string", "description": "User's email address"},
				}, "username", "email")
			}},
		fixtureTool{name: "test_elicitation_sep1034_defaults", description: "Elicits fields of every primitive type with defaults (SEP-1034).",
			call: func(ctx context.Context, _ json.RawMessage) (any, error) {
				return elicit(ctx, "Elicitation completed: ", "Please review the defaults", map[string]any{
					"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
					"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
					"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
					"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
					"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
				})
			}},
		fixtureTool{name: "test_elicitation_sep1330_enums", description: "Elicits the five kinds of enum field (SEP-1330).",
			call: func(ctx context.Context, _ json.RawMessage) (any, error) {
				titled := func(titles ...string) []any {
					out := make([]any, len(titles))
					for i, t := range titles {
						out[i] = map[string]any{"const": fmt.Sprintf("value%d", i+1), "title": t}
					}
					return out
				}
				options := []string{"option1", "option2", "option3"}
				return elicit(ctx, "Elicitation completed: ", "Please choose", map[string]any{
					"untitledSingle": map[string]any{"type": "string", "enum": options},
					"titledSingle":   map[string]any{"type": "string", "oneOf": titled("First Option", "Second Option", "Third Option")},
					"legacyEnum": map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"},
						"enumNames": []string{"Option One", "Option Two", "Option Three"}},
					"untitledMulti": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": options}},
					"titledMulti":   map[string]any{"type": "array", "items": map[string]any{"anyOf": titled("First Choice", "Second Choice", "Third Choice")}},
				})
			}},
	}
}

func textBlock(text string) contentBlocks { return contentBlocks{{"type": "text", "text": text}} }

// elicit asks the user, through the client, for the fields of properties and reports the
// answer as text after prefix.
func elicit(ctx context.Context, prefix, message string, properties map[string]any, required ...string) (any, error) {
	schema := map[string]any{"type": "object", "properties": properties}
	if required != nil {
		schema["required"] = required
	}
	res, err := askClient(ctx, "elicitation/create", map[string]any{"message": message, "requestedSchema": schema})
	if err != nil {
		return nil, err
	}
	var r struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(res, &r)
	return textBlock(fmt.Sprintf("%saction=%s, content=%s", prefix, r.Action, cmp.Or(string(r.Content), "{}"))), nil
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
