package gql_test

import (
	"os"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
)

// TestDocsSchema keeps docs/graphql.md honest: it must show the schema the example project
// generates.
func TestDocsSchema(t *testing.T) {
	api, err := gql.New(gql.Config{Tables: []gql.Table{products()}, Records: records(t, products())})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/graphql.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```graphql\n"+api.SDL()+"```\n") {
		t.Fatal("docs/graphql.md does not show the generated schema of the example project; paste (*gql.API).SDL() into it")
	}
}
