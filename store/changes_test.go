package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
)

// TestChanges: a change reaches the watchers of its project only, in order; a watcher that
// falls further behind than its queue is ended with ErrSlowConsumer, and Close ends a
// watch with no error.
func TestChanges(t *testing.T) {
	s, err := store.Open(t.Context(), store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	ctx := t.Context()
	shop, other := s.Changes().Project("shop"), s.Changes().Project("other")
	fast, err := shop.Watch(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := shop.Watch(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := other.Watch(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, uid := range []string{"a", "b", "c"} {
		if err := shop.Publish(ctx, store.Change{Table: "products", Op: store.Created, UID: uid, Record: store.Record(`{"uid":"` + uid + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"a", "b", "c"} {
		select {
		case ch := <-fast.C():
			if ch.UID != want || ch.Op != store.Created || string(ch.Record) != `{"uid":"`+want+`"}` {
				t.Errorf("got %+v, want %s", ch, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("change %s did not arrive", want)
		}
	}
	// The slow watcher kept the first change and was ended at the second.
	if ch := <-slow.C(); ch.UID != "a" {
		t.Errorf("slow watcher's first change: %+v", ch)
	}
	if _, open := <-slow.C(); open || !errors.Is(slow.Err(), store.ErrSlowConsumer) {
		t.Errorf("slow watcher: open %v, err %v; want closed with ErrSlowConsumer", open, slow.Err())
	}
	select {
	case ch := <-elsewhere.C():
		t.Errorf("another project's watcher got %+v", ch)
	default:
	}
	elsewhere.Close()
	if _, open := <-elsewhere.C(); open || elsewhere.Err() != nil {
		t.Errorf("closed watch: open %v, err %v", open, elsewhere.Err())
	}
	fast.Close()
}

// TestWatchWhileChangesFlow: a watch that starts while its project's changes flow returns a
// watch, or an error, never neither. Before, a change that reached the new watcher together
// with Redis' confirmation of the subscription could be taken for the watch's end: Watch
// answered nil and no error, and the GraphQL subscription that used it panicked. A watch
// whose queue filled before Watch returned is a watch that ended, not a failure to watch.
func TestWatchWhileChangesFlow(t *testing.T) {
	s, err := store.Open(t.Context(), store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	ctx := t.Context()
	shop := s.Changes().Project("shop")
	stop := make(chan struct{})
	published := make(chan error, 4)
	var publishers sync.WaitGroup
	for range 4 {
		publishers.Go(func() {
			published <- publish(ctx, shop, stop)
		})
	}
	defer func() {
		close(stop)
		publishers.Wait()
		close(published)
		for err := range published {
			if err != nil {
				t.Error(err)
			}
		}
	}()
	for i := range 2000 {
		w, err := shop.Watch(ctx, 100)
		if w == nil && err == nil {
			t.Fatalf("watch %d: neither a watch nor an error", i)
		}
		if err != nil {
			t.Fatalf("watch %d: %v", i, err)
		}
		// Nobody reads the watch: the changes may fill its queue before Watch returns,
		// which C and Err then say.
		w.Close()
	}
}

// publish publishes changes of p until stop is closed.
func publish(ctx context.Context, p *store.ProjectChanges, stop chan struct{}) error {
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		if err := p.Publish(ctx, store.Change{Table: "products", Op: store.Created, UID: "a", Record: store.Record(`{"uid":"a"}`)}); err != nil {
			return err
		}
	}
}
