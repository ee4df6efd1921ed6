package store

import (
	"context"
	"errors"
	"time"
)

// A project's outbox keeps every change of the tables that declare one (Table.Outbox),
// written by the database in the transaction of the write itself, so that a change committed
// is a change kept, whatever happens to the process next. FanOut turns the changes into
// deliveries, one per webhook that wants the change; a delivery stays pending until its
// receiver answered 2xx, and its log is kept, bounded, beside it.

// ErrNoOutbox is a project whose database keeps no outbox: the MongoDB backend, since
// FerretDB (and MongoDB outside a replica set) cannot write a record and an outbox entry
// in one transaction.
var ErrNoOutbox = errors.New("this backend keeps no outbox: webhooks need the embedded SQLite backend")

// OutboxChange is one change the outbox kept.
type OutboxChange struct {
	Table  string
	Op     ChangeOp
	UID    string
	Record Record // after the write (nil for Deleted)
	Before Record // before it (nil for Created)
	At     time.Time
}

// DeliveryState says where a delivery stands.
type DeliveryState string

// The states of a delivery.
const (
	Pending   DeliveryState = "pending"   // not yet answered 2xx; tried again at NextAt
	Delivered DeliveryState = "delivered" // answered 2xx
	Failed    DeliveryState = "failed"    // given up after the last attempt; a retry makes it pending
)

// Delivery is one change to send, or sent, to one webhook.
type Delivery struct {
	ID      string // the same for every attempt: receivers deduplicate by it
	Webhook string
	Table   string
	Op      ChangeOp
	UID     string
	Body    []byte // empty in a log (see Deliveries)

	State    DeliveryState
	Attempts int
	// ChangedAt is when the write ran; NextAt when the next attempt is due (pending);
	// FinishedAt when it was delivered or given up.
	ChangedAt, NextAt, FinishedAt time.Time
	// Of the last attempt: its time to an answer, the HTTP status (0: none) and what went
	// wrong (empty after a 2xx).
	Latency time.Duration
	Status  int
	Error   string
}

// DeliveryCounts are a webhook's deliveries by state.
type DeliveryCounts struct {
	Pending   int64 `json:"pending"`
	Delivered int64 `json:"delivered"`
	Failed    int64 `json:"failed"`
}

// outboxBackend is what a database that keeps an outbox provides.
type outboxBackend interface {
	fanOut(ctx context.Context, limit int, fan func(OutboxChange) ([]Delivery, error)) (int, error)
	due(ctx context.Context, webhook string, now time.Time, limit int) ([]Delivery, error)
	nextDue(ctx context.Context, webhooks []string) (time.Time, bool, error)
	attempted(ctx context.Context, ds []Delivery, keep int) error
	deliveries(ctx context.Context, webhook string, limit int) ([]Delivery, error)
	deliveryCounts(ctx context.Context) (map[string]DeliveryCounts, error)
	retry(ctx context.Context, webhook, id string, at time.Time) error
	reachable(ctx context.Context, webhook string, at time.Time) error
	webhookSecrets(ctx context.Context, names []string, generate func() (string, error), at time.Time) (map[string]WebhookSecret, error)
	setWebhookSecret(ctx context.Context, name, secret string, graceUntil, at time.Time) error
}

// HasOutbox reports whether the project's database keeps an outbox.
func (r *Records) HasOutbox() bool { return r.outbox != nil }

func (r *Records) outboxOf() (outboxBackend, error) {
	if r.outbox == nil {
		return nil, ErrNoOutbox
	}
	return r.outbox, nil
}

// FanOut takes up to limit changes from the outbox, oldest first, and in the same
// transaction stores the deliveries fan answers for each: a change leaves the outbox only
// with its deliveries written. It answers how many changes it took.
func (r *Records) FanOut(ctx context.Context, limit int, fan func(OutboxChange) ([]Delivery, error)) (int, error) {
	ob, err := r.outboxOf()
	if err != nil {
		return 0, err
	}
	return ob.fanOut(ctx, limit, fan)
}

// DueDeliveries answers up to limit pending deliveries of a webhook due at now, oldest first.
func (r *Records) DueDeliveries(ctx context.Context, webhook string, now time.Time, limit int) ([]Delivery, error) {
	ob, err := r.outboxOf()
	if err != nil {
		return nil, err
	}
	return ob.due(ctx, webhook, now, limit)
}

// NextDue answers when the earliest pending delivery of the named webhooks is due; ok is
// false when none is. (Deliveries of a webhook no longer declared wait, in case it comes
// back under its name.)
func (r *Records) NextDue(ctx context.Context, webhooks []string) (at time.Time, ok bool, err error) {
	ob, err := r.outboxOf()
	if err != nil {
		return time.Time{}, false, err
	}
	return ob.nextDue(ctx, webhooks)
}

// Attempted records attempts, in one transaction: each delivery's State, Attempts, NextAt,
// FinishedAt, Latency, Status and Error. Of the finished deliveries (delivered or failed) of
// their webhooks, the newest keep stay in the log; pending ones always stay.
func (r *Records) Attempted(ctx context.Context, ds []Delivery, keep int) error {
	ob, err := r.outboxOf()
	if err != nil {
		return err
	}
	return ob.attempted(ctx, ds, keep)
}

// Deliveries answers a webhook's log, newest first, at most limit, without bodies.
func (r *Records) Deliveries(ctx context.Context, webhook string, limit int) ([]Delivery, error) {
	ob, err := r.outboxOf()
	if err != nil {
		return nil, err
	}
	return ob.deliveries(ctx, webhook, limit)
}

// DeliveryCounts answers the deliveries of every webhook by state, by webhook name.
func (r *Records) DeliveryCounts(ctx context.Context) (map[string]DeliveryCounts, error) {
	ob, err := r.outboxOf()
	if err != nil {
		return nil, err
	}
	return ob.deliveryCounts(ctx)
}

// RetryDelivery makes a delivery of a webhook pending again, due now, keeping its id and
// attempts; ErrNotFound when the log has no such delivery.
func (r *Records) RetryDelivery(ctx context.Context, webhook, id string) error {
	ob, err := r.outboxOf()
	if err != nil {
		return err
	}
	return ob.retry(ctx, webhook, id, now())
}

// Reachable makes due now the pending deliveries of a webhook whose last attempt got no
// answer (Status 0: refused, unreachable, timed out): once the receiver answered again,
// they need not wait out their back-off. Those it answered with an error keep theirs.
func (r *Records) Reachable(ctx context.Context, webhook string) error {
	ob, err := r.outboxOf()
	if err != nil {
		return err
	}
	return ob.reachable(ctx, webhook, now())
}

// WebhookSecret is a webhook's signing secret, and the secrets it replaced that still sign
// beside it (the grace of a rotation, so that receivers can move to the new one).
type WebhookSecret struct {
	Secret   string
	Previous []PreviousSecret // oldest first
}

// PreviousSecret is a replaced secret that signs until Until.
type PreviousSecret struct {
	Secret string
	Until  time.Time
}

// WebhookSecrets answers the signing secret of each named webhook, with the previous ones
// still signing, storing one made by generate for a webhook that has none yet. Secrets live
// in the project's database, out of its document, so that reading the document never shows
// them.
func (r *Records) WebhookSecrets(ctx context.Context, names []string, generate func() (string, error)) (map[string]WebhookSecret, error) {
	ob, err := r.outboxOf()
	if err != nil {
		return nil, err
	}
	return ob.webhookSecrets(ctx, names, generate, now())
}

// SetWebhookSecret replaces the signing secret of a webhook. The secret it replaces keeps
// signing until graceUntil; a graceUntil not after now ends every previous secret at once
// (a secret that leaked).
func (r *Records) SetWebhookSecret(ctx context.Context, name, secret string, graceUntil time.Time) error {
	ob, err := r.outboxOf()
	if err != nil {
		return err
	}
	return ob.setWebhookSecret(ctx, name, secret, graceUntil, now())
}
