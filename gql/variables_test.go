package gql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
)

// TestPagingFromVariables: limit and offset given as variables page exactly as literals do,
// and a variable that is not a whole number is refused with BAD_USER_INPUT.
func TestPagingFromVariables(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}, MaxLimit: 10})
	for i := range 5 {
		create(t, srv, map[string]any{"name": fmt.Sprintf("p%d", i), "price": 1.0})
	}
	const q = `query page($limit: Int, $offset: Int) { products(limit: $limit, offset: $offset) { name } }`
	var list []product
	exec(t, srv, q, map[string]any{"limit": 2, "offset": 3}).ok(t).decode(t, "products", &list)
	var names []string
	for _, p := range list {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, ","); got != "p3,p4" {
		t.Fatalf("limit 2 offset 3 from variables = %q, want p3,p4", got)
	}
	if code := exec(t, srv, q, map[string]any{"limit": 11}).code(t); code != "BAD_USER_INPUT" {
		t.Errorf("limit above the maximum from a variable: code %q, want BAD_USER_INPUT", code)
	}
	if code := exec(t, srv, q, map[string]any{"offset": -1}).code(t); code != "BAD_USER_INPUT" {
		t.Errorf("negative offset from a variable: code %q, want BAD_USER_INPUT", code)
	}
}
