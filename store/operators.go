package store

import (
	"context"
	"errors"
	"time"
)

// operatorsBackend keeps, in the control database, the operators' keys and the audit log of
// their changes, so that every replica sees the same keys and the log survives restarts.
type operatorsBackend interface {
	// addKey stores k; ErrKeyExists when a key of that name exists.
	addKey(ctx context.Context, k StoredKey) error
	keyByHash(ctx context.Context, hash string) (*StoredKey, error) // ErrNotFound
	keys(ctx context.Context) ([]StoredKey, error)                  // ordered by name
	// removeKey deletes the key named name and answers it; ErrNotFound.
	removeKey(ctx context.Context, name string) (*StoredKey, error)
	touchKey(ctx context.Context, name string, at time.Time) error
	appendAudit(ctx context.Context, e AuditEntry) error
	audit(ctx context.Context, q AuditQuery) ([]AuditEntry, error)
	pruneAudit(ctx context.Context, before time.Time) (int64, error)
}

// StoredKey is an operator key as the control database keeps it: its SHA-256, never the key.
type StoredKey struct {
	Name  string
	Scope string
	// Hash is the hex SHA-256 of the key.
	Hash      string
	CreatedAt time.Time
	ExpiresAt time.Time // zero: it does not expire
	LastUsed  time.Time // zero: never used
}

// ErrKeyExists is a new key whose name another key has.
var ErrKeyExists = errors.New("a key of that name exists")

// AuditEntry is one change an operator made, or tried to make.
type AuditEntry struct {
	At time.Time
	// Key and Scope name the key that made the change.
	Key, Scope string
	// Client is the client's address.
	Client string
	// Action names the change ("project.apply", "key.create"); Project the project it
	// touches ("" for none), Target what in it (a record, a key's name).
	Action, Project, Target string
	// Diff says what changed, one line a change.
	Diff []string
	// Outcome is "ok", or why it failed ("refused 403: ...").
	Outcome string
}

// AuditQuery selects entries of the audit log.
type AuditQuery struct {
	Project string    // "" for every project
	Action  string    // "" for every action
	Since   time.Time // zero for the whole log
	Limit   int       // 0 for no limit
	// Newest reads newest first (the Limit newest entries), else oldest first.
	Newest bool
}

// Keys keeps the operators' keys.
type Keys struct{ b operatorsBackend }

// Keys returns the operators' keys.
func (s *Stores) Keys() *Keys { return &Keys{b: s.db.operators()} }

// Add stores a new key; ErrKeyExists.
func (k *Keys) Add(ctx context.Context, key StoredKey) error { return k.b.addKey(ctx, key) }

// ByHash returns the key whose SHA-256 is hash; ErrNotFound.
func (k *Keys) ByHash(ctx context.Context, hash string) (*StoredKey, error) {
	return k.b.keyByHash(ctx, hash)
}

// List returns every key, ordered by name.
func (k *Keys) List(ctx context.Context) ([]StoredKey, error) { return k.b.keys(ctx) }

// Remove deletes the key named name and returns it; ErrNotFound.
func (k *Keys) Remove(ctx context.Context, name string) (*StoredKey, error) {
	return k.b.removeKey(ctx, name)
}

// Touch records that the key named name was used at at.
func (k *Keys) Touch(ctx context.Context, name string, at time.Time) error {
	return k.b.touchKey(ctx, name, at)
}

// Audit is the append-only log of the operators' changes.
type Audit struct{ b operatorsBackend }

// Audit returns the audit log.
func (s *Stores) Audit() *Audit { return &Audit{b: s.db.operators()} }

// Append adds e to the log; a zero At is now.
func (a *Audit) Append(ctx context.Context, e AuditEntry) error {
	if e.At.IsZero() {
		e.At = now()
	}
	if e.Diff == nil {
		e.Diff = []string{}
	}
	return a.b.appendAudit(ctx, e)
}

// Read returns the entries q selects, oldest first unless q.Newest.
func (a *Audit) Read(ctx context.Context, q AuditQuery) ([]AuditEntry, error) {
	return a.b.audit(ctx, q)
}

// Prune removes the entries older than before and answers how many it removed: the log is
// append-only for everyone but its retention.
func (a *Audit) Prune(ctx context.Context, before time.Time) (int64, error) {
	return a.b.pruneAudit(ctx, before)
}
