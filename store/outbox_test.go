package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
)

// TestOutbox: every write path of a table that keeps an outbox leaves exactly its changes in
// it, in the write's own transaction: a batch a unique index refuses leaves none, an update
// that changes nothing leaves none; a table without one leaves none. On the mongo backend
// there is no outbox, and it says so.
func TestOutbox(t *testing.T) {
	hooked := store.Table{Name: "skus", Outbox: true,
		Fields:  []store.Field{{Name: "sku", Type: store.FieldType{Scalar: store.String}}, {Name: "n", Type: store.FieldType{Scalar: store.Int}}},
		Indexes: []store.Index{{Fields: []string{"sku"}, Unique: true}}}
	plain := store.Table{Name: "notes", Fields: []store.Field{{Name: "text", Type: store.FieldType{Scalar: store.String}}}}
	forEachBackend(t, func(t *testing.T, s *store.Stores) {
		ctx := t.Context()
		recs := seedItems(t, s, hooked, plain)
		if !recs.HasOutbox() {
			if _, err := recs.FanOut(ctx, 10, nil); !errors.Is(err, store.ErrNoOutbox) {
				t.Fatalf("FanOut without an outbox: %v", err)
			}
			return
		}
		// taken answers the changes in the outbox as "OP uid-of-sku", and empties it.
		skuOf := map[string]string{}
		taken := func() []string {
			var got []string
			_, err := recs.FanOut(ctx, 100, func(ch store.OutboxChange) ([]store.Delivery, error) {
				rec := ch.Record
				if ch.Op == store.Deleted {
					rec = ch.Before
				}
				var v struct{ SKU string }
				if err := json.Unmarshal(rec, &v); err != nil {
					return nil, err
				}
				if ch.At.IsZero() || time.Since(ch.At) > time.Minute {
					t.Errorf("change at %v", ch.At)
				}
				skuOf[ch.UID] = v.SKU
				got = append(got, string(ch.Op)+" "+v.SKU)
				return nil, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		check := func(what string, want ...string) {
			t.Helper()
			if got := taken(); !slices.Equal(got, want) {
				t.Errorf("%s: outbox %q, want %q", what, got, want)
			}
		}
		check("seeded")
		if err := recs.Insert(ctx, "skus", "alice", []map[string]any{{"sku": "a"}, {"sku": "b"}}, nil); err != nil {
			t.Fatal(err)
		}
		check("batch", "CREATE a", "CREATE b")
		var ce *store.ConflictError
		if err := recs.Insert(ctx, "skus", "alice", []map[string]any{{"sku": "c"}, {"sku": "a"}}, nil); !errors.As(err, &ce) {
			t.Fatalf("duplicate: %v", err)
		}
		check("refused batch")
		if _, err := recs.UpdateWhere(ctx, "skus", store.All, map[string]any{"n": int64(1)}, nil); err != nil {
			t.Fatal(err)
		}
		check("update by filter", "UPDATE a", "UPDATE b")
		uidA := ""
		for uid, sku := range skuOf {
			if sku == "a" {
				uidA = uid
			}
		}
		if err := recs.Delete(ctx, "skus", uidA, store.All); err != nil {
			t.Fatal(err)
		}
		if err := recs.Insert(ctx, "notes", "alice", []map[string]any{{"text": "x"}}, nil); err != nil {
			t.Fatal(err)
		}
		check("delete, and a table without outbox", "DELETE a")
		if _, err := recs.DeleteWhere(ctx, "skus", store.All); err != nil {
			t.Fatal(err)
		}
		check("delete by filter", "DELETE b")
	})
}

// TestDeliveries: a delivery stays pending, with its attempts, until it is marked delivered;
// the log keeps the newest finished ones and every pending one; a retry makes one due again.
func TestDeliveries(t *testing.T) {
	s, err := store.Open(t.Context(), store.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	ctx := t.Context()
	recs := seedItems(t, s, store.Table{Name: "skus", Outbox: true, Fields: []store.Field{{Name: "sku", Type: store.FieldType{Scalar: store.String}}}})
	for i := range 5 {
		if err := recs.Insert(ctx, "skus", "alice", []map[string]any{{"sku": fmt.Sprint(i)}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	if _, err := recs.FanOut(ctx, 100, func(ch store.OutboxChange) ([]store.Delivery, error) {
		n++
		return []store.Delivery{{ID: fmt.Sprintf("msg_%d", n), Webhook: "hook", Body: []byte(`{}`)}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	due, err := recs.DueDeliveries(ctx, "hook", time.Now(), 10)
	if err != nil || len(due) != 5 || due[0].ID != "msg_1" || string(due[0].Body) != "{}" || due[0].State != store.Pending {
		t.Fatalf("due: %+v, %v", due, err)
	}
	now := time.Now()
	// msg_1 fails and waits; the others are delivered, and the log keeps 2 of them.
	failed := due[0]
	failed.Attempts, failed.NextAt, failed.Status, failed.Error = 1, now.Add(time.Hour), 503, "HTTP 503: busy"
	if err := recs.Attempted(ctx, []store.Delivery{failed}, 2); err != nil {
		t.Fatal(err)
	}
	for _, d := range due[1:] {
		d.Attempts, d.State, d.FinishedAt, d.Status, d.Latency = 1, store.Delivered, now, 204, 3*time.Millisecond
		if err := recs.Attempted(ctx, []store.Delivery{d}, 2); err != nil {
			t.Fatal(err)
		}
	}
	log, err := recs.Deliveries(ctx, "hook", 100)
	var ids []string
	for _, d := range log {
		ids = append(ids, d.ID+" "+string(d.State))
	}
	if err != nil || strings.Join(ids, ", ") != "msg_5 delivered, msg_4 delivered, msg_1 pending" {
		t.Fatalf("log: %v, %v", ids, err)
	}
	if log[2].Error != "HTTP 503: busy" || log[2].Attempts != 1 || log[0].Latency != 3*time.Millisecond || log[0].Body != nil {
		t.Errorf("log entries: %+v", log)
	}
	if due, err := recs.DueDeliveries(ctx, "hook", now, 10); err != nil || len(due) != 0 {
		t.Errorf("due while msg_1 waits: %+v, %v", due, err)
	}
	// msg_1 is the next due of "hook"; a webhook no longer declared is not waited for.
	if at, ok, err := recs.NextDue(ctx, []string{"hook"}); err != nil || !ok || !at.Equal(now.Add(time.Hour).Truncate(time.Millisecond)) {
		t.Errorf("next due: %v %v %v, want %v", at, ok, err, now.Add(time.Hour))
	}
	if at, ok, err := recs.NextDue(ctx, []string{"renamed"}); err != nil || ok {
		t.Errorf("next due of another webhook: %v %v %v, want none", at, ok, err)
	}
	if counts, err := recs.DeliveryCounts(ctx); err != nil || counts["hook"] != (store.DeliveryCounts{Pending: 1, Delivered: 2}) {
		t.Errorf("counts: %+v, %v", counts, err)
	}
	// msg_1's receiver answered 503: its back-off stands when the webhook is reachable again.
	if err := recs.Reachable(ctx, "hook"); err != nil {
		t.Fatal(err)
	}
	if due, err := recs.DueDeliveries(ctx, "hook", time.Now(), 10); err != nil || len(due) != 0 {
		t.Errorf("due after Reachable: %+v, %v", due, err)
	}
	if err := recs.RetryDelivery(ctx, "hook", "msg_4"); err != nil {
		t.Fatal(err)
	}
	if err := recs.RetryDelivery(ctx, "hook", "msg_2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("retry of a pruned delivery: %v", err)
	}
	due, err = recs.DueDeliveries(ctx, "hook", time.Now(), 10)
	if err != nil || len(due) != 1 || due[0].ID != "msg_4" || due[0].Attempts != 1 {
		t.Fatalf("due after a retry: %+v, %v", due, err)
	}
	// msg_4's receiver cannot be reached: it waits, until the webhook is reachable again.
	unreached := due[0]
	unreached.Attempts, unreached.NextAt, unreached.Status, unreached.Error = 2, time.Now().Add(time.Hour), 0, "connection refused"
	if err := recs.Attempted(ctx, []store.Delivery{unreached}, 2); err != nil {
		t.Fatal(err)
	}
	if err := recs.Reachable(ctx, "hook"); err != nil {
		t.Fatal(err)
	}
	if due, err := recs.DueDeliveries(ctx, "hook", time.Now().Add(time.Millisecond), 10); err != nil || len(due) != 1 || due[0].ID != "msg_4" {
		t.Errorf("due once reachable: %+v, %v", due, err)
	}
}
