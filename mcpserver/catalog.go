package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	textmessage "golang.org/x/text/message"

	"github.com/platform-dev/platform/tools"
)

// The seed's resources. They are always listed; the two analysis documents come from the
// tools.Set when an analysis provides them.
const (
	URICodeAnalysis  = "service://code/analysis"
	URICloud         = "service://infrastructure/cloud"
	URISystemHealth  = "service://system/health"
	resourceMIMEType = "application/json"
)

var seedResources = []tools.ResourceInfo{
	{URI: URICodeAnalysis, Name: "Code Analysis", MIMEType: resourceMIMEType,
		Description: "Latest codebase analysis of the workspace: structure, dependencies and patterns."},
	{URI: URICloud, Name: "Cloud Infrastructure", MIMEType: resourceMIMEType,
		Description: "Latest cloud infrastructure analysis of the workspace with optimization recommendations."},
	{URI: URISystemHealth, Name: "System Health", MIMEType: resourceMIMEType,
		Description: "Live health of this MCP server: uptime, store latencies, request and error rates, sessions, limits and recommendations."},
}

// toolEntry is a tool with its compiled input schema and its tools/list descriptor.
type toolEntry struct {
	tool   tools.Tool
	spec   tools.Spec
	schema *jsonschema.Schema
	// args are the schema's property names, used to tell a client how to narrow a call.
	args []string
	// prompt are the arguments of the tool's prompt.
	prompt []promptArg
	// integers are the top-level properties of type integer, which accept any number.
	integers []string
}

// catalog is an immutable view of one tools.Set.
type catalog struct {
	tools     []*toolEntry
	byName    map[string]*toolEntry
	resources map[string]tools.Resource
	infos     []tools.ResourceInfo
	prompts   []*promptEntry
	templates []*resourceTemplate
	// toolsJSON and resourcesJSON are the tools/list and resources/list answers, encoded
	// once: the lists change only with the catalog.
	toolsJSON, resourcesJSON json.RawMessage
}

// newCatalog compiles set, plus the conformance fixtures when fixtures is set.
func newCatalog(set tools.Set, fixtures bool) (*catalog, error) {
	c := &catalog{byName: map[string]*toolEntry{}, resources: map[string]tools.Resource{}}
	if fixtures {
		set.Tools = append(slices.Clone(set.Tools), fixtureTools()...)
		set.Resources = append(slices.Clone(set.Resources), fixtureResources()...)
		c.templates = fixtureTemplates()
	}
	for _, t := range set.Tools {
		spec := t.Spec()
		if spec.Name == "" {
			return nil, fmt.Errorf("tool without a name")
		}
		if _, dup := c.byName[spec.Name]; dup {
			return nil, fmt.Errorf("tool %q registered twice", spec.Name)
		}
		if len(spec.InputSchema) == 0 {
			spec.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		sch, args, err := compileSchema(spec.Name, spec.InputSchema)
		if err != nil {
			return nil, err
		}
		if len(spec.OutputSchema) > 0 && !json.Valid(spec.OutputSchema) {
			return nil, fmt.Errorf("tool %q: output schema is not valid JSON", spec.Name)
		}
		e := &toolEntry{tool: t, spec: spec, schema: sch, args: args, prompt: promptArgs(spec.InputSchema), integers: integerArgs(spec.InputSchema)}
		c.tools = append(c.tools, e)
		c.byName[spec.Name] = e
		c.prompts = append(c.prompts, toolPrompt(e))
	}
	if fixtures {
		c.prompts = append(c.prompts, fixturePrompts()...)
	}
	c.infos = slices.Clone(seedResources)
	for _, r := range set.Resources {
		info := r.Info()
		if info.URI == URISystemHealth {
			return nil, fmt.Errorf("resource %q is served by the MCP server itself", info.URI)
		}
		if _, dup := c.resources[info.URI]; dup {
			return nil, fmt.Errorf("resource %q registered twice", info.URI)
		}
		c.resources[info.URI] = r
		if i := slices.IndexFunc(c.infos, func(s tools.ResourceInfo) bool { return s.URI == info.URI }); i >= 0 {
			// The seed fixes name and MIME type; the analysis may describe itself better.
			if info.Description != "" {
				c.infos[i].Description = info.Description
			}
			continue
		}
		if info.MIMEType == "" {
			info.MIMEType = resourceMIMEType
		}
		c.infos = append(c.infos, info)
	}
	var err error
	if c.toolsJSON, err = json.Marshal(map[string]any{"tools": listTools(c)}); err != nil {
		return nil, fmt.Errorf("encode tools/list: %w", err)
	}
	if c.resourcesJSON, err = json.Marshal(map[string]any{"resources": listResources(c)}); err != nil {
		return nil, fmt.Errorf("encode resources/list: %w", err)
	}
	return c, nil
}

func compileSchema(tool string, raw json.RawMessage) (*jsonschema.Schema, []string, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("tool %q: input schema: %w", tool, err)
	}
	loc := "mcp-tool:///" + tool + "/input.json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(loc, doc); err != nil {
		return nil, nil, fmt.Errorf("tool %q: input schema: %w", tool, err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, nil, fmt.Errorf("tool %q: compile input schema: %w", tool, err)
	}
	var props struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(raw, &props)
	var args []string
	for name := range props.Properties {
		args = append(args, name)
	}
	slices.Sort(args)
	return sch, args, nil
}

// integerArgs names the top-level properties of a schema whose type is integer.
func integerArgs(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	var out []string
	for name, p := range s.Properties {
		if p.Type == "integer" {
			out = append(out, name)
		}
	}
	return out
}

// roundIntegers rounds, half away from zero, the fractional numbers given for integer
// arguments: the seed types depth as a number, so 2.5 is a depth (3), not an error. The
// schema then checks the range of the rounded value.
func (e *toolEntry) roundIntegers(args json.RawMessage) json.RawMessage {
	if len(e.integers) == 0 {
		return args
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	changed := false
	for _, name := range e.integers {
		var f float64
		if raw, ok := m[name]; !ok || json.Unmarshal(raw, &f) != nil || f == math.Trunc(f) || math.Abs(f) > 1<<53 {
			continue
		}
		m[name] = json.RawMessage(strconv.FormatFloat(math.Round(f), 'f', -1, 64))
		changed = true
	}
	if !changed {
		return args
	}
	b, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return b
}

// validate checks args against the tool's input schema and, on failure, returns details that
// name the offending argument.
func (e *toolEntry) validate(args json.RawMessage) string {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Sprintf("arguments: %v", err)
	}
	err = e.schema.Validate(v)
	if err == nil {
		return ""
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err.Error()
	}
	p := textmessage.NewPrinter(language.English)
	var msgs []string
	var walk func(*jsonschema.ValidationError)
	walk = func(ve *jsonschema.ValidationError) {
		if len(ve.Causes) > 0 {
			for _, c := range ve.Causes {
				walk(c)
			}
			return
		}
		switch k := ve.ErrorKind.(type) {
		case *kind.Required:
			for _, name := range k.Missing {
				msgs = append(msgs, fmt.Sprintf("argument %q is required", pathOf(append(slices.Clone(ve.InstanceLocation), name))))
			}
		case *kind.AdditionalProperties:
			for _, name := range k.Properties {
				msgs = append(msgs, fmt.Sprintf("argument %q is not accepted by %s (accepted: %s)", pathOf(append(slices.Clone(ve.InstanceLocation), name)), e.spec.Name, strings.Join(e.args, ", ")))
			}
		default:
			if len(ve.InstanceLocation) == 0 {
				msgs = append(msgs, "arguments: "+ve.ErrorKind.LocalizedString(p))
			} else {
				msgs = append(msgs, fmt.Sprintf("argument %q: %s", pathOf(ve.InstanceLocation), ve.ErrorKind.LocalizedString(p)))
			}
		}
	}
	walk(ve)
	return strings.Join(msgs, "; ")
}

func pathOf(loc []string) string { return strings.Join(loc, ".") }

// listTool is the tools/list descriptor of a tool.
func (e *toolEntry) listTool() map[string]any {
	t := map[string]any{
		"name":        e.spec.Name,
		"description": e.spec.Description,
		"inputSchema": e.spec.InputSchema,
		// Every analysis only reads the workspace; clients may call them without asking.
		"annotations": map[string]any{
			"readOnlyHint":    true,
			"destructiveHint": false,
			"idempotentHint":  true,
			"openWorldHint":   false,
		},
	}
	if e.spec.Title != "" {
		t["title"] = e.spec.Title
		t["annotations"].(map[string]any)["title"] = e.spec.Title
	}
	if len(e.spec.OutputSchema) > 0 {
		t["outputSchema"] = e.spec.OutputSchema
	}
	return t
}

// sameTools reports whether a and b list the same tools with the same descriptors.
func sameTools(a, b *catalog) bool {
	return bytes.Equal(a.toolsJSON, b.toolsJSON)
}

func sameResources(a, b *catalog) bool {
	return slices.Equal(a.infos, b.infos)
}

func listTools(c *catalog) []map[string]any {
	out := make([]map[string]any, 0, len(c.tools))
	for _, e := range c.tools {
		out = append(out, e.listTool())
	}
	return out
}

func listResources(c *catalog) []map[string]any {
	out := make([]map[string]any, 0, len(c.infos))
	for _, r := range c.infos {
		out = append(out, map[string]any{
			"uri": r.URI, "name": r.Name, "description": r.Description, "mimeType": r.MIMEType,
		})
	}
	return out
}

func (c *catalog) knownResource(uri string) bool {
	return slices.ContainsFunc(c.infos, func(r tools.ResourceInfo) bool { return r.URI == uri }) || c.template(uri) != nil
}

// resourceContent is a resource document that is not JSON: text of another type, or bytes
// (Blob, base64). A Resource whose Read returns one is sent as is.
type resourceContent struct {
	MIMEType, Text, Blob string
}

func (rc resourceContent) wire(uri string) map[string]any {
	out := map[string]any{"uri": uri, "mimeType": rc.MIMEType}
	if rc.Blob != "" {
		out["blob"] = rc.Blob
	} else {
		out["text"] = rc.Text
	}
	return out
}

// resourceTemplate is a family of resources named by a URI template (RFC 6570).
type resourceTemplate struct {
	uriTemplate, name, description, mimeType string
	match                                    func(uri string) bool
	read                                     func(uri string) resourceContent
}

func (c *catalog) template(uri string) *resourceTemplate {
	for _, t := range c.templates {
		if t.match(uri) {
			return t
		}
	}
	return nil
}

func listTemplates(c *catalog) []map[string]any {
	out := make([]map[string]any, 0, len(c.templates))
	for _, t := range c.templates {
		out = append(out, map[string]any{"uriTemplate": t.uriTemplate, "name": t.name, "description": t.description, "mimeType": t.mimeType})
	}
	return out
}
