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
}

func newStoredKeys(t *table) storedKeys {
	k := storedKeys{index: map[string]int{}, folded: map[string]bool{}, fields: t.rec.NumField()}
	for i := range k.fields {
		name := t.rec.Field(i).Tag.Get("json")
		if name == "-" {
			continue
		}
		k.index[name] = i
		k.folded[strings.ToLower(name)] = true
	}
	return k
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
		return appendStoredValue(out, t.rec.Field(s.index).Type, spans[s.index], rec)
	})
}

// appendStoredValue writes the value at sp of a field of Go type typ as appendScalar writes
// it once decoded.
func appendStoredValue(out []byte, typ reflect.Type, sp span, rec store.Record) ([]byte, bool) {
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
		out, err := appendScalar(out, reflect.New(typ).Elem())
		return out, err == nil
	}
	switch {
	case typ == reflect.TypeFor[stamp]():
		s, ok := plainString(raw)
		if !ok {
			return out, false
		}
		tm, err := time.Parse(time.RFC3339Nano, s)
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

// plainString is the text of a JSON string that holds no escape and nothing JSON escapes.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	s := string(raw[1 : len(raw)-1])
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
		if f, ok := keys.index[key]; ok {
			if spans[f].end != 0 {
				return false
			}
			spans[f] = span{i, end}
		} else if keys.folded[strings.ToLower(key)] {
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
