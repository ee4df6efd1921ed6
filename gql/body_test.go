package gql

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadOnce holds the one-pass reading of a POST's body to encoding/json's: whatever
// body readOnce accepts, encoding/json accepts too and reads the same query, operation name,
// extensions and variables (same Go values, written back as the same JSON). The seeds are
// what clients send and the bodies each reader treats in its own way; go test runs them,
// go test -fuzz FuzzReadOnce looks for more.
func FuzzReadOnce(f *testing.F) {
	for _, body := range []string{
		`{"query":"query products($uid: ID) { products(uid: $uid) { uid name } }","variables":{"uid":"01JDX3K4N5P6Q7R8S9T0VWXYZA"}}`,
		`{"query":"{ products { uid } }"}`,
		`{"query":"q","operationName":"Op","variables":null,"extensions":null}`,
		`{"query":"q","variables":{},"extensions":{"persistedQuery":{"version":1}}}`,
		` {"query" : "q" , "variables" : {"a" : [1, 2.5, -0, 1e308, true, null, "x", {"b": {}}]}} `,
		`{"query":"q","variables":{"x":1e309}}`,
		`{"query":"q","variables":{"x":1,"x":2}}`,
		`{"query":"q","query":"r"}`,
		`{"Query":"q"}`,
		`{"QUERY":"q","VARIABLES":{"a":1}}`,
		`{"query":"q","id":"persisted"}`,
		`{"query":"caf\u00e9 \ud83d\ude00 \n \" \\ \/"}`,
		`{"query":"q\ud800"}`,
		"{\"query\":\"q\xff\"}",
		`{"query":1}`,
		`{"query":null}`,
		`{"query":"q","variables":"{\"a\":1}"}`,
		`{"query":"q","variables":[1]}`,
		`{"query":"q","extensions":[1]}`,
		`{"query":"q"} trailing`,
		`[]`,
		`null`,
		``,
		`{"query":"q","variables":{"deep":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}}`,
		`{"query":"q","variables":{"deep":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`,
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var once request
		if !readOnce(body, &once) {
			return
		}
		var std request
		if err := json.Unmarshal(body, &std); err != nil {
			t.Fatalf("readOnce read %q, encoding/json refuses it: %v", body, err)
		}
		vars, msg := variables(std.Variables)
		if msg != "" {
			t.Fatalf("readOnce read the variables of %q, encoding/json refuses them: %s", body, msg)
		}
		if !reflect.DeepEqual(once.Query, std.Query) || !reflect.DeepEqual(once.OperationName, std.OperationName) {
			t.Fatalf("%q: query and operation name %v %v, encoding/json reads %v %v", body, deref(once.Query), deref(once.OperationName), deref(std.Query), deref(std.OperationName))
		}
		if string(once.Extensions) != string(std.Extensions) {
			t.Fatalf("%q: extensions %q, encoding/json reads %q", body, once.Extensions, std.Extensions)
		}
		got, _ := once.variables()
		gotJS, err1 := json.Marshal(got)
		wantJS, err2 := json.Marshal(vars)
		if !reflect.DeepEqual(got, vars) || string(gotJS) != string(wantJS) || err1 != nil || err2 != nil {
			t.Fatalf("%q: variables %#v, encoding/json reads %#v", body, got, vars)
		}
	})
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// What clients send is read in one pass; what only encoding/json's leniency reads is left
// to it, as are errors, whose messages are its.
func TestReadOnce(t *testing.T) {
	for _, tc := range []struct {
		body string
		once bool
	}{
		{`{"query":"{ products { uid } }"}`, true},
		{`{"query":"query q($uid: ID) { products(uid: $uid) { uid } }","variables":{"uid":"u1"},"operationName":"q"}`, true},
		{`{"query":"q","variables":null,"extensions":{"persistedQuery":{"version":1}}}`, true},
		{`{"Query":"q"}`, false},
		{`{"query":"q","id":"persisted"}`, false},
		{`{"query":"q","query":"r"}`, false},
		{"{\"query\":\"q\xff\"}", false},
		{`{"query":"q","variables":{"x":1e309}}`, false},
		{`{"query":"q","variables":[1]}`, false},
		{`{"query":"q"`, false},
	} {
		var req request
		if got := readOnce([]byte(tc.body), &req); got != tc.once {
			t.Errorf("readOnce(%s) = %v, want %v", tc.body, got, tc.once)
		}
	}
}

// BenchmarkReadBody reads the body of the seed's fetch by uid in one pass, and as
// encoding/json reads it (the body, then its variables).
func BenchmarkReadBody(b *testing.B) {
	body := []byte(`{"query":"query products($uid: ID) { products(uid: $uid) { uid name price author createdAt updatedAt } }","variables":{"uid":"01JDX3K4N5P6Q7R8S9T0VWXYZA"}}`)
	b.Run("one pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var req request
			if !readOnce(body, &req) {
				b.Fatal("not read in one pass")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var req request
			if err := json.Unmarshal(body, &req); err != nil {
				b.Fatal(err)
			}
			if _, msg := req.variables(); msg != "" {
				b.Fatal(msg)
			}
		}
	})
}
