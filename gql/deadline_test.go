package gql

import (
	"context"
	"errors"
	"testing"
	"time"
)

type testKey struct{}

// timeLimit answers as context.WithTimeout does, whether or not its timer was started.
func TestTimeLimit(t *testing.T) {
	parent := context.WithValue(context.Background(), testKey{}, "v")

	c := withTimeLimit(parent, 20*time.Millisecond)
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

	c = withTimeLimit(parent, time.Hour)
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

	c = withTimeLimit(parent, time.Hour)
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
	c = withTimeLimit(canceled, time.Hour)
	cancelParent()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("parent canceled: Err %v", c.Err())
	}
	c.stop()
}
