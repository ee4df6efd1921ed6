package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// FieldChange is a change of a field's definition that a table's records must follow.
type FieldChange struct {
	Field string
	// Convert asks that every stored value of the field convert to Type (see Convert); the
	// values are stored converted.
	Convert bool
	Type    FieldType
	// Require asks that every record have a value; Default, when not nil, is written into
	// the records that lack one.
	Require bool
	Default any
}

// FieldCheck is what a FieldChange finds in a table's records.
type FieldCheck struct {
	FieldChange
	// Rewrites counts the records whose value the change rewrites (converted to another
	// stored form, or given the default).
	Rewrites int64
	// Fails counts the records that keep the change from applying: a value that does not
	// convert, or no value and no default.
	Fails int64
	// Example is the uid of one failing record, and Value its stored value (a conversion's).
	Example string
	Value   json.RawMessage
}

// Migrate checks changes against every record of table; with apply, and when no record
// fails, it also rewrites the records that the changes touch, leaving their updatedAt as it
// is. The table is the one the Records serve, so it is checked under its new definition.
//
// On SQLite the check and the rewrite are one write transaction: writes wait for it, reads
// go on (they see the records as they were until it commits), and a record that fails rolls
// everything back. MongoDB (and FerretDB) has no such transaction for a whole collection:
// the records are rewritten as they are read, each with a compare-and-set on its updatedAt
// so that a concurrent write is never overwritten (the record is read again and converted
// again), and a record that fails is left as it is while the others are rewritten. Callers
// check first without apply, so that happens only when a write raced the change; readers
// convert what they find (Table.Fit), and applying again finishes the job.
func (r *Records) Migrate(ctx context.Context, table string, changes []FieldChange, apply bool) ([]FieldCheck, error) {
	t, err := r.table(table)
	if err != nil {
		return nil, err
	}
	checks := make([]FieldCheck, len(changes))
	for i, c := range changes {
		checks[i].FieldChange = c
		if c.Require && c.Default != nil {
			js, err := json.Marshal(c.Default)
			f, _ := t.Field(c.Field)
			v, ok := Convert(js, f.Type)
			if err != nil || !ok {
				return nil, fmt.Errorf("the default of %s.%s is not a %s", table, c.Field, f.Type)
			}
			checks[i].Default = v
		}
	}
	fn := func(rec Record) (map[string]any, error) { return migrateRecord(rec, checks) }
	if !apply {
		err = r.b.find(ctx, t, Query{}, func(rec Record) (bool, error) {
			_, err := fn(rec)
			return err == nil, err
		})
		return checks, err
	}
	fields := make([]string, len(changes))
	for i, c := range changes {
		fields[i] = c.Field
	}
	err = r.b.rewrite(ctx, t, fields, fn, func() bool {
		for _, c := range checks {
			if c.Fails > 0 {
				return false
			}
		}
		return true
	})
	return checks, err
}

// migrateRecord checks one record against every change, counting in checks, and answers the
// fields to set on it.
func migrateRecord(rec Record, checks []FieldCheck) (map[string]any, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(rec, &raw); err != nil {
		return nil, fmt.Errorf("decode record: %w", err)
	}
	var uid string
	_ = json.Unmarshal(raw[KeyUID], &uid)
	var set map[string]any
	put := func(k string, v any) {
		if set == nil {
			set = map[string]any{}
		}
		set[k] = v
	}
	fail := func(c *FieldCheck, v json.RawMessage) {
		if c.Fails == 0 {
			c.Example, c.Value = uid, v
		}
		c.Fails++
	}
	for i := range checks {
		c := &checks[i]
		v, has := raw[c.Field]
		if has && string(v) == "null" {
			has = false
		}
		if c.Convert && has {
			cv, ok := Convert(v, c.Type)
			if !ok {
				fail(c, v)
				continue
			}
			if !sameJSON(cv, v) {
				put(c.Field, cv)
				c.Rewrites++
			}
		}
		if c.Require && !has {
			if c.Default == nil {
				fail(c, nil)
				continue
			}
			put(c.Field, c.Default)
			c.Rewrites++
		}
	}
	return set, nil
}

// sameJSON reports whether the store writes v as raw: a converted value that would be
// stored as it is needs no rewrite (an Int read as a Float).
func sameJSON(v any, raw json.RawMessage) bool {
	var a, b bytes.Buffer
	return writeValue(&a, v) == nil && json.Compact(&b, raw) == nil && bytes.Equal(a.Bytes(), b.Bytes())
}

// CheckUnique reports the first unique index of table that its records break, as Ensure
// would (an *IndexError naming a duplicate value), without building any index; nil when the
// records allow every one.
func (r *Records) CheckUnique(ctx context.Context, table string) error {
	t, err := r.table(table)
	if err != nil {
		return err
	}
	for _, ix := range t.Indexes {
		if !ix.Unique {
			continue
		}
		vals, err := r.b.duplicate(ctx, t, ix)
		if err != nil {
			return err
		}
		if vals != nil {
			return &IndexError{Table: table, Index: ix, Value: vals, Err: errors.New("duplicate values")}
		}
	}
	return nil
}

// DropTable removes a table and its records, declared or not; a table that does not exist
// is no error.
func (r *Records) DropTable(ctx context.Context, table string) error {
	return r.b.dropTable(ctx, &Table{Name: table})
}

// recordTime reads a time the store wrote into a record.
func recordTime(raw json.RawMessage) (time.Time, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}
