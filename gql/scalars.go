package gql

import (
	"encoding/json"
	"fmt"
	"time"
)

// timeLayout is how the API shows times: RFC 3339, UTC, milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// stamp is a stored time shown as an RFC 3339 string. It serves createdAt and updatedAt
// (GraphQL String) and fields of type DateTime.
type stamp time.Time

// ImplementsGraphQLType lets graph-gophers bind stamp to String and DateTime outputs.
func (stamp) ImplementsGraphQLType(name string) bool { return name == "String" || name == "DateTime" }

// UnmarshalGraphQL is required by graph-gophers' scalar binding; inputs never reach it
// because arguments are read through argValue.
func (s *stamp) UnmarshalGraphQL(input any) error {
	t, err := parseTime(input)
	*s = stamp(t)
	return err
}

// MarshalJSON writes the time as the API shows it.
func (s stamp) MarshalJSON() ([]byte, error) {
	return s.append(make([]byte, 0, len(timeLayout)+2)), nil
}

// append writes the time as MarshalJSON does.
func (s stamp) append(b []byte) []byte {
	b = append(b, '"')
	b = time.Time(s).UTC().AppendFormat(b, timeLayout)
	return append(b, '"')
}

// UnmarshalJSON reads a stored time (store.TimeLayout).
func (s *stamp) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return fmt.Errorf("read date: %w", err)
	}
	t, err := time.Parse(time.RFC3339Nano, str)
	if err != nil {
		return fmt.Errorf("read date: %w", err)
	}
	*s = stamp(t)
	return nil
}

func parseTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("want an RFC 3339 date-time string, got %s", describe(v))
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want an RFC 3339 date-time such as 2026-11-22T10:04:05.123Z, got %q", s)
	}
	return t.UTC().Truncate(time.Millisecond), nil
}

// jsonValue is a stored value of a JSON field, shown as JSON.
type jsonValue struct{ v any }

// ImplementsGraphQLType lets graph-gophers bind jsonValue to the JSON scalar.
func (jsonValue) ImplementsGraphQLType(name string) bool { return name == "JSON" }

// UnmarshalGraphQL is required by graph-gophers' scalar binding; inputs never reach it
// because arguments are read through argValue.
func (j *jsonValue) UnmarshalGraphQL(input any) error {
	j.v = input
	return nil
}

// MarshalJSON writes the value.
func (j jsonValue) MarshalJSON() ([]byte, error) { return json.Marshal(j.v) }

// UnmarshalJSON keeps the stored value as encoding/json decodes it.
func (j *jsonValue) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &j.v) }

// argValue receives any GraphQL argument as graph-gophers decoded it (from a literal or the
// variables), so that one Go type serves every generated argument and the table's
// definition, not Go types, decides how it is read. set tells an absent argument from null.
type argValue struct {
	set bool
	v   any
}

// ImplementsGraphQLType accepts every input type: the table's definition checks values.
func (argValue) ImplementsGraphQLType(string) bool { return true }

// UnmarshalGraphQL keeps the value as given.
func (a *argValue) UnmarshalGraphQL(input any) error {
	a.set, a.v = true, input
	return nil
}

// Nullable makes graph-gophers hand null and absent arguments to argValue too.
func (argValue) Nullable() {}

// args carries the arguments of every generated root field.
type args struct {
	UID     argValue
	ID      argValue
	Where   argValue
	OrderBy argValue
	Limit   argValue
	Offset  argValue
	Data    argValue
	First   argValue
	After   argValue
	Search  argValue
	// unmarked: the executor saw no _highlights selected, so a search's records need none
	// (graph-gophers' resolvers leave it false, and always highlight).
	unmarked bool
}

func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int32, int64, int, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
