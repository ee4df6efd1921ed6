package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// createOperators creates the tables of keys and of the audit log in platform.db.
func createOperators(ctx context.Context, f *sqliteFile) error {
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS operator_keys (
			name TEXT NOT NULL PRIMARY KEY,
			scope TEXT NOT NULL,
			hash TEXT NOT NULL UNIQUE,
			createdAt TEXT NOT NULL,
			expiresAt TEXT,
			lastUsed TEXT)`,
		`CREATE TABLE IF NOT EXISTS audit (
			seq INTEGER PRIMARY KEY AUTOINCREMENT,
			at TEXT NOT NULL,
			keyName TEXT NOT NULL,
			scope TEXT NOT NULL,
			client TEXT NOT NULL,
			action TEXT NOT NULL,
			project TEXT NOT NULL,
			target TEXT NOT NULL,
			diff TEXT NOT NULL,
			outcome TEXT NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS audit_at ON audit (at)`,
		`CREATE INDEX IF NOT EXISTS audit_project ON audit (project, at)`,
	} {
		if _, err := f.writer.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// sqliteOperators keeps keys in operator_keys and the audit log in audit, in platform.db.
type sqliteOperators struct{ f *sqliteFile }

const keyColumns = `name, scope, hash, createdAt, expiresAt, lastUsed`

func stampOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(TimeLayout)
}

func (o sqliteOperators) addKey(ctx context.Context, k StoredKey) error {
	_, err := o.f.writer.ExecContext(ctx, `INSERT INTO operator_keys (`+keyColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		k.Name, k.Scope, k.Hash, k.CreatedAt.UTC().Format(TimeLayout), stampOrNull(k.ExpiresAt), stampOrNull(k.LastUsed))
	if sqliteError(err) == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY {
		return fmt.Errorf("key %q: %w", k.Name, ErrKeyExists)
	}
	if err != nil {
		return fmt.Errorf("store key %q: %w", k.Name, err)
	}
	return nil
}

func (o sqliteOperators) keyByHash(ctx context.Context, hash string) (*StoredKey, error) {
	k, err := scanKey(o.f.reader.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM operator_keys WHERE hash = ?`, hash))
	if err != nil {
		return nil, fmt.Errorf("look up key: %w", err)
	}
	return k, nil
}

func (o sqliteOperators) keys(ctx context.Context) ([]StoredKey, error) {
	rows, err := o.f.reader.QueryContext(ctx, `SELECT `+keyColumns+` FROM operator_keys ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	defer rows.Close()
	var out []StoredKey
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, fmt.Errorf("list keys: %w", err)
		}
		out = append(out, *k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return out, nil
}

func (o sqliteOperators) removeKey(ctx context.Context, name string) (*StoredKey, error) {
	k, err := scanKey(o.f.writer.QueryRowContext(ctx, `DELETE FROM operator_keys WHERE name = ? RETURNING `+keyColumns, name))
	if err != nil {
		return nil, fmt.Errorf("revoke key %q: %w", name, err)
	}
	return k, nil
}

func (o sqliteOperators) touchKey(ctx context.Context, name string, at time.Time) error {
	if _, err := o.f.writer.ExecContext(ctx, `UPDATE operator_keys SET lastUsed = ? WHERE name = ?`, at.UTC().Format(TimeLayout), name); err != nil {
		return fmt.Errorf("key %q: last used: %w", name, err)
	}
	return nil
}

func scanKey(row interface{ Scan(...any) error }) (*StoredKey, error) {
	var k StoredKey
	var created string
	var expires, used sql.NullString
	if err := row.Scan(&k.Name, &k.Scope, &k.Hash, &created, &expires, &used); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	var err error
	if k.CreatedAt, err = parseStamp(created); err != nil {
		return nil, err
	}
	if expires.Valid {
		if k.ExpiresAt, err = parseStamp(expires.String); err != nil {
			return nil, err
		}
	}
	if used.Valid {
		if k.LastUsed, err = parseStamp(used.String); err != nil {
			return nil, err
		}
	}
	return &k, nil
}

func parseStamp(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q: %w", s, err)
	}
	return t.UTC(), nil
}

func (o sqliteOperators) appendAudit(ctx context.Context, e AuditEntry) error {
	diff, err := json.Marshal(e.Diff)
	if err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	if _, err := o.f.writer.ExecContext(ctx, `INSERT INTO audit (at, keyName, scope, client, action, project, target, diff, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.At.UTC().Format(TimeLayout), e.Key, e.Scope, e.Client, e.Action, e.Project, e.Target, string(diff), e.Outcome); err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

func (o sqliteOperators) audit(ctx context.Context, q AuditQuery) ([]AuditEntry, error) {
	query := `SELECT at, keyName, scope, client, action, project, target, diff, outcome FROM audit WHERE at >= ?`
	args := []any{q.Since.UTC().Format(TimeLayout)}
	if q.Project != "" {
		query += ` AND project = ?`
		args = append(args, q.Project)
	}
	if q.Action != "" {
		query += ` AND action = ?`
		args = append(args, q.Action)
	}
	if q.Newest {
		query += ` ORDER BY seq DESC`
	} else {
		query += ` ORDER BY seq`
	}
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	rows, err := o.f.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var e AuditEntry
		var at, diff string
		if err := rows.Scan(&at, &e.Key, &e.Scope, &e.Client, &e.Action, &e.Project, &e.Target, &diff, &e.Outcome); err != nil {
			return nil, fmt.Errorf("read the audit log: %w", err)
		}
		if e.At, err = parseStamp(at); err != nil {
			return nil, fmt.Errorf("read the audit log: %w", err)
		}
		if err := json.Unmarshal([]byte(diff), &e.Diff); err != nil {
			return nil, fmt.Errorf("read the audit log: diff: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	return out, nil
}

func (o sqliteOperators) pruneAudit(ctx context.Context, before time.Time) (int64, error) {
	res, err := o.f.writer.ExecContext(ctx, `DELETE FROM audit WHERE at < ?`, before.UTC().Format(TimeLayout))
	if err != nil {
		return 0, fmt.Errorf("prune the audit log: %w", err)
	}
	return res.RowsAffected()
}
