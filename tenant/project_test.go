package tenant_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tenant"
)

// TestBadNamesAreReportedAtTheirPath parses documents with bad table and field names many
// times: map order varies between runs, and every time each bad name must be reported at
// its own path (the schema validator once named a sibling's path instead).
func TestBadNamesAreReportedAtTheirPath(t *testing.T) {
	doc := []byte(`{"id":"shop","mongoURI":"mongodb://db/","graphql":{"maxLimit":10},"tables":{
		"my-table":{"fields":{"name":{"type":"String"}}},
		"ok":{"fields":{"first name":{"type":"String"},"fine":{"type":"Int"}}}}}`)
	for range 200 {
		_, err := tenant.ParseDocument(doc)
		var de *tenant.DocumentError
		if !errors.As(err, &de) {
			t.Fatalf("ParseDocument: %v, want a DocumentError", err)
		}
		paths := map[string]bool{}
		for _, p := range de.Problems {
			paths[p.Path] = true
		}
		if len(de.Problems) != 2 || !paths["tables.my-table"] || !paths["tables.ok.fields.first name"] {
			t.Fatalf("problems %+v, want exactly tables.my-table and tables.ok.fields.first name", de.Problems)
		}
	}
}

// TestValidateID: project ids are the pattern of project.schema.json's id, a DNS label.
func TestValidateID(t *testing.T) {
	for _, c := range []struct {
		id string
		ok bool
	}{
		{"a", true}, {"shop", true}, {"my-shop-2", true}, {"0", true}, {strings.Repeat("a", 63), true},
		{"", false}, {"-a", false}, {"a-", false}, {"-", false}, {"Shop", false}, {"a_b", false},
		{"a.b", false}, {"é", false}, {strings.Repeat("a", 64), false}, {"a b", false},
	} {
		if err := tenant.ValidateID(c.id); (err == nil) != c.ok {
			t.Errorf("ValidateID(%q): %v, want ok %v", c.id, err, c.ok)
		}
	}
}
