package coord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Errors that end a Watch.
var (
	// ErrLost: the replica's connection to Redis failed, so messages published meanwhile
	// may never arrive.
	ErrLost = errors.New("the connection to Redis was lost; changes may have been missed")
	// ErrSlowConsumer: the watcher did not keep up and its queue filled.
	ErrSlowConsumer = errors.New("the subscriber did not keep up with the changes")
	errClosed       = errors.New("the service is shutting down")
)

// feedPing is how long the pub/sub connection may stay silent before it is pinged, so a
// connection that died without a word is found within twice this.
const feedPing = 15 * time.Second

// Feed carries messages between replicas through Redis pub/sub, one channel per topic (a
// project's changes: Changes), so a message can only reach the watchers of its own topic.
// Each replica keeps one pub/sub connection, subscribed to the channels of the topics
// watched on it, decodes each message once and fans it out to its watchers in memory.
type Feed[T any] struct {
	rdb     redis.UniversalClient
	logger  *slog.Logger
	channel func(topic string) string
	decode  func(payload []byte, seq uint64) (T, error)

	mu       sync.Mutex
	ps       *redis.PubSub // nil while nothing is watched
	watchers map[string]map[*Watch[T]]struct{}
	ready    map[string]chan struct{} // channel -> closed when Redis confirmed the subscription
	closed   bool
	seq      uint64 // of the last message received
	wg       sync.WaitGroup
}

// NewFeed returns the feed of rdb whose topics' channels channel names. decode reads a
// message, numbered seq: the numbers of one replica's messages, the same for every watcher
// of one, so that watchers can share the work of a message.
func NewFeed[T any](rdb redis.UniversalClient, logger *slog.Logger, channel func(topic string) string, decode func(payload []byte, seq uint64) (T, error)) *Feed[T] {
	if logger == nil {
		logger = slog.Default()
	}
	return &Feed[T]{rdb: rdb, logger: logger, channel: channel, decode: decode,
		watchers: map[string]map[*Watch[T]]struct{}{}, ready: map[string]chan struct{}{}}
}

// Publish sends messages of a topic to its watchers on every replica, in their order, in
// one round trip.
func (c *Feed[T]) Publish(ctx context.Context, topic string, payloads ...[]byte) error {
	if len(payloads) == 0 {
		return nil
	}
	pipe := c.rdb.Pipeline()
	for _, b := range payloads {
		pipe.Publish(ctx, c.channel(topic), b)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("publish %d messages of %q: %w", len(payloads), topic, err)
	}
	return nil
}

// Watch is one watcher's view of a topic.
type Watch[T any] struct {
	c       *Feed[T]
	channel string
	ch      chan T
	err     error // set before ch is closed
	// ended is closed with ch: Watch waits on it, not on ch, which may already hold a
	// change for the watcher when its channel was subscribed before.
	ended chan struct{}
}

// C delivers the changes; it is closed when the watch ends, and Err then says why.
func (w *Watch[T]) C() <-chan T { return w.ch }

// Err is why C was closed: ErrLost, ErrSlowConsumer, or nil after Close.
func (w *Watch[T]) Err() error { return w.err }

// Close stops the watch; C is closed.
func (w *Watch[T]) Close() {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	w.c.end(w, nil)
}

// Watch starts watching a topic; queue bounds the messages waiting for the watcher, past
// which the watch ends with ErrSlowConsumer. It returns once Redis confirmed the
// subscription, so every message published after it returns is delivered.
func (c *Feed[T]) Watch(ctx context.Context, topic string, queue int) (*Watch[T], error) {
	channel := c.channel(topic)
	w := &Watch[T]{c: c, channel: channel, ch: make(chan T, max(queue, 1)), ended: make(chan struct{})}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errClosed
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
		c.watchers[channel] = map[*Watch[T]]struct{}{}
		if err := c.ps.Subscribe(ctx, channel); err != nil {
			delete(c.ready, channel)
			delete(c.watchers, channel)
			c.mu.Unlock()
			return nil, fmt.Errorf("subscribe to %q: %w", topic, err)
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
func (c *Feed[T]) end(w *Watch[T], err error) {
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
func (c *Feed[T]) receive(ps *redis.PubSub) {
	defer c.wg.Done()
	ctx := context.Background()
	for {
		msg, err := ps.ReceiveTimeout(ctx, feedPing)
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
			c.mu.Lock()
			if ready, ok := c.ready[m.Channel]; ok && !closed(ready) {
				// The channel's subscription is not confirmed yet: the message comes from the
				// one before it, unsubscribed when its last watcher ended, and the watchers
				// now waiting in Watch are owed only what is published after it returns.
				c.mu.Unlock()
				continue
			}
			c.seq++
			ch, err := c.decode([]byte(m.Payload), c.seq)
			if err != nil {
				c.mu.Unlock()
				c.logger.Warn("undecodable message", "channel", m.Channel, "err", err)
				continue
			}
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
func (c *Feed[T]) fail(ps *redis.PubSub, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ps != ps {
		return
	}
	if !c.closed {
		c.logger.Warn("redis pub/sub failed; ending every watch", "err", err)
	}
	reason := ErrLost
	if c.closed {
		reason = errClosed
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

// Close ends every watch and waits for the receiver to stop.
func (c *Feed[T]) Close() {
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
