package tenant_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/internal/testbackend"
	"github.com/platform-dev/platform/tenant"
)

// TestReadsAnyStoredType stores every type's value under every field, whatever its type
// (as records written under an earlier definition, or by another tool, hold them), and reads
// them through GraphQL: lists, pages, counts and single records answer, each value converted
// where that loses nothing and null otherwise, never INTERNAL.
func TestReadsAnyStoredType(t *testing.T) {
	ctx := context.Background()
	stores := openStores(t)
	reg, srv := graphQLServer(t, stores, tenant.Options{}, "platform.test")

	types := map[string]string{"s": "String", "i": "Int", "f": "Float", "b": "Boolean", "ref": "ID", "d": "DateTime", "j": "JSON",
		"li": "[Int]", "ls": "[String]", "rs": "String", "ri": "Int"}
	var fields []string
	for name, ft := range types {
		fields = append(fields, fmt.Sprintf(`%q:{"type":%q,"required":%v}`, name, ft, strings.HasPrefix(name, "r")))
	}
	p, err := tenant.ParseDocument([]byte(`{"id":"typed","tables":{"things":{"fields":{` + strings.Join(fields, ",") + `},
		"indexes":[{"fields":["i"]},{"fields":["s"]},{"fields":["d"]}],"access":{"read":"public"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.Put(ctx, p); err != nil {
		t.Fatal(err)
	}
	recs, err := stores.ProjectRecords(ctx, "typed", "", p.StoreTables())
	if err != nil {
		t.Fatal(err)
	}
	samples := []any{"text", "42", "2.5", "true", "2026-01-02T03:04:05.000Z", int64(42), 2.5, 3e10, true, false,
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), map[string]any{"k": "v"}, []any{int64(1), "2"}, []any{"x"}}
	for _, v := range samples {
		row := map[string]any{}
		for name := range types {
			row[name] = v
		}
		if err := recs.Insert(ctx, "things", "", []map[string]any{row}, nil); err != nil {
			t.Fatal(err)
		}
	}

	const all = `uid s i f b ref d j li ls rs ri`
	read := func(query string) map[string]json.RawMessage {
		t.Helper()
		a := postGraphQL(t, srv.URL+"/api/v1/graphql", "typed.platform.test", "", query, nil)
		if len(a.Errors) > 0 {
			t.Fatalf("%s: %+v", query, a.Errors)
		}
		return a.Data
	}
	var list []map[string]any
	if err := json.Unmarshal(read(`{ things { ` + all + ` } }`)["things"], &list); err != nil || len(list) != len(samples) {
		t.Fatalf("list: %d records (%v)", len(list), err)
	}
	// What each field reads for each sample, in the samples' order (the uids').
	want := map[string][]any{
		"s":  {"text", "42", "2.5", "true", "2026-01-02T03:04:05.000Z", "42", "2.5", "30000000000", "true", "false", "2026-01-02T03:04:05.000Z", `{"k":"v"}`, `[1,"2"]`, `["x"]`},
		"i":  {nil, 42.0, nil, nil, nil, 42.0, nil, nil, nil, nil, nil, nil, nil, nil},
		"f":  {nil, 42.0, 2.5, nil, nil, 42.0, 2.5, 3e10, nil, nil, nil, nil, nil, nil},
		"b":  {nil, nil, nil, true, nil, nil, nil, nil, true, false, nil, nil, nil, nil},
		"d":  {nil, nil, nil, nil, "2026-01-02T03:04:05.000Z", nil, nil, nil, nil, nil, "2026-01-02T03:04:05.000Z", nil, nil, nil},
		"li": {nil, []any{42.0}, nil, nil, nil, []any{42.0}, nil, nil, nil, nil, nil, nil, []any{1.0, 2.0}, nil},
		"ri": {0.0, 42.0, 0.0, 0.0, 0.0, 42.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
	}
	for field, vals := range want {
		for i, w := range vals {
			got, _ := json.Marshal(list[i][field])
			wj, _ := json.Marshal(w)
			if string(got) != string(wj) {
				t.Errorf("%s of sample %d (%v) reads %s, want %s", field, i, samples[i], got, wj)
			}
		}
	}

	// Counts and filters, a record by uid, and pages ordered by each indexed field.
	read(`{ thingsCount(where: {i: {gt: 1}}) }`)
	read(`{ things(where: {s: {eq: "42"}}) { ` + all + ` } }`)
	read(`{ things(uid: "` + list[len(list)-1]["uid"].(string) + `") { ` + all + ` } }`)
	if testbackend.Mongo() {
		// Known gap, not FerretDB's: MongoDB sorts a list by its least element and a page's
		// cursor cannot hold it, and a time stored under a field that is not a DateTime reads
		// back (and so enters the cursor) as text, so pages leave those records out
		// (docs/operations.md, "Pages over values of another type").
		t.Skip("mongo: pages over lists and times stored under scalar fields of another type miss records")
	}
	for _, key := range []string{"i", "s", "d"} {
		seen := 0
		after := ""
		for page := 0; page < 10; page++ {
			q := fmt.Sprintf(`{ thingsConnection(first: 4, orderBy: [{field: %s}]%s) { edges { node { %s } } pageInfo { hasNextPage endCursor } } }`, key, after, all)
			var conn struct {
				Edges    []json.RawMessage
				PageInfo struct {
					HasNextPage bool
					EndCursor   string
				}
			}
			if err := json.Unmarshal(read(q)["thingsConnection"], &conn); err != nil {
				t.Fatal(err)
			}
			seen += len(conn.Edges)
			if !conn.PageInfo.HasNextPage {
				break
			}
			after = fmt.Sprintf(`, after: %q`, conn.PageInfo.EndCursor)
		}
		if seen != len(samples) {
			t.Errorf("pages ordered by %s hold %d records, want %d", key, seen, len(samples))
		}
	}
}
