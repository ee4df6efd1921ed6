package tenant_test

import (
	"context"
	"slices"
	"testing"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant"
)

// TestProjectsWithWebhooksNoted: applying a document notes in the registry whether it
// declares webhooks, so that the replicas' webhook scans (store.Projects.WithWebhooks) read
// the documents of those projects only, whichever way the document came: applied, changed,
// or rolled back to.
func TestProjectsWithWebhooksNoted(t *testing.T) {
	// Webhooks need the embedded backend's outbox, whichever backend the other tests run on.
	stores, err := store.Open(t.Context(), store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stores.Close(context.Background()) })
	reg, err := tenant.NewRegistry(t.Context(), stores, tenant.Options{Webhooks: tenant.WebhookOptions{AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	put := func(id, webhooks string) {
		t.Helper()
		p, err := tenant.ParseDocument([]byte(`{"id":"` + id + `","tables":{"products":{"fields":{"name":{"type":"String"}},"access":{"read":"public","create":"public","update":"public","delete":"public"}` + webhooks + `}}}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := reg.Put(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	listed := func(want ...string) {
		t.Helper()
		list, err := stores.Projects().WithWebhooks(t.Context())
		var got []string
		for _, sp := range list {
			got = append(got, sp.ID)
		}
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("projects with webhooks: %v, %v; want %v", got, err, want)
		}
	}
	const hook = `,"webhooks":{"all":{"url":"http://127.0.0.1:9/all","events":["create"]}}`
	put("plain", "")
	put("hooked", hook)
	listed("hooked")
	put("hooked", "")
	listed()
	if _, _, _, err := reg.Rollback(t.Context(), "hooked", 1, tenant.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	listed("hooked")
}
