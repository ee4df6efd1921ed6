package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/platform-dev/platform/coord"
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
	ErrChangesLost = coord.ErrLost
	// ErrSlowConsumer: the watcher did not keep up and its queue filled.
	ErrSlowConsumer = coord.ErrSlowConsumer
)

// Changes carries record changes between replicas, one channel per project (coord.Feed),
// so a change can only reach the watchers of its own project.
type Changes struct{ feed *coord.Feed[Change] }

// Watch is one watcher's view of a project's changes: C delivers them, Err says why C was
// closed (ErrChangesLost, ErrSlowConsumer, or nil after Close).
type Watch = coord.Watch[Change]

// Changes returns the change feed of these stores, shared by every project.
func (s *Stores) Changes() *Changes {
	s.changesOnce.Do(func() {
		s.changes = &Changes{feed: coord.NewFeed(s.Redis, s.logger, coord.Changes, decodeChange)}
	})
	return s.changes
}

func decodeChange(payload []byte, seq uint64) (Change, error) {
	var ch Change
	if err := json.Unmarshal(payload, &ch); err != nil {
		return Change{}, fmt.Errorf("decode change: %w", err)
	}
	ch.Seq = seq
	return ch, nil
}

// Publish sends changes of a project's records to the watchers of that project on every
// replica.
func (c *Changes) Publish(ctx context.Context, project string, chs ...Change) error {
	payloads := make([][]byte, len(chs))
	for i, ch := range chs {
		b, err := json.Marshal(ch)
		if err != nil {
			return fmt.Errorf("encode change of %s %q: %w", ch.Table, ch.UID, err)
		}
		payloads[i] = b
	}
	if err := c.feed.Publish(ctx, project, payloads...); err != nil {
		return fmt.Errorf("publish changes of project %q: %w", project, err)
	}
	return nil
}

// Watch starts watching a project's changes; queue bounds the changes waiting for the
// watcher, past which the watch ends with ErrSlowConsumer. It returns once Redis confirmed
// the subscription, so every change published after it returns is delivered.
func (c *Changes) Watch(ctx context.Context, project string, queue int) (*Watch, error) {
	return c.feed.Watch(ctx, project, queue)
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
