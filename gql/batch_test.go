package gql_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

const createMany = `mutation($data: [productInput!]!) { createproducts(data: $data) { uid name price } }`

// guardedProducts serves the products table to alice, bob, admin and nobody, each decided
// by testGuard; checked makes the rule ask about each record.
func guardedProducts(t *testing.T, checked bool) (alice, bob, admin, nobody *httptest.Server) {
	t.Helper()
	api, err := gql.New(gql.Config{Tables: []gql.Table{products()}, Records: records(t, products())})
	if err != nil {
		t.Fatal(err)
	}
	serve := func(sub string) *httptest.Server {
		g := testGuard{sub: sub, checked: checked}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			api.ServeHTTP(w, r.WithContext(gql.WithGuard(r.Context(), g)))
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	return serve("alice"), serve("bob"), serve("admin"), serve("nobody")
}

// items is n product inputs named prefix0, prefix1, ....
func items(prefix string, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"name": fmt.Sprintf("%s%d", prefix, i), "price": float64(i)}
	}
	return out
}

func count(t *testing.T, srv *httptest.Server, where string) int {
	t.Helper()
	var n int
	exec(t, srv, `{ productsCount`+where+` }`, nil).ok(t).decode(t, "productsCount", &n)
	return n
}

func TestBatchCreate(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}})

	var got []product
	exec(t, srv, createMany, map[string]any{"data": items("p", 3)}).ok(t).decode(t, "createproducts", &got)
	if len(got) != 3 || got[0].Name != "p0" || got[2].Price != 2 || !uidRE.MatchString(got[1].UID) {
		t.Fatalf("created %+v", got)
	}
	// The camelCase spelling is the same mutation.
	exec(t, srv, `mutation { createProducts(data: [{name: "q", price: 1}]) { name } }`, nil).ok(t)

	bad := items("x", 1000)
	bad[500] = map[string]any{"name": "x500"}
	for _, c := range []struct {
		name string
		data []any
		code string
		msg  string
	}{
		{"1,001 records", items("x", 1001), "BAD_USER_INPUT", "data: at most 1000 products per call, got 1001: send them in several calls"},
		{"a required field missing at 500", bad, "BAD_USER_INPUT", "data[500].price is required to create a product"},
		{"a wrong type at 2", []any{map[string]any{"name": "a", "price": 1}, map[string]any{"name": "b", "price": 1}, map[string]any{"name": "c", "price": "1"}}, "BAD_USER_INPUT", "data[2].price: want a Float, got a string"},
	} {
		r := exec(t, srv, createMany, map[string]any{"data": c.data})
		if r.code(t) != c.code || r.Errors[0].Message != c.msg {
			t.Errorf("%s: %s", c.name, r.raw)
		}
		if string(r.Data["createproducts"]) != "null" {
			t.Errorf("%s: data %s, want null", c.name, r.Data["createproducts"])
		}
	}
	if n := count(t, srv, ""); n != 4 {
		t.Fatalf("%d products after refused batches, want the 4 created", n)
	}

	// A batch that breaks a unique index is written not at all.
	uniq := products()
	uniq.Indexes = []store.Index{{Fields: []string{"name"}, Unique: true}}
	usrv := serve(t, gql.Config{Tables: []gql.Table{uniq}})
	exec(t, usrv, createMany, map[string]any{"data": items("u", 2)}).ok(t)
	if r := exec(t, usrv, createMany, map[string]any{"data": items("v", 3)[:1:1]}); len(r.Errors) > 0 {
		t.Fatal(r.raw)
	}
	dup := append(items("w", 3), map[string]any{"name": "u1", "price": 1})
	if c := exec(t, usrv, createMany, map[string]any{"data": dup}).code(t); c != "CONFLICT" {
		t.Fatalf("duplicate in a batch: %s", c)
	}
	if n := count(t, usrv, ""); n != 3 {
		t.Fatalf("%d products after a conflicting batch, want 3", n)
	}
}

func TestBatchRules(t *testing.T) {
	for _, checked := range []bool{false, true} {
		t.Run(fmt.Sprintf("checked=%v", checked), func(t *testing.T) {
			alice, bob, admin, nobody := guardedProducts(t, checked)

			// The create rule sees every record before any is written: bob may not create
			// a secret one, so none of his batch is.
			data := items("b", 4)
			data[2] = map[string]any{"name": "secret-b", "price": 1}
			r := exec(t, bob, createMany, map[string]any{"data": data})
			if r.code(t) != "FORBIDDEN" || !strings.HasPrefix(r.Errors[0].Message, "data[2]: you may not create products") {
				t.Fatalf("bob's batch with a secret: %s", r.raw)
			}
			exec(t, bob, createMany, map[string]any{"data": items("b", 4)}).ok(t)
			exec(t, alice, createMany, map[string]any{"data": append(items("a", 3), map[string]any{"name": "secret-a", "price": 9})}).ok(t)
			// admin reads every record but, checked, not secret ones.
			visible := 8
			if checked {
				visible = 7
			}
			if n := count(t, admin, ""); n != visible {
				t.Fatalf("%d products, want %d", n, visible)
			}

			// Update and delete touch only the records the caller's rule allows.
			upd := `mutation($where: productWhere!) { updateproducts(where: $where, data: {author: "x"}) }`
			var n int
			exec(t, alice, upd, map[string]any{"where": map[string]any{}}).ok(t).decode(t, "updateproducts", &n)
			want := 4
			if checked {
				want = 3 // secret-a is refused record by record
			}
			if n != want {
				t.Fatalf("alice updated %d, want %d", n, want)
			}
			if got := count(t, admin, `(where: {author: {eq: "x"}})`); got != want {
				t.Fatalf("%d products by x, want %d", got, want)
			}
			exec(t, bob, upd, map[string]any{"where": map[string]any{"name": map[string]any{"startsWith": "a"}}}).ok(t).decode(t, "updateproducts", &n)
			if n != 0 {
				t.Fatalf("bob updated %d of alice's", n)
			}
			if c := exec(t, nobody, upd, map[string]any{"where": map[string]any{}}).code(t); c != "FORBIDDEN" {
				t.Fatalf("nobody updates: %s", c)
			}

			del := `mutation($where: productWhere!) { deleteproducts(where: $where) }`
			exec(t, bob, del, map[string]any{"where": map[string]any{"price": map[string]any{"gte": 2}}}).ok(t).decode(t, "deleteproducts", &n)
			if n != 2 {
				t.Fatalf("bob deleted %d, want his 2 with price >= 2", n)
			}
			if c := exec(t, nobody, del, map[string]any{"where": map[string]any{}}).code(t); c != "FORBIDDEN" {
				t.Fatalf("nobody deletes: %s", c)
			}
			exec(t, alice, del, map[string]any{"where": map[string]any{}}).ok(t).decode(t, "deleteproducts", &n)
			if n != want {
				t.Fatalf("alice deleted %d, want %d", n, want)
			}
			if got := count(t, admin, ""); got != visible-2-want {
				t.Fatalf("%d products left, want %d", got, visible-2-want)
			}
		})
	}
}

// TestMutationFieldsFailAlone: in a document with several mutations, the one that fails
// answers null with its error, and the others keep their data.
func TestMutationFieldsFailAlone(t *testing.T) {
	srv := serve(t, gql.Config{Tables: []gql.Table{products()}})
	r := exec(t, srv, `mutation {
		a: createProduct(data: {name: "a", price: 1}) { name }
		b: createProduct(data: {name: "b"}) { name }
		c: updateProduct(uid: "missing", data: {price: 2}) { name }
		d: createproducts(data: [{name: "d", price: 1}, {price: 1}]) { name }
		e: deleteproduct(uid: "missing")
		f: createproducts(data: [{name: "f", price: 1}]) { name }
	}`, nil)
	for key, want := range map[string]string{"a": `{"name":"a"}`, "b": "null", "c": "null", "d": "null", "e": "null", "f": `[{"name":"f"}]`} {
		if got := string(r.Data[key]); got != want {
			t.Errorf("%s: %s, want %s (%s)", key, got, want, r.raw)
		}
	}
	if len(r.Errors) != 4 {
		t.Fatalf("want 4 errors: %s", r.raw)
	}
	if n := count(t, srv, ""); n != 2 {
		t.Fatalf("%d products, want a and f", n)
	}
}
