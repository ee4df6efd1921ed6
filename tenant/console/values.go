package console

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/platform-dev/platform/store"
)

// parseValue reads what a form input holds as a value of type ft, in the Go types the store
// takes. A list is written one item a line.
func parseValue(ft store.FieldType, s string) (any, error) {
	if !ft.List {
		return parseScalar(ft.Scalar, s)
	}
	var items []any
	for i, line := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		v, err := parseScalar(ft.Scalar, line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		items = append(items, v)
	}
	return items, nil
}

// dateLayouts are the times a form may hold: RFC 3339, or what <input type=datetime-local>
// sends, read as UTC.
var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}

func parseScalar(sc store.Scalar, s string) (any, error) {
	switch sc {
	case store.String, store.ID:
		return s, nil
	case store.Int:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number between %d and %d", s, math.MinInt32, math.MaxInt32)
		}
		return n, nil
	case store.Float:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	case store.Boolean:
		switch strings.TrimSpace(s) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not true or false", s)
	case store.DateTime:
		for _, l := range dateLayouts {
			if t, err := time.Parse(l, strings.TrimSpace(s)); err == nil {
				return t.UTC(), nil
			}
		}
		return nil, fmt.Errorf("%q is not a time such as 2026-11-22T10:04:05Z", s)
	case store.JSON:
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("type %s cannot be edited here", sc)
}

// formatValue writes a value (as store.Table.Values reads it, or a default as the project
// document holds it) the way parseValue reads it back.
func formatValue(ft store.FieldType, v any) string {
	if v == nil {
		return ""
	}
	if ft.List {
		items, _ := v.([]any)
		lines := make([]string, len(items))
		for i, it := range items {
			lines[i] = formatScalar(ft.Scalar, it)
		}
		return strings.Join(lines, "\n")
	}
	return formatScalar(ft.Scalar, v)
}

func formatScalar(sc store.Scalar, v any) string {
	if sc == store.JSON {
		js, _ := json.Marshal(v) // values encoding/json decoded always encode
		return string(js)
	}
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.UTC().Format(store.TimeLayout)
	}
	return fmt.Sprint(v)
}
