// Package tenant knows projects: their documents, the registry that stores them in the control
// database, the per-project cache that keeps requests free of control-database reads, the Echo
// middleware that maps a request's host to its project, and who the caller is (tokens and
// access rules).
package tenant

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/platform-dev/platform/docparse"
	"github.com/platform-dev/platform/gql"
	"github.com/platform-dev/platform/store"
)

// DocumentSchema is the JSON Schema of a project document, published as
// docs/project.schema.json.
//
//go:embed project.schema.json
var DocumentSchema []byte

// Project is a validated project document.
type Project struct {
	ID       string              `json:"id"`
	MongoURI string              `json:"mongoURI,omitempty"`
	Auth     *Auth               `json:"auth,omitempty"`
	GraphQL  GraphQLSettings     `json:"graphql,omitzero"`
	CORS     CORS                `json:"cors,omitzero"`
	Tables   map[string]TableDoc `json:"tables"`

	// Version counts the replacements of this project; the registry sets it.
	Version   int64     `json:"version,omitempty"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// Auth names the identity provider whose ID tokens the project trusts.
type Auth struct {
	JWKSURL  string `json:"jwksURL"`
	Issuer   string `json:"issuer"`
	Audience string `json:"audience"`
}

// GraphQLSettings tunes a project's GraphQL API; zero values take the server's defaults.
type GraphQLSettings struct {
	Introspection *bool `json:"introspection,omitempty"`
	DefaultLimit  int   `json:"defaultLimit,omitempty"`
	MaxLimit      int   `json:"maxLimit,omitempty"`
}

// CORS names the browser origins whose pages may call the project's GraphQL API.
type CORS struct {
	// Origins are scheme://host[:port] values, or "*" for any origin; none by default.
	Origins []string `json:"origins,omitempty"`
}

// TableDoc is a table as the project document writes it.
type TableDoc struct {
	TypeName    string              `json:"typeName,omitempty"`
	Description string              `json:"description,omitempty"`
	Fields      map[string]FieldDoc `json:"fields"`
	Indexes     []IndexDoc          `json:"indexes,omitempty"`
	Search      *SearchDoc          `json:"search,omitempty"`
	Access      Access              `json:"access,omitzero"`
	// Relations link the table's records to records of other tables, by the relation's
	// name in the record type.
	Relations map[string]RelationDoc `json:"relations,omitempty"`
	// Webhooks tell other services of the table's changes, by webhook name (webhooks.go).
	Webhooks map[string]WebhookDoc `json:"webhooks,omitempty"`
}

// RelationDoc is a relation as the project document writes it: many-to-one with Field
// (this table's field holds the other record's uid), one-to-many with ForeignField (the
// other table's field holds this record's uid).
type RelationDoc struct {
	Table        string `json:"table"`
	Field        string `json:"field,omitempty"`
	ForeignField string `json:"foreignField,omitempty"`
}

// IndexDoc is an index as the project document writes it.
type IndexDoc struct {
	Fields []string `json:"fields"`
	Unique bool     `json:"unique,omitempty"`
}

// FieldDoc is a field as the project document writes it.
type FieldDoc struct {
	Type        string `json:"type"`
	Required    bool   `json:"required,omitempty"`
	Description string `json:"description,omitempty"`
	Default     any    `json:"default,omitempty"`
	// File are the limits of a File or [File] field (files.go).
	File *FileDoc `json:"file,omitempty"`
}

// Problem is one thing wrong with a document, at a dotted path such as
// "tables.products.fields.price.type".
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// DocumentError lists everything wrong with a project document.
type DocumentError struct {
	Problems []Problem
}

func (e *DocumentError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		if p.Path == "" {
			parts[i] = p.Message
		} else {
			parts[i] = p.Path + ": " + p.Message
		}
	}
	return strings.Join(parts, "; ")
}

func (e *DocumentError) add(path, format string, a ...any) {
	e.Problems = append(e.Problems, Problem{Path: path, Message: fmt.Sprintf(format, a...)})
}

// MaxDocumentBytes bounds a project document.
const MaxDocumentBytes = 1 << 20

var (
	documentSchema = mustCompileSchema()
	englishPrinter = message.NewPrinter(language.English)
)

func mustCompileSchema() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(DocumentSchema))
	if err != nil {
		panic(fmt.Sprintf("project.schema.json: %v", err))
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("project.schema.json", doc); err != nil {
		panic(fmt.Sprintf("project.schema.json: %v", err))
	}
	return c.MustCompile("project.schema.json")
}

// ValidateID checks a project id: a DNS label of lowercase letters, digits and hyphens (the
// pattern of project.schema.json's id, checked here without a regular expression since
// every request to a project host checks its label).
func ValidateID(id string) error {
	ok := len(id) >= 1 && len(id) <= 63 && id[0] != '-' && id[len(id)-1] != '-'
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-'
	}
	if !ok {
		return fmt.Errorf("invalid project id %q: use 1 to 63 lowercase letters, digits and hyphens, not starting or ending with a hyphen", id)
	}
	return nil
}

// ParseDocument reads a project document written as JSON or YAML, within docparse's bounds
// (size, depth, YAML aliases), and validates it completely. Errors name the offending path; YAML
// syntax errors name the line.
func ParseDocument(data []byte) (*Project, error) {
	if len(data) > MaxDocumentBytes {
		return nil, &DocumentError{Problems: []Problem{{Message: fmt.Sprintf("document is larger than %d bytes", MaxDocumentBytes)}}}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &DocumentError{Problems: []Problem{{Message: "document is empty"}}}
	}
	js, err := documentJSON(data)
	if err != nil {
		return nil, err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, &DocumentError{Problems: []Problem{{Message: "not valid JSON: " + err.Error()}}}
	}
	de := &DocumentError{}
	checkNames(inst, de)
	if err := documentSchema.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, fmt.Errorf("validate project document: %w", err)
		}
		collectSchemaProblems(ve, de)
	}
	if len(de.Problems) > 0 {
		return nil, de
	}
	var p Project
	if err := json.Unmarshal(js, &p); err != nil {
		return nil, &DocumentError{Problems: []Problem{{Message: err.Error()}}}
	}
	p.Version, p.UpdatedAt = 0, time.Time{}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// documentJSON returns a document as JSON, within docparse's bounds: a YAML document is
// measured with its aliases expanded before anything is built from it.
func documentJSON(data []byte) ([]byte, error) {
	lim := docparse.DefaultLimits()
	lim.MaxBytes = MaxDocumentBytes
	refuse := func(prefix string, err error) error {
		if _, ok := errors.AsType[*docparse.LimitError](err); ok {
			prefix = ""
		}
		return &DocumentError{Problems: []Problem{{Message: prefix + err.Error()}}}
	}
	if json.Valid(data) {
		if err := docparse.CheckJSON(data, lim); err != nil {
			return nil, refuse("", err)
		}
		return data, nil
	}
	n, err := docparse.YAML(data, lim)
	if errors.Is(err, io.EOF) {
		return nil, &DocumentError{Problems: []Problem{{Message: "document is empty"}}}
	}
	if err != nil {
		return nil, refuse("not valid JSON or YAML: ", err)
	}
	v, err := docparse.Value(n)
	if err == nil {
		var js []byte
		if js, err = json.Marshal(v); err == nil {
			return js, nil
		}
	}
	return nil, refuse("not valid JSON or YAML: ", err)
}

// collectSchemaProblems keeps the leaves of the schema validator's error tree: they say what
// is wrong where, while the inner nodes only repeat "does not validate with ...". Bad table
// and field names are left to checkNames: the validator's location of a bad key is not
// reliable (it has named a sibling property's path).
func collectSchemaProblems(ve *jsonschema.ValidationError, de *DocumentError) {
	if _, ok := ve.ErrorKind.(*kind.PropertyNames); ok {
		return
	}
	if len(ve.Causes) == 0 {
		de.add(strings.Join(ve.InstanceLocation, "."), "%s", ve.ErrorKind.LocalizedString(englishPrinter))
		return
	}
	for _, c := range ve.Causes {
		collectSchemaProblems(c, de)
	}
}

// namePattern is what a table or field name must match: a GraphQL name of at most 63
// characters (the schema's propertyNames say the same).
var namePattern = regexp.MustCompile(`^[_A-Za-z][_A-Za-z0-9]{0,62}$`)

// checkNames reports every table and field name that namePattern refuses, at its own path.
func checkNames(inst any, de *DocumentError) {
	doc, _ := inst.(map[string]any)
	tables, _ := doc["tables"].(map[string]any)
	for _, t := range sortedKeys(tables) {
		if !namePattern.MatchString(t) {
			de.add("tables."+t, "invalid name %q: use letters, digits and underscores, starting with a letter, at most 63 characters", t)
		}
		table, _ := tables[t].(map[string]any)
		fields, _ := table["fields"].(map[string]any)
		for _, f := range sortedKeys(fields) {
			if !namePattern.MatchString(f) {
				de.add("tables."+t+".fields."+f, "invalid name %q: use letters, digits and underscores, starting with a letter, at most 63 characters", f)
			}
		}
	}
}

// validate checks what the schema cannot: field types, reserved names, defaults of the right
// type, distinct type names and the access rules.
func (p *Project) validate() error {
	de := &DocumentError{}
	typeOwner := map[string]string{}
	for _, name := range sortedKeys(p.Tables) {
		t := p.Tables[name]
		tpath := "tables." + name
		if strings.HasPrefix(name, "_") {
			de.add(tpath, "table names starting with an underscore are reserved")
		}
		typeName := t.TypeName
		if typeName == "" {
			typeName = Singular(name)
		}
		if other, ok := typeOwner[typeName]; ok {
			de.add(tpath+".typeName", "type name %q is already used by table %q; set a distinct typeName", typeName, other)
		}
		typeOwner[typeName] = name
		types := make(map[string]store.FieldType, len(t.Fields))
		for _, fname := range sortedKeys(t.Fields) {
			f := t.Fields[fname]
			fpath := tpath + ".fields." + fname
			switch {
			case strings.HasPrefix(fname, "_"):
				de.add(fpath, "field names starting with an underscore are reserved")
			case fname == "uid" || fname == store.KeyCreatedAt || fname == store.KeyUpdatedAt:
				de.add(fpath, "%q is set by the service and cannot be declared", fname)
			case fname == "id":
				de.add(fpath, "\"id\" is the record's uid under the name client caches normalise by, set by the service; name this field differently (ref, code, externalId...)")
			}
			checkFile(fpath, f, de)
			ft, err := f.fieldType()
			if err != nil {
				de.add(fpath+".type", "%v", err)
				continue
			}
			types[fname] = ft
			if f.Default != nil {
				if err := checkValue(ft, f.Default); err != nil {
					de.add(fpath+".default", "%v", err)
				}
			}
		}
		checkIndexes(tpath, t, de)
		checkSearch(tpath, t, types, de)
		for _, rp := range t.Access.check(types) {
			de.add(tpath+".access."+rp.Path, "%s", rp.Message)
		}
	}
	p.checkWebhooks(de)
	if len(de.Problems) == 0 {
		// The relations are checked where they are served, on the tables as the API sees
		// them: one place says what a relation may be.
		var re *gql.RelationError
		if err := gql.CheckRelations(p.APITables()); errors.As(err, &re) {
			de.add("tables."+re.Table+".relations."+re.Relation, "%s", re.Reason)
		}
	}
	if p.GraphQL.DefaultLimit > 0 && p.GraphQL.MaxLimit > 0 && p.GraphQL.DefaultLimit > p.GraphQL.MaxLimit {
		de.add("graphql.defaultLimit", "must not exceed graphql.maxLimit (%d)", p.GraphQL.MaxLimit)
	}
	if len(de.Problems) > 0 {
		return de
	}
	return nil
}

// checkIndexes reports indexes on fields a table does not have or cannot index, and indexes
// declared twice.
func checkIndexes(tpath string, t TableDoc, de *DocumentError) {
	if len(t.Indexes) > store.MaxIndexes {
		de.add(tpath+".indexes", "%d indexes: at most %d per table", len(t.Indexes), store.MaxIndexes)
	}
	seen := map[string]int{}
	for i, ix := range t.Indexes {
		ipath := fmt.Sprintf("%s.indexes.%d", tpath, i)
		inIndex := map[string]bool{}
		for j, f := range ix.Fields {
			fpath := fmt.Sprintf("%s.fields.%d", ipath, j)
			switch fd, ok := t.Fields[f]; {
			case f == store.KeyUID || f == store.KeyCreatedAt || f == store.KeyUpdatedAt:
			case !ok:
				de.add(fpath, "the table has no field %q", f)
				continue
			default:
				if ft, err := fd.fieldType(); err == nil && (ft.List || ft.Scalar == store.JSON) {
					de.add(fpath, "%q is of type %s: only single values (not lists, not JSON) can be indexed", f, ft)
				}
			}
			if inIndex[f] {
				de.add(fpath, "%q is named twice in this index", f)
			}
			inIndex[f] = true
		}
		key := fmt.Sprint(ix.Fields)
		if prev, ok := seen[key]; ok {
			de.add(ipath, "the same fields as indexes.%d: declare an index once (unique or not)", prev)
		}
		seen[key] = i
	}
}

// checkValue reports whether v, decoded from JSON, is a value of type t.
func checkValue(t store.FieldType, v any) error {
	if t.List {
		items, ok := v.([]any)
		if !ok {
			return fmt.Errorf("want a list of %s, got %s", t.Scalar, jsonKind(v))
		}
		for i, it := range items {
			if err := checkValue(store.FieldType{Scalar: t.Scalar}, it); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
		return nil
	}
	ok := false
	switch t.Scalar {
	case store.String, store.ID:
		_, ok = v.(string)
	case store.Boolean:
		_, ok = v.(bool)
	case store.Float:
		_, ok = v.(float64)
	case store.Int:
		f, isNum := v.(float64)
		ok = isNum && f == math.Trunc(f) && f >= math.MinInt32 && f <= math.MaxInt32
	case store.DateTime:
		s, isStr := v.(string)
		if isStr {
			_, err := time.Parse(time.RFC3339Nano, s)
			ok = err == nil
		}
	case store.JSON:
		ok = true
	}
	if !ok {
		return fmt.Errorf("want a value of type %s, got %s", t.Scalar, jsonKind(v))
	}
	return nil
}

func jsonKind(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case float64:
		return fmt.Sprintf("the number %v", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return "null"
	}
}

// Singular turns a table name into its record type's name: products -> product,
// categories -> category, addresses -> address. A name that is not a plural stays as it is.
func Singular(name string) string {
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, "ies") && len(name) > 3:
		return name[:len(name)-3] + "y"
	case strings.HasSuffix(lower, "sses"), strings.HasSuffix(lower, "xes"),
		strings.HasSuffix(lower, "ches"), strings.HasSuffix(lower, "shes"), strings.HasSuffix(lower, "zes"):
		return name[:len(name)-2]
	case strings.HasSuffix(lower, "ss"), strings.HasSuffix(lower, "us"), strings.HasSuffix(lower, "is"):
		return name
	case strings.HasSuffix(lower, "s") && len(name) > 1:
		return name[:len(name)-1]
	}
	return name
}

// APITables returns the project's tables as the GraphQL layer (and, inside them, the store)
// sees them, sorted by name, with their fields sorted by name.
func (p *Project) APITables() []gql.Table {
	out := make([]gql.Table, 0, len(p.Tables))
	for _, name := range sortedKeys(p.Tables) {
		td := p.Tables[name]
		t := gql.Table{Table: store.Table{Name: name, Outbox: len(td.Webhooks) > 0}, TypeName: td.TypeName}
		if t.TypeName == "" {
			t.TypeName = Singular(name)
		}
		for _, fname := range sortedKeys(td.Fields) {
			fd := td.Fields[fname]
			ft, _ := fd.fieldType() // validated by ParseDocument
			t.Fields = append(t.Fields, store.Field{Name: fname, Type: ft, Required: fd.Required, Description: fd.Description, Default: fd.Default, File: fd.fileSpec()})
		}
		for _, ix := range td.Indexes {
			t.Indexes = append(t.Indexes, store.Index{Fields: ix.Fields, Unique: ix.Unique})
		}
		t.Search = td.Search.store()
		for _, rname := range sortedKeys(td.Relations) {
			rd := td.Relations[rname]
			t.Relations = append(t.Relations, gql.Relation{Name: rname, Table: rd.Table, Field: rd.Field, ForeignField: rd.ForeignField})
		}
		out = append(out, t)
	}
	return out
}

// StoreTables returns the project's tables as the store sees them, sorted by name.
func (p *Project) StoreTables() []store.Table {
	api := p.APITables()
	out := make([]store.Table, len(api))
	for i, t := range api {
		out[i] = t.Table
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
