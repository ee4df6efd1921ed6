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
}

// Table is the definition of one table: its collection name and its fields, sorted by name.
type Table struct {
	Name     string // the collection, and the plural used by list queries (products)
	TypeName string // the record type (product)
	Fields   []Field
}

// Field returns the field called name.
func (t Table) Field(name string) (Field, bool) {
	for _, f := range t.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Reserved record keys: the service sets them, so a table may not declare them.
const (
	KeyUID       = "_id" // shown as uid
	KeyCreatedAt = "createdAt"
	KeyUpdatedAt = "updatedAt"
	KeyOwner     = "_owner"
)
