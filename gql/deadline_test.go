package gql

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
)

type testKey struct{}

// ownerGuard lets its caller read and write only its own records.
type ownerGuard string

func (g ownerGuard) Filter(string, Operation) (store.Filter, bool, error) {
	return store.Compare(store.KeyOwner, store.Eq, string(g)), false, nil
}
func (g ownerGuard) Allow(string, Operation, map[string]any, map[string]any) error { return nil }
func (g ownerGuard) Owner() string                                                 { return string(g) }

// timeLimit answers as context.WithTimeout does, whether or not its timer was started.
func TestTimeLimit(t *testing.T) {
	parent := context.WithValue(context.Background(), testKey{}, "v")

	c := withTimeLimit(parent, 20*time.Millisecond, nil)
	if c.Err() != nil || c.Value(testKey{}) != "v" {
		t.Fatalf("new: Err %v, Value %v", c.Err(), c.Value(testKey{}))
	}
	if d, ok := c.Deadline(); !ok || time.Until(d) > 20*time.Millisecond {
		t.Fatalf("Deadline %v %v", d, ok)
	}
	time.Sleep(25 * time.Millisecond)
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatalf("past the limit, never armed: Err %v", c.Err())
	}
	select {
	case <-c.Done():
	case <-time.After(time.Second):
		t.Fatal("armed past the limit: Done not closed")
	}
	c.stop()

	c = withTimeLimit(parent, time.Hour, nil)
	child, cancel := context.WithCancel(c)
	defer cancel()
	if c.Value(testKey{}) != "v" {
		t.Fatal("armed: Value lost")
	}
	c.stop()
	select {
	case <-child.Done():
	case <-time.After(time.Second):
		t.Fatal("stopped: a derived context is not canceled")
	}
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("stopped: Err %v", c.Err())
	}

	c = withTimeLimit(parent, time.Hour, nil)
	c.stop()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("stopped, never armed: Err %v", c.Err())
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("stopped, then armed: Done not closed")
	}

	canceled, cancelParent := context.WithCancel(parent)
	c = withTimeLimit(canceled, time.Hour, nil)
	cancelParent()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("parent canceled: Err %v", c.Err())
	}
	c.stop()

	// The caller's guard is found before and after the timer starts, in contexts derived
	// from the limit too; without one, the parent's.
	g, other := ownerGuard("alice"), ownerGuard("bob")
	c = withTimeLimit(WithGuard(parent, other), time.Hour, g)
	if guardFrom(c) != Guard(g) || c.Value(testKey{}) != "v" {
		t.Fatalf("new: guard %v, Value %v", guardFrom(c), c.Value(testKey{}))
	}
	child, cancel = context.WithCancel(c)
	defer cancel()
	if guardFrom(c) != Guard(g) || guardFrom(child) != Guard(g) || c.Value(testKey{}) != "v" {
		t.Fatalf("armed: guard %v, derived %v", guardFrom(c), guardFrom(child))
	}
	c.stop()
	if c = withTimeLimit(WithGuard(parent, other), time.Hour, nil); guardFrom(c) != Guard(other) {
		t.Fatalf("no guard given: %v", guardFrom(c))
	}
	c.stop()
}
