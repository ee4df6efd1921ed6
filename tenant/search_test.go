package tenant_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/platform-dev/platform/internal/testbackend"
	"github.com/platform-dev/platform/tenant"
)

// notesDocument is a project whose notes each caller reads only of their own, with search
// the table's search declaration (nil for none).
func notesDocument(t *testing.T, s service, search any) *tenant.Project {
	t.Helper()
	table := map[string]any{
		"fields": map[string]any{
			"title": map[string]any{"type": "String", "required": true},
			"body":  map[string]any{"type": "String"},
			"stars": map[string]any{"type": "Int"},
		},
		"access": map[string]any{"read": "owner", "create": "authenticated", "update": "owner", "delete": "owner"},
	}
	if search != nil {
		table["search"] = search
	}
	doc, err := json.Marshal(map[string]any{"id": "notes", "auth": s.issuer.Auth("notes", s.jwks), "tables": map[string]any{"notes": table}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := tenant.ParseDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSearchDeclaredOnRecordsUnderAReadRule declares a search on a table that holds records
// (the index is built on apply), searches under an owner read rule (another caller's
// matches are neither listed nor counted), writes while the declaration is removed, and
// declares it again (the index is built anew, with those writes).
func TestSearchDeclaredOnRecordsUnderAReadRule(t *testing.T) {
	testbackend.SQLiteOnly(t, "full-text search runs on SQLite's FTS5; the mongo backend refuses it (gql's TestSearchOnTheMongoBackend)")
	s := newService(t)
	ctx := context.Background()
	apply := func(search any) {
		t.Helper()
		if _, _, _, err := s.reg.Apply(ctx, notesDocument(t, s, search), tenant.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	apply(nil)
	alice, bob := s.token(t, "notes", "alice"), s.token(t, "notes", "bob")
	create := func(token, title, body string) {
		t.Helper()
		a := s.post(t, "notes", token, `mutation($d: noteInput!) { createNote(data: $d) { uid } }`, map[string]any{"d": map[string]any{"title": title, "body": body}})
		if a.code() != "" {
			t.Fatalf("create: %+v", a.Errors)
		}
	}
	for i := range 30 {
		create(alice, fmt.Sprintf("alice %d", i), "plain")
		create(bob, fmt.Sprintf("bob %d", i), "plain")
	}
	create(alice, "Garden plan", "tomatoes and basil")
	create(bob, "Bob's garden", "secret tomatoes")
	create(alice, "Shopping", "buy tomatoes")

	search := map[string]any{"fields": []string{"title", "body"}, "weights": map[string]any{"title": 3}}
	apply(search)
	const q = `query($s: String) { notes(search: $s) { title _highlights } notesCount(search: $s) }`
	titles := func(token, text string) string {
		t.Helper()
		a := s.post(t, "notes", token, q, map[string]any{"s": text})
		if a.code() != "" {
			t.Fatalf("search %q: %+v", text, a.Errors)
		}
		var notes []struct{ Title string }
		if err := json.Unmarshal(a.Data["notes"], &notes); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range notes {
			out = append(out, n.Title)
		}
		return strings.Join(out, ",") + " (" + string(a.Data["notesCount"]) + ")"
	}
	if got := titles(alice, "tomatoes"); got != "Shopping,Garden plan (2)" {
		t.Errorf("alice: %s", got)
	}
	if got := titles(bob, "tomatoes"); got != "Bob's garden (1)" {
		t.Errorf("bob: %s", got)
	}
	if got := titles(alice, "garden"); got != "Garden plan (1)" {
		t.Errorf("alice, garden: %s", got)
	}

	apply(nil)
	if got := s.post(t, "notes", alice, q, map[string]any{"s": "tomatoes"}).code(); got != "GRAPHQL_VALIDATION_FAILED" {
		t.Errorf("search without a declaration: %q", got)
	}
	create(alice, "Orchard", "tomatoes too")
	apply(search)
	if got := titles(alice, "tomatoes"); got != "Shopping,Orchard,Garden plan (3)" {
		t.Errorf("declared again: %s", got)
	}
}

// TestSearchDeclarationErrors: a search on a field the table lacks, on a field that is no
// String, a field named twice and a weight out of range are refused at their path.
func TestSearchDeclarationErrors(t *testing.T) {
	doc := `{"id":"s","tables":{"notes":{"fields":{"title":{"type":"String"},"n":{"type":"Int"},"tags":{"type":"[String]"}},
		"search":{"fields":["title","nope","n","tags","title"],"weights":{"title":1000,"body":2}}}}}`
	_, err := tenant.ParseDocument([]byte(doc))
	var de *tenant.DocumentError
	if !errors.As(err, &de) {
		t.Fatalf("ParseDocument: %v, want a DocumentError", err)
	}
	var got []string
	for _, p := range de.Problems {
		got = append(got, p.Path+": "+p.Message)
	}
	want := []string{
		`tables.notes.search.fields.1: the table has no field "nope"`,
		`tables.notes.search.fields.2: "n" is of type Int: only String fields can be searched`,
		`tables.notes.search.fields.3: "tags" is of type [String]: only String fields can be searched`,
		`tables.notes.search.fields.4: "title" is named twice`,
		`tables.notes.search.weights.body: "body" is not one of search.fields`,
		`tables.notes.search.weights.title: 1000: a weight is from 0.01 to 100`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
