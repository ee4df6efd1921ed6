package tenant_test

import (
	"errors"
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
