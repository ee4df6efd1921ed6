package store

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultSlowQuery is how long a find or count takes before its project's slow-query log
// keeps it, unless Config.SlowQuery says otherwise.
const DefaultSlowQuery = 100 * time.Millisecond

// slowQueryShapes bounds the shapes one project's log keeps; past it the shape seen longest
// ago makes room.
const slowQueryShapes = 100

// rowsReadEvery is how often the rows a shape reads are measured again: measuring costs a
// query plan and, for a scan, a count of the table.
const rowsReadEvery = time.Minute

// QueryShape is what a query asked, without its values: the table, the fields it compared
// for equality (eq, in, has), with a range (gt, gte, lt, lte, startsWith) or otherwise (ne,
// contains, and anything under or and not, which no index serves alone), and its order.
// Keys the service keeps (uid, _owner, createdAt, updatedAt) have indexes of their own and
// are left out of the fields.
type QueryShape struct {
	Table string   `json:"table"`
	Count bool     `json:"count"`
	Equal []string `json:"equal"`
	Range []string `json:"range"`
	Other []string `json:"other"`
	// Order is the order's keys before uid, each "field" or "field desc".
	Order []string `json:"order"`
}

// SlowQuery is a shape of the slow-query log: how often it was slow, how long it took, and
// the rows its last measured run read and returned (a count returns the rows it counted).
// RowsRead is -1 where the backend cannot tell (MongoDB).
type SlowQuery struct {
	QueryShape
	Times        int64         `json:"times"`
	Total        time.Duration `json:"-"`
	Max          time.Duration `json:"-"`
	RowsRead     int64         `json:"rowsRead"`
	RowsReturned int64         `json:"rowsReturned"`
	LastSeen     time.Time     `json:"lastSeen"`
	measured     time.Time
}

// SlowLog is one project's log of slow queries, by shape, bounded to slowQueryShapes. It is
// kept in memory: a restart empties it and each replica keeps its own, which serves its
// purpose (the shapes that are slow now come back with the traffic that makes them slow)
// without a write on the path of every slow read.
type SlowLog struct {
	mu     sync.Mutex
	shapes map[string]*SlowQuery
}

// slowLogs are the logs of every project of a Stores.
type slowLogs struct {
	threshold time.Duration
	mu        sync.Mutex
	logs      map[string]*SlowLog
}

func (s *slowLogs) of(project string) *SlowLog {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.logs[project]
	if !ok {
		l = &SlowLog{shapes: map[string]*SlowQuery{}}
		s.logs[project] = l
	}
	return l
}

// SlowQueries answers project's slow-query log, most rows read first.
func (s *Stores) SlowQueries(project string) []SlowQuery {
	return s.slow.of(project).list()
}

func (l *SlowLog) list() []SlowQuery {
	l.mu.Lock()
	out := make([]SlowQuery, 0, len(l.shapes))
	for _, q := range l.shapes {
		out = append(out, *q)
	}
	l.mu.Unlock()
	slices.SortFunc(out, func(a, b SlowQuery) int {
		if c := -cmpInt(a.Times*a.RowsRead, b.Times*b.RowsRead); c != 0 {
			return c
		}
		return strings.Compare(a.key(), b.key())
	})
	return out
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// key identifies a shape in the log.
func (s QueryShape) key() string {
	var b strings.Builder
	b.WriteString(s.Table)
	if s.Count {
		b.WriteString(" count")
	}
	for _, part := range [][]string{s.Equal, s.Range, s.Other} {
		b.WriteString(" |" + strings.Join(part, ","))
	}
	b.WriteString(" >" + strings.Join(s.Order, ","))
	return b.String()
}

// AvgMillis and MaxMillis are the shape's times in milliseconds.
func (q SlowQuery) AvgMillis() float64 {
	return float64(q.Total.Microseconds()) / 1000 / float64(max(q.Times, 1))
}

func (q SlowQuery) MaxMillis() float64 { return float64(q.Max.Microseconds()) / 1000 }

// record adds one slow run of shape; measure, when the shape's rows were not measured
// lately, answers the rows the run read.
func (l *SlowLog) record(shape QueryShape, took time.Duration, returned int64, measure func() int64) {
	key, now := shape.key(), time.Now()
	l.mu.Lock()
	q, ok := l.shapes[key]
	if !ok {
		if len(l.shapes) >= slowQueryShapes {
			var oldest string
			for k, o := range l.shapes {
				if oldest == "" || o.LastSeen.Before(l.shapes[oldest].LastSeen) {
					oldest = k
				}
			}
			delete(l.shapes, oldest)
		}
		q = &SlowQuery{QueryShape: shape, RowsRead: -1}
		l.shapes[key] = q
	}
	q.Times++
	q.Total += took
	q.Max = max(q.Max, took)
	q.LastSeen = now
	q.RowsReturned = returned
	stale := now.Sub(q.measured) >= rowsReadEvery
	if stale {
		q.measured = now
	}
	l.mu.Unlock()
	if !stale {
		return
	}
	read := measure()
	l.mu.Lock()
	q.RowsRead = read
	l.mu.Unlock()
}

// shapeOf is the shape of a query on t.
func shapeOf(t *Table, f Filter, order []Order, count bool) QueryShape {
	s := QueryShape{Table: t.Name, Count: count, Equal: []string{}, Range: []string{}, Other: []string{}, Order: []string{}}
	var walk func(f Filter, top bool)
	walk = func(f Filter, top bool) {
		switch f.kind {
		case kindAnd:
			for _, p := range f.parts {
				walk(p, top)
			}
		case kindOr, kindNot:
			for _, p := range f.parts {
				walk(p, false)
			}
		case kindCmp:
			if serviceKey(f.key) {
				return
			}
			switch {
			case !top:
				s.Other = append(s.Other, f.key)
			case f.op == Eq && f.value != nil, f.op == In, f.op == Has:
				s.Equal = append(s.Equal, f.key)
			case f.op == Gt, f.op == Gte, f.op == Lt, f.op == Lte, f.op == StartsWith:
				s.Range = append(s.Range, f.key)
			default:
				s.Other = append(s.Other, f.key)
			}
		}
	}
	walk(f, true)
	for _, part := range []*[]string{&s.Equal, &s.Range, &s.Other} {
		slices.Sort(*part)
		*part = slices.Compact(*part)
	}
	if !count {
		for _, o := range order {
			if o.Key == KeyUID {
				break
			}
			k := o.Key
			if o.Desc {
				k += " desc"
			}
			s.Order = append(s.Order, k)
		}
	}
	return s
}

// Advice is the index the advisor names for a slow shape, and what it would save.
type Advice struct {
	SlowQuery
	// Index is the fields of the index that would serve the shape; nil when none can (a
	// filter that only compares otherwise, or a list or JSON field).
	Index []string `json:"index"`
	// Declared says that the table declares that index already (the log holds runs from
	// before it was).
	Declared bool `json:"declared"`
	// RowsSaved is the rows the shape's runs would not have read with the index: for each
	// run, the rows read beyond those returned (-1 when the rows read are not known).
	RowsSaved int64 `json:"rowsSaved"`
	// Why says how the index serves the shape, or why none does.
	Why string `json:"why"`
}

// Advise names, for each slow shape of tables, the index that would serve it: the fields
// compared for equality, then the order's fields (so the index hands the records in order),
// or, without an order, the first field compared with a range. An index with those fields
// first answers the shape from the index: its equality part, then the range or the order,
// reading about the rows it returns.
func Advise(tables []Table, slow []SlowQuery) []Advice {
	byName := map[string]*Table{}
	for i := range tables {
		t := tables[i]
		t.index()
		byName[t.Name] = &t
	}
	out := []Advice{}
	for _, q := range slow {
		t, ok := byName[q.Table]
		if !ok {
			continue // a table the project no longer has
		}
		a := Advice{SlowQuery: q, RowsSaved: -1}
		if q.RowsRead >= 0 {
			a.RowsSaved = max(q.RowsRead-q.RowsReturned, 0) * q.Times
		}
		fields, why := indexFor(t, q.QueryShape)
		if fields == nil {
			a.Why = why
			out = append(out, a)
			continue
		}
		a.Index, a.Why = fields, why
		for _, ix := range t.Indexes {
			if len(ix.Fields) >= len(fields) && slices.Equal(ix.Fields[:len(fields)], fields) {
				a.Declared = true
			}
		}
		out = append(out, a)
	}
	return out
}

// indexFor is the fields of the index that serves shape on t, and how; nil and why not
// when no index does.
func indexFor(t *Table, s QueryShape) ([]string, string) {
	indexable := func(k string) bool {
		ft, ok := t.KeyType(k)
		return ok && !ft.List && ft.Scalar != JSON && !serviceKey(k)
	}
	var fields []string
	for _, k := range s.Equal {
		if indexable(k) {
			fields = append(fields, k)
		}
	}
	why := ""
	if len(fields) > 0 {
		why = "finds the records equal on " + strings.Join(fields, ", ")
	}
	ordered := false
	if !s.Count && len(s.Order) > 0 {
		// The order's keys follow, as long as they are fields an index holds, all in one
		// direction (an index is read forwards or backwards, not both at once).
		var keys []string
		_, desc := strings.CutSuffix(s.Order[0], " desc")
		for _, o := range s.Order {
			k, d := strings.CutSuffix(o, " desc")
			if !indexable(k) || d != desc || slices.Contains(fields, k) {
				break
			}
			keys = append(keys, k)
		}
		if len(keys) > 0 {
			fields = append(fields, keys...)
			ordered = true
			why = thenJoin(why, "hands them in the order asked, so a page stops at its limit instead of sorting every match")
		}
	}
	if !ordered {
		for _, k := range s.Range {
			if indexable(k) && !slices.Contains(fields, k) {
				fields = append(fields, k)
				why = thenJoin(why, "reads only the range of "+k)
				break
			}
		}
	}
	if len(fields) == 0 {
		return nil, "no index serves this shape: it compares no field for equality or with a range, and orders by none an index holds (contains, ne, or and not read every record)"
	}
	if s.Count {
		why += "; the count is answered from the index alone"
	}
	return fields, strings.ToUpper(why[:1]) + why[1:]
}

func thenJoin(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", then " + b
}

// slowRun measures one find or count for the slow-query log: done, told the rows returned,
// records the run if it took at least the threshold.
func (c countingBackend) slowRun(ctx context.Context, t *Table, q Query, count bool) func(returned int64) {
	if c.slow == nil {
		return func(int64) {}
	}
	began := time.Now()
	return func(returned int64) {
		took := time.Since(began)
		if took < c.slowAfter {
			return
		}
		shape := shapeOf(t, q.Filter, q.Order, count)
		if len(shape.Equal)+len(shape.Range)+len(shape.Other)+len(shape.Order) == 0 {
			return // a read of everything, which no index makes shorter
		}
		c.slow.record(shape, took, returned, func() int64 {
			r, ok := c.backend.(rowsReader)
			if !ok {
				return -1
			}
			n, err := r.rowsRead(context.WithoutCancel(ctx), t, q, count, returned)
			if err != nil {
				return -1
			}
			return n
		})
	}
}

// rowsReader is a backend that can tell how many rows a query read.
type rowsReader interface {
	rowsRead(ctx context.Context, t *Table, q Query, count bool, returned int64) (int64, error)
}

// rowsRead tells the rows a query read from its plan (SQLite counts no rows a statement
// visits where a caller can see them): a plan that scans the table, or an index from end to
// end, to filter or sort reads every row, and the table's count says how many; a plan that
// searches an index reads about the rows it returns (and those it skips with an offset).
func (p *sqliteProject) rowsRead(ctx context.Context, t *Table, q Query, count bool, returned int64) (int64, error) {
	f, cols, release, err := p.fileFor(ctx, t)
	if err != nil {
		return 0, err
	}
	defer release()
	query, args, err := findSQL(t, cols, q, nil)
	if count {
		query, args, err = countSQL(t, cols, q.Filter)
	}
	if err != nil || query == "" {
		return 0, err
	}
	rows, err := f.reader.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return 0, err
	}
	scan, sorts := false, false
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			rows.Close()
			return 0, err
		}
		scan = scan || strings.HasPrefix(detail, "SCAN "+sqlTablePrefix+t.Name)
		sorts = sorts || strings.HasPrefix(detail, "USE TEMP B-TREE")
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if !scan || !sorts && q.Filter.IsAll() {
		return returned + q.Offset, nil
	}
	var n int64
	err = f.reader.QueryRowContext(ctx, `SELECT count(*) FROM `+sqlTable(t)).Scan(&n)
	return n, err
}

// SlowQueryThreshold is how long a query takes before its project's log keeps it.
func (s *Stores) SlowQueryThreshold() time.Duration { return s.slow.threshold }
