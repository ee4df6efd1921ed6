package store

import (
	"context"
	"fmt"
	"strings"
)

// orderCut bounds a page that no index orders by what the same query answered before. Such
// a page scans every row its filter lets through, and SQLite keeps the best offset+limit
// of them in a sorter that checks each new row against the worst kept one: with half the
// rows of a table matching, that check and the uid read for it were a quarter of the
// query's time (docs/performance.md, "Against PocketBase"). The first order key of the
// last row of the previous answer bounds the rows the next run chooses from (key >= value
// descending): the rows at or before it in the order, a prefix of the order whatever the
// data, so while that prefix holds a whole page it holds the page, and the sorter sees
// only the few rows that pass the bound. When writes since have left the prefix short
// (each row of the bounded run says how many it chose), the query runs again without the
// bound. A page filled again learns its new bound.
type orderCut struct {
	key   string
	desc  bool
	value any // nil: no bound
}

// cutOf is the cut of q, or nil when q is not a page that a scan orders: a page on a field
// that starts no declared index (the keys the service keeps all have one), and no ranked
// search or fetch by uid.
func cutOf(t *Table, q Query) *orderCut {
	if q.Limit <= 0 || len(q.Order) == 0 || q.Filter.oneUID() {
		return nil
	}
	if _, _, searching := q.Filter.search(); searching {
		return nil
	}
	o := q.Order[0]
	if ft, ok := t.KeyType(o.Key); !ok || serviceKey(o.Key) || ft.List || ft.Scalar == JSON {
		return nil
	}
	for _, ix := range t.Indexes {
		if ix.Fields[0] == o.Key {
			return nil
		}
	}
	return &orderCut{key: o.Key, desc: o.Desc}
}

// bound is the condition on the key's expression x that keeps the rows at or before the
// parameter arg in the order; a missing value (NULL) comes first ascending, last
// descending.
func (c *orderCut) bound(x, arg string) string {
	if c.desc {
		return x + " >= " + arg
	}
	return "(" + x + " <= " + arg + " OR " + x + " IS NULL)"
}

// findCut answers find for a page with a cut.
func (f *sqliteFile) findCut(ctx context.Context, t *Table, cols columns, q Query, cut *orderCut, fn func(Record) (bool, error)) error {
	query, args, err := findSQL(t, cols, q, cut)
	if err != nil || query == "" {
		return err
	}
	memo := cutKey(query, args)
	f.mu.Lock()
	value, bounded := f.cuts[memo]
	f.mu.Unlock()
	if bounded {
		b := *cut
		b.value = value
		bq, bargs, err := findSQL(t, cols, q, &b)
		if err != nil {
			return err
		}
		stmt, err := f.stmt(ctx, false, bq)
		if err != nil {
			return sqlFailed(ctx, "find "+t.Name, err)
		}
		var key any
		var chosen int64
		short := true
		n, last := int64(0), any(nil)
		done, err := scanRecords(ctx, ctx, t, stmt, bargs, []any{&key, &chosen}, func(rec Record) (bool, error) {
			if short = chosen < q.Limit; short {
				return false, nil
			}
			n, last = n+1, key
			return fn(rec)
		})
		if err != nil || !short {
			if err == nil && (done || n == q.Limit) {
				f.learnCut(memo, n == q.Limit, last)
			}
			return err
		}
		// Writes since have left fewer rows than a page before the bound: nothing was
		// handed out, and the query without it answers.
	}
	stmt, err := f.stmt(ctx, false, query)
	if err != nil {
		return sqlFailed(ctx, "find "+t.Name, err)
	}
	var key, last any
	n := int64(0)
	done, err := scanRecords(ctx, ctx, t, stmt, args, []any{&key}, func(rec Record) (bool, error) {
		n, last = n+1, key
		return fn(rec)
	})
	if err == nil && (done || n == q.Limit) {
		f.learnCut(memo, n == q.Limit, last)
	}
	return err
}

// learnCut keeps the bound of the statement memo after a run that read its whole page (or
// every row it had): the key of its last row when it filled the page; none otherwise, or
// for a missing key.
func (f *sqliteFile) learnCut(memo string, full bool, last any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !full || last == nil {
		delete(f.cuts, memo)
		return
	}
	if _, ok := f.cuts[memo]; !ok && len(f.cuts) >= sqliteStatements {
		// As many as the statements a file keeps; any will do.
		for old := range f.cuts {
			delete(f.cuts, old)
			break
		}
	}
	f.cuts[memo] = last
}

// cutKey is what a bound is kept by: the statement and its parameters.
func cutKey(query string, args []any) string {
	var b strings.Builder
	b.WriteString(query)
	for _, a := range args {
		fmt.Fprintf(&b, "\x00%T\x00%v", a, a)
	}
	return b.String()
}
