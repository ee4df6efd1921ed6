// Command gen writes the Kubernetes JSON schemas that kubeconform validates the manifests
// against, in kubeconform's "standalone-strict" layout, from the OpenAPI (swagger 2) document
// shipped in the Go module k8s.io/kubernetes. CI has no network beyond the package
// registries, so the schemas are generated once and kept in the repository; see
// deploy/schemas/README.md for the command line.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	version := flag.String("kubernetes", "v1.35.4", "version of the module k8s.io/kubernetes whose OpenAPI document is used")
	out := flag.String("out", "deploy/schemas", "folder that receives <version>-standalone-strict/")
	kinds := flag.String("kinds", "", "comma-separated group/version/Kind triples (core group: v1/Kind), e.g. apps/v1/Deployment,v1/Service")
	flag.Parse()
	if err := run(*version, *out, strings.Split(*kinds, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(version, out string, kinds []string) error {
	spec, err := loadSwagger(version)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, version+"-standalone-strict")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, k := range kinds {
		name, schema, err := spec.kindSchema(strings.TrimSpace(k))
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(schema, "", "  ")
		if err != nil {
			return fmt.Errorf("encode %s: %w", k, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

type swagger struct {
	Definitions map[string]map[string]any `json:"definitions"`
}

// loadSwagger fetches k8s.io/kubernetes@version through the Go module proxy (the only
// registry CI and developers reach that carries the Kubernetes OpenAPI document).
func loadSwagger(version string) (*swagger, error) {
	cmd := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@"+version)
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download k8s.io/kubernetes@%s: %w", version, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(raw, &mod); err != nil {
		return nil, fmt.Errorf("go mod download output: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(mod.Dir, "api", "openapi-spec", "swagger.json"))
	if err != nil {
		return nil, err
	}
	var s swagger
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("parse swagger.json: %w", err)
	}
	return &s, nil
}

// kindSchema finds the definition of one group/version/Kind and returns kubeconform's file
// name for it (kind-group-version.json, group cut at its first dot) and the schema with every
// $ref inlined and unknown properties forbidden.
func (s *swagger) kindSchema(gvk string) (string, map[string]any, error) {
	parts := strings.Split(gvk, "/")
	if len(parts) == 2 {
		parts = append([]string{""}, parts...)
	}
	if len(parts) != 3 {
		return "", nil, fmt.Errorf("kind %q: want group/version/Kind", gvk)
	}
	group, version, kind := parts[0], parts[1], parts[2]
	for name, def := range s.Definitions {
		list, _ := def["x-kubernetes-group-version-kind"].([]any)
		for _, item := range list {
			m, _ := item.(map[string]any)
			if m["group"] != group || m["version"] != version || m["kind"] != kind {
				continue
			}
			schema, err := s.inline(def, 0)
			if err != nil {
				return "", nil, fmt.Errorf("%s: %w", name, err)
			}
			apiVersion := version
			file := strings.ToLower(kind) + "-" + version + ".json"
			if group != "" {
				apiVersion = group + "/" + version
				file = strings.ToLower(kind) + "-" + strings.Split(group, ".")[0] + "-" + version + ".json"
			}
			props := schema["properties"].(map[string]any)
			props["apiVersion"] = map[string]any{"type": "string", "enum": []any{apiVersion}}
			props["kind"] = map[string]any{"type": "string", "enum": []any{kind}}
			return file, schema, nil
		}
	}
	return "", nil, fmt.Errorf("kind %q not in the OpenAPI document", gvk)
}

// stringOr lists the definitions whose JSON is a string or a number; the OpenAPI document
// types them as strings only.
var stringOr = map[string]string{
	"io.k8s.apimachinery.pkg.util.intstr.IntOrString": "integer",
	"io.k8s.apimachinery.pkg.api.resource.Quantity":   "number",
}

// maxDepth guards against recursive definitions, which the kinds the manifests use do not have.
const maxDepth = 64

// inline copies a schema node, replacing $ref with the referenced definition, dropping
// descriptions, and adding additionalProperties: false to objects that list their properties
// (kubeconform's "strict"). Kubernetes' two string-or-number types become oneOf, as in the
// published kubeconform schemas.
func (s *swagger) inline(node map[string]any, depth int) (map[string]any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("definitions nest deeper than %d (recursive?)", maxDepth)
	}
	if ref, ok := node["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/definitions/")
		if alt, ok := stringOr[name]; ok {
			return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": alt}}}, nil
		}
		def, ok := s.Definitions[name]
		if !ok {
			return nil, fmt.Errorf("unresolved $ref %s", ref)
		}
		return s.inline(def, depth+1)
	}
	out := map[string]any{}
	for k, v := range node {
		if k == "description" || strings.HasPrefix(k, "x-kubernetes-") {
			continue
		}
		switch v := v.(type) {
		case map[string]any:
			if k == "properties" {
				props := map[string]any{}
				for name, p := range v {
					pm, ok := p.(map[string]any)
					if !ok {
						return nil, fmt.Errorf("property %s is not a schema", name)
					}
					inlined, err := s.inline(pm, depth+1)
					if err != nil {
						return nil, fmt.Errorf("%s: %w", name, err)
					}
					props[name] = inlined
				}
				out[k] = props
				continue
			}
			inlined, err := s.inline(v, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = inlined
		default:
			out[k] = v
		}
	}
	if _, ok := out["properties"]; ok {
		if _, set := out["additionalProperties"]; !set {
			out["additionalProperties"] = false
		}
	}
	return out, nil
}
