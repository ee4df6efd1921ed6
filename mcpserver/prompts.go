package mcpserver

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Prompts: one per tool, derived from its input schema, so that a client can offer the
// analyses as prompt templates and complete their enumerated arguments (scope, severity,
// domain, type, ...) through completion/complete. Nothing here is written per tool.

// promptArg is one top-level property of a tool's input schema.
type promptArg struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Required    bool     `json:"required"`
	enum        []string // the allowed values, when the schema lists them
}

// promptArgs reads the top-level properties of an input schema, in name order.
func promptArgs(schema json.RawMessage) []promptArg {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	out := make([]promptArg, 0, len(s.Properties))
	for name, p := range s.Properties {
		a := promptArg{Name: name, Description: p.Description, Required: slices.Contains(s.Required, name)}
		for _, v := range p.Enum {
			a.enum = append(a.enum, fmt.Sprint(v))
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b promptArg) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// promptEntry is one prompt: its descriptor and how it renders.
type promptEntry struct {
	name, title, description string
	args                     []promptArg
	// messages renders the prompt for arguments already checked against args.
	messages func(args map[string]string) []any
}

func (p *promptEntry) descriptor() map[string]any {
	return map[string]any{"name": p.name, "title": p.title, "description": p.description, "arguments": p.args}
}

// toolPrompt is the prompt of a tool: a user message asking to run it.
func toolPrompt(e *toolEntry) *promptEntry {
	return &promptEntry{
		name: e.spec.Name, title: cmp.Or(e.spec.Title, e.spec.Name),
		description: "Asks the assistant to run the " + e.spec.Name + " tool. " + e.spec.Description,
		args:        e.prompt,
		messages: func(args map[string]string) []any {
			b, _ := json.Marshal(args)
			if len(args) == 0 {
				b = []byte("{}")
			}
			text := fmt.Sprintf("Call the %s tool with the arguments %s and summarise what it finds.", e.spec.Name, b)
			return []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": text}}}
		},
	}
}

func listPrompts(c *catalog) []map[string]any {
	out := make([]map[string]any, 0, len(c.prompts))
	for _, p := range c.prompts {
		out = append(out, p.descriptor())
	}
	return out
}

func (s *Server) getPrompt(c *call) (any, *rpcError) {
	var p struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if rerr := decodeParams(c.msg.Params, &p); rerr != nil {
		return nil, rerr
	}
	e, rerr := s.prompt(p.Name)
	if rerr != nil {
		return nil, rerr
	}
	for _, a := range e.args {
		v, ok := p.Arguments[a.Name]
		if a.Required && !ok {
			return nil, invalidParams(fmt.Sprintf("argument %q is required by prompt %s", a.Name, e.name))
		}
		if ok && a.enum != nil && !slices.Contains(a.enum, v) {
			return nil, invalidParams(fmt.Sprintf("argument %q must be one of %s", a.Name, strings.Join(a.enum, ", ")))
		}
	}
	return map[string]any{"description": e.description, "messages": e.messages(p.Arguments)}, nil
}

func (s *Server) prompt(name string) (*promptEntry, *rpcError) {
	if name == "" {
		return nil, invalidParams(`argument "name" is required`)
	}
	i := slices.IndexFunc(s.cat.Load().prompts, func(p *promptEntry) bool { return p.name == name })
	if i < 0 {
		return nil, invalidParams(fmt.Sprintf("argument \"name\": unknown prompt %q; prompts/list names them", name))
	}
	return s.cat.Load().prompts[i], nil
}

// maxCompletions is the most values completion/complete returns, as the protocol allows.
const maxCompletions = 100

// complete answers completion/complete: the enumerated values of a prompt's argument that
// start with what the user typed. Resource URIs have no arguments to complete.
func (s *Server) complete(c *call) (any, *rpcError) {
	var p struct {
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
	}
	if rerr := decodeParams(c.msg.Params, &p); rerr != nil {
		return nil, rerr
	}
	var values []string
	switch p.Ref.Type {
	case "ref/prompt":
		e, rerr := s.prompt(p.Ref.Name)
		if rerr != nil {
			return nil, rerr
		}
		i := slices.IndexFunc(e.args, func(a promptArg) bool { return a.Name == p.Argument.Name })
		if i < 0 {
			return nil, invalidParams(fmt.Sprintf("argument \"argument.name\": prompt %s has no argument %q", e.name, p.Argument.Name))
		}
		for _, v := range e.args[i].enum {
			if strings.HasPrefix(strings.ToLower(v), strings.ToLower(p.Argument.Value)) {
				values = append(values, v)
			}
		}
	case "ref/resource":
		if !s.cat.Load().knownResource(p.Ref.URI) {
			return nil, invalidParams(fmt.Sprintf("argument \"ref.uri\": unknown resource %q", p.Ref.URI))
		}
	default:
		return nil, invalidParams(`argument "ref.type" must be "ref/prompt" or "ref/resource"`)
	}
	total := len(values)
	if values == nil {
		values = []string{}
	}
	return map[string]any{"completion": map[string]any{
		"values": values[:min(total, maxCompletions)], "total": total, "hasMore": total > maxCompletions,
	}}, nil
}
