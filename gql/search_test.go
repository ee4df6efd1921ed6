package gql_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/internal/testbackend"
	"github.com/platform-dev/platform/store"
)

// articles is a table with a full-text search on title (weight 4) and body.
func articles() gql.Table {
	tb := table("articles", "article",
		store.Field{Name: "body", Type: store.FieldType{Scalar: store.String}},
		store.Field{Name: "n", Type: store.FieldType{Scalar: store.Int}},
		store.Field{Name: "title", Type: store.FieldType{Scalar: store.String}, Required: true},
	)
	tb.Search = &store.Search{Fields: []store.SearchField{{Name: "title", Weight: 4}, {Name: "body", Weight: 1}}}
	return tb
}

var articleRecords = []map[string]any{
	{"title": "Red wine", "body": "Bordeaux red & <oak>", "n": 1},
	{"title": "White wine", "body": "Never red", "n": 2},
	{"title": "Beer", "body": "A red ale", "n": 3},
	{"title": "Water", "body": "Clear and cold", "n": 4},
	{"title": "Running shoes", "body": "For runners who run", "n": 5},
	// Words in fewer than half of the records weigh in the rank (bm25's idf).
	{"title": "Juice", "n": 6}, {"title": "Tea", "n": 7}, {"title": "Coffee", "n": 8},
	{"title": "Milk", "n": 9}, {"title": "Soda", "n": 10}, {"title": "Lemonade", "n": 11},
}

func searchServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := serve(t, gql.Config{Tables: []gql.Table{articles()}})
	for _, r := range articleRecords {
		exec(t, srv, `mutation($d: articleInput!) { createArticle(data: $d) { uid } }`, map[string]any{"d": r}).ok(t)
	}
	return srv
}

type hit struct {
	Title      string            `json:"title"`
	N          int               `json:"n"`
	Highlights map[string]string `json:"_highlights"`
}

func searchTitles(t *testing.T, srv *httptest.Server, query string, vars map[string]any) string {
	t.Helper()
	var hits []hit
	exec(t, srv, query, vars).ok(t).decode(t, "articles", &hits)
	var out []string
	for _, h := range hits {
		out = append(out, h.Title)
	}
	return strings.Join(out, ",")
}

// TestSearchRanksAndComposes checks the order of a search's results (relevance, or the
// orderBy given), its composition with where, stemming, phrases, and the count and
// aggregate that take it.
func TestSearchRanksAndComposes(t *testing.T) {
	sqliteSearch(t)
	srv := searchServer(t)
	const q = `query($s: String, $w: articleWhere, $o: [articleOrderBy!]) { articles(search: $s, where: $w, orderBy: $o) { title n } }`
	cases := []struct {
		name string
		vars map[string]any
		want string
	}{
		// A match in the title (weight 4) ranks first; then the shorter body.
		{"ranked", map[string]any{"s": "red"}, "Red wine,White wine,Beer"},
		{"every word, in any field", map[string]any{"s": "red wine"}, "Red wine,White wine"},
		{"case and punctuation", map[string]any{"s": "RED, (wine)!"}, "Red wine,White wine"},
		{"stems", map[string]any{"s": "runs"}, "Running shoes"},
		{"phrase", map[string]any{"s": `"red ale"`}, "Beer"},
		{"phrase out of order", map[string]any{"s": `"ale red"`}, ""},
		{"operators are words", map[string]any{"s": "red OR water"}, ""},
		{"with where", map[string]any{"s": "red", "w": map[string]any{"n": map[string]any{"gte": 2}}}, "White wine,Beer"},
		{"explicit orderBy", map[string]any{"s": "red", "o": []any{map[string]any{"field": "n", "direction": "DESC"}}}, "Beer,White wine,Red wine"},
		{"no match", map[string]any{"s": "whisky"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := searchTitles(t, srv, q, c.vars); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	r := exec(t, srv, `{ articlesCount(search: "red", where: {n: {lt: 3}}) articlesAggregate(search: "red") { count sum { n } } }`, nil).ok(t)
	if got := string(r.Data["articlesCount"]); got != "2" {
		t.Errorf("count = %s, want 2", got)
	}
	if got := string(r.Data["articlesAggregate"]); got != `{"count":3,"sum":{"n":6}}` {
		t.Errorf("aggregate = %s", got)
	}
}

// TestSearchHighlights checks _highlights: the matched words marked, the rest escaped, null
// for a field without a match and without a search.
func TestSearchHighlights(t *testing.T) {
	sqliteSearch(t)
	srv := searchServer(t)
	var hits []hit
	exec(t, srv, `{ articles(search: "red", where: {n: {eq: 1}}) { title _highlights } }`, nil).ok(t).decode(t, "articles", &hits)
	want := map[string]string{"title": "<mark>Red</mark> wine", "body": "Bordeaux <mark>red</mark> &amp; &lt;oak&gt;"}
	if len(hits) != 1 || !equalMaps(hits[0].Highlights, want) {
		t.Errorf("highlights = %+v, want %v", hits, want)
	}
	r := exec(t, srv, `{ articles(search: "ale") { _highlights } plain: articles(where: {n: {eq: 3}}) { _highlights } }`, nil).ok(t)
	var ale []map[string]map[string]*string
	r.decode(t, "articles", &ale)
	if len(ale) != 1 || *ale[0]["_highlights"]["body"] != "A red <mark>ale</mark>" || ale[0]["_highlights"]["title"] != nil {
		t.Errorf("ale = %s", r.Data["articles"])
	}
	if got := string(r.Data["plain"]); got != `[{"_highlights":null}]` {
		t.Errorf("without search = %s", got)
	}
	// Highlights are computed where they are selected: in a connection's nodes too.
	r = exec(t, srv, `{ articlesConnection(search: "ale") { edges { node { title } } } c: articlesConnection(search: "ale") { edges { node { ... on article { _highlights } } } } }`, nil).ok(t)
	if got := string(r.Data["c"]); !strings.Contains(got, `"body":"A red \u003cmark\u003eale\u003c/mark\u003e"`) {
		t.Errorf("connection = %s", got)
	}
}

func equalMaps(a, b map[string]string) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestSearchPages walks a ranked result by keyset pages of one: each cursor carries the
// rank and the uid, so the pages together are the ranked list.
func TestSearchPages(t *testing.T) {
	sqliteSearch(t)
	srv := searchServer(t)
	// Records of the same text tie on rank: uid orders them, across pages too.
	for i := range 7 {
		exec(t, srv, `mutation($d: articleInput!) { createArticle(data: $d) { uid } }`, map[string]any{"d": map[string]any{"title": "red " + strings.Repeat("x ", i/2) + "#" + strconv.Itoa(i), "n": 10 + i}}).ok(t)
	}
	// A where makes the store join every match before it keeps the best, as a first page
	// without one does not: the pages must agree with it.
	want := searchTitles(t, srv, `{ articles(search: "red", where: {n: {gte: 0}}, limit: 100) { title } }`, nil)
	var offsets []string
	for offset := 0; offset < 12; offset += 2 {
		if got := searchTitles(t, srv, `query($o: Int) { articles(search: "red", limit: 2, offset: $o) { title } }`, map[string]any{"o": offset}); got != "" {
			offsets = append(offsets, got)
		}
	}
	if got := strings.Join(offsets, ","); got != want {
		t.Errorf("offset pages = %q, want %q", got, want)
	}
	const page = `query($after: String) { articlesConnection(search: "red", first: 2, after: $after) { edges { cursor node { title } } pageInfo { hasNextPage endCursor } totalCount } }`
	var got []string
	var after any
	for range 20 {
		var c struct {
			Edges []struct {
				Node hit `json:"node"`
			} `json:"edges"`
			PageInfo struct {
				HasNextPage bool   `json:"hasNextPage"`
				EndCursor   string `json:"endCursor"`
			} `json:"pageInfo"`
			TotalCount int `json:"totalCount"`
		}
		exec(t, srv, page, map[string]any{"after": after}).ok(t).decode(t, "articlesConnection", &c)
		if c.TotalCount != 10 {
			t.Fatalf("totalCount = %d, want 10", c.TotalCount)
		}
		for _, e := range c.Edges {
			got = append(got, e.Node.Title)
		}
		if !c.PageInfo.HasNextPage {
			break
		}
		after = c.PageInfo.EndCursor
	}
	if strings.Join(got, ",") != want || len(got) != 10 {
		t.Errorf("pages = %q, want %q", strings.Join(got, ","), want)
	}
	// A cursor of a ranked order continues only the same search: its rank means nothing in
	// another's, whose next page would skip or repeat records.
	for _, tc := range []struct{ name, args, want string }{
		{"the same search", `search: "red"`, ""},
		{"another search", `search: "x"`, "another search"},
		{"more words", `search: "red x"`, "another search"},
		{"no search", ``, "orderBy or search"},
		{"the same search ordered by n", `search: "red", orderBy: [{field: n}]`, "orderBy or search"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := exec(t, srv, `query($after: String) { articlesConnection(`+tc.args+` first: 2, after: $after) { edges { cursor } } }`, map[string]any{"after": after})
			if tc.want == "" {
				r.ok(t)
				return
			}
			if code := r.code(t); code != gql.CodeBadUserInput || !strings.Contains(string(r.raw), "after: ") || !strings.Contains(string(r.raw), tc.want) {
				t.Errorf("answered %s, want %s naming after and %q", r.raw, gql.CodeBadUserInput, tc.want)
			}
		})
	}
}

// TestSearchFollowsWrites checks that creates, updates, batch updates and deletes are in
// the index as soon as they are answered.
func TestSearchFollowsWrites(t *testing.T) {
	sqliteSearch(t)
	srv := searchServer(t)
	const q = `query($s: String) { articles(search: $s) { title } }`
	var created struct {
		UID string `json:"uid"`
	}
	exec(t, srv, `mutation { createArticle(data: {title: "Cider", body: "apples"}) { uid } }`, nil).ok(t).decode(t, "createArticle", &created)
	if got := searchTitles(t, srv, q, map[string]any{"s": "apples"}); got != "Cider" {
		t.Errorf("after create: %q", got)
	}
	exec(t, srv, `mutation($u: ID) { updateArticle(uid: $u, data: {body: "pears"}) { uid } }`, map[string]any{"u": created.UID}).ok(t)
	if got := searchTitles(t, srv, q, map[string]any{"s": "apples"}) + "|" + searchTitles(t, srv, q, map[string]any{"s": "pears"}); got != "|Cider" {
		t.Errorf("after update: %q", got)
	}
	exec(t, srv, `mutation($u: ID) { updateArticle(uid: $u, data: {body: null}) { uid } }`, map[string]any{"u": created.UID}).ok(t)
	if got := searchTitles(t, srv, q, map[string]any{"s": "pears"}); got != "" {
		t.Errorf("after removing the body: %q", got)
	}
	exec(t, srv, `mutation($u: ID) { deleteArticle(uid: $u) { uid } }`, map[string]any{"u": created.UID}).ok(t)
	if got := searchTitles(t, srv, q, map[string]any{"s": "cider"}); got != "" {
		t.Errorf("after delete: %q", got)
	}
}

// TestSearchBadInput checks that a search with nothing to search for, or too much, is
// BAD_USER_INPUT, and that a table without a search takes no search argument.
func TestSearchBadInput(t *testing.T) {
	sqliteSearch(t)
	srv := serve(t, gql.Config{Tables: []gql.Table{articles(), products()}})
	cases := []struct {
		name, query string
		vars        map[string]any
		code        string
	}{
		{"no word", `query($s: String) { articles(search: $s) { title } }`, map[string]any{"s": ` "" * - () `}, gql.CodeBadUserInput},
		{"empty", `{ articlesCount(search: "") }`, nil, gql.CodeBadUserInput},
		{"too many words", `query($s: String) { articles(search: $s) { title } }`, map[string]any{"s": strings.Repeat("a ", store.MaxSearchTerms+1)}, gql.CodeBadUserInput},
		{"too long", `query($s: String) { articlesConnection(search: $s) { totalCount } }`, map[string]any{"s": strings.Repeat("a", store.MaxSearchBytes+1)}, gql.CodeBadUserInput},
		{"quotes and stars", `{ articles(search: "\"red* NEAR(a b)\" AND ^c") { title } }`, nil, ""},
		{"a table without search", `{ products(search: "red") { name } }`, nil, gql.CodeValidation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := exec(t, srv, c.query, c.vars)
			if c.code == "" {
				r.ok(t)
				return
			}
			if got := r.code(t); got != c.code {
				t.Errorf("code %s, want %s: %s", got, c.code, r.raw)
			}
		})
	}
}

// TestSearchOnTheMongoBackend: FerretDB, which the mongo backend is tested on, has no $text
// index, so a search there answers BAD_REQUEST saying so, and the rest of the API serves
// the table as usual.
func TestSearchOnTheMongoBackend(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	uri, stop, err := store.StartFerretDB(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop(context.Background()) })
	mongo, err := store.Open(ctx, store.Config{DataDir: dir, MongoURI: uri})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mongo.Close(context.Background()) })
	recs, err := mongo.ProjectRecords(ctx, "search", "", []store.Table{articles().Table})
	if err != nil {
		t.Fatal(err)
	}
	if err := recs.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, gql.Config{Tables: []gql.Table{articles()}, Records: recs})
	exec(t, srv, `mutation { createArticle(data: {title: "Red wine"}) { uid } }`, nil).ok(t)
	for _, q := range []string{
		`{ articles(search: "red") { title } }`,
		`{ articlesCount(search: "red") }`,
		`{ articlesConnection(search: "red") { totalCount } }`,
	} {
		r := exec(t, srv, q, nil)
		if code := r.code(t); code != gql.CodeBadRequest || !strings.Contains(r.Errors[0].Message, "MongoDB") {
			t.Errorf("%s: %s", q, r.raw)
		}
	}
	if got := searchTitles(t, srv, `{ articles(where: {title: {contains: "wine"}}) { title } }`, nil); got != "Red wine" {
		t.Errorf("without search: %q", got)
	}
}

// TestSearchHighlightsNameTaken: a relation may not take the name of _highlights on a table
// that declares a search.
func TestSearchHighlightsNameTaken(t *testing.T) {
	tb := articles()
	tb.Relations = []gql.Relation{{Name: store.KeyHighlights, Table: "articles", ForeignField: "title"}}
	var re *gql.RelationError
	if err := gql.CheckRelations([]gql.Table{tb}); !errors.As(err, &re) || !strings.Contains(re.Reason, "taken") {
		t.Errorf("CheckRelations: %v, want the name refused as taken", err)
	}
}

// sqliteSearch skips a test of the search itself on the mongo backend, which refuses a search
// (TestSearchOnTheMongoBackend holds that refusal).
func sqliteSearch(t *testing.T) {
	t.Helper()
	testbackend.SQLiteOnly(t, "full-text search runs on SQLite's FTS5; the mongo backend refuses it")
}
