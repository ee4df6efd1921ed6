package store_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/platform-dev/platform/store"
)

// BenchmarkWebhookScan is what a replica's webhook scan reads from the registry every 10 s
// (tenant RunWebhooks) with 1,000 projects of 4 KB documents, 10 of them with webhooks: every
// document (List), or only those (WithWebhooks).
func BenchmarkWebhookScan(b *testing.B) {
	s := openSQLiteStores(b)
	p := s.Projects()
	pad := strings.Repeat("x", 4<<10)
	for i := range 1000 {
		id := fmt.Sprintf("p%04d", i)
		if _, _, err := p.Put(b.Context(), id, `{"id":"`+id+`","pad":"`+pad+`"}`, store.Applied{Webhooks: i%100 == 0}); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		scan func() ([]store.StoredProject, error)
		want int
	}{
		{"List", func() ([]store.StoredProject, error) { return p.List(b.Context()) }, 1000},
		{"WithWebhooks", func() ([]store.StoredProject, error) { return p.WithWebhooks(b.Context()) }, 10},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if list, err := bc.scan(); err != nil || len(list) != bc.want {
					b.Fatalf("%d projects, %v", len(list), err)
				}
			}
		})
	}
}
