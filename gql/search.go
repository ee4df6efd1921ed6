package gql

import (
	"errors"
	"reflect"
	"strings"

	"github.com/platform-dev/platform/store"
)

// Full-text search (docs/graphql.md): a table that declares one takes a search argument on
// its list, connection, count and aggregate fields, which selects the records holding
// every word besides where and the read rule, and orders them by relevance unless orderBy
// is given. Its record type has _highlights, the searched fields' matches marked.

// searchUnsupported is what a search on the mongo backend answers.
const searchUnsupported = "full-text search is not available on this deployment: its records are kept in MongoDB, and the platform's search index is SQLite's (the embedded backend); see the Full-text search section of docs/graphql.md"

// searchArg is the search argument of t's fields, "" when t declares no search.
func searchArg(t Table) string {
	if t.Search == nil {
		return ""
	}
	return ", search: String"
}

// writeHighlightsField writes the record type's _highlights, when t declares a search.
func writeHighlightsField(b *strings.Builder, t Table) {
	if t.Search == nil {
		return
	}
	b.WriteString(`  "With a search argument: each searched field's text around its matches, HTML-escaped, with each matched word between <mark> and </mark>, by field name (null for a field without a match); null without a search."` + "\n")
	b.WriteString("  " + store.KeyHighlights + ": JSON\n")
}

// highlightFields is the record struct's field for _highlights, when def declares a search.
func highlightFields(def Table) []reflect.StructField {
	if def.Search == nil {
		return nil
	}
	return []reflect.StructField{{Name: "Highlights", Type: reflect.TypeFor[*jsonValue](), Tag: reflect.StructTag(`json:"` + store.KeyHighlights + `" graphql:"` + store.KeyHighlights + `"`)}}
}

// highlighted reports whether sels, selections of t's records or of the parts of its
// connection, select _highlights where vars do not skip it.
func (t *table) highlighted(sels []planSel, vars map[string]any) bool {
	at, ok := t.scalarFields()[store.KeyHighlights]
	if !ok {
		return false
	}
	for _, s := range selectedOf(sels, vars) {
		if s.rel == nil && (s.part == "" && s.index == at || s.part != "" && t.highlighted(s.sels, vars)) {
			return true
		}
	}
	return false
}

// searched reports whether a carries a search.
func searched(a args) bool { return a.Search.set && a.Search.v != nil }

// selection is the condition of a's where and search.
func (t *table) selection(a args) (store.Filter, error) {
	f, err := t.filter(a.Where)
	if err != nil || !searched(a) {
		return f, err
	}
	text, ok := a.Search.v.(string)
	if !ok {
		return store.None, userError(CodeBadUserInput, "search: want a String, got "+describe(a.Search.v))
	}
	s, err := store.Matches(text, !a.unmarked)
	if errors.Is(err, store.ErrBadSearch) {
		return store.None, userError(CodeBadUserInput, "search: "+strings.TrimPrefix(err.Error(), store.ErrBadSearch.Error()+": "))
	}
	if err != nil {
		return store.None, err
	}
	return store.And(f, s), nil
}
