package gql

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
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
	for _, raw := range []string{
		`"2023-02-29T00:00:00.000Z"`, `"2100-02-29T00:00:00.000Z"`, `"2026-04-31T00:00:00.000Z"`,
		`"2026-13-01T00:00:00.000Z"`, `"2026-00-01T00:00:00.000Z"`, `"2026-11-00T00:00:00.000Z"`,
		`"2026-11-25T24:00:00.000Z"`, `"2026-11-25T23:60:00.000Z"`, `"2026-11-25T23:59:60.000Z"`,
	} {
		if _, ok := appendStoredValue(nil, keys, 0, span{0, len(raw)}, []byte(raw)); ok {
			t.Errorf("%s: answered, not a time", raw)
		}
	}
	// inLayout takes exactly the strings of its shape that time.Parse takes, whatever the
	// digits: years from 0000, leap days, the last days of months, hours past 23.
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		s := fmt.Appendf(nil, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", rng.IntN(10000), rng.IntN(14), rng.IntN(33), rng.IntN(26), rng.IntN(62), rng.IntN(62), rng.IntN(1000))
		if _, err := time.Parse(time.RFC3339Nano, string(s)); inLayout(s) != (err == nil) {
			t.Fatalf("inLayout(%s) = %v, time.Parse: %v", s, inLayout(s), err)
		}
	}
}

// A stored number shortDecimal takes is answered as AppendJSONFloat writes its float64.
func TestShortDecimals(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(raw string) {
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			t.Fatal(err)
		}
		if want := string(store.AppendJSONFloat(nil, f)); shortDecimal([]byte(raw)) && raw != want {
			t.Fatalf("%s is taken as it is, AppendJSONFloat writes %s", raw, want)
		}
	}
	for _, raw := range []string{"19.99", "-250", "1", "100", "999999999999999", "1.00000000000001", "9007199254740993", "123456789012345.6", "0.5", "1.50", "1e3", "-0"} {
		check(raw)
	}
	for range 200000 {
		digits := 1 + rng.IntN(17)
		b := []byte{byte('1' + rng.IntN(9))}
		for range digits - 1 {
			b = append(b, byte('0'+rng.IntN(10)))
		}
		if p := rng.IntN(len(b) + 1); p > 0 && p < len(b) {
			b = append(b[:p], append([]byte{'.'}, b[p:]...)...)
		}
		if rng.IntN(2) == 0 {
			b = append([]byte{'-'}, b...)
		}
		check(string(b))
	}
	for raw, want := range map[string]bool{"19.99": true, "-250": true, "0.5": false, "1.50": false, "1e3": false, "1234567890123456": false, "-": false, "1.": false} {
		if shortDecimal([]byte(raw)) != want {
			t.Errorf("shortDecimal(%s) = %v", raw, !want)
		}
	}
}
