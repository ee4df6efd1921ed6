package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// On SQLite the outbox is filled by triggers on the records' tables: every statement that
// writes records (one create, a batch, an update by filter, an import) writes the outbox in
// its own transaction, whichever path in this package ran it. An update that leaves a
// record's JSON as it was (filling a new column) sends nothing.
const (
	outboxTable     = "platform_outbox"
	deliveriesTable = "platform_deliveries"
	secretsTable    = "platform_webhook_secrets"
	previousTable   = "platform_webhook_previous_secrets"
	// unixMillis is the statement's time in ms since 1970, as the outbox keeps times.
	unixMillis = `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`
)

// outboxDDL makes the outbox and t's triggers when t keeps one, and drops its triggers
// when it does not.
func outboxDDL(t *Table) []string {
	trigger := func(op string) string { return quoteIdent("outbox:" + t.Name + ":" + op) }
	if !t.Outbox {
		return []string{
			`DROP TRIGGER IF EXISTS ` + trigger("insert"),
			`DROP TRIGGER IF EXISTS ` + trigger("update"),
			`DROP TRIGGER IF EXISTS ` + trigger("delete"),
		}
	}
	table, name := sqlTable(t), quoteString(t.Name)
	keep := `INSERT INTO ` + outboxTable + ` (tbl, op, uid, record, before, at) VALUES (` + name + `, `
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + outboxTable + ` (
			seq INTEGER PRIMARY KEY AUTOINCREMENT,
			tbl TEXT NOT NULL, op TEXT NOT NULL, uid TEXT NOT NULL,
			record TEXT, before TEXT, at INTEGER NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS ` + deliveriesTable + ` (
			seq INTEGER PRIMARY KEY AUTOINCREMENT,
			id TEXT NOT NULL UNIQUE, webhook TEXT NOT NULL,
			tbl TEXT NOT NULL, op TEXT NOT NULL, uid TEXT NOT NULL, body BLOB NOT NULL,
			state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
			changed_at INTEGER NOT NULL, next_at INTEGER NOT NULL, finished_at INTEGER,
			latency_us INTEGER, status INTEGER, error TEXT)`,
		`CREATE INDEX IF NOT EXISTS "platform:deliveries:due" ON ` + deliveriesTable + ` (webhook, state, next_at)`,
		`CREATE TABLE IF NOT EXISTS ` + secretsTable + ` (name TEXT PRIMARY KEY, secret TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS ` + previousTable + ` (name TEXT NOT NULL, secret TEXT NOT NULL, until INTEGER NOT NULL, PRIMARY KEY (name, secret))`,
		`CREATE TRIGGER IF NOT EXISTS ` + trigger("insert") + ` AFTER INSERT ON ` + table + ` BEGIN ` +
			keep + `'CREATE', NEW.uid, NEW.data, NULL, ` + unixMillis + `); END`,
		`CREATE TRIGGER IF NOT EXISTS ` + trigger("update") + ` AFTER UPDATE ON ` + table + ` WHEN NEW.data IS NOT OLD.data BEGIN ` +
			keep + `'UPDATE', NEW.uid, NEW.data, OLD.data, ` + unixMillis + `); END`,
		`CREATE TRIGGER IF NOT EXISTS ` + trigger("delete") + ` AFTER DELETE ON ` + table + ` BEGIN ` +
			keep + `'DELETE', OLD.uid, NULL, OLD.data, ` + unixMillis + `); END`,
	}
}

// noOutbox reports the error of a statement on a project that never had an outbox.
func noOutbox(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table: platform_")
}

func millis(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return time.UnixMilli(ms.Int64).UTC()
}

func (p *sqliteProject) fanOut(ctx context.Context, limit int, fan func(OutboxChange) ([]Delivery, error)) (int, error) {
	taken := 0
	err := p.inWrite(ctx, false, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT seq, tbl, op, uid, record, before, at FROM `+outboxTable+` ORDER BY seq LIMIT ?`, limit)
		if err != nil {
			return err
		}
		var changes []OutboxChange
		last := int64(0)
		for rows.Next() {
			var ch OutboxChange
			var rec, before sql.NullString
			var at sql.NullInt64
			if err := rows.Scan(&last, &ch.Table, &ch.Op, &ch.UID, &rec, &before, &at); err != nil {
				rows.Close()
				return err
			}
			if rec.Valid {
				ch.Record = Record(rec.String)
			}
			if before.Valid {
				ch.Before = Record(before.String)
			}
			ch.At = millis(at)
			changes = append(changes, ch)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(changes) == 0 {
			return err
		}
		for _, ch := range changes {
			ds, err := fan(ch)
			if err != nil {
				return err
			}
			for _, d := range ds {
				_, err := tx.ExecContext(ctx, `INSERT INTO `+deliveriesTable+` (id, webhook, tbl, op, uid, body, state, changed_at, next_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
					d.ID, d.Webhook, ch.Table, string(ch.Op), ch.UID, d.Body, string(Pending), ch.At.UnixMilli(), ch.At.UnixMilli())
				if err != nil {
					return err
				}
			}
		}
		taken = len(changes)
		_, err = tx.ExecContext(ctx, `DELETE FROM `+outboxTable+` WHERE seq <= ?`, last)
		return err
	})
	if noOutbox(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("fan out the outbox of project %q: %w", p.id, err)
	}
	return taken, nil
}

const deliveryColumns = `id, webhook, tbl, op, uid, state, attempts, changed_at, next_at, finished_at, latency_us, status, error`

func scanDeliveries(rows *sql.Rows, body bool) ([]Delivery, error) {
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		var d Delivery
		var changed, next, finished, latency, status sql.NullInt64
		var msg sql.NullString
		dest := []any{&d.ID, &d.Webhook, &d.Table, &d.Op, &d.UID, &d.State, &d.Attempts, &changed, &next, &finished, &latency, &status, &msg}
		if body {
			dest = append(dest, &d.Body)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		d.ChangedAt, d.NextAt, d.FinishedAt = millis(changed), millis(next), millis(finished)
		d.Latency = time.Duration(latency.Int64) * time.Microsecond
		d.Status, d.Error = int(status.Int64), msg.String
		out = append(out, d)
	}
	return out, rows.Err()
}

// query runs a read of the outbox's tables; a project without them has nothing.
func (p *sqliteProject) query(ctx context.Context, what string, body bool, q string, args ...any) ([]Delivery, error) {
	f, release, err := p.file()
	if err != nil {
		return nil, err
	}
	defer release()
	rows, err := f.reader.QueryContext(ctx, q, args...)
	if noOutbox(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s of project %q: %w", what, p.id, err)
	}
	ds, err := scanDeliveries(rows, body)
	if err != nil {
		return nil, fmt.Errorf("%s of project %q: %w", what, p.id, err)
	}
	return ds, nil
}

func (p *sqliteProject) due(ctx context.Context, webhook string, now time.Time, limit int) ([]Delivery, error) {
	return p.query(ctx, "due deliveries", true, `SELECT `+deliveryColumns+`, body FROM `+deliveriesTable+
		` WHERE webhook = ? AND state = ? AND next_at <= ? ORDER BY next_at, seq LIMIT ?`, webhook, string(Pending), now.UnixMilli(), limit)
}

func (p *sqliteProject) deliveries(ctx context.Context, webhook string, limit int) ([]Delivery, error) {
	return p.query(ctx, "deliveries", false, `SELECT `+deliveryColumns+` FROM `+deliveriesTable+
		` WHERE webhook = ? ORDER BY seq DESC LIMIT ?`, webhook, limit)
}

func (p *sqliteProject) nextDue(ctx context.Context, webhooks []string) (time.Time, bool, error) {
	f, release, err := p.file()
	if err != nil {
		return time.Time{}, false, err
	}
	defer release()
	names, err := json.Marshal(webhooks)
	if err != nil {
		return time.Time{}, false, err
	}
	var at sql.NullInt64
	err = f.reader.QueryRowContext(ctx, `SELECT min(next_at) FROM `+deliveriesTable+` WHERE state = ? AND webhook IN (SELECT value FROM json_each(?))`, string(Pending), string(names)).Scan(&at)
	if noOutbox(err) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next due delivery of project %q: %w", p.id, err)
	}
	return millis(at), at.Valid, nil
}

func (p *sqliteProject) deliveryCounts(ctx context.Context) (map[string]DeliveryCounts, error) {
	f, release, err := p.file()
	if err != nil {
		return nil, err
	}
	defer release()
	out := map[string]DeliveryCounts{}
	rows, err := f.reader.QueryContext(ctx, `SELECT webhook, state, count(*) FROM `+deliveriesTable+` GROUP BY webhook, state`)
	if noOutbox(err) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("count deliveries of project %q: %w", p.id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var state DeliveryState
		var n int64
		if err := rows.Scan(&name, &state, &n); err != nil {
			return nil, fmt.Errorf("count deliveries of project %q: %w", p.id, err)
		}
		c := out[name]
		switch state {
		case Pending:
			c.Pending = n
		case Delivered:
			c.Delivered = n
		case Failed:
			c.Failed = n
		}
		out[name] = c
	}
	return out, rows.Err()
}

func (p *sqliteProject) attempted(ctx context.Context, ds []Delivery, keep int) error {
	err := p.inWrite(ctx, false, func(tx *sql.Tx) error {
		finished := map[string]bool{} // webhooks whose log grew
		for _, d := range ds {
			var at sql.NullInt64
			if !d.FinishedAt.IsZero() {
				at = sql.NullInt64{Int64: d.FinishedAt.UnixMilli(), Valid: true}
			}
			_, err := tx.ExecContext(ctx, `UPDATE `+deliveriesTable+` SET state = ?, attempts = ?, next_at = ?, finished_at = ?, latency_us = ?, status = ?, error = ? WHERE id = ?`,
				string(d.State), d.Attempts, d.NextAt.UnixMilli(), at, d.Latency.Microseconds(), d.Status, d.Error, d.ID)
			if err != nil {
				return err
			}
			finished[d.Webhook] = finished[d.Webhook] || d.State != Pending
		}
		for webhook, grew := range finished {
			if !grew {
				continue
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM `+deliveriesTable+` WHERE webhook = ?1 AND state != ?2 AND seq < (
				SELECT min(seq) FROM (SELECT seq FROM `+deliveriesTable+` WHERE webhook = ?1 AND state != ?2 ORDER BY seq DESC LIMIT ?3))`,
				webhook, string(Pending), keep)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record deliveries of project %q: %w", p.id, err)
	}
	return nil
}

func (p *sqliteProject) retry(ctx context.Context, webhook, id string, at time.Time) error {
	f, release, err := p.file()
	if err != nil {
		return err
	}
	defer release()
	res, err := f.writer.ExecContext(ctx, `UPDATE `+deliveriesTable+` SET state = ?, next_at = ?, finished_at = NULL WHERE webhook = ? AND id = ?`,
		string(Pending), at.UnixMilli(), webhook, id)
	if noOutbox(err) {
		return fmt.Errorf("delivery %q of webhook %q: %w", id, webhook, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("retry delivery %q of project %q: %w", id, p.id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("delivery %q of webhook %q: %w", id, webhook, ErrNotFound)
	}
	return nil
}

func (p *sqliteProject) reachable(ctx context.Context, webhook string, at time.Time) error {
	f, release, err := p.file()
	if err != nil {
		return err
	}
	defer release()
	_, err = f.writer.ExecContext(ctx, `UPDATE `+deliveriesTable+` SET next_at = ? WHERE webhook = ? AND state = ? AND status = 0 AND next_at > ?`,
		at.UnixMilli(), webhook, string(Pending), at.UnixMilli())
	if err != nil {
		return fmt.Errorf("deliveries of webhook %q of project %q: %w", webhook, p.id, err)
	}
	return nil
}

func (p *sqliteProject) webhookSecrets(ctx context.Context, names []string, generate func() (string, error), at time.Time) (map[string]WebhookSecret, error) {
	out := make(map[string]WebhookSecret, len(names))
	err := p.inWrite(ctx, false, func(tx *sql.Tx) error {
		for _, name := range names {
			var ws WebhookSecret
			err := tx.QueryRowContext(ctx, `SELECT secret FROM `+secretsTable+` WHERE name = ?`, name).Scan(&ws.Secret)
			if errors.Is(err, sql.ErrNoRows) {
				if ws.Secret, err = generate(); err != nil {
					return err
				}
				_, err = tx.ExecContext(ctx, `INSERT INTO `+secretsTable+` (name, secret) VALUES (?, ?)`, name, ws.Secret)
			}
			if err != nil {
				return err
			}
			if ws.Previous, err = previousSecrets(ctx, tx, name, at); err != nil {
				return err
			}
			out[name] = ws
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("webhook secrets of project %q: %w", p.id, err)
	}
	return out, nil
}

// previousSecrets answers the previous secrets of webhook name that still sign at at.
func previousSecrets(ctx context.Context, tx *sql.Tx, name string, at time.Time) ([]PreviousSecret, error) {
	rows, err := tx.QueryContext(ctx, `SELECT secret, until FROM `+previousTable+` WHERE name = ? AND until > ? ORDER BY until`, name, at.UnixMilli())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PreviousSecret
	for rows.Next() {
		var ps PreviousSecret
		var until int64
		if err := rows.Scan(&ps.Secret, &until); err != nil {
			return nil, err
		}
		ps.Until = time.UnixMilli(until).UTC()
		out = append(out, ps)
	}
	return out, rows.Err()
}

func (p *sqliteProject) setWebhookSecret(ctx context.Context, name, secret string, graceUntil, at time.Time) error {
	err := p.inWrite(ctx, false, func(tx *sql.Tx) error {
		if !graceUntil.After(at) {
			_, err := tx.ExecContext(ctx, `DELETE FROM `+previousTable+` WHERE name = ?`, name)
			if err != nil {
				return err
			}
		} else {
			// Ended secrets go; the one replaced signs until graceUntil.
			_, err := tx.ExecContext(ctx, `DELETE FROM `+previousTable+` WHERE name = ? AND until <= ?`, name, at.UnixMilli())
			if err == nil {
				_, err = tx.ExecContext(ctx, `INSERT INTO `+previousTable+` (name, secret, until) SELECT name, secret, ? FROM `+secretsTable+` WHERE name = ?
					ON CONFLICT (name, secret) DO UPDATE SET until = excluded.until`, graceUntil.UnixMilli(), name)
			}
			if err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO `+secretsTable+` (name, secret) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET secret = excluded.secret`, name, secret)
		return err
	})
	if err != nil {
		return fmt.Errorf("set the secret of webhook %q of project %q: %w", name, p.id, err)
	}
	return nil
}
