package tenant_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/platform-dev/platform/tenant"
)

// BenchmarkAdminGateKey is the cost an operator key adds to an admin request: the gate's
// check of the token (the wrong-attempt count in Redis, then the key), with the key verified
// within the last 0.5 s ("cached") and against the control database every time
// ("uncached", the gate without its cache: a fresh gate each iteration).
func BenchmarkAdminGateKey(b *testing.B) {
	stores := openStores(b)
	ctx := context.Background()
	reg, err := tenant.NewRegistry(ctx, stores, tenant.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(reg.Close)
	k, err := reg.CreateKey(ctx, "bench", "project:shop:read", 0)
	if err != nil {
		b.Fatal(err)
	}
	cfg := tenant.AdminGateConfig{Token: "secret", Redis: stores.Redis, Keys: stores.Keys()}
	req := httptest.NewRequest("GET", "/admin/v1/projects/shop", nil)
	check := func(b *testing.B, g *tenant.AdminGate, token string) {
		if _, err := g.Check(ctx, req, token); err != nil {
			b.Fatal(err)
		}
	}
	gate, err := tenant.NewAdminGate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("token", func(b *testing.B) {
		for b.Loop() {
			check(b, gate, "secret")
		}
	})
	b.Run("key cached", func(b *testing.B) {
		for b.Loop() {
			check(b, gate, k.Key)
		}
	})
	b.Run("key uncached", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			fresh, err := tenant.NewAdminGate(cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			check(b, fresh, k.Key)
		}
	})
}
