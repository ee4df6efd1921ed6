package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"
)

// Values decodes a record into its keys' Go values by the table's types: String and ID
// string, Int int64, Float float64, Boolean bool, DateTime time.Time, JSON what encoding/json
// decodes, lists []any of those; uid and _owner string, createdAt and updatedAt time.Time.
// Access rules see records this way. A stored value of another type than its field's (the
// definition changed under it) is kept as JSON reads it, as that of a field no longer declared.
func (t *Table) Values(rec Record) (map[string]any, error) { return t.values(rec, false) }

// values is Values; strict refuses a value of another type than its field's.
func (t *Table) values(rec Record, strict bool) (map[string]any, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(rec, &raw); err != nil {
		return nil, fmt.Errorf("decode %s record: %w", t.Name, err)
	}
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		ft, ok := t.KeyType(k)
		if !ok {
			// A field no longer declared keeps its stored value as JSON reads it.
			ft = FieldType{Scalar: JSON}
		}
		val, err := decodeValue(ft, v)
		if err != nil && !strict {
			val, err = decodeValue(FieldType{Scalar: JSON}, v)
		}
		if err != nil {
			return nil, fmt.Errorf("decode %s record: %s: %w", t.Name, k, err)
		}
		out[k] = val
	}
	return out, nil
}

// decodeDoc reads a Record back into the Doc that wrote it.
func (t *Table) decodeDoc(rec Record) (Doc, error) {
	if len(bytes.TrimSpace(rec)) == 0 || bytes.TrimSpace(rec)[0] != '{' {
		return Doc{}, errNotObject
	}
	vals, err := t.values(rec, true)
	if err != nil {
		return Doc{}, err
	}
	var d Doc
	var ok bool
	if d.UID, ok = vals[KeyUID].(string); !ok || d.UID == "" {
		return Doc{}, fmt.Errorf("the record has no uid")
	}
	d.Owner, _ = vals[KeyOwner].(string)
	if d.CreatedAt, ok = vals[KeyCreatedAt].(time.Time); !ok {
		return Doc{}, fmt.Errorf("record %q has no createdAt", d.UID)
	}
	if d.UpdatedAt, ok = vals[KeyUpdatedAt].(time.Time); !ok {
		d.UpdatedAt = d.CreatedAt
	}
	d.Fields = make(map[string]any, len(vals))
	for k, v := range vals {
		switch k {
		case KeyUID, KeyOwner, KeyCreatedAt, KeyUpdatedAt:
			continue
		}
		if v != nil {
			d.Fields[k] = v
		}
	}
	return d, nil
}

func decodeValue(ft FieldType, raw json.RawMessage) (any, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	if ft.List && ft.Scalar != JSON {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		out := make([]any, len(items))
		for i, it := range items {
			v, err := decodeValue(FieldType{Scalar: ft.Scalar}, it)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	switch ft.Scalar {
	case Int:
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, err
		}
		if f != math.Trunc(f) {
			return f, nil
		}
		return int64(f), nil
	case DateTime:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, err
		}
		return t.UTC(), nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

func sortedFieldKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
