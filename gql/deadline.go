package gql

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// timeLimit is context.WithTimeout for a request's time limit whose timer starts only when
// something asks for Done, that is, waits for the limit. A planned read of one record by
// uid never does (the store checks Err before it starts, and the read ends after one row),
// and a timer, its function and a cancel context registered with the request's context
// are a measurable part of such a request (docs/performance.md, "Request handling"). Err,
// Deadline and Value answer as the timed context would; once armed, the context is the
// timed one (Value finds it, so contexts derived from it are canceled
// with it, not by a goroutine watching Done). It also carries the caller's Guard, when one
// is given, as WithGuard would without a context of its own, and the request's budget.
type timeLimit struct {
	parent   context.Context
	guard    Guard
	budget   budget
	deadline time.Time
	mu       sync.Mutex
	timed    atomic.Pointer[context.Context]
	cancel   context.CancelFunc
	stopped  atomic.Bool
}

// withTimeLimit is parent limited to d from now, for the caller g (nil: parent's).
func withTimeLimit(parent context.Context, d time.Duration, g Guard) *timeLimit {
	return &timeLimit{parent: parent, guard: g, deadline: time.Now().Add(d)}
}

// arm is the timed context, made on first use.
func (c *timeLimit) arm() context.Context {
	if t := c.timed.Load(); t != nil {
		return *t
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.timed.Load(); t != nil {
		return *t
	}
	parent := c.parent
	if c.guard != nil {
		parent = WithGuard(parent, c.guard)
	}
	t, cancel := context.WithDeadline(parent, c.deadline)
	if c.stopped.Load() {
		cancel()
	}
	c.cancel = cancel
	c.timed.Store(&t)
	return t
}

// stop is the CancelFunc: it ends the context as cancel ends the timed one.
func (c *timeLimit) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped.Store(true)
	if c.cancel != nil {
		c.cancel()
	}
}

func (c *timeLimit) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *timeLimit) Done() <-chan struct{} { return c.arm().Done() }

func (c *timeLimit) Err() error {
	if t := c.timed.Load(); t != nil {
		return (*t).Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	switch {
	case c.stopped.Load():
		return context.Canceled
	case time.Until(c.deadline) <= 0:
		// The deadline has a monotonic reading: Until reads that clock alone, where Now
		// reads two.
		return context.DeadlineExceeded
	}
	return nil
}

func (c *timeLimit) Value(key any) any {
	// The budget is found here, armed or not: the timed context does not hold it.
	if _, ok := key.(budgetKey); ok {
		return &c.budget
	}
	if t := c.timed.Load(); t != nil {
		return (*t).Value(key)
	}
	if _, ok := key.(guardKey); ok && c.guard != nil {
		return c.guard
	}
	return c.parent.Value(key)
}
