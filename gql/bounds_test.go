package gql_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// TestDefaultBoundsEdges: at the default Config, every documented bound of a request works
// exactly at the bound and is refused one past it with a code of ours, never INTERNAL.
// A where of 1,000 comparisons joined by or used to answer INTERNAL (SQLite: expression
// tree too large).
func TestDefaultBoundsEdges(t *testing.T) {
	// Every bound at its default but the time limit: under the race detector modernc's
	// SQLite (C translated to Go, every memory access instrumented) prepares a statement of
	// 1,000 comparisons a hundred times slower, past the default 10 s on a busy machine.
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}, Timeout: 2 * time.Minute})
	create(t, srv, map[string]any{"name": "tea", "price": 1.0, "author": "ann"})
	create(t, srv, map[string]any{"name": "jam", "price": 2.0})
	b := store.DefaultBounds

	// comparisons is n comparisons that match nothing, of several shapes, then last.
	comparisons := func(n int, last map[string]any) []any {
		l := make([]any, 0, n)
		for i := range n - 1 {
			var c map[string]any
			switch i % 4 {
			case 0:
				c = map[string]any{"name": map[string]any{"eq": fmt.Sprint("x", i)}}
			case 1:
				c = map[string]any{"price": map[string]any{"lt": -i}}
			case 2:
				c = map[string]any{"author": map[string]any{"startsWith": fmt.Sprint("x", i)}}
			default:
				c = map[string]any{"name": map[string]any{"icontains": fmt.Sprint("x", i)}}
			}
			l = append(l, c)
		}
		return append(l, last)
	}
	// everywhere is n comparisons that match both records, then last.
	everywhere := func(n int, last map[string]any) []any {
		l := make([]any, 0, n)
		for i := range n - 1 {
			l = append(l, map[string]any{"name": map[string]any{"ne": fmt.Sprint("x", i)}})
		}
		return append(l, last)
	}
	values := func(n int, last string) []any {
		l := make([]any, 0, n)
		for i := range n - 1 {
			l = append(l, fmt.Sprint("x", i))
		}
		return append(l, last)
	}
	// nest puts where levels deep, each level an and or an or beside one more comparison.
	nest := func(levels int, where map[string]any) map[string]any {
		for i := range levels {
			op, beside := "or", map[string]any{"name": map[string]any{"eq": "nothing"}}
			if i%2 == 1 {
				op, beside = "and", map[string]any{"price": map[string]any{"gt": 0}}
			}
			where = map[string]any{op: []any{where, beside}}
		}
		return where
	}
	isTea := map[string]any{"name": map[string]any{"eq": "tea"}}
	cases := []struct {
		name  string
		where map[string]any
		want  string // names, or the start of a BAD_USER_INPUT message's reason
		err   bool
	}{
		{"or of MaxNodes comparisons", map[string]any{"or": comparisons(b.MaxNodes, isTea)}, "tea", false},
		{"or of MaxNodes+1 comparisons", map[string]any{"or": comparisons(b.MaxNodes+1, isTea)}, fmt.Sprintf("more than %d comparisons", b.MaxNodes), true},
		{"and of MaxNodes comparisons", map[string]any{"and": everywhere(b.MaxNodes, isTea)}, "tea", false},
		{"and of MaxNodes+1 comparisons", map[string]any{"and": everywhere(b.MaxNodes+1, isTea)}, fmt.Sprintf("more than %d comparisons", b.MaxNodes), true},
		{"not of an or of MaxNodes comparisons", map[string]any{"not": map[string]any{"or": comparisons(b.MaxNodes, isTea)}}, "jam", false},
		{"in of MaxIn values", map[string]any{"name": map[string]any{"in": values(b.MaxIn, "jam")}}, "jam", false},
		{"in of MaxIn+1 values", map[string]any{"name": map[string]any{"in": values(b.MaxIn+1, "jam")}}, fmt.Sprintf("at most %d are allowed", b.MaxIn), true},
		{"nin of MaxIn values", map[string]any{"name": map[string]any{"nin": values(b.MaxIn, "jam")}}, "tea", false},
		{"nin of MaxIn+1 values", map[string]any{"name": map[string]any{"nin": values(b.MaxIn+1, "jam")}}, fmt.Sprintf("at most %d are allowed", b.MaxIn), true},
		{"MaxDepth levels", nest(b.MaxDepth, isTea), "tea", false},
		{"MaxDepth+1 levels", nest(b.MaxDepth+1, isTea), fmt.Sprintf("more than %d levels deep", b.MaxDepth), true},
		{"MaxNodes comparisons MaxDepth levels deep", nest(b.MaxDepth-1, map[string]any{"or": comparisons(b.MaxNodes-b.MaxDepth+1, isTea)}), "tea", false},
	}
	query := `query($w: productWhere) { products(where: $w) { name } productsCount(where: $w) productsAggregate(where: $w) { count } }`
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := exec(t, srv, query, map[string]any{"w": c.where})
			if c.err {
				// One error for each field that has the where.
				if len(r.Errors) != 3 {
					t.Fatalf("got %.300s; want an error for each field", r.raw)
				}
				for _, e := range r.Errors {
					if e.Extensions["code"] != "BAD_USER_INPUT" || !strings.Contains(e.Message, c.want) {
						t.Fatalf("got %.300s; want BAD_USER_INPUT naming %q", r.raw, c.want)
					}
				}
				return
			}
			r.ok(t)
			var list []product
			r.decode(t, "products", &list)
			var names []string
			for _, p := range list {
				names = append(names, p.Name)
			}
			var n int
			r.decode(t, "productsCount", &n)
			if strings.Join(names, ",") != c.want || n != len(list) {
				t.Fatalf("got %v (count %d), want %s", names, n, c.want)
			}
		})
	}

	t.Run("batch writes with a where of MaxNodes comparisons", func(t *testing.T) {
		w := map[string]any{"or": comparisons(b.MaxNodes, map[string]any{"name": map[string]any{"eq": "jam"}})}
		r := exec(t, srv, `mutation($w: productWhere!) { updateproducts(where: $w, data: {author: "bob"}) }`, map[string]any{"w": w}).ok(t)
		if got := string(r.Data["updateproducts"]); got != "1" {
			t.Fatalf("update where: %s records, want 1", got)
		}
		w["or"] = comparisons(b.MaxNodes+1, map[string]any{"name": map[string]any{"eq": "jam"}})
		if r := exec(t, srv, `mutation($w: productWhere!) { deleteproducts(where: $w) }`, map[string]any{"w": w}); r.code(t) != "BAD_USER_INPUT" {
			t.Fatalf("delete where of %d comparisons: %.300s", b.MaxNodes+1, r.raw)
		}
	})
	t.Run("batch create", func(t *testing.T) {
		batch := func(n int) []any {
			l := make([]any, n)
			for i := range l {
				l[i] = map[string]any{"name": fmt.Sprint("b", i), "price": 5.0}
			}
			return l
		}
		doc := `mutation($d: [productInput!]!) { createproducts(data: $d) { uid } }`
		r := exec(t, srv, doc, map[string]any{"d": batch(gql.MaxBatch + 1)})
		if r.code(t) != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, fmt.Sprint("at most ", gql.MaxBatch)) {
			t.Fatalf("a batch of %d: %.300s", gql.MaxBatch+1, r.raw)
		}
		var made []product
		exec(t, srv, doc, map[string]any{"d": batch(gql.MaxBatch)}).ok(t).decode(t, "createproducts", &made)
		if len(made) != gql.MaxBatch {
			t.Fatalf("a batch of %d made %d", gql.MaxBatch, len(made))
		}
		// Cleaned up through a where of MaxIn values.
		uids := make([]any, len(made))
		for i, p := range made {
			uids[i] = p.UID
		}
		r = exec(t, srv, `mutation($u: [ID!]) { deleteproducts(where: {uid: {in: $u}}) }`, map[string]any{"u": uids}).ok(t)
		if got := string(r.Data["deleteproducts"]); got != fmt.Sprint(gql.MaxBatch) {
			t.Fatalf("delete of %d: %s", gql.MaxBatch, got)
		}
	})
	t.Run("limit", func(t *testing.T) {
		exec(t, srv, fmt.Sprintf(`{ products(limit: %d) { name } }`, gql.DefaultMaxLimit), nil).ok(t)
		r := exec(t, srv, fmt.Sprintf(`{ products(limit: %d) { name } }`, gql.DefaultMaxLimit+1), nil)
		if r.code(t) != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, "limit") {
			t.Fatalf("limit %d: %s", gql.DefaultMaxLimit+1, r.raw)
		}
	})
	t.Run("connection first", func(t *testing.T) {
		q := `{ productsConnection(first: %d) { edges { node { name } } } }`
		exec(t, srv, fmt.Sprintf(q, gql.DefaultMaxLimit), nil).ok(t)
		r := exec(t, srv, fmt.Sprintf(q, gql.DefaultMaxLimit+1), nil)
		if r.code(t) != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, "first") {
			t.Fatalf("first %d: %s", gql.DefaultMaxLimit+1, r.raw)
		}
	})
	t.Run("query bytes", func(t *testing.T) {
		doc := func(n int) string {
			q := `{ productsCount }`
			return q + strings.Repeat(" ", n-len(q))
		}
		exec(t, srv, doc(gql.DefaultMaxQueryBytes), nil).ok(t)
		r := exec(t, srv, doc(gql.DefaultMaxQueryBytes+1), nil)
		if r.code(t) != "GRAPHQL_VALIDATION_FAILED" || !strings.Contains(r.Errors[0].Message, fmt.Sprint(gql.DefaultMaxQueryBytes)) {
			t.Fatalf("%d bytes: %s", gql.DefaultMaxQueryBytes+1, r.raw)
		}
	})
	t.Run("selections", func(t *testing.T) {
		// Each alias of the list is three selections (the list, the spread, the field its
		// fragment holds); leaves are one each.
		doc := func(selections int) string {
			var q strings.Builder
			q.WriteString("{")
			lists := selections / 3
			for i := range lists {
				fmt.Fprintf(&q, " l%d: products(limit: 1) { ...f }", i)
			}
			for i := range selections - 3*lists {
				fmt.Fprintf(&q, " c%d: productsCount", i)
			}
			q.WriteString(" } fragment f on product { name }")
			return q.String()
		}
		exec(t, srv, doc(gql.DefaultMaxSelections), nil).ok(t)
		r := exec(t, srv, doc(gql.DefaultMaxSelections+1), nil)
		if r.code(t) != "GRAPHQL_VALIDATION_FAILED" || !strings.Contains(r.Errors[0].Message, "selections") {
			t.Fatalf("%d selections: %.300s", gql.DefaultMaxSelections+1, r.raw)
		}
	})
	t.Run("body bytes", func(t *testing.T) {
		body := func(n int) string {
			b := `{"query":"{ productsCount }","variables":{"pad":""}}`
			return strings.Replace(b, `""`, `"`+strings.Repeat("a", n-len(b))+`"`, 1)
		}
		status, out := post(t, srv, body(gql.DefaultMaxBodyBytes))
		if status != http.StatusOK || !strings.Contains(out, `"productsCount":2`) {
			t.Fatalf("a body of %d bytes: %d %.300s", gql.DefaultMaxBodyBytes, status, out)
		}
		status, out = post(t, srv, body(gql.DefaultMaxBodyBytes+1))
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil || status != http.StatusRequestEntityTooLarge || r.code(t) != "BAD_REQUEST" {
			t.Fatalf("a body of %d bytes: %d %.300s", gql.DefaultMaxBodyBytes+1, status, out)
		}
	})
}

// TestDefaultDepthEdge: a document exactly MaxDepth deep answers; one field deeper is
// refused before it runs.
func TestDefaultDepthEdge(t *testing.T) {
	const n = gql.DefaultMaxDepth
	tables := make([]gql.Table, n)
	for i := range tables {
		tables[i] = table(fmt.Sprintf("c%ds", i), fmt.Sprintf("c%d", i), store.Field{Name: "nextId", Type: store.FieldType{Scalar: store.ID}})
		if i+1 < n {
			tables[i].Relations = []gql.Relation{{Name: "next", Table: fmt.Sprintf("c%ds", i+1), Field: "nextId"}}
		}
	}
	srv := serve(t, gql.Config{Tables: tables})
	// depth d: the root list, d-2 relations, a scalar.
	doc := func(d int) string {
		return "{ c0s " + strings.Repeat("{ next ", d-2) + "{ uid }" + strings.Repeat(" }", d-2) + " }"
	}
	exec(t, srv, doc(n), nil).ok(t)
	r := exec(t, srv, doc(n+1), nil)
	if r.code(t) != "GRAPHQL_VALIDATION_FAILED" || !strings.Contains(r.Errors[0].Message, "depth") {
		t.Fatalf("depth %d: %s", n+1, r.raw)
	}
}
