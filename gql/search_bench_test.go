package gql_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// searchWords is a vocabulary of made-up words, from which the benchmark's texts draw with
// Zipf's law, as the words of a language are used: word 0 is in about every third record,
// the ones past the first thousand in a handful.
func searchWords() []string {
	syllables := strings.Fields("ka lo mi ne ru sa te vi zo pa de fu go hi ju be ci da el for")
	var words []string
	for _, a := range syllables {
		for _, b := range syllables {
			for _, c := range syllables {
				words = append(words, a+b+c)
			}
		}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	return words
}

// BenchmarkSearch searches 100,000 articles (a title of 4 words and a body of 40) through
// HTTP, a page of 20 ranked results with their highlights, and reports the latency's p50 and
// p99 for a rare word, a common one and two words (matches: the records each selects). It
// also reports how long declaring the search on the filled table took to build the index,
// and the average page of that build (how long it holds the write lock at a time).
func BenchmarkSearch(b *testing.B) {
	const rows = 100_000
	words := searchWords()
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 2, uint64(len(words)-1))
	text := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[zipf.Uint64()]
		}
		return strings.Join(w, " ")
	}
	plain := articles()
	plain.Search = nil
	recs, err := stores.ProjectRecords(context.Background(), "searchbench", "", []store.Table{plain.Table})
	if err != nil {
		b.Fatal(err)
	}
	if err := recs.Ensure(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = recs.Drop(context.Background()) })
	now := time.Now().UTC().Format(store.TimeLayout)
	for i := 0; i < rows; {
		var batch []store.Record
		for ; len(batch) < 1000; i++ {
			uid, err := store.NewUID()
			if err != nil {
				b.Fatal(err)
			}
			batch = append(batch, store.Record(fmt.Sprintf(`{"uid":%q,"_owner":"","createdAt":%q,"updatedAt":%q,"title":%q,"body":%q,"n":%d}`, uid, now, now, text(4), text(40), i)))
		}
		if err := recs.Import(context.Background(), "articles", batch); err != nil {
			b.Fatal(err)
		}
	}
	tb := articles()
	searched, err := stores.ProjectRecords(context.Background(), "searchbench", "", []store.Table{tb.Table})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := searched.Ensure(context.Background()); err != nil {
		b.Fatal(err)
	}
	build := time.Since(start)
	api, err := gql.New(gql.Config{Tables: []gql.Table{tb}, Records: searched})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(api)
	b.Cleanup(srv.Close)
	p := &benchProject{srv: srv, api: api, recs: searched}
	const q = `query($s: String) { articles(search: $s, limit: 20) { uid title _highlights } }`
	// The peer's way, PocketBase's filter=(body~'word'): a scan of every body for the text.
	const contains = `query($s: String) { articles(where: {body: {contains: $s}}, limit: 20) { uid title } }`
	for _, c := range []struct{ name, search, query string }{
		{"rare", words[1500], q},
		{"common", words[5], q},
		{"two words", words[5] + " " + words[40], q},
		{"rare, contains without index", words[1500], contains},
	} {
		b.Run(c.name, func(b *testing.B) {
			var n int64
			f, err := store.Matches(c.search, false)
			if err == nil {
				n, err = searched.Count(context.Background(), "articles", f)
			}
			if err != nil {
				b.Fatal(err)
			}
			body := request(b, c.query, map[string]any{"s": c.search})
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				p.post(b, body)
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(n), "matches")
			b.ReportMetric(build.Seconds(), "index-build-s")
			b.ReportMetric(float64(build.Milliseconds())/(rows/500), "ms/build-page")
		})
	}
}
