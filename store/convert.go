package store

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// Convert reads a stored value (JSON) as a value of type to, where that loses nothing: a
// value of that type as it is, an integral number within Int's range as an Int, any number
// as a Float, anything as a String (a number or boolean as its JSON text, a list or object as
// its JSON), a String that parses as the type (an Int, a Float, "true" or "false", an RFC
// 3339 time with at most milliseconds), a single value as a list of one, a list item by item,
// anything as JSON. The value has the Go type of Doc's fields; ok is false when the value
// does not convert. null converts to nil.
func Convert(raw json.RawMessage, to FieldType) (v any, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	if string(raw) == "null" {
		return nil, true
	}
	if to.Scalar == JSON && !to.List {
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, false
		}
		return v, true
	}
	if to.List {
		item := FieldType{Scalar: to.Scalar}
		if raw[0] != '[' {
			v, ok := Convert(raw, item)
			if !ok || v == nil {
				return nil, false
			}
			return []any{v}, true
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, false
		}
		out := make([]any, len(items))
		for i, it := range items {
			if out[i], ok = Convert(it, item); !ok {
				return nil, false
			}
		}
		return out, true
	}
	var s string
	isString := raw[0] == '"'
	if isString {
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false
		}
	}
	isNumber := raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9'
	switch to.Scalar {
	case String, ID:
		if isString {
			return s, true
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			return nil, false
		}
		return compact.String(), true
	case Int:
		text := string(raw)
		if isString {
			text = s
		} else if !isNumber {
			return nil, false
		}
		if n, err := strconv.ParseInt(text, 10, 32); err == nil {
			return n, true
		}
		if isString {
			return nil, false
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
			return nil, false
		}
		return int64(f), true
	case Float:
		text := string(raw)
		if isString {
			text = s
		} else if !isNumber {
			return nil, false
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		return f, true
	case Boolean:
		switch {
		case string(raw) == "true" || isString && s == "true":
			return true, true
		case string(raw) == "false" || isString && s == "false":
			return false, true
		}
	case DateTime:
		if !isString {
			return nil, false
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || !t.Equal(t.Truncate(time.Millisecond)) {
			return nil, false
		}
		return t.UTC(), true
	}
	return nil, false
}

// Fit answers rec with each declared field's value read as the field's type (see Convert),
// and a value that does not convert left out, as if the record lacked it. Readers use it
// for a record that a definition changed under it: none of its values makes a read fail.
func (t *Table) Fit(rec Record) (Record, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(rec, &raw); err != nil {
		return nil, err
	}
	for k, v := range raw {
		f, ok := t.Field(k)
		if !ok {
			continue
		}
		cv, ok := Convert(v, f.Type)
		if !ok || cv == nil {
			delete(raw, k)
			continue
		}
		var b bytes.Buffer
		if err := writeValue(&b, cv); err != nil {
			return nil, err
		}
		raw[k] = b.Bytes()
	}
	out, err := json.Marshal(raw)
	return Record(out), err
}
