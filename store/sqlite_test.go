package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"
)

// products is the table of the peer benchmark (../shared/peers/pocketbase): indexes on sku and
// price.
var products = Table{
	Name: "products",
	Fields: []Field{
		{Name: "author", Type: FieldType{Scalar: String}},
		{Name: "name", Type: FieldType{Scalar: String}, Required: true},
		{Name: "price", Type: FieldType{Scalar: Float}, Required: true},
		{Name: "sku", Type: FieldType{Scalar: String}},
	},
	Indexes: []Index{{Fields: []string{"sku"}, Unique: true}, {Fields: []string{"price"}}},
}

// TestSQLitePlans checks with EXPLAIN QUERY PLAN that SQLite answers the queries the API
// sends most from indexes, without reading the table or sorting it.
func TestSQLitePlans(t *testing.T) {
	ctx := context.Background()
	dbs, err := openSQLite(ctx, t.TempDir(), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer dbs.close(ctx)
	b, err := dbs.project(ctx, "p", "")
	if err != nil {
		t.Fatal(err)
	}
	tbl := products
	tbl.index()
	if err := b.ensure(ctx, &tbl); err != nil {
		t.Fatal(err)
	}
	price := []Order{{Key: "price", Desc: true}}
	// chosen is the plan of a query that chooses its rows with inner, then reads them.
	chosen := func(inner ...string) []string {
		return append(append([]string{"CO-ROUTINE chosen"}, inner...), "SCAN chosen", "SEARCH r USING INTEGER PRIMARY KEY (rowid=?)")
	}
	after := &Cursor{Values: []any{500.5, "0190a0b0-0000-7000-8000-000000000000"}}
	cases := []struct {
		name  string
		count bool
		q     Query
		want  []string // each line of the plan contains one of these, in order
	}{
		{"uid", false, Query{Filter: Compare(KeyUID, Eq, "x"), Limit: 1}, []string{"USING INDEX sqlite_autoindex_t_products_1 (uid=?)"}},
		// Whatever else a fetch by uid asks, it reads the one row (find runs it without
		// watching its context).
		{"uid, owner and an order", false, Query{Filter: And(Compare(KeyUID, Eq, "x"), Compare(KeyOwner, Eq, "alice"), Compare("price", Gte, 1.0)), Order: price, Limit: 1},
			[]string{"USING INDEX sqlite_autoindex_t_products_1 (uid=?)"}},
		{"sku", false, Query{Filter: Compare("sku", Eq, "sku-1")}, chosen("USING INDEX ix:products:sku:unique (f:sku=?)")},
		// Ties go the way of the last key, so a descending order reads the index backwards
		// and sorts nothing.
		{"price range desc", false, Query{Filter: Compare("price", Gte, 500.0), Order: price, Limit: 20},
			chosen("SEARCH t_products USING COVERING INDEX ix:products:price (f:price>?)")},
		// A keyset page starts in the index where the last one ended.
		{"price keyset asc", false, Query{Order: []Order{{Key: "price"}}, After: after, Limit: 20},
			chosen("SEARCH t_products USING COVERING INDEX ix:products:price ((f:price,uid)>(?,?))")},
		{"created keyset desc", false, Query{Order: []Order{{Key: KeyCreatedAt, Desc: true}}, Limit: 20,
			After: &Cursor{Values: []any{"2026-01-01T00:00:00.000Z", "0190a0b0-0000-7000-8000-000000000000"}}},
			chosen("SEARCH t_products USING COVERING INDEX platform:products:createdAt ((createdAt,uid)<(?,?))")},
		// Except descending on a field that may be missing: missing values come last, so the
		// page reads the index from its end (in order, but through the pages before it).
		{"price keyset desc", false, Query{Order: price, After: after, Limit: 20},
			chosen("SCAN t_products USING COVERING INDEX ix:products:price")},
		{"first", false, Query{Limit: 100}, chosen("SCAN t_products USING COVERING INDEX sqlite_autoindex_t_products_1")},
		// A field no declared index holds is read from the scan index, which is narrower
		// than the table, and only the rows chosen are read from the table.
		{"name scan", false, Query{Filter: Compare("name", Eq, "item-1")}, chosen("SCAN t_products USING COVERING INDEX scan:products:author,name,price,sku")},
		{"name top 20", false, Query{Filter: Compare("name", Gte, "item-5"), Order: []Order{{Key: "name", Desc: true}}, Limit: 20},
			chosen("SCAN t_products USING COVERING INDEX scan:products:author,name,price,sku", "USE TEMP B-TREE FOR ORDER BY")},
		// Bounded by its previous answer, the same: the bound is one more condition on
		// the scan, and the count of the rows it left is taken over the 20 chosen.
		{"name top 20 bounded", false, Query{Filter: Compare("name", Gte, "item-5"), Order: []Order{{Key: "name", Desc: true}}, Limit: 20},
			[]string{"CO-ROUTINE chosen", "CO-ROUTINE", "CO-ROUTINE", "SCAN t_products USING COVERING INDEX scan:products:author,name,price,sku", "USE TEMP B-TREE FOR ORDER BY",
				"SCAN (subquery", "SCAN (subquery", "SCAN chosen", "SEARCH r USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"count name", true, Query{Filter: Compare("name", Gte, "item-5")}, []string{"SCAN t_products USING COVERING INDEX scan:products:author,name,price,sku"}},
		{"count price", true, Query{Filter: Compare("price", Gte, 500.0)}, []string{"USING COVERING INDEX ix:products:price (f:price>?)"}},
		{"count", true, Query{}, []string{"USING COVERING INDEX"}},
	}
	cuts := map[string]*orderCut{"name top 20 bounded": {key: "name", desc: true, value: "item-9"}}
	f, release, err := dbs.acquire("p")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	cols, err := f.columns(ctx, &tbl)
	if err != nil || !cols["sku"] || !cols["price"] {
		t.Fatalf("columns %v, %v; want sku and price", cols, err)
	}
	for _, tc := range cases {
		var query string
		var args []any
		if tc.count {
			query, args, err = countSQL(&tbl, cols, tc.q.Filter)
		} else {
			query, args, err = findSQL(&tbl, cols, tc.q, cuts[tc.name])
		}
		if err != nil {
			t.Fatal(err)
		}
		rows, err := f.reader.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatalf("%s: %s: %v", tc.name, query, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		got := strings.Join(plan, "\n")
		ok := len(plan) == len(tc.want)
		for i := 0; ok && i < len(plan); i++ {
			ok = strings.Contains(plan[i], tc.want[i])
		}
		if !ok {
			t.Errorf("%s: %s\nplan:\n%s\nwant lines containing %q", tc.name, query, got, tc.want)
		}
	}
}

// TestSQLiteOpenFilesBounded: serving more projects than sqliteMaxOpenFiles closes the least
// recently used files, and a closed project's data is there when it is used again.
func TestSQLiteOpenFilesBounded(t *testing.T) {
	ctx := context.Background()
	dbs, err := openSQLite(ctx, t.TempDir(), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer dbs.close(ctx)
	tbl := Table{Name: "notes", Fields: []Field{{Name: "text", Type: FieldType{Scalar: String}}}}
	records := func(i int) *Records {
		b, err := dbs.project(ctx, fmt.Sprintf("p%d", i), "")
		if err != nil {
			t.Fatal(err)
		}
		return newRecords(b, []Table{tbl})
	}
	for i := range sqliteMaxOpenFiles + 10 {
		r := records(i)
		if err := r.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		if err := r.Insert(ctx, "notes", "alice", []map[string]any{{"text": fmt.Sprint(i)}}, nil); err != nil {
			t.Fatal(err)
		}
		dbs.mu.Lock()
		open := len(dbs.files)
		dbs.mu.Unlock()
		if open > sqliteMaxOpenFiles {
			t.Fatalf("%d files open, at most %d wanted", open, sqliteMaxOpenFiles)
		}
	}
	var got []struct{ Text string }
	if err := records(0).Find(ctx, "notes", Query{}, &got); err != nil || len(got) != 1 || got[0].Text != "0" {
		t.Fatalf("first project after its file was closed: %v, %v", got, err)
	}
}

// TestSQLiteFetchByUIDUnderADeadline: a read of one record by uid under a context with a
// deadline answers without the goroutines that watch the context of other queries, and
// still does not start once the context has ended.
func TestSQLiteFetchByUIDUnderADeadline(t *testing.T) {
	dbs, err := openSQLite(context.Background(), t.TempDir(), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer dbs.close(context.Background())
	b, err := dbs.project(context.Background(), "p", "")
	if err != nil {
		t.Fatal(err)
	}
	r := newRecords(b, []Table{products})
	if err := r.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rec struct{ UID string }
	if err := r.Insert(context.Background(), "products", "alice", []map[string]any{{"name": "a", "price": 1.0}}, &rec); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// during counts the goroutines while q's rows are open.
	during := func(q Query) int {
		n := 0
		if err := r.Each(ctx, "products", q, func(Record) (bool, error) {
			n = runtime.NumGoroutine()
			return true, nil
		}); err != nil || n == 0 {
			t.Fatalf("%v: %v, %d", q.Filter, err, n)
		}
		return n
	}
	byUID := Query{Filter: And(Compare(KeyUID, Eq, rec.UID), Compare(KeyOwner, Eq, "alice")), Limit: 1}
	scan := Query{Filter: Compare("price", Gte, 0.0)}
	// settled counts the goroutines once the watchers of earlier queries have ended.
	settled := func() int {
		n := runtime.NumGoroutine()
		for range 100 {
			time.Sleep(5 * time.Millisecond)
			m := runtime.NumGoroutine()
			if m == n {
				return n
			}
			n = m
		}
		return n
	}
	during(scan) // database/sql starts its own goroutines with the first connections
	if before, got := settled(), during(byUID); got != before {
		t.Errorf("fetch by uid: %d goroutines while reading, %d before", got, before)
	}
	if before, got := settled(), during(scan); got <= before {
		t.Errorf("a scan: %d goroutines while reading, %d before: the test no longer sees the watchers", got, before)
	}
	cancel()
	if err := r.Each(ctx, "products", byUID, func(Record) (bool, error) { return true, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("fetch by uid after the context ended: %v", err)
	}
}

// TestSQLiteRegistryOfAnOlderRelease opens a platform.db written before projects had a
// history: its projects serve as before, and each one's history starts with its document.
func TestSQLiteRegistryOfAnOlderRelease(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old, err := openSQLiteFile(dir + "/platform.db")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE projects (id TEXT NOT NULL PRIMARY KEY, version INTEGER NOT NULL, updatedAt TEXT NOT NULL, document TEXT NOT NULL)`,
		`INSERT INTO projects VALUES ('old', 7, '2026-01-02T03:04:05.678Z', '{"id":"old"}')`,
	} {
		if _, err := old.writer.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.close(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the second open finds everything done
		dbs, err := openSQLite(ctx, dir, slog.Default())
		if err != nil {
			t.Fatal(err)
		}
		p := &Projects{b: dbs.projects()}
		if sp, err := p.Get(ctx, "old"); err != nil || sp.Version != 7 || sp.Document != `{"id":"old"}` {
			t.Fatalf("project of the older release: %+v, %v", sp, err)
		}
		vs, err := p.Versions(ctx, "old")
		if err != nil || len(vs) != 1 || vs[0].Version != 7 || vs[0].Who != "" || vs[0].AppliedAt.Format(TimeLayout) != "2026-01-02T03:04:05.678Z" {
			t.Fatalf("history of the older release's project: %+v, %v", vs, err)
		}
		// Whether its document declares webhooks is not known until marked: it is listed
		// with those that do until then.
		hooked, err := p.WithWebhooks(ctx)
		if err != nil || len(hooked) != 1-i {
			t.Fatalf("open %d: with webhooks %+v, %v", i, hooked, err)
		}
		if err := p.MarkWebhooks(ctx, "old", 7, false); err != nil {
			t.Fatal(err)
		}
		if err := dbs.close(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSQLiteTableOfAnOlderRelease opens a project file whose table an older release wrote:
// records as JSON alone, without the fields' columns or the scan index. Ensure (run when a
// project is first served) adds both, and every query answers what it answers on a table
// written by this release, a scan reading the scan index.
func TestSQLiteTableOfAnOlderRelease(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbs, err := openSQLite(ctx, dir, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer dbs.close(ctx)
	tbl := products
	tbl.Indexes = nil
	fresh := newRecords(&sqliteProject{dbs: dbs, id: "fresh"}, []Table{tbl})
	if err := fresh.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	var fields []map[string]any
	for i := range 300 {
		f := map[string]any{"name": fmt.Sprintf("item-%d", i), "price": float64(i%30) + 0.5, "sku": fmt.Sprintf("sku-%d", i)}
		if i%2 == 0 {
			f["author"] = fmt.Sprintf("author-%d", i%10)
		}
		fields = append(fields, f)
	}
	if err := fresh.Insert(ctx, "products", "alice", fields, nil); err != nil {
		t.Fatal(err)
	}
	// The older release's file holds the same records, written as it wrote them.
	old, err := openSQLiteFile(dbs.projectPath("old"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		createTable(`"t_products"`),
		`ATTACH DATABASE ` + quoteString(dbs.projectPath("fresh")) + ` AS fresh`,
		`INSERT INTO t_products SELECT uid, _owner, createdAt, updatedAt, data FROM fresh.t_products`,
		`DETACH DATABASE fresh`,
	} {
		if _, err := old.writer.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	if err := old.close(); err != nil {
		t.Fatal(err)
	}
	upgraded := newRecords(&sqliteProject{dbs: dbs, id: "old"}, []Table{tbl})
	if err := upgraded.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	f, release, err := dbs.acquire("old")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	var indexes int
	if err := f.reader.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = ?`, scanIndex(&tbl).name).Scan(&indexes); err != nil || indexes != 1 {
		t.Fatalf("scan index of the older table: %d, %v", indexes, err)
	}
	gte := Compare("price", Gte, 15.0)
	for _, q := range []Query{
		{Filter: Compare("sku", Eq, "sku-77")},
		{Filter: gte, Order: []Order{{Key: "price", Desc: true}}, Limit: 20},
		{Filter: Or(Compare("author", Eq, "author-4"), Compare("name", StartsWith, "item-1")), Order: []Order{{Key: "author"}}, Offset: 5, Limit: 30},
		{Filter: Compare("author", Eq, nil), Limit: 7},
		{Order: []Order{{Key: "name", Desc: true}}},
	} {
		var want, got []map[string]any
		if err := fresh.Find(ctx, "products", q, &want); err != nil {
			t.Fatal(err)
		}
		if err := upgraded.Find(ctx, "products", q, &got); err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%v: the older table answers %d records, a new one %d:\n%v\n%v", q.Filter, len(got), len(want), got, want)
		}
	}
	wantN, err := fresh.Count(ctx, "products", gte)
	if err != nil {
		t.Fatal(err)
	}
	if gotN, err := upgraded.Count(ctx, "products", gte); err != nil || gotN != wantN || wantN != 150 {
		t.Errorf("count price ≥ 15: older table %d (%v), new one %d, want 150", gotN, err, wantN)
	}
}

// TestSQLiteCutLearnsLastKey: a page ordered on a field no index starts keeps the order key
// of its last record as the bound of its next run, and a page that does not fill keeps none.
func TestSQLiteCutLearnsLastKey(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	tbl := products
	tbl.Indexes = nil
	recs, err := s.ProjectRecords(ctx, "p", "", []Table{tbl})
	if err != nil {
		t.Fatal(err)
	}
	if err := recs.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	for i := range 100 {
		docs = append(docs, map[string]any{"name": fmt.Sprintf("item-%d", i), "price": float64(i) + 0.5})
	}
	if err := recs.Insert(ctx, "products", "alice", docs, nil); err != nil {
		t.Fatal(err)
	}
	f, release, err := s.db.(*sqliteDatabases).acquire("p")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	desc := []Order{{Key: "price", Desc: true}}
	for _, tc := range []struct {
		q    Query
		want []any
	}{
		{Query{Filter: Compare("price", Gte, 50.0), Order: desc, Limit: 20}, []any{80.5}},
		{Query{Filter: Compare("price", Gte, 50.0), Order: desc, Offset: 5, Limit: 10}, []any{85.5}},
		{Query{Order: []Order{{Key: "name"}}, Limit: 3}, []any{"item-10"}},
		{Query{Order: []Order{{Key: KeyCreatedAt}}, Limit: 3}, nil},
		{Query{Filter: Compare("price", Gte, 95.0), Order: desc, Limit: 20}, nil},
	} {
		for run := range 2 {
			if err := recs.Each(ctx, "products", tc.q, func(Record) (bool, error) { return true, nil }); err != nil {
				t.Fatal(err)
			}
			if got := f.cuts.Values(); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("%v order %v offset %d limit %d, run %d: bounds %v, want %v", tc.q.Filter, tc.q.Order, tc.q.Offset, tc.q.Limit, run+1, got, tc.want)
			}
		}
		f.cuts.Purge()
	}
}
