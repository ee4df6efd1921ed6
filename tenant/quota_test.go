package tenant_test

import (
	"context"
	"testing"
	"time"

	"github.com/platform-dev/platform/tenant"
)

// TestQuotasRefresh: a replica that missed the notice of a quota change (here the change is
// written to the control database behind the registry's back) serves the new quotas after
// its next background refresh, as it would a new document.
func TestQuotasRefresh(t *testing.T) {
	ctx := context.Background()
	stores := openStores(t)
	reg, err := tenant.NewRegistry(ctx, stores, tenant.Options{Refresh: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	p, err := tenant.ParseDocument([]byte(`{"id":"shop","tables":{"products":{"fields":{"name":{"type":"String"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.Put(ctx, p); err != nil {
		t.Fatal(err)
	}
	if rt, err := reg.Runtime(ctx, "shop"); err != nil || rt.Quotas.Records != 0 {
		t.Fatalf("before: %+v, %v", rt, err)
	}
	if err := stores.Projects().SetQuotas(ctx, "shop", map[string]int64{"records": 5}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		rt, err := reg.Runtime(ctx, "shop")
		if err != nil {
			t.Fatal(err)
		}
		if rt.Quotas.Records == 5 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the runtime still holds %+v", rt.Quotas)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
