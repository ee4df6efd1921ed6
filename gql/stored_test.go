package gql

import (
	"reflect"
	"testing"
	"time"
)

// A stored time is answered as stamp writes it once decoded, whether it is copied (in
// timeLayout, UTC) or formatted again.
func TestStoredTimes(t *testing.T) {
	keys := storedKeys{types: []reflect.Type{reflect.TypeFor[stamp]()}, zeros: [][]byte{nil}}
	for _, raw := range []string{
		`"2026-11-25T01:44:00.123Z"`,
		`"0001-01-01T00:00:00.000Z"`,
		`"2024-02-29T23:59:59.999Z"`,
		`"2026-11-25T01:44:00.123456Z"`,
		`"2026-11-25T03:44:00.123+02:00"`,
		`"2026-11-25T01:44:00Z"`,
	} {
		tm, err := time.Parse(time.RFC3339Nano, raw[1:len(raw)-1])
		if err != nil {
			t.Fatal(err)
		}
		want := string(stamp(tm).append(nil))
		got, ok := appendStoredValue(nil, keys, 0, span{0, len(raw)}, []byte(raw))
		if !ok || string(got) != want {
			t.Errorf("%s: %s %v, want %s", raw, got, ok, want)
		}
	}
	for _, raw := range []string{`"2023-02-29T00:00:00.000Z"`, `"2026-13-01T00:00:00.000Z"`, `"2026-11-25T24:00:00.000Z"`} {
		if _, ok := appendStoredValue(nil, keys, 0, span{0, len(raw)}, []byte(raw)); ok {
			t.Errorf("%s: answered, not a time", raw)
		}
	}
}
