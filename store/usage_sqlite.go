package store

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// sqliteUsage keeps usage in platform.db's table usage, one row per project, span and start.
type sqliteUsage struct{ f *sqliteFile }

func (d *sqliteDatabases) usage() usageBackend { return sqliteUsage{d.control} }

// createUsage creates the usage table in platform.db.
func createUsage(ctx context.Context, f *sqliteFile) error {
	var cols strings.Builder
	for _, c := range append(append([]string{}, usageCounters...), usageGauges...) {
		cols.WriteString(c + " INTEGER NOT NULL DEFAULT 0,\n")
	}
	_, err := f.writer.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS usage (
		project TEXT NOT NULL,
		span TEXT NOT NULL,
		start TEXT NOT NULL,
		`+cols.String()+`
		PRIMARY KEY (span, project, start)) WITHOUT ROWID`)
	return err
}

var (
	usageColumns = strings.Join(append(append([]string{}, usageCounters...), usageGauges...), ", ")
	usageUpsert  = func() string {
		var set []string
		for _, c := range usageCounters {
			set = append(set, c+" = "+c+" + excluded."+c)
		}
		for _, g := range usageGauges {
			set = append(set, g+" = max("+g+", excluded."+g+")")
		}
		return `INSERT INTO usage (project, span, start, ` + usageColumns + `) VALUES (?, ?, ?` +
			strings.Repeat(", ?", len(usageCounters)+len(usageGauges)) + `)
			ON CONFLICT (span, project, start) DO UPDATE SET ` + strings.Join(set, ", ")
	}()
	usageSums = func() string {
		var sel []string
		for _, c := range usageCounters {
			sel = append(sel, "sum("+c+")")
		}
		for _, g := range usageGauges {
			sel = append(sel, "max("+g+")")
		}
		return strings.Join(sel, ", ")
	}()
)

func (u sqliteUsage) add(ctx context.Context, hours, days []Usage) error {
	tx, err := u.f.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	stmt, err := tx.PrepareContext(ctx, usageUpsert)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for s, rows := range map[span][]Usage{spanHour: hours, spanDay: days} {
		for i := range rows {
			r := &rows[i]
			args := []any{r.Project, string(s), r.Start.Format(TimeLayout)}
			for _, p := range append(r.counters(), r.gauges()...) {
				args = append(args, *p)
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

func (u sqliteUsage) rows(ctx context.Context, s span, project string, from, to time.Time) ([]Usage, error) {
	q := `SELECT project, start, ` + usageColumns + ` FROM usage WHERE span = ? AND start >= ? AND start < ?`
	args := []any{string(s), from.Format(TimeLayout), to.Format(TimeLayout)}
	if project != "" {
		q += ` AND project = ?`
		args = append(args, project)
	}
	rows, err := u.f.reader.QueryContext(ctx, q+` ORDER BY project, start`, args...)
	if err != nil {
		return nil, err
	}
	return scanUsage(rows, true)
}

func (u sqliteUsage) totals(ctx context.Context, s span, from, to time.Time) ([]Usage, error) {
	rows, err := u.f.reader.QueryContext(ctx, `SELECT project, `+usageSums+` FROM usage
		WHERE span = ? AND start >= ? AND start < ? GROUP BY project ORDER BY project`,
		string(s), from.Format(TimeLayout), to.Format(TimeLayout))
	if err != nil {
		return nil, err
	}
	return scanUsage(rows, false)
}

func (u sqliteUsage) prune(ctx context.Context, s span, before time.Time) error {
	_, err := u.f.writer.ExecContext(ctx, `DELETE FROM usage WHERE span = ? AND start < ?`, string(s), before.Format(TimeLayout))
	return err
}

// scanUsage reads rows of project, start (withStart) and the usage columns.
func scanUsage(rows *sql.Rows, withStart bool) ([]Usage, error) {
	defer rows.Close()
	var out []Usage
	for rows.Next() {
		var u Usage
		var start string
		dest := []any{&u.Project}
		if withStart {
			dest = append(dest, &start)
		}
		for _, p := range append(u.counters(), u.gauges()...) {
			dest = append(dest, p)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if withStart {
			t, err := time.Parse(TimeLayout, start)
			if err != nil {
				return nil, err
			}
			u.Start = t.UTC()
		}
		out = append(out, u)
	}
	return out, rows.Err()
}
