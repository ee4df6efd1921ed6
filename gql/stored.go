package gql

import (
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/platform-dev/platform/store"
)

// storedKeys are the keys of t's stored records that encoding/json decodes into its record
// type, for appendStored.
type storedKeys struct {
	index  map[string]int  // json name -> record struct field
	folded map[string]bool // the same names in lower case
	fields int
	// types are the record struct's field types, zeros what appendScalar writes for their
	// zero values (a value left out of a record), both by field: a request looks up neither.
	types []reflect.Type
	zeros [][]byte
}

func newStoredKeys(t *table) storedKeys {
	n := t.rec.NumField()
	k := storedKeys{index: map[string]int{}, folded: map[string]bool{}, fields: n, types: make([]reflect.Type, n), zeros: make([][]byte, n)}
	for i := range n {
		f := t.rec.Field(i)
		k.types[i] = f.Type
		if zero, err := appendScalar(nil, reflect.New(f.Type).Elem()); err == nil {
			k.zeros[i] = zero
		}
		if name := f.Tag.Get("json"); name != "-" {
			k.index[name] = i
			k.folded[strings.ToLower(name)] = true
		}
	}
	return k
}

// foldsTo reports whether key, which is not one of the record type's, is one encoding/json
// would match to one of them ignoring case.
func (k storedKeys) foldsTo(key []byte) bool {
	for _, c := range key {
		if c >= 'A' && c <= 'Z' || c >= 0x80 {
			return k.folded[strings.ToLower(string(key))]
		}
	}
	return k.folded[string(key)]
}

// span is where a value lies in a stored record; end 0: absent.
type span struct{ start, end int }

// appendStored writes the selected fields of a stored record straight from its JSON: the
// bytes appendRecord writes after table.decode, without decoding into the record type. ok
// is false for a record it does not read so (a list or JSON value, a string with escapes or
// characters JSON escapes, a key encoding/json would match ignoring case, a key twice, a
// value of another type): that record goes through table.decode.
func appendStored(out []byte, t *table, keys storedKeys, rec store.Record, sels []*planSel) ([]byte, bool) {
	var buf [32]span
	var spans []span
	if keys.fields <= len(buf) {
		spans = buf[:keys.fields]
	} else {
		spans = make([]span, keys.fields)
	}
	if !readObject(rec, keys, spans) {
		return out, false
	}
	return appendObject(out, t.names.typ, sels, func(out []byte, s *planSel) ([]byte, bool) {
		return appendStoredValue(out, keys, s.index, spans[s.index], rec)
	})
}

// appendStoredValue writes the value at sp of the record struct's field as appendScalar
// writes it once decoded.
func appendStoredValue(out []byte, keys storedKeys, field int, sp span, rec store.Record) ([]byte, bool) {
	typ := keys.types[field]
	if elem := typ; elem.Kind() == reflect.Slice || elem.Kind() == reflect.Pointer && elem.Elem().Kind() == reflect.Slice ||
		elem == reflect.TypeFor[jsonValue]() || elem == reflect.TypeFor[*jsonValue]() {
		return out, false
	}
	raw := rec[sp.start:sp.end]
	if typ.Kind() == reflect.Pointer {
		if sp.end == 0 || string(raw) == "null" {
			return append(out, "null"...), true
		}
		typ = typ.Elem()
	} else if sp.end == 0 || string(raw) == "null" {
		// encoding/json leaves the field as it is: its zero value.
		return append(out, keys.zeros[field]...), keys.zeros[field] != nil
	}
	switch {
	case typ == reflect.TypeFor[stamp]():
		s, ok := plainString(raw)
		if !ok {
			return out, false
		}
		if inLayout(s) {
			// A valid time written in timeLayout, in UTC, is what stamp.append writes
			// for it: parsing and formatting it again, twice per record, would give back
			// the same bytes.
			return append(out, raw...), true
		}
		tm, err := time.Parse(time.RFC3339Nano, string(s))
		return stamp(tm).append(out), err == nil
	case typ.Kind() == reflect.String:
		if _, ok := plainString(raw); !ok {
			return out, false
		}
		return append(out, raw...), true
	case typ.Kind() == reflect.Int32:
		n, err := strconv.ParseInt(string(raw), 10, 32)
		return strconv.AppendInt(out, n, 10), err == nil
	case typ.Kind() == reflect.Float64:
		if shortDecimal(raw) {
			return append(out, raw...), true
		}
		if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
			return out, false
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		return store.AppendJSONFloat(out, f), err == nil
	case typ.Kind() == reflect.Bool && (string(raw) == "true" || string(raw) == "false"):
		return append(out, raw...), true
	}
	return out, false
}

// inLayout reports whether s is a valid UTC time in timeLayout, 2006-01-02T15:04:05.000Z:
// digits where the layout has digits, and a date and time that exist, as time.Parse checks
// them (seconds up to 59, days as the month and year have them).
func inLayout(s []byte) bool {
	const shape = "0000-00-00T00:00:00.000Z"
	if len(s) != len(shape) {
		return false
	}
	for i := range len(shape) {
		if c := s[i]; shape[i] == '0' && (c < '0' || c > '9') || shape[i] != '0' && c != shape[i] {
			return false
		}
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range s[i : i+n] {
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	return month >= 1 && month <= 12 && day >= 1 &&
		day <= time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day() &&
		num(11, 2) <= 23 && num(14, 2) <= 59 && num(17, 2) <= 59
}

// shortDecimal reports whether raw is a number of magnitude at least 1 written with at most
// 15 significant digits, no exponent and no zero ending its fraction (19.99, -250, 3.5).
// No other decimal of 15 digits or fewer stands for the same float64, so its shortest form,
// which AppendJSONFloat writes (as 'f' between 1e-6 and 1e21), is raw itself: a price is
// answered without parsing and formatting it again.
func shortDecimal(raw []byte) bool {
	i := 0
	if len(raw) > 0 && raw[0] == '-' {
		i++
	}
	if i >= len(raw) || raw[i] < '1' || raw[i] > '9' {
		return false
	}
	digits, point := 0, -1
	for ; i < len(raw); i++ {
		switch c := raw[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && point < 0:
			point = i
		default:
			return false
		}
	}
	return digits <= 15 && (point < 0 || point < len(raw)-1 && raw[len(raw)-1] != '0')
}

// plainString is the text of a JSON string that holds no escape and nothing JSON escapes.
func plainString(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return nil, false
	}
	s := raw[1 : len(raw)-1]
	return s, plain(s)
}

// readObject finds the values of rec, a JSON object as the store writes it (valid JSON),
// for the keys of the record type, in spans by struct field; false where encoding/json
// might read rec otherwise.
func readObject(rec store.Record, keys storedKeys, spans []span) bool {
	i := skipSpace(rec, 0)
	if i >= len(rec) || rec[i] != '{' {
		return false
	}
	i = skipSpace(rec, i+1)
	if i < len(rec) && rec[i] == '}' {
		return skipSpace(rec, i+1) == len(rec)
	}
	for i < len(rec) {
		end := skipString(rec, i)
		if end < 0 {
			return false
		}
		key, ok := plainString(rec[i:end])
		if !ok {
			return false
		}
		i = skipSpace(rec, end)
		if i >= len(rec) || rec[i] != ':' {
			return false
		}
		i = skipSpace(rec, i+1)
		end = skipValue(rec, i)
		if end < 0 {
			return false
		}
		if f, ok := keys.index[string(key)]; ok {
			if spans[f].end != 0 {
				return false
			}
			spans[f] = span{i, end}
		} else if keys.foldsTo(key) {
			return false
		}
		i = skipSpace(rec, end)
		if i >= len(rec) {
			return false
		}
		switch rec[i] {
		case '}':
			return skipSpace(rec, i+1) == len(rec)
		case ',':
			i = skipSpace(rec, i+1)
		default:
			return false
		}
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the JSON string at i, -1 if there is none.
func skipString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the end of the JSON value at i, -1 if there is none.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end := skipString(b, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	start := i
	for i < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[i])) {
		i++
	}
	if i == start {
		return -1
	}
	return i
}
