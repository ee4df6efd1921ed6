package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ChangeOp says what a write did to a record.
type ChangeOp string

// The writes a Change reports.
const (
	Created ChangeOp = "CREATE"
	Updated ChangeOp = "UPDATE"
	Deleted ChangeOp = "DELETE"
)

// Change is one write to one record, as subscriptions on every replica see it.
type Change struct {
	Table string   `json:"table"`
	Op    ChangeOp `json:"op"`
	UID   string   `json:"uid"`
	// Record is the record after the write (nil for Deleted); Before the record before it
	// (nil for Created), so that a subscriber can tell a record that left its view.
	Record Record `json:"record,omitempty"`
	Before Record `json:"before,omitempty"`
	// Seq numbers the changes one replica received, the same for every watcher of one, so
	// that watchers can share the work of a change.
	Seq uint64 `json:"-"`
}

// Errors that end a Watch.
var (
	// ErrChangesLost: the replica's connection to Redis failed, so changes made meanwhile
	// may never arrive.
	ErrChangesLost = errors.New("the connection to Redis was lost; changes may have been missed")
	// ErrSlowConsumer: the watcher did not keep up and its queue filled.
	ErrSlowConsumer  = errors.New("the subscriber did not keep up with the changes")
	errChangesClosed = errors.New("the service is shutting down")
)

// changesPing is how long the pub/sub connection may stay silent before it is pinged, so a
// connection that died without a word is found within twice this.
const changesPing = 15 * time.Second

// Changes carries record changes between replicas through Redis pub/sub, one channel per
// project, so a change can only reach the watchers of its own project. Each replica keeps one
// pub/sub connection, subscribed to the channels of the projects watched on it, and fans each
// message out to its watchers in memory.
type Changes struct {
	rdb    *redis.Client
	logger *slog.Logger

	mu       sync.Mutex
	ps       *redis.PubSub // nil while nothing is watched
	watchers map[string]map[*Watch]struct{}
	ready    map[string]chan struct{} // channel -> closed when Redis confirmed the subscription
	closed   bool
	seq      uint64 // of the last change received
	wg       sync.WaitGroup
}

// Changes returns the change feed of these stores, shared by every project.
func (s *Stores) Changes() *Changes {
	s.changesOnce.Do(func() {
		s.changes = &Changes{rdb: s.Redis, logger: s.logger, watchers: map[string]map[*Watch]struct{}{}, ready: map[string]chan struct{}{}}
	})
	return s.changes
}

func changesChannel(project string) string { return "platform:changes:" + project }

// Publish sends changes of a project's records to the watchers of that project on every
// replica.
func (c *Changes) Publish(ctx context.Context, project string, chs ...Change) error {
	if len(chs) == 0 {
		return nil
	}
	// One round trip for a batch write's changes, in their order.
	pipe := c.rdb.Pipeline()
	for _, ch := range chs {
		b, err := json.Marshal(ch)
		if err != nil {
			return fmt.Errorf("encode change of %s %q: %w", ch.Table, ch.UID, err)
		}
		pipe.Publish(ctx, changesChannel(project), b)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("publish %d changes of project %q: %w", len(chs), project, err)
	}
	return nil
}

// Watch is one watcher's view of a project's changes.
type Watch struct {
	c       *Changes
	channel string
	ch      chan Change
	err     error // set before ch is closed
	// ended is closed with ch: Watch waits on it, not on ch, which may already hold a
	// change for the watcher when its channel was subscribed before.
	ended chan struct{}
}

// C delivers the changes; it is closed when the watch ends, and Err then says why.
func (w *Watch) C() <-chan Change { return w.ch }

// Err is why C was closed: ErrChangesLost, ErrSlowConsumer, or nil after Close.
func (w *Watch) Err() error { return w.err }

// Close stops the watch; C is closed.
func (w *Watch) Close() {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	w.c.end(w, nil)
}

// Watch starts watching a project's changes; queue bounds the changes waiting for the
// watcher, past which the watch ends with ErrSlowConsumer. It returns once Redis confirmed
// the subscription, so every change published after it returns is delivered.
func (c *Changes) Watch(ctx context.Context, project string, queue int) (*Watch, error) {
	channel := changesChannel(project)
	w := &Watch{c: c, channel: channel, ch: make(chan Change, max(queue, 1)), ended: make(chan struct{})}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errChangesClosed
	}
	if c.ps == nil {
		c.ps = c.rdb.Subscribe(ctx)
		c.wg.Add(1)
		go c.receive(c.ps)
	}
	ready, ok := c.ready[channel]
	if !ok {
		ready = make(chan struct{})
		c.ready[channel] = ready
		c.watchers[channel] = map[*Watch]struct{}{}
		if err := c.ps.Subscribe(ctx, channel); err != nil {
			delete(c.ready, channel)
			delete(c.watchers, channel)
			c.mu.Unlock()
			return nil, fmt.Errorf("subscribe to the changes of %q: %w", project, err)
		}
	}
	c.watchers[channel][w] = struct{}{}
	c.mu.Unlock()
	select {
	case <-ready:
		return w, nil
	case <-w.ended:
		select {
		case <-ready:
			// Subscribed, then ended already (its queue filled before Watch returned): the
			// watcher reads why from C and Err, as for a watch that ends later.
			return w, nil
		default:
		}
		return nil, w.err
	case <-ctx.Done():
		w.Close()
		return nil, ctx.Err()
	}
}

// end removes a watcher and closes its channel with err; c.mu is held.
func (c *Changes) end(w *Watch, err error) {
	set, ok := c.watchers[w.channel]
	if !ok {
		return
	}
	if _, ok := set[w]; !ok {
		return
	}
	delete(set, w)
	w.err = err
	close(w.ch)
	close(w.ended)
	if len(set) == 0 && c.ps != nil {
		delete(c.watchers, w.channel)
		delete(c.ready, w.channel)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		// A failed unsubscribe leaves messages nobody watches, which are dropped.
		_ = c.ps.Unsubscribe(ctx, w.channel)
	}
}

// receive reads the pub/sub connection until it fails or is closed, fanning messages out.
func (c *Changes) receive(ps *redis.PubSub) {
	defer c.wg.Done()
	ctx := context.Background()
	for {
		msg, err := ps.ReceiveTimeout(ctx, changesPing)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if err = ps.Ping(ctx); err == nil {
				continue
			}
		}
		if err != nil {
			c.fail(ps, err)
			return
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			c.mu.Lock()
			if ready, ok := c.ready[m.Channel]; ok && m.Kind == "subscribe" {
				select {
				case <-ready:
				default:
					close(ready)
				}
			}
			c.mu.Unlock()
		case *redis.Message:
			var ch Change
			if err := json.Unmarshal([]byte(m.Payload), &ch); err != nil {
				c.logger.Warn("undecodable change message", "channel", m.Channel, "err", err)
				continue
			}
			c.mu.Lock()
			if ready, ok := c.ready[m.Channel]; ok && !closed(ready) {
				// The channel's subscription is not confirmed yet: the message comes from the
				// one before it, unsubscribed when its last watcher ended, and the watchers
				// now waiting in Watch are owed only what is published after it returns.
				c.mu.Unlock()
				continue
			}
			c.seq++
			ch.Seq = c.seq
			for w := range c.watchers[m.Channel] {
				select {
				case w.ch <- ch:
				default:
					c.end(w, ErrSlowConsumer)
				}
			}
			c.mu.Unlock()
		}
	}
}

// closed reports whether ch is closed.
func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// fail ends every watch when the pub/sub connection failed; the next Watch opens a new one.
func (c *Changes) fail(ps *redis.PubSub, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ps != ps {
		return
	}
	if !c.closed {
		c.logger.Warn("redis pub/sub of record changes failed; ending every subscription", "err", err)
	}
	reason := ErrChangesLost
	if c.closed {
		reason = errChangesClosed
	}
	c.ps = nil
	for channel, set := range c.watchers {
		for w := range set {
			delete(set, w)
			w.err = reason
			close(w.ch)
			close(w.ended)
		}
		delete(c.watchers, channel)
	}
	c.ready = map[string]chan struct{}{}
	_ = ps.Close()
}

// close ends every watch and waits for the receiver to stop.
func (c *Changes) close() {
	c.mu.Lock()
	c.closed = true
	ps := c.ps
	c.mu.Unlock()
	if ps != nil {
		// Closing makes the receiver's read fail, and it ends the watches.
		_ = ps.Close()
	}
	c.wg.Wait()
}

// ProjectChanges is the change feed of one project.
type ProjectChanges struct {
	c       *Changes
	project string
}

// Project returns the change feed of one project.
func (c *Changes) Project(id string) *ProjectChanges { return &ProjectChanges{c: c, project: id} }

// Publish sends changes of the project's records to its watchers on every replica.
func (p *ProjectChanges) Publish(ctx context.Context, chs ...Change) error {
	return p.c.Publish(ctx, p.project, chs...)
}

// Watch watches the project's changes (see Changes.Watch).
func (p *ProjectChanges) Watch(ctx context.Context, queue int) (*Watch, error) {
	return p.c.Watch(ctx, p.project, queue)
}
