package cloud

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// planDoc is the part of `terraform show -json` output (of a plan or of the state) that
// names resources and provider regions.
type planDoc struct {
	FormatVersion string `json:"format_version"`
	PlannedValues *struct {
		RootModule planModule `json:"root_module"`
	} `json:"planned_values"`
	Values *struct {
		RootModule planModule `json:"root_module"`
	} `json:"values"`
	Configuration struct {
		ProviderConfig map[string]struct {
			Name        string `json:"name"`
			Alias       string `json:"alias"`
			Expressions map[string]struct {
				ConstantValue any `json:"constant_value"`
			} `json:"expressions"`
		} `json:"provider_config"`
	} `json:"configuration"`
}

type planModule struct {
	Resources []struct {
		Address      string         `json:"address"`
		Mode         string         `json:"mode"`
		Type         string         `json:"type"`
		Name         string         `json:"name"`
		ProviderName string         `json:"provider_name"`
		Values       map[string]any `json:"values"`
	} `json:"resources"`
	ChildModules []planModule `json:"child_modules"`
}

// isPlan reports whether a JSON file looks like `terraform show -json` output.
func isPlan(b []byte) bool {
	head := b[:min(len(b), 4096)]
	return bytes.Contains(head, []byte(`"format_version"`)) &&
		(bytes.Contains(b, []byte(`"planned_values"`)) || bytes.Contains(b, []byte(`"terraform_version"`)))
}

func parsePlan(rel string, b []byte) ([]*Resource, error) {
	var doc planDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("terraform JSON: %w", err)
	}
	root := doc.PlannedValues
	if root == nil {
		root = doc.Values
	}
	if root == nil {
		return nil, nil
	}
	regions := map[string]string{}
	for key, pc := range doc.Configuration.ProviderConfig {
		if r, ok := pc.Expressions["region"].ConstantValue.(string); ok {
			regions[key] = r
		}
	}
	var out []*Resource
	var walk func(m planModule)
	walk = func(m planModule) {
		for _, pr := range m.Resources {
			r := &Resource{
				Address: pr.Address,
				Type:    pr.Type,
				Name:    pr.Name,
				Source:  SourceTerraformPlan,
				File:    rel,
				Line:    lineOfAddress(b, pr.Address),
				Count:   1,
				Attrs:   pr.Values,
				Data:    pr.Mode == "data",
			}
			if r.Attrs == nil {
				r.Attrs = map[string]any{}
			}
			r.Provider, r.Service = serviceOf(r.Type)
			r.Region = r.String("region")
			if r.Region == "" {
				r.Region = regions[r.Provider]
			}
			out = append(out, r)
		}
		for _, c := range m.ChildModules {
			walk(c)
		}
	}
	walk(root.RootModule)
	return out, nil
}

// lineOfAddress finds the line where the resource's "address" is written; plan files are
// machine-written, so the first occurrence is the resource's own entry in planned_values.
func lineOfAddress(b []byte, addr string) int {
	quoted, _ := json.Marshal(addr)
	for _, sep := range []string{`"address":`, `"address": `} {
		if i := bytes.Index(b, []byte(sep+string(quoted))); i >= 0 {
			return 1 + strings.Count(string(b[:i]), "\n")
		}
	}
	return 1
}
