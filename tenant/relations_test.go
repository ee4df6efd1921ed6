package tenant_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tenant"
)

const shopTables = `"tables": {
	"products": {"fields": {"name": {"type": "String", "required": true}},
		"access": {"read": "owner"}},
	"orders": {"fields": {"productId": {"type": "ID"}, "qty": {"type": "Int"}},
		"relations": {"product": {"table": "products", "field": "productId"}}}}`

// TestRelationsFromTheDocument: a relation declared in the project document answers through
// the project's endpoint, under the related table's read rule.
func TestRelationsFromTheDocument(t *testing.T) {
	s := newService(t)
	p, err := tenant.ParseDocument([]byte(`{"id": "shop", ` + shopTables + `}`))
	if err != nil {
		t.Fatal(err)
	}
	p.Auth = s.issuer.Auth("shop", s.jwks)
	if _, _, err := s.reg.Put(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	alice, bob := s.token(t, "shop", "alice"), s.token(t, "shop", "bob")
	var made []struct{ UID string }
	created := s.post(t, "shop", alice, `mutation { createproducts(data: [{name: "Tea"}]) { uid } }`, nil)
	if err := json.Unmarshal(created.Data["createproducts"], &made); err != nil || len(made) != 1 {
		t.Fatalf("create: %v %+v", err, created)
	}
	order := map[string]any{"data": []any{map[string]any{"productId": made[0].UID, "qty": 2}}}
	for _, tok := range []string{alice, bob} {
		if got := s.post(t, "shop", tok, `mutation($data: [orderInput!]!) { createorders(data: $data) { qty } }`, order); got.code() != "" {
			t.Fatalf("order: %+v", got.Errors)
		}
	}
	// Orders are readable by every caller; alice's product only by alice.
	for tok, want := range map[string]string{alice: `[{"qty":2,"product":{"name":"Tea"}},{"qty":2,"product":{"name":"Tea"}}]`, bob: `[{"qty":2,"product":null},{"qty":2,"product":null}]`} {
		if got := string(s.post(t, "shop", tok, `{ orders { qty product { name } } }`, nil).Data["orders"]); got != want {
			t.Errorf("orders: %s, want %s", got, want)
		}
	}
	// Both directions in one document: the products list their orders too.
	p, err = tenant.ParseDocument([]byte(`{"id": "shop", ` + strings.Replace(shopTables, `"access": {"read": "owner"}}`, `"access": {"read": "owner"}, "relations": {"orders": {"table": "orders", "foreignField": "productId"}}}`, 1) + `}`))
	if err != nil {
		t.Fatal(err)
	}
	p.Auth = s.issuer.Auth("shop", s.jwks)
	if _, _, err := s.reg.Put(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"Tea","orders":[{"qty":2,"product":{"name":"Tea"}},{"qty":2,"product":{"name":"Tea"}}]}]`
	if got := s.post(t, "shop", alice, `{ products { name orders { qty product { name } } } }`, nil); string(got.Data["products"]) != want {
		t.Errorf("products with their orders: %+v, want %s", got, want)
	}
}

func TestBadRelationsAreReportedAtTheirPath(t *testing.T) {
	for _, c := range []struct{ from, to, path, msg string }{
		{`"table": "products", "field": "productId"`, `"table": "prods", "field": "productId"`, "tables.orders.relations.product", `no table "prods"`},
		{`"table": "products", "field": "productId"`, `"table": "products", "field": "product"`, "tables.orders.relations.product", `field "product": table "orders" has no such field`},
		{`"table": "products", "field": "productId"`, `"table": "products"`, "tables.orders.relations.product", "give exactly one of field"},
	} {
		doc := `{"id": "shop", ` + strings.Replace(shopTables, c.from, c.to, 1) + `}`
		_, err := tenant.ParseDocument([]byte(doc))
		var de *tenant.DocumentError
		if !errors.As(err, &de) || len(de.Problems) != 1 || de.Problems[0].Path != c.path || !strings.Contains(de.Problems[0].Message, c.msg) {
			t.Errorf("%s: %v, want %s: %s", c.to, err, c.path, c.msg)
		}
	}
}
