package store

import "fmt"

// Scalar is the type of a field's value.
type Scalar string

// The scalars a table field may have.
const (
	String   Scalar = "String"
	Int      Scalar = "Int"
	Float    Scalar = "Float"
	Boolean  Scalar = "Boolean"
	ID       Scalar = "ID"
	DateTime Scalar = "DateTime"
	JSON     Scalar = "JSON"
)

// Scalars lists every scalar, in the order the documentation shows them.
var Scalars = []Scalar{String, Int, Float, Boolean, ID, DateTime, JSON}

// FieldType is a scalar or a list of a scalar ("[String]").
type FieldType struct {
	Scalar Scalar
	List   bool
}

// ParseFieldType reads a type name as a project document writes it.
func ParseFieldType(s string) (FieldType, error) {
	t := FieldType{Scalar: Scalar(s)}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		t = FieldType{Scalar: Scalar(s[1 : len(s)-1]), List: true}
	}
	for _, sc := range Scalars {
		if t.Scalar == sc {
			return t, nil
		}
	}
	return FieldType{}, fmt.Errorf("unknown type %q (want one of String, Int, Float, Boolean, ID, DateTime, JSON, or a list of one such as [String])", s)
}

func (t FieldType) String() string {
	if t.List {
		return "[" + string(t.Scalar) + "]"
	}
	return string(t.Scalar)
}

// Field is one column of a table.
type Field struct {
	Name        string
	Type        FieldType
	Required    bool
	Description string
	// Default is the value stored when a create omits the field (nil: none). It has the Go
	// type that the field's values have once decoded from JSON (string, float64, bool, []any,
	// map[string]any) and has been checked against Type.
	Default any
	// File, when set, makes the field a File ([File] when Type.List): its values are
	// FileMeta objects, stored as JSON, and their bytes are in the project's Blobs.
	File *FileSpec
}

// Table is the definition of one table: its name, its fields sorted by name, and the indexes
// it declares.
type Table struct {
	Name    string
	Fields  []Field
	Indexes []Index
	// Search, when set, is the table's full-text index (see Matches).
	Search *Search
	// Outbox keeps every change of the table's records in the project's outbox, written
	// by the write that makes it (see Records.FanOut): webhooks are delivered from it.
	Outbox bool

	byName map[string]int // Fields by name, set by index
}

// Index is an index a table declares: on one field or several (in that order), unique or not.
// Fields are scalar (not lists, not JSON).
type Index struct {
	Fields []string
	Unique bool
}

// MaxIndexes bounds the indexes one table declares.
const MaxIndexes = 16

func (t *Table) index() {
	t.byName = make(map[string]int, len(t.Fields))
	for i, f := range t.Fields {
		t.byName[f.Name] = i
	}
}

// Field returns the field called name.
func (t Table) Field(name string) (Field, bool) {
	if t.byName != nil {
		i, ok := t.byName[name]
		if !ok {
			return Field{}, false
		}
		return t.Fields[i], true
	}
	for _, f := range t.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// KeyType is the type of a record key: a declared field's, or that of a key the service
// keeps; ok is false for a key the table does not have.
func (t Table) KeyType(key string) (ft FieldType, ok bool) {
	switch key {
	case KeyUID, KeyOwner:
		return FieldType{Scalar: ID}, true
	case KeyCreatedAt, KeyUpdatedAt:
		return FieldType{Scalar: DateTime}, true
	case KeyRank:
		return FieldType{Scalar: Float}, t.Search != nil
	}
	f, ok := t.Field(key)
	return f.Type, ok
}

// Record keys the service keeps, so a table may not declare them.
const (
	KeyUID       = "uid"
	KeyCreatedAt = "createdAt"
	KeyUpdatedAt = "updatedAt"
	KeyOwner     = "_owner"
)
