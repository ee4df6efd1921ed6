package docparse_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/platform-dev/platform/docparse"
)

// laughs is a "billion laughs": nine levels of anchors, each holding nine aliases of the
// one before, 9^9 scalars once expanded, in a few hundred bytes.
func laughs() string {
	var b strings.Builder
	b.WriteString("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), ", "))
	}
	return b.String()
}

// nested is a flow sequence n levels deep.
func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// TestYAMLLimits: a document exactly at each bound is read, one past it is refused with a
// LimitError naming the bound.
func TestYAMLLimits(t *testing.T) {
	lim := docparse.Limits{MaxBytes: 100, MaxDepth: 5, MaxAliasNodes: 10}
	items := func(n int) string { return strings.TrimSuffix(strings.Repeat("x, ", n), ", ") }
	for _, tc := range []struct {
		name, doc string
		bound     docparse.Bound // "" when the document is within the limits
	}{
		{"size at the limit", "a: " + strings.Repeat("x", 96) + "\n", ""},
		{"size past the limit", "a: " + strings.Repeat("x", 97) + "\n", docparse.BoundBytes},
		{"depth at the limit", "a: " + nested(4), ""},
		{"depth past the limit", "a: " + nested(5), docparse.BoundDepth},
		{"depth at the limit through an alias", "a: &a " + nested(3) + "\nb: [*a]\n", ""},
		{"depth past the limit through an alias", "a: &a " + nested(3) + "\nb: [[*a]]\n", docparse.BoundDepth},
		// An anchored sequence of 9 scalars is 10 nodes; each alias adds them again.
		{"alias nodes at the limit", "a: &a [" + items(9) + "]\nb: *a\n", ""},
		{"alias nodes past the limit", "a: &a [" + items(10) + "]\nb: *a\n", docparse.BoundAliasNodes},
		{"alias nodes at the limit across aliases", "a: &a [" + items(4) + "]\nb: *a\nc: *a\n", ""},
		{"alias nodes past the limit across aliases", "a: &a [" + items(5) + "]\nb: *a\nc: *a\n", docparse.BoundAliasNodes},
		// Scalars: "a" + 48 x + "b" written, 48 more expanded: 98, then 100 and 102.
		{"expanded size under the limit", "a: &a " + strings.Repeat("x", 48) + "\nb: *a\n", ""},
		{"expanded size at the limit", "a: &a " + strings.Repeat("x", 49) + "\nb: *a\n", ""},
		{"expanded size past the limit", "a: &a " + strings.Repeat("x", 50) + "\nb: *a\n", docparse.BoundExpandedBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := docparse.YAML([]byte(tc.doc), lim)
			var le *docparse.LimitError
			switch {
			case tc.bound == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.bound != "" && !errors.As(err, &le):
				t.Fatalf("got %v, want a LimitError for %s", err, tc.bound)
			case tc.bound != "" && le.Bound != tc.bound:
				t.Fatalf("bound %s (%v), want %s", le.Bound, err, tc.bound)
			}
		})
	}
}

// TestLimitMessages: each refusal says which bound and its figure.
func TestLimitMessages(t *testing.T) {
	for doc, want := range map[string]string{
		laughs():            "YAML aliases expand to more than 10000 nodes",
		"a: " + nested(101): "document nests deeper than 100 levels (line 1)",
		"a: &a " + strings.Repeat("x", 600_000) + "\nb: *a\n": "YAML aliases expand the document past 1048576 bytes",
		strings.Repeat("#", 1<<20+1):                          "document is larger than 1048576 bytes",
	} {
		_, err := docparse.YAML([]byte(doc), docparse.DefaultLimits())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.30q: got %v, want %q", doc, err, want)
		}
	}
}

// TestLaughsStaySmall: refusing the billion laughs costs about what reading its few
// hundred bytes costs, in time and memory.
func TestLaughsStaySmall(t *testing.T) {
	doc := []byte(laughs())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := docparse.YAML(doc, docparse.DefaultLimits())
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("billion laughs read")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("allocated %d bytes for a %d-byte document", grew, len(doc))
	}
}

func TestStream(t *testing.T) {
	lim := docparse.Limits{MaxAliasNodes: 4}
	// The documents of a stream share the alias budget, and an alias may name an anchor of
	// an earlier document.
	d := docparse.NewDecoder([]byte("a: &a [x]\nb: *a\n---\nc: *a\n"), lim)
	for i := range 2 {
		if _, err := d.Decode(); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
	}
	if _, err := d.Decode(); !errors.Is(err, io.EOF) {
		t.Fatalf("end of stream: %v", err)
	}
	d = docparse.NewDecoder([]byte("a: &a [x]\nb: *a\n---\nc: [*a, *a]\n---\nd: 1\n"), lim)
	if _, err := d.Decode(); err != nil {
		t.Fatal(err)
	}
	var le *docparse.LimitError
	if _, err := d.Decode(); !errors.As(err, &le) || le.Bound != docparse.BoundAliasNodes {
		t.Fatalf("second document: %v", err)
	}
	if _, err := d.Decode(); !errors.As(err, &le) {
		t.Fatalf("a stream past its bound must not be read further: %v", err)
	}
}

func TestAliasCycle(t *testing.T) {
	if _, err := docparse.YAML([]byte("a: &a [x, *a]\n"), docparse.DefaultLimits()); !errors.Is(err, docparse.ErrAliasCycle) {
		t.Fatalf("got %v", err)
	}
}

// TestValue: a document with anchors and merge keys reads as its expansion, with the
// scalars typed as JSON would have them.
func TestValue(t *testing.T) {
	doc := `
x-defaults: &defaults
  restart: always
  environment: &env {A: "1"}
services:
  web:
    <<: *defaults
    image: nginx:1.27
    restart: "no"
  worker:
    <<: [*defaults, {image: busybox}]
    environment: *env
    replicas: 3
    cpus: 0.5
    since: 2026-01-02
    on: true
    none: ~
    1: one
`
	n, err := docparse.YAML([]byte(doc), docparse.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	got, err := docparse.Value(n)
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal([]byte(`{
		"x-defaults": {"restart": "always", "environment": {"A": "1"}},
		"services": {
			"web": {"restart": "no", "environment": {"A": "1"}, "image": "nginx:1.27"},
			"worker": {"restart": "always", "environment": {"A": "1"}, "image": "busybox",
			           "replicas": 3, "cpus": 0.5, "since": "2026-01-02", "on": true, "none": null, "1": "one"}}}`), &want); err != nil {
		t.Fatal(err)
	}
	gotJSON, _ := json.Marshal(got)
	var gotBack any
	_ = json.Unmarshal(gotJSON, &gotBack)
	if !reflect.DeepEqual(gotBack, want) {
		t.Errorf("got  %s", gotJSON)
	}
}

// TestJSONDepth: CheckJSON counts brackets outside strings and comments; encoding/json's own
// bound (10,000 levels) is far above what a document needs, and its recursion to get there
// is what the smaller bound spares.
func TestJSONDepth(t *testing.T) {
	lim := docparse.Limits{MaxBytes: 1 << 20, MaxDepth: 3}
	for _, tc := range []struct {
		doc string
		ok  bool
	}{
		{`{"a": [[1]]}`, true},
		{`{"a": [[[1]]]}`, false},
		{`{"a": "[[[[", "b": [[1]]}`, true},
		{`{"a": "\"[[[[", "b": [[1]]}`, true},
		{`{"a": "]]]]", "b": [[[1]]]}`, false},
		{"{\"a\": [[1]] // [[[[\n}", true},
		{"{\"a\": [[1]] /* [[[[ */ }", true},
		{"{\"a\": [[1]] /* ]]]] */, \"b\": [[[1]]] }", false},
		{`[], [], [], []`, true},
	} {
		err := docparse.CheckJSON([]byte(tc.doc), lim)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.doc, err)
		}
	}
	if err := docparse.CheckJSON([]byte(strings.Repeat(" ", 1<<20+1)), lim); err == nil {
		t.Error("size not bounded")
	}
}

// TestHCLDepth: HCL's parser recurses per bracket, template, unary operator and
// conditional; a file past the depth is refused before it parses (a few hundred thousand
// brackets overflow the parser's stack, which ends the process).
func TestHCLDepth(t *testing.T) {
	lim := docparse.Limits{MaxBytes: 1 << 20, MaxDepth: 4}
	for _, tc := range []struct {
		src string
		ok  bool
	}{
		{`a = [[[1]]]`, true},
		{`b { a = [[[1]]] }`, true},
		{`b { a = [[[[1]]]] }`, false},
		{`a = "${"${"${x}"}"}"`, false},
		{`a = "${"${x}"}"`, true},
		{`a = !!!!true`, true},
		{`a = !!!!!true`, false},
		{`a = 1 - 1 - 1 - 1 - 1 - 1`, true},
		{`a = x ? 1 : y ? 2 : z ? 3 : w ? 4 : 5`, true},
		{`a = x ? 1 : y ? 2 : z ? 3 : w ? 4 : v ? 5 : 6`, false},
		{`a = [x ? 1 : 2, y ? 3 : 4, z ? 5 : 6, w ? 7 : 8, v ? 9 : 0]`, true},
		{"a = <<EOT\n[[[[[[\nEOT\n", true},
		{"a = [x ?\n1 : y ?\n2 : z ?\n3 : w ?\n4 : v ?\n5 : 6]", false},
		{"a = x ? 1 : 2\nb = x ? 1 : 2\nc = x ? 1 : 2\nd = x ? 1 : 2\ne = x ? 1 : 2\n", true},
		{"# [[[[[[\na = 1\n", true},
		{"// [[[[[[\na = 1 /* [[[[[[ */\n", true},
		{"a = \"[[[[[[ $${ \\\" ]]]]]] \"\nb = [[[1]]]\n", true},
		// A heredoc and its interpolation are two levels, as a quoted template and its.
		{"a = <<-EOT\n  [[[[[[ ${[[1]]}\n  EOT\nb = [[[1]]]\n", true},
		{"a = <<-EOT\n  ${[[[1]]]}\n  EOT\n", false},
		// Each open %{ if } is a level, and so is the directive being read.
		{"a = \"%{if a}%{if b}%{if c}x%{endif}%{endif}%{endif}\"", false},
		{"a = \"%{if a}%{if b}x%{endif}%{endif}\"", true},
		{"a = \"%{if a}x%{endif}%{if b}x%{endif}%{if c}x%{endif}%{if d}x%{endif}\"", true},
		{"a = - - - - 1", true},
		{"a = - - - - - 1", false},
		{"a = my-long-name-with-dashes", true},
	} {
		err := docparse.CheckHCL([]byte(tc.src), lim)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.src, err)
		}
	}
	deep := "a = " + nested(400_000) + "\n"
	if err := docparse.CheckHCL([]byte(deep), docparse.DefaultLimits()); err == nil || !strings.Contains(err.Error(), "deeper than 100") {
		t.Errorf("%v", err)
	}
}

// BenchmarkRefuseLaughs: what refusing a billion laughs costs.
func BenchmarkRefuseLaughs(b *testing.B) {
	doc := []byte(laughs())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := docparse.YAML(doc, docparse.DefaultLimits()); err == nil {
			b.Fatal("read")
		}
	}
}

// BenchmarkComposeFile: reading an ordinary compose file with merge keys, measured and
// converted to values.
func BenchmarkComposeFile(b *testing.B) {
	var s strings.Builder
	s.WriteString("x-defaults: &defaults\n  restart: always\n  logging: {driver: json-file, options: {max-size: 10m}}\nservices:\n")
	for i := range 50 {
		fmt.Fprintf(&s, "  svc%d:\n    <<: *defaults\n    image: example/svc%d:1.0\n    ports: [\"%d:80\"]\n", i, i, 8000+i)
	}
	doc := []byte(s.String())
	b.ReportAllocs()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		n, err := docparse.YAML(doc, docparse.DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := docparse.Value(n); err != nil {
			b.Fatal(err)
		}
	}
}

// TestManifestDepth: CheckTOML counts brackets and braces outside TOML's four kinds of
// strings and its comments; CheckXML counts open elements.
func TestManifestDepth(t *testing.T) {
	lim := docparse.Limits{MaxBytes: 1 << 20, MaxDepth: 3}
	for _, tc := range []struct {
		format, src string
		ok          bool
	}{
		{"toml", "[package]\nname = \"a\"\nx = [[1]]\n", true},
		{"toml", "x = [[[1]]]\n", true},
		{"toml", "x = [[[[1]]]]\n", false},
		{"toml", "x = {a = {b = {c = 1}}}\n", true},
		{"toml", "x = {a = {b = {c = {d = 1}}}}\n", false},
		{"toml", "x = \"[[[[\"\ny = [[1]]\n", true},
		{"toml", "x = '[[[[\\'\ny = [[1]]\n", true},
		{"toml", "x = \"\"\"\n[[[[\n\"\"\"\ny = [[1]]\n", true},
		{"toml", "x = '''\n[[[[\n'''\ny = [[[[1]]]]\n", false},
		{"toml", "x = [[1]] # [[[[\n", true},
		{"toml", "x = \"\\\"[[[[\"\n", true},
		{"xml", "<a><b><c>1</c></b></a>", true},
		{"xml", "<a><b><c><d>1</d></c></b></a>", false},
		{"xml", "<a><b/><b/><b><c/></b></a>", true},
		{"xml", "<a><!-- <b><c><d> --></a>", true},
	} {
		check := docparse.CheckTOML
		if tc.format == "xml" {
			check = docparse.CheckXML
		}
		if err := check([]byte(tc.src), lim); (err == nil) != tc.ok {
			t.Errorf("%s %q: %v", tc.format, tc.src, err)
		}
	}
	for _, check := range []func([]byte, docparse.Limits) error{docparse.CheckTOML, docparse.CheckXML} {
		if err := check([]byte(strings.Repeat(" ", 1<<20+1)), lim); err == nil {
			t.Error("size not bounded")
		}
	}
}
