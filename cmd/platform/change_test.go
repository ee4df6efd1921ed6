package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// changeDoc is the shop project with the field f of type ft and the extra fields and tables
// given (JSON members).
func changeDoc(ft, fields, tables string) []byte {
	return []byte(`{"id":"shop","tables":{"products":{"fields":{"name":{"type":"String","required":true},"f":{"type":"` + ft + `"}` + fields + `},
		"access":{"read":"public","create":"public","update":"public","delete":"public"}}` + tables + `}}`)
}

// apiError is the first error of an error answer.
type apiError struct {
	Message    string `json:"message"`
	Extensions struct {
		Code     string `json:"code"`
		Problems []struct {
			Path, Message string
		} `json:"problems"`
	} `json:"extensions"`
}

func firstError(t *testing.T, body []byte) apiError {
	t.Helper()
	var eb struct{ Errors []apiError }
	if err := json.Unmarshal(body, &eb); err != nil || len(eb.Errors) == 0 {
		t.Fatalf("not an error answer: %s (%v)", body, err)
	}
	return eb.Errors[0]
}

// TestChangesAreCheckedAgainstTheData applies changes over three stored records: a type
// change that converts is applied and the values follow, one that does not is refused at the
// field's path naming the records, a new required field needs a default, a table with records
// goes only with dropData, and no read ever answers INTERNAL.
func TestChangesAreCheckedAgainstTheData(t *testing.T) {
	s := startServer(t, t.TempDir(), "PLATFORM_DEV_ISSUER=off")
	put := func(query string, doc []byte) (int, []byte) {
		t.Helper()
		return s.do("PUT", "localhost", "/admin/v1/projects/shop"+query, s.token, doc)
	}
	gql := func(query string) string {
		t.Helper()
		st, body := s.do("POST", "shop.localhost", "/api/v1/graphql", "", []byte(`{"query":`+strconv.Quote(query)+`}`))
		if st != http.StatusOK || strings.Contains(string(body), "INTERNAL") {
			t.Fatalf("%s: %d %s", query, st, body)
		}
		return string(body)
	}
	version := func() string {
		t.Helper()
		_, body := s.do("GET", "localhost", "/admin/v1/projects/shop", s.token, nil)
		var p struct {
			Version int `json:"version"`
		}
		_ = json.Unmarshal(body, &p)
		return strconv.Itoa(p.Version)
	}
	if st, body := put("", changeDoc("Float", "", `,"notes":{"fields":{"text":{"type":"String"}},"access":{"create":"public"}}`)); st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, body)
	}
	for i, f := range []string{"1.5", "2", "3.25"} {
		gql(`mutation { createProduct(data: {name: "p` + strconv.Itoa(i) + `", f: ` + f + `}) { uid } }`)
	}
	gql(`mutation { createNote(data: {text: "keep me"}) { uid } }`)

	// Float to Boolean does not convert: refused, nothing changes, the records read.
	st, body := put("", changeDoc("Boolean", "", `,"notes":{"fields":{"text":{"type":"String"}}}`))
	e := firstError(t, body)
	if st != http.StatusBadRequest || len(e.Extensions.Problems) != 1 || e.Extensions.Problems[0].Path != "tables.products.fields.f" ||
		!strings.Contains(e.Message, "3 records") || !strings.Contains(e.Message, "1.5") {
		t.Fatalf("Float -> Boolean over 3 records: %d %s", st, body)
	}
	if v := version(); v != "1" {
		t.Fatalf("a refused change was stored: version %s", v)
	}
	if out := gql(`{ products { name f } }`); !strings.Contains(out, `"f":1.5`) {
		t.Fatalf("read after a refused change: %s", out)
	}

	// A dry run of a change that converts answers what it would do, and does nothing.
	st, body = put("?dryRun=true", changeDoc("String", "", `,"notes":{"fields":{"text":{"type":"String"}}}`))
	if st != http.StatusOK || !strings.Contains(string(body), `"dryRun":true`) || !strings.Contains(string(body), "3 records") ||
		!strings.Contains(string(body), `"problems":[]`) {
		t.Fatalf("dry run: %d %s", st, body)
	}
	if v := version(); v != "1" {
		t.Fatalf("a dry run was stored: version %s", v)
	}

	// Float to String converts every value: the reads and filters follow.
	if st, body := put("", changeDoc("String", "", `,"notes":{"fields":{"text":{"type":"String"}}}`)); st != http.StatusOK || !strings.Contains(string(body), "3 records") {
		t.Fatalf("Float -> String: %d %s", st, body)
	}
	if out := gql(`{ products { name f } }`); !strings.Contains(out, `[{"name":"p0","f":"1.5"},{"name":"p1","f":"2"},{"name":"p2","f":"3.25"}]`) {
		t.Fatalf("read after Float -> String: %s", out)
	}
	if out := gql(`{ productsCount(where: {f: {eq: "3.25"}}) }`); !strings.Contains(out, `"productsCount":1`) {
		t.Fatalf("filter after Float -> String: %s", out)
	}
	// And back: each string parses as a Float.
	if st, body := put("", changeDoc("Float", "", `,"notes":{"fields":{"text":{"type":"String"}}}`)); st != http.StatusOK {
		t.Fatalf("String -> Float: %d %s", st, body)
	}
	if out := gql(`{ productsCount(where: {f: {gt: 1.9}}) }`); !strings.Contains(out, `"productsCount":2`) {
		t.Fatalf("filter after String -> Float: %s", out)
	}

	// A new required field needs a default, written into the records.
	st, body = put("", changeDoc("Float", `,"stock":{"type":"Int","required":true}`, `,"notes":{"fields":{"text":{"type":"String"}}}`))
	e = firstError(t, body)
	if st != http.StatusBadRequest || len(e.Extensions.Problems) != 1 || e.Extensions.Problems[0].Path != "tables.products.fields.stock" ||
		!strings.Contains(e.Message, "3 records") || !strings.Contains(e.Message, "default") {
		t.Fatalf("a required field without a default: %d %s", st, body)
	}
	if st, body := put("", changeDoc("Float", `,"stock":{"type":"Int","required":true,"default":7}`, `,"notes":{"fields":{"text":{"type":"String"}}}`)); st != http.StatusOK {
		t.Fatalf("a required field with a default: %d %s", st, body)
	}
	if out := gql(`{ productsCount(where: {stock: {eq: 7}}) }`); !strings.Contains(out, `"productsCount":3`) {
		t.Fatalf("the default was not written into the records: %s", out)
	}

	// Removing a field says what it leaves behind.
	st, body = put("", changeDoc("Float", "", `,"notes":{"fields":{"text":{"type":"String"}}}`))
	if st != http.StatusOK || !strings.Contains(string(body), `"warnings":["- field products.stock: 3 records keep`) {
		t.Fatalf("removing a field: %d %s", st, body)
	}

	// Removing a table with records needs dropData.
	st, body = put("", changeDoc("Float", "", ""))
	e = firstError(t, body)
	if st != http.StatusBadRequest || len(e.Extensions.Problems) != 1 || e.Extensions.Problems[0].Path != "tables.notes" ||
		!strings.Contains(e.Message, "1 record") || !strings.Contains(e.Message, "dropData=true") {
		t.Fatalf("removing a table with records: %d %s", st, body)
	}
	if out := gql(`{ __typename }`); out == "" {
		t.Fatal("no answer")
	}
	if st, body := put("?dropData=true", changeDoc("Float", "", "")); st != http.StatusOK || !strings.Contains(string(body), "1 record dropped") {
		t.Fatalf("removing a table with dropData: %d %s", st, body)
	}
	// Created again, the table is empty.
	if st, body := put("", changeDoc("Float", "", `,"notes":{"fields":{"text":{"type":"String"}},"access":{"read":"public"}}`)); st != http.StatusOK {
		t.Fatalf("the table again: %d %s", st, body)
	}
	if out := gql(`{ notesCount }`); !strings.Contains(out, `"notesCount":0`) {
		t.Fatalf("dropped records came back: %s", out)
	}
}

// TestApplyDryRun: `platform apply --dry-run` prints the changes and the data problems, and
// applies nothing; `--drop-data` lets a table with records go.
func TestApplyDryRun(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data, "PLATFORM_DEV_ISSUER=off")
	if st, body := s.do("PUT", "localhost", "/admin/v1/projects/shop", s.token, changeDoc("Float", "", "")); st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, body)
	}
	for _, f := range []string{"1.5", "2"} {
		s.do("POST", "shop.localhost", "/api/v1/graphql", "", []byte(`{"query":"mutation { createProduct(data: {name: \"x\", f: `+f+`}) { uid } }"}`))
	}
	file := filepath.Join(t.TempDir(), "shop.json")
	apply := func(args ...string) (string, error) {
		out, err := exec.Command(binary, append([]string{"apply", "-f", file, "--server", "http://" + s.addr, "--data", data}, args...)...).CombinedOutput()
		return string(out), err
	}
	writeFile(t, file, string(changeDoc("Boolean", "", "")))
	out, err := apply("--dry-run")
	if err == nil || !strings.Contains(out, "project shop would be configured") || !strings.Contains(out, "~ field products.f") ||
		!strings.Contains(out, "tables.products.fields.f: 2 records") {
		t.Fatalf("dry run of a change the data refuses: %v\n%s", err, out)
	}
	// A new unique index over duplicates is found without building it.
	writeFile(t, file, `{"id":"shop","tables":{"products":{"fields":{"name":{"type":"String","required":true},"f":{"type":"Float"}},
		"indexes":[{"fields":["name"],"unique":true}]}}}`)
	out, err = apply("--dry-run")
	if err == nil || !strings.Contains(out, "tables.products.indexes.0") || !strings.Contains(out, `"x"`) {
		t.Fatalf("dry run of a unique index over duplicates: %v\n%s", err, out)
	}
	writeFile(t, file, string(changeDoc("String", "", "")))
	out, err = apply("--dry-run")
	if err != nil || !strings.Contains(out, "project shop would be configured") || !strings.Contains(out, "2 records") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if _, body := s.do("GET", "localhost", "/admin/v1/projects/shop", s.token, nil); !strings.Contains(string(body), `"version":1`) {
		t.Fatalf("a dry run changed the project: %s", body)
	}
	writeFile(t, file, `{"id":"shop","tables":{"other":{"fields":{"x":{"type":"String"}}}}}`)
	if out, err := apply(); err == nil || !strings.Contains(out, "--drop-data") {
		t.Fatalf("removing a table with records without --drop-data: %v\n%s", err, out)
	}
	if out, err := apply("--drop-data"); err != nil || !strings.Contains(out, "- table products: 2 records dropped") {
		t.Fatalf("removing a table with --drop-data: %v\n%s", err, out)
	}
}
