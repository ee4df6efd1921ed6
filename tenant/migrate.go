package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/platform-dev/platform/store"
)

// ApplyOptions say how Apply treats the stored records.
type ApplyOptions struct {
	// DryRun checks the document against the records and answers what applying it would
	// do, applying nothing.
	DryRun bool
	// DropData lets a table that holds records go, and drops its records.
	DropData bool
}

// DataReport is what applying a document does to the stored records.
type DataReport struct {
	// Data lists what the apply does to records: values converted, defaults written,
	// tables dropped.
	Data []string `json:"data"`
	// Warnings lists the records a removed field, relation or table leaves behind.
	Warnings []string `json:"warnings"`
	// Problems lists what in the records refuses the document, at its path.
	Problems []Problem `json:"problems"`
}

// dataPlan is what Apply does to the records once the checks pass.
type dataPlan struct {
	records *store.Records                 // under the new definition
	changes map[string][]store.FieldChange // by table
	drop    []string                       // tables whose records go
}

// Apply is Put with the data checks: every change is checked against the stored records
// first (type changes convert, new required fields have a value, removed tables with records
// need DropData), and a document the records refuse is a *DocumentError at the paths of the
// fields and tables concerned. With DryRun it only answers the report, and cur is p as it
// would be applied (not stored: no version).
func (r *Registry) Apply(ctx context.Context, p *Project, opts ApplyOptions) (prev, cur *Project, rep *DataReport, err error) {
	if err := r.refuseDeleted(ctx, p.ID); err != nil {
		return nil, nil, nil, err
	}
	if err := r.checkTables(ctx, p); err != nil {
		return nil, nil, nil, err
	}
	if err := p.checkWebhookTargets(r.opts.Webhooks.AllowPrivate); err != nil {
		return nil, nil, nil, err
	}
	prev, err = r.Get(ctx, p.ID)
	if errors.Is(err, ErrProjectNotFound) {
		prev, err = nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	rep, plan, err := r.checkData(ctx, prev, p, opts)
	if err != nil {
		return prev, nil, rep, err
	}
	if opts.DryRun {
		return prev, p, rep, nil
	}
	if len(rep.Problems) > 0 {
		return nil, nil, nil, &DocumentError{Problems: rep.Problems}
	}
	prev, cur, err = r.put(ctx, p, func(ctx context.Context) error { return plan.migrate(ctx) })
	if err != nil {
		return nil, nil, nil, err
	}
	for _, t := range plan.drop {
		if err := plan.records.DropTable(ctx, t); err != nil {
			return nil, nil, nil, fmt.Errorf("drop table %s of %q: %w", t, p.ID, err)
		}
	}
	return prev, cur, rep, nil
}

// migrate rewrites the records as the checked changes say. A record that a write changed
// since the check so that it no longer converts refuses the document.
func (d *dataPlan) migrate(ctx context.Context) error {
	de := &DocumentError{}
	for _, t := range sortedKeys(d.changes) {
		checks, err := d.records.Migrate(ctx, t, d.changes[t], true)
		if err != nil {
			return fmt.Errorf("migrate table %s: %w", t, err)
		}
		for _, c := range checks {
			if c.Fails > 0 {
				de.Problems = append(de.Problems, checkProblem(t, c))
			}
		}
	}
	if len(de.Problems) > 0 {
		return de
	}
	return nil
}

// checkData reads what the records say about the change from prev to cur. A dry run also
// looks for the duplicates a new unique index would find (an apply finds them building it).
func (r *Registry) checkData(ctx context.Context, prev, cur *Project, opts ApplyOptions) (*DataReport, *dataPlan, error) {
	rep := &DataReport{Data: []string{}, Warnings: []string{}, Problems: []Problem{}}
	plan := &dataPlan{changes: map[string][]store.FieldChange{}}
	var err error
	if plan.records, err = r.stores.ProjectRecords(ctx, cur.ID, cur.MongoURI, cur.StoreTables()); err != nil {
		return nil, nil, err
	}
	if prev == nil {
		return rep, plan, nil
	}
	old, err := r.stores.ProjectRecords(ctx, prev.ID, prev.MongoURI, prev.StoreTables())
	if err != nil {
		return nil, nil, err
	}
	// holding counts the records of table that have a value for field.
	holding := func(table, field string) (int64, error) {
		return old.Count(ctx, table, store.Compare(field, store.IsNull, false))
	}
	for _, name := range unionKeys(prev.Tables, cur.Tables) {
		a, inA := prev.Tables[name]
		b, inB := cur.Tables[name]
		switch {
		case !inA:
			continue
		case !inB:
			n, err := old.Count(ctx, name, store.All)
			if err != nil {
				return nil, nil, fmt.Errorf("count the records of %s: %w", name, err)
			}
			switch {
			case n == 0:
			case opts.DropData:
				rep.Data = append(rep.Data, fmt.Sprintf("- table %s: %s dropped", name, records(n)))
				plan.drop = append(plan.drop, name)
			default:
				rep.Problems = append(rep.Problems, Problem{Path: "tables." + name, Message: fmt.Sprintf(
					"the table holds %s, which removing it drops: apply with dropData=true (platform apply --drop-data) to drop them, or keep the table", records(n))})
			}
			continue
		}
		for _, f := range sortedKeys(a.Fields) {
			if _, ok := b.Fields[f]; ok {
				continue
			}
			n, err := holding(name, f)
			if err != nil {
				return nil, nil, fmt.Errorf("count the values of %s.%s: %w", name, f, err)
			}
			if n > 0 {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("- field %s.%s: %s keep a value, no longer served (declare the field again to serve it)", name, f, records(n)))
			}
		}
		for _, rel := range sortedKeys(a.Relations) {
			if _, ok := b.Relations[rel]; ok {
				continue
			}
			rd := a.Relations[rel]
			table, field := name, rd.Field
			if field == "" {
				table, field = rd.Table, rd.ForeignField
			}
			n, err := holding(table, field)
			if err != nil {
				return nil, nil, fmt.Errorf("count the values of %s.%s: %w", table, field, err)
			}
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("- relation %s.%s: the links stay in %s.%s (%s hold one)", name, rel, table, field, records(n)))
		}
		if opts.DryRun && newUnique(a, b) {
			var de *DocumentError
			if err := indexProblem(cur, plan.records.CheckUnique(ctx, name)); errors.As(err, &de) {
				rep.Problems = append(rep.Problems, de.Problems...)
			} else if err != nil {
				return nil, nil, fmt.Errorf("check the unique indexes of %s: %w", name, err)
			}
		}
		changes := fieldChanges(a, b)
		if len(changes) == 0 {
			continue
		}
		checks, err := plan.records.Migrate(ctx, name, changes, false)
		if err != nil {
			return nil, nil, fmt.Errorf("check the records of %s: %w", name, err)
		}
		plan.changes[name] = changes
		for _, c := range checks {
			switch {
			case c.Fails > 0:
				rep.Problems = append(rep.Problems, checkProblem(name, c))
			case c.Rewrites > 0 && c.Convert && c.Require:
				rep.Data = append(rep.Data, fmt.Sprintf("~ field %s.%s: %s converted to %s or given the default", name, c.Field, records(c.Rewrites), c.Type))
			case c.Rewrites > 0 && c.Convert:
				rep.Data = append(rep.Data, fmt.Sprintf("~ field %s.%s: %s converted from %s to %s", name, c.Field, records(c.Rewrites), a.Fields[c.Field].Type, c.Type))
			case c.Rewrites > 0:
				def, _ := json.Marshal(c.Default)
				rep.Data = append(rep.Data, fmt.Sprintf("~ field %s.%s: %s given the default %s", name, c.Field, records(c.Rewrites), def))
			}
		}
	}
	return rep, plan, nil
}

// newUnique reports whether b declares a unique index that a does not.
func newUnique(a, b TableDoc) bool {
	for _, ix := range b.Indexes {
		if ix.Unique && !slices.ContainsFunc(a.Indexes, func(old IndexDoc) bool { return old.Unique && slices.Equal(old.Fields, ix.Fields) }) {
			return true
		}
	}
	return false
}

// fieldChanges are the changes from a to b that the records must follow: a field's new type,
// and a field that becomes required.
func fieldChanges(a, b TableDoc) []store.FieldChange {
	var out []store.FieldChange
	for _, f := range sortedKeys(b.Fields) {
		fb := b.Fields[f]
		fa, existed := a.Fields[f]
		c := store.FieldChange{Field: f}
		if existed && fa.Type != fb.Type {
			c.Convert = true
			c.Type, _ = fb.fieldType() // validated by ParseDocument
		}
		if fb.Required && (!existed || !fa.Required) {
			c.Require, c.Default = true, fb.Default
		}
		if c.Convert || c.Require {
			out = append(out, c)
		}
	}
	return out
}

// checkProblem says why the records of table refuse a field change.
func checkProblem(table string, c store.FieldCheck) Problem {
	path := "tables." + table + ".fields." + c.Field
	if c.Convert && c.Value != nil {
		return Problem{Path: path, Message: fmt.Sprintf(
			"%s a value that does not convert to %s without loss, such as %s (record %s): change those values first, or choose a type they convert to",
			hold(c.Fails), c.Type, c.Value, c.Example)}
	}
	return Problem{Path: path, Message: fmt.Sprintf(
		"the field is required but %s no value, such as record %s: give the field a default, which is written into them, or set their values first",
		hold(c.Fails), c.Example)}
}

// records is "1 record" or "n records".
func records(n int64) string {
	if n == 1 {
		return "1 record"
	}
	return fmt.Sprintf("%d records", n)
}

// hold is "1 record holds" or "n records hold".
func hold(n int64) string {
	if n == 1 {
		return "1 record holds"
	}
	return records(n) + " hold"
}
