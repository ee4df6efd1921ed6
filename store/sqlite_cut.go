package store

import (
	"context"
	"crypto/sha256"

	lru "github.com/hashicorp/golang-lru/v2"
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
// that starts no declared index (uid, _owner and createdAt start indexes of the service's,
// updatedAt none), and no ranked search or fetch by uid.
func cutOf(t *Table, q Query) *orderCut {
	if q.Limit <= 0 || len(q.Order) == 0 || q.Filter.oneUID() {
		return nil
	}
	if _, _, searching := q.Filter.search(); searching {
		return nil
	}
	o := q.Order[0]
	switch ft, ok := t.KeyType(o.Key); {
	case !ok || ft.List || ft.Scalar == JSON, o.Key == KeyUID, o.Key == KeyOwner, o.Key == KeyCreatedAt:
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
	value, bounded := f.cuts.Get(memo)
	run, runArgs := query, args
	if bounded {
		b := *cut
		b.value = value
		if run, runArgs, err = findSQL(t, cols, q, &b); err != nil {
			return err
		}
	}
	for {
		stmt, err := f.stmt(ctx, false, run)
		if err != nil {
			return sqlFailed(ctx, "find "+t.Name, err)
		}
		var key, last any
		var n, chosen int64
		extra := []any{&key}
		if bounded {
			extra = append(extra, &chosen)
		}
		short := bounded
		done, err := scanRecords(ctx, ctx, t, stmt, runArgs, extra, func(rec Record) (bool, error) {
			if short = bounded && chosen < q.Limit; short {
				return false, nil
			}
			n, last = n+1, key
			return fn(rec)
		})
		switch {
		case err != nil:
			return err
		case short:
			// Writes since have left fewer rows than a page before the bound: nothing was
			// handed out, and the query without it answers.
			run, runArgs, bounded = query, args, false
			continue
		case done || n == q.Limit:
			f.learnCut(memo, n == q.Limit, last)
		}
		return nil
	}
}

// learnCut keeps the bound of the statement memo after a run that read its whole page (or
// every row it had): the key of its last row when it filled the page; none otherwise, or
// for a missing key.
func (f *sqliteFile) learnCut(memo cutMemo, full bool, last any) {
	if !full || last == nil || cutTooLong(last) {
		f.cuts.Remove(memo)
		return
	}
	f.cuts.Add(memo, last)
}

// newCutCache keeps as many bounds as the statements a file keeps, the least used going
// first.
func newCutCache() *lru.Cache[cutMemo, any] {
	c, _ := lru.New[cutMemo, any](sqliteStatements) // a positive size never fails
	return c
}

// cutTooLong says that a key is too long to keep as a bound (a long text is rarely an
// order's key, and 256 of them would hold megabytes).
func cutTooLong(v any) bool {
	switch v := v.(type) {
	case string:
		return len(v) > 1024
	case []byte:
		return len(v) > 1024
	}
	return false
}

// cutMemo is what a bound is kept by: see cutKey.
type cutMemo [sha256.Size]byte

// cutKey is what a bound is kept by: a hash of the statement and its parameters as the
// count cache writes them (argsKey), whose size does not grow with theirs. Two pages that
// share one only make each other's bound wrong, which costs a run without it, never a
// wrong answer.
func cutKey(query string, args []any) cutMemo {
	h := sha256.New()
	h.Write([]byte(query))
	h.Write([]byte{0})
	h.Write([]byte(argsKey(args)))
	return cutMemo(h.Sum(nil))
}
