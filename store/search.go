package store

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Search is the full-text search a table declares: the String fields whose words are
// indexed, each with its weight in the rank (1 unless declared).
type Search struct {
	Fields []SearchField
}

// SearchField is one field of a Search.
type SearchField struct {
	Name   string
	Weight float64
}

// signature names the index a Search needs: a declaration with other fields or weights
// needs another one.
func (s *Search) signature() string {
	var b strings.Builder
	b.WriteString("fts1")
	for _, f := range s.Fields {
		b.WriteString("|" + f.Name + ":" + strconv.FormatFloat(f.Weight, 'g', -1, 64))
	}
	return b.String()
}

// KeyRank orders by relevance to a Query's search, best first: a Filter with Matches
// selects the records, and the order's first key is KeyRank. The records a ranked query
// answers carry their rank under this key (a Float, smaller is better), so that a Cursor
// continues a ranked order as it continues any other; and, when the Matches asked for them,
// their highlights under KeyHighlights.
const (
	KeyRank       = "_rank"
	KeyHighlights = "_highlights"
)

// The bounds of a search text: enough for any search a person types.
const (
	MaxSearchBytes = 1000
	MaxSearchTerms = 32
)

var (
	// ErrBadSearch is wrapped by the errors of Matches for a text that has nothing to
	// search for, or more than the bounds allow.
	ErrBadSearch = errors.New("bad search")
	// ErrNoSearch is a search on a table that declares none.
	ErrNoSearch = errors.New("the table declares no search")
	// ErrSearchUnsupported is a search on a backend that has no full-text index (the mongo
	// backend: see docs/graphql.md).
	ErrSearchUnsupported = errors.New("full-text search is not available on the mongo backend")
)

// searchQuery is a search text as the filter keeps it: its terms, each a word or a phrase
// of words, all of which a record must hold; and whether the records answer highlights.
type searchQuery struct {
	terms     [][]string
	highlight bool
}

// Matches selects the records that hold every word and phrase of text in the fields the
// table's Search declares. Words are runs of letters and digits (everything else separates
// them, so no character of text is an operator); "double quotes" make the words between
// them a phrase. Matching ignores case and diacritics, and takes English words by their stem
// ("running" matches "runs"). With highlight, the records a find answers carry, under
// KeyHighlights, each searched field's text with the matches marked (see Highlight).
func Matches(text string, highlight bool) (Filter, error) {
	if len(text) > MaxSearchBytes {
		return None, fmt.Errorf("%w: %d bytes, at most %d", ErrBadSearch, len(text), MaxSearchBytes)
	}
	q := searchQuery{highlight: highlight}
	words := 0
	for i, part := range strings.Split(text, `"`) {
		phrase := i%2 == 1
		split := strings.FieldsFunc(part, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		words += len(split)
		switch {
		case len(split) == 0:
		case phrase:
			q.terms = append(q.terms, split)
		default:
			for _, w := range split {
				q.terms = append(q.terms, []string{w})
			}
		}
	}
	switch {
	case words == 0:
		return None, fmt.Errorf("%w: %q has no word to search for", ErrBadSearch, text)
	case words > MaxSearchTerms:
		return None, fmt.Errorf("%w: %d words, at most %d", ErrBadSearch, words, MaxSearchTerms)
	}
	return Filter{kind: kindSearch, value: q}, nil
}

// fts5 writes the terms in FTS5's query syntax, each word quoted so that none is read as an
// operator: `"red" "wine"` (both), `"red" + "wine"` (the phrase).
func (q searchQuery) fts5() string {
	var b strings.Builder
	for i, t := range q.terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		for j, w := range t {
			if j > 0 {
				b.WriteString(" + ")
			}
			b.WriteString(`"` + strings.ReplaceAll(w, `"`, `""`) + `"`)
		}
	}
	return b.String()
}

// search splits the top-level search of f from the rest of it; ok is false when f has none
// (a search under Or or Not is no top-level one).
func (f Filter) search() (q searchQuery, rest Filter, ok bool) {
	switch f.kind {
	case kindSearch:
		return f.value.(searchQuery), All, true
	case kindAnd:
		for i, p := range f.parts {
			if p.kind == kindSearch {
				others := append(append([]Filter{}, f.parts[:i]...), f.parts[i+1:]...)
				return p.value.(searchQuery), And(others...), true
			}
		}
	}
	return searchQuery{}, f, false
}

// Highlight marks are what a highlight wraps each matched word in. The rest of the field's
// text is HTML-escaped, so that a highlight can be shown as HTML as it is.
const (
	HighlightStart = "<mark>"
	HighlightEnd   = "</mark>"
)
