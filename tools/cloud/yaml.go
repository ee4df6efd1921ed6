package cloud

import (
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/platform-dev/platform/docparse"
)

// composeName matches the file names docker compose looks for.
var composeName = regexp.MustCompile(`^(docker-)?compose(\.[\w-]+)?\.ya?ml$`)

// parseYAMLDeclarations reads a YAML or JSON document stream. ok is false when no document is
// a CloudFormation/SAM template, a compose file or a Kubernetes object (most YAML files are
// none of them, and Helm templates are not even YAML: neither is an error).
// Image pins of kustomize files (images: name -> newTag or digest) are added to pins.
// A stream past docparse's bounds is a declaration file whose error names the bound,
// whatever it held: its documents are not read, since reading them is what the bound
// prevents (a few hundred bytes of aliases expand to gigabytes).
func parseYAMLDeclarations(rel string, src []byte, jsonOnly bool, pins map[string]string) ([]*Resource, bool, *FileError) {
	dec := docparse.NewDecoder(src, docparse.DefaultLimits())
	var out []*Resource
	recognised := false
	for i := 0; ; i++ {
		doc, err := dec.Decode()
		if errors.Is(err, io.EOF) {
			break
		}
		if ferr := refused(rel, err); ferr != nil {
			return out, true, ferr
		}
		if err != nil {
			if !recognised {
				return nil, false, nil
			}
			return out, true, &FileError{File: rel, Line: yamlErrorLine(err), Message: err.Error()}
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		top := doc.Content[0]
		switch {
		case kustomizeImages(top, pins):
			recognised = true
		case isCloudFormation(top):
			recognised = true
			out = append(out, cloudFormation(rel, top)...)
		case jsonOnly:
			if rs := kubernetes(rel, top); len(rs) > 0 {
				recognised = true
				out = append(out, rs...)
			}
		case composeName.MatchString(path.Base(rel)) || (i == 0 && isCompose(top)):
			recognised = true
			out = append(out, compose(rel, top)...)
		default:
			if rs := kubernetes(rel, top); len(rs) > 0 {
				recognised = true
				out = append(out, rs...)
			}
		}
	}
	return out, recognised, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func yamlErrorLine(err error) int {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// mapping returns the value node of key in a mapping node.
func mapping(n *yaml.Node, key string) (k, v *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

func isCloudFormation(top *yaml.Node) bool {
	if _, v := mapping(top, "AWSTemplateFormatVersion"); v != nil {
		return true
	}
	_, res := mapping(top, "Resources")
	if res == nil || res.Kind != yaml.MappingNode {
		return false
	}
	for i := 1; i < len(res.Content); i += 2 {
		if _, t := mapping(res.Content[i], "Type"); t != nil && strings.HasPrefix(t.Value, "AWS::") {
			return true
		}
	}
	return false
}

func isCompose(top *yaml.Node) bool {
	if _, v := mapping(top, "apiVersion"); v != nil {
		return false
	}
	_, svcs := mapping(top, "services")
	if svcs == nil || svcs.Kind != yaml.MappingNode {
		return false
	}
	for i := 1; i < len(svcs.Content); i += 2 {
		_, img := mapping(svcs.Content[i], "image")
		_, build := mapping(svcs.Content[i], "build")
		if img != nil || build != nil {
			return true
		}
	}
	return false
}

// toGo converts a node to JSON-like values, recording the line of every path. CloudFormation's
// short-form intrinsic tags (!Ref x, !Sub s, !GetAtt a.b, ...) become their long form
// ({"Ref": x}, {"Fn::Sub": s}, {"Fn::GetAtt": [a, b]}), which is also what JSON templates use.
func toGo(n *yaml.Node, p []any, lines map[string]int) any {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	setLine(lines, p, n.Line)
	if tag := n.Tag; strings.HasPrefix(tag, "!") && !strings.HasPrefix(tag, "!!") {
		inner := *n
		inner.Tag = ""
		if inner.Kind == yaml.ScalarNode {
			inner.Tag = "!!str"
		}
		name := tag[1:]
		v := toGo(&inner, p, lines)
		if name == "GetAtt" {
			if s, ok := v.(string); ok {
				parts := strings.SplitN(s, ".", 2)
				l := make([]any, len(parts))
				for i, x := range parts {
					l[i] = x
				}
				v = l
			}
		}
		if name != "Ref" && name != "Condition" {
			name = "Fn::" + name
		}
		return map[string]any{name: v}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			return toGo(n.Content[0], p, lines)
		}
		return nil
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			// The path of a child shares p's array: each child is done with it before the
			// next sibling writes its own key there (copies cost depth x nodes).
			cp := append(p, key)
			if n.Content[i].Value == "<<" { // merge key: fold the aliased mapping in
				if mm, ok := toGo(n.Content[i+1], p, lines).(map[string]any); ok {
					for k, v := range mm {
						m[k] = v
					}
				}
				continue
			}
			m[key] = toGo(n.Content[i+1], cp, lines)
			setLine(lines, cp, n.Content[i].Line)
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			l[i] = toGo(c, append(p, i), lines)
		}
		return l
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float":
			if f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil {
				return f
			}
			var f float64
			if err := n.Decode(&f); err == nil {
				return f
			}
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err == nil {
				return b
			}
		case "!!null":
			return nil
		}
		return n.Value
	}
	return nil
}

// cloudFormation lists the resources of a template, with Ref to a parameter replaced by the
// parameter's default and, for SAM's serverless resources, the properties of the template's
// Globals merged in.
func cloudFormation(rel string, top *yaml.Node) []*Resource {
	params := map[string]any{}
	if _, pn := mapping(top, "Parameters"); pn != nil {
		if pm, ok := toGo(pn, nil, map[string]int{}).(map[string]any); ok {
			for name, def := range pm {
				if d, ok := def.(map[string]any); ok {
					if v, ok := d["Default"]; ok {
						params[name] = v
					}
				}
			}
		}
	}
	_, res := mapping(top, "Resources")
	if res == nil || res.Kind != yaml.MappingNode {
		return nil
	}
	_, globals := mapping(top, "Globals")
	logical := map[string]bool{}
	for i := 0; i+1 < len(res.Content); i += 2 {
		logical[res.Content[i].Value] = true
	}
	var out []*Resource
	for i := 0; i+1 < len(res.Content); i += 2 {
		key, body := res.Content[i], res.Content[i+1]
		_, t := mapping(body, "Type")
		if t == nil {
			continue
		}
		lines := map[string]int{}
		attrs := map[string]any{}
		if _, props := mapping(body, "Properties"); props != nil {
			if m, ok := toGo(props, nil, lines).(map[string]any); ok {
				attrs = m
			}
		}
		if kind, ok := strings.CutPrefix(t.Value, "AWS::Serverless::"); ok {
			glines := map[string]int{}
			if _, g := mapping(globals, kind); g != nil {
				gm, _ := toGo(g, nil, glines).(map[string]any)
				attrs = mergeGlobals(attrs, gm)
				for p, l := range glines {
					if _, own := lines[p]; !own && p != "" {
						lines[p] = l
					}
				}
			}
		}
		r := &Resource{
			Address: key.Value,
			Type:    t.Value,
			Name:    key.Value,
			Source:  SourceCloudFormation,
			File:    rel,
			Line:    key.Line,
			Count:   1,
			lines:   lines,
		}
		refs := map[string]bool{}
		r.Attrs, _ = resolveIntrinsics(attrs, params, logical, refs).(map[string]any)
		for ref := range refs {
			r.Refs = append(r.Refs, ref)
		}
		r.Provider, r.Service = serviceOf(r.Type)
		out = append(out, r)
	}
	return out
}

// mergeGlobals merges the Globals of a SAM resource type into a resource's properties as SAM
// (and Checkov) do: the resource's value wins, objects merge key by key, and a list of the
// resource's keeps its own items (SAM would put the global ones first).
func mergeGlobals(own, global map[string]any) map[string]any {
	for k, g := range global {
		v, ok := own[k]
		if !ok {
			own[k] = g
			continue
		}
		om, ok1 := v.(map[string]any)
		gm, ok2 := g.(map[string]any)
		if ok1 && ok2 {
			own[k] = mergeGlobals(om, gm)
		}
	}
	return own
}

// resolveIntrinsics replaces {"Ref": parameter} by the parameter's default and records the
// logical ids referred to by Ref, Fn::GetAtt and ${Name} in Fn::Sub.
func resolveIntrinsics(v any, params map[string]any, logical, refs map[string]bool) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			if name, ok := x["Ref"].(string); ok {
				if logical[name] {
					refs[name] = true
				} else if d, ok := params[name]; ok {
					return d
				}
				return x
			}
			if ga, ok := x["Fn::GetAtt"].([]any); ok && len(ga) > 0 {
				if name, ok := ga[0].(string); ok && logical[name] {
					refs[name] = true
				}
				return x
			}
			if sub, ok := x["Fn::Sub"].(string); ok {
				for name := range logical {
					if strings.Contains(sub, "${"+name) {
						refs[name] = true
					}
				}
			}
		}
		for k, e := range x {
			x[k] = resolveIntrinsics(e, params, logical, refs)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = resolveIntrinsics(e, params, logical, refs)
		}
	}
	return v
}

// kustomizeImages reports whether top is a kustomize file (build instructions, not objects in
// a cluster) and records the versions its images: transformer pins.
func kustomizeImages(top *yaml.Node, pins map[string]string) bool {
	_, api := mapping(top, "apiVersion")
	if api == nil || !strings.HasPrefix(api.Value, "kustomize.config.k8s.io/") {
		return false
	}
	_, images := mapping(top, "images")
	if images == nil {
		return true
	}
	for _, img := range images.Content {
		_, name := mapping(img, "name")
		_, tag := mapping(img, "newTag")
		_, digest := mapping(img, "digest")
		switch {
		case name == nil:
		case digest != nil:
			pins[name.Value] = "@" + digest.Value
		case tag != nil:
			pins[name.Value] = ":" + tag.Value
		}
	}
	return true
}

// kubernetes returns the object of one manifest document (the items of a List).
func kubernetes(rel string, top *yaml.Node) []*Resource {
	_, api := mapping(top, "apiVersion")
	_, kind := mapping(top, "kind")
	if api == nil || kind == nil || api.Kind != yaml.ScalarNode || kind.Kind != yaml.ScalarNode {
		return nil
	}
	if kind.Value == "List" || strings.HasSuffix(kind.Value, "List") {
		_, items := mapping(top, "items")
		if items == nil {
			return nil
		}
		var out []*Resource
		for _, it := range items.Content {
			out = append(out, kubernetes(rel, it)...)
		}
		return out
	}
	lines := map[string]int{}
	attrs, _ := toGo(top, nil, lines).(map[string]any)
	name, _ := Lookup(attrs, "metadata", "name").(string)
	ns, _ := Lookup(attrs, "metadata", "namespace").(string)
	if ns == "" {
		ns = "default"
	}
	return []*Resource{{
		Address:  fmt.Sprintf("%s/%s/%s", kind.Value, ns, name),
		Type:     kind.Value,
		Name:     name,
		Provider: "kubernetes",
		Service:  "kubernetes",
		Source:   SourceKubernetes,
		File:     rel,
		Line:     top.Line,
		Count:    1,
		Attrs:    attrs,
		lines:    lines,
	}}
}

// compose returns one resource per service of a compose file.
func compose(rel string, top *yaml.Node) []*Resource {
	_, svcs := mapping(top, "services")
	if svcs == nil || svcs.Kind != yaml.MappingNode {
		return nil
	}
	var out []*Resource
	for i := 0; i+1 < len(svcs.Content); i += 2 {
		lines := map[string]int{}
		attrs, _ := toGo(svcs.Content[i+1], nil, lines).(map[string]any)
		if attrs == nil {
			attrs = map[string]any{}
		}
		name := svcs.Content[i].Value
		out = append(out, &Resource{
			Address:  "compose/" + name,
			Type:     "compose-service",
			Name:     name,
			Provider: "compose",
			Service:  "compose",
			Source:   SourceCompose,
			File:     rel,
			Line:     svcs.Content[i].Line,
			Count:    1,
			Attrs:    attrs,
			lines:    lines,
		})
	}
	return out
}
