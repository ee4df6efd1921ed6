package gql

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/platform-dev/platform/store"
)

// Names of the record keys the service keeps, as the API shows them.
const (
	fieldUID = "uid"
	// fieldID is uid again under the name client caches (Apollo Client, urql's graphcache,
	// Relay-style stores) normalise records by without configuration.
	fieldID        = "id"
	fieldCreatedAt = "createdAt"
	fieldUpdatedAt = "updatedAt"
)

// sharedSDL is the part of every project's schema that does not depend on its tables.
const sharedSDL = `"An RFC 3339 date-time; the API answers in UTC with milliseconds (2026-11-22T10:04:05.123Z)."
scalar DateTime

"Any JSON value."
scalar JSON

"The direction of one orderBy entry."
enum OrderDirection { ASC DESC }

"Where a page of a connection ends: pass endCursor as after to get the next page."
type PageInfo {
  hasNextPage: Boolean!
  endCursor: String
}
`

// sharedNames are the type names sharedSDL and GraphQL itself define; no table may generate
// one of them.
var sharedNames = append([]string{
	"DateTime", "JSON", "OrderDirection", "PageInfo", "String", "Int", "Float", "Boolean", "ID", "Query", "Mutation",
	"Subscription", "EventOp",
}, filterNames()...)

// filterScalars are the scalars a where argument compares, in the schema's order, with the
// comparisons each offers beyond eq, ne and isNull. A list field's filter (StringListFilter)
// offers the same and has.
var filterScalars = []struct {
	scalar store.Scalar
	ops    []store.Op
}{
	{store.String, []store.Op{store.Gt, store.Gte, store.Lt, store.Lte, store.In, store.Nin, store.Contains, store.IContains, store.StartsWith}},
	{store.ID, []store.Op{store.Gt, store.Gte, store.Lt, store.Lte, store.In, store.Nin}},
	{store.Int, []store.Op{store.Gt, store.Gte, store.Lt, store.Lte, store.In, store.Nin}},
	{store.Float, []store.Op{store.Gt, store.Gte, store.Lt, store.Lte, store.In, store.Nin}},
	{store.Boolean, nil},
	{store.DateTime, []store.Op{store.Gt, store.Gte, store.Lt, store.Lte, store.In, store.Nin}},
}

// filterName is the name of the filter input of a field of type ft.
func filterName(ft store.FieldType) string {
	if ft.List {
		return string(ft.Scalar) + "ListFilter"
	}
	return string(ft.Scalar) + "Filter"
}

func filterNames() []string {
	var names []string
	for _, fs := range filterScalars {
		names = append(names, filterName(store.FieldType{Scalar: fs.scalar}), filterName(store.FieldType{Scalar: fs.scalar, List: true}))
	}
	return names
}

// filterOps are the comparisons the filter of a field of type ft offers, in schema order.
func filterOps(ft store.FieldType) []store.Op {
	ops := []store.Op{store.Eq, store.Ne}
	for _, fs := range filterScalars {
		if fs.scalar == ft.Scalar {
			ops = append(ops, fs.ops...)
		}
	}
	ops = append(ops, store.IsNull)
	if ft.List {
		ops = append(ops, store.Has)
	}
	return ops
}

// writeFilterInputs writes the filter input of every scalar and list of scalars.
func writeFilterInputs(b *strings.Builder) {
	for _, fs := range filterScalars {
		for _, list := range []bool{false, true} {
			ft := store.FieldType{Scalar: fs.scalar, List: list}
			desc := "Comparisons of " + withArticle(string(fs.scalar)) + "; every one given must hold."
			if fs.scalar == store.String {
				desc += " contains and startsWith match case-sensitively, icontains ignoring case; none takes a pattern."
			}
			if list {
				desc = "Comparisons of a list of " + string(fs.scalar) + ": a comparison holds when one element matches; has holds when the list holds the value."
			}
			fmt.Fprintf(b, "\n%q\ninput %s {\n", desc+" isNull: true matches a missing value, false a present one.", filterName(ft))
			for _, op := range filterOps(ft) {
				typ := string(fs.scalar)
				switch op {
				case store.In, store.Nin:
					typ = "[" + typ + "]"
				case store.IsNull:
					typ = "Boolean"
				}
				fmt.Fprintf(b, "  %s: %s\n", op, typ)
			}
			b.WriteString("}\n")
		}
	}
}

var nameRE = regexp.MustCompile(`^[_A-Za-z][_0-9A-Za-z]*$`)

// tableNames are the generated names of one table's types and root fields.
type tableNames struct {
	typ, input, where, order, field    string // types
	connType, edgeType                 string // types of the keyset pages
	event                              string // type of a subscription's changes
	one, list, count, connection       string // query fields
	create, update, del                string // mutation fields, seed spelling
	createCamel, updateCamel, delCamel string // the same in camelCase
}

func namesOf(t Table) tableNames {
	tn := t.TypeName
	camel := strings.ToUpper(tn[:1]) + tn[1:]
	one := tn
	if one == t.Name {
		// A table named as its record type has its list there, and no field for one record.
		one = ""
	}
	return tableNames{
		typ: tn, input: tn + "Input", where: tn + "Where", order: tn + "OrderBy", field: tn + "Field",
		connType: tn + "Connection", edgeType: tn + "Edge", event: tn + "Event",
		one: one, list: t.Name, count: t.Name + "Count", connection: t.Name + "Connection",
		create: "create" + tn, update: "update" + tn, del: "delete" + tn,
		createCamel: "create" + camel, updateCamel: "update" + camel, delCamel: "delete" + camel,
	}
}

// checkNames reports the first definition that would not make a valid schema: a name GraphQL
// does not accept, a field that shadows a key the service keeps, or two tables generating the
// same type or root field.
func checkNames(tables []Table) error {
	owner := map[string]string{} // generated name -> what generated it
	for _, n := range sharedNames {
		owner["type "+n] = "the built-in types"
	}
	if hasFiles(tables) {
		// Only a project with File fields has these: a table of another may be named so.
		owner["type File"], owner["type Upload"] = "the File fields' types", "the File fields' types"
	}
	claim := func(kind, name, by string) error {
		key := kind + " " + name
		if prev, ok := owner[key]; ok && prev != by {
			return fmt.Errorf("%s generates the %s %q, which %s already defines", by, kind, name, prev)
		}
		owner[key] = by
		return nil
	}
	for _, t := range tables {
		by := fmt.Sprintf("table %q", t.Name)
		if !nameRE.MatchString(t.Name) || strings.HasPrefix(t.Name, "__") {
			return fmt.Errorf("%s: the name must be a GraphQL name (letters, digits and _, not starting with a digit or __)", by)
		}
		if !nameRE.MatchString(t.TypeName) || strings.HasPrefix(t.TypeName, "__") {
			return fmt.Errorf("%s: the type name %q must be a GraphQL name (letters, digits and _, not starting with a digit or __)", by, t.TypeName)
		}
		if len(t.Fields) == 0 {
			return fmt.Errorf("%s has no fields", by)
		}
		n := namesOf(t)
		for _, tn := range []string{n.typ, n.input, n.where, n.order, n.field, n.connType, n.edgeType, n.event} {
			if err := claim("type", tn, by); err != nil {
				return err
			}
		}
		aggField, aggResult, aggNumbers, aggBounds := aggregateNames(t)
		for _, tn := range []string{aggResult, aggNumbers, aggBounds} {
			if err := claim("type", tn, by); err != nil {
				return err
			}
		}
		for _, f := range slices.DeleteFunc([]string{n.one, n.list, n.count, n.connection, aggField}, func(f string) bool { return f == "" }) {
			if err := claim("query", f, by); err != nil {
				return err
			}
		}
		creates, updates, dels := batchNames(t)
		for _, f := range slices.Concat([]string{n.create, n.update, n.del, n.createCamel, n.updateCamel, n.delCamel}, creates, updates, dels) {
			if err := claim("mutation", f, by); err != nil {
				return err
			}
		}
		for _, f := range t.Fields {
			switch {
			case !nameRE.MatchString(f.Name) || strings.HasPrefix(f.Name, "__"):
				return fmt.Errorf("%s: field %q: the name must be a GraphQL name (letters, digits and _, not starting with a digit or __)", by, f.Name)
			case f.Name == fieldUID || f.Name == fieldID || f.Name == fieldCreatedAt || f.Name == fieldUpdatedAt || strings.HasPrefix(f.Name, "_"):
				return fmt.Errorf("%s: field %q: uid, id, createdAt, updatedAt and names starting with _ are kept by the service", by, f.Name)
			case f.Name == "and" || f.Name == "or" || f.Name == "not":
				return fmt.Errorf("%s: field %q: the name is taken by the where argument's and/or/not", by, f.Name)
			case f.Name == "true" || f.Name == "false" || f.Name == "null":
				return fmt.Errorf("%s: field %q: the name cannot be a value of the enum %s", by, f.Name, n.field)
			}
		}
	}
	return nil
}

// sdl writes the schema of the given tables, with their subscriptions when subscribe is set.
func sdl(tables []Table, subscribe bool) string {
	var b strings.Builder
	b.WriteString(sharedSDL)
	if hasFiles(tables) {
		b.WriteString(fileSDL)
	}
	writeFilterInputs(&b)
	byName := make(map[string]Table, len(tables))
	for _, t := range tables {
		byName[t.Name] = t
	}
	for _, t := range tables {
		writeTableTypes(&b, t, byName)
		writeAggregateTypes(&b, t)
	}
	b.WriteString("\ntype Query {\n")
	for _, t := range tables {
		n := namesOf(t)
		if n.one != "" {
			fmt.Fprintf(&b, "  %q\n  %s(id: ID!): %s\n", "The "+n.typ+" whose id (its uid) is id; null when there is none or the caller may not read it.", n.one, n.typ)
		}
		search := searchArg(t)
		fmt.Fprintf(&b, "  %q\n  %s(uid: ID, where: %s%s, orderBy: [%s!], limit: Int, offset: Int): [%s!]!\n",
			"The "+t.Name+": the one with uid when uid is given, else those matching where, in orderBy order (default: creation order), a page of limit after offset.",
			n.list, n.where, search, n.order, n.typ)
		fmt.Fprintf(&b, "  %q\n  %s(where: %s%s): Int!\n", "How many "+t.Name+" match where.", n.count, n.where, search)
		fmt.Fprintf(&b, "  %q\n  %s(where: %s%s, orderBy: [%s!], first: Int, after: String): %s!\n",
			"The "+t.Name+" matching where, in orderBy order, as keyset pages of first records after the cursor after: every page costs what the first does.",
			n.connection, n.where, search, n.order, n.connType)
		writeAggregateQuery(&b, t)
	}
	b.WriteString("}\n\ntype Mutation {\n")
	for _, t := range tables {
		n := namesOf(t)
		for _, name := range dedupe(n.create, n.createCamel) {
			fmt.Fprintf(&b, "  %q\n  %s(data: %s!): %s\n", "Create "+withArticle(n.typ)+"; the required fields must be given.", name, n.input, n.typ)
		}
		for _, name := range dedupe(n.update, n.updateCamel) {
			fmt.Fprintf(&b, "  %q\n  %s(uid: ID, data: %s!): %s\n", "Set the fields given in data (null removes an optional field) of the "+n.typ+" with uid.", name, n.input, n.typ)
		}
		fmt.Fprintf(&b, "  %q\n  %s(uid: ID): String\n", "Delete the "+n.typ+" with uid; answers \"Document Deleted\" (the seed's form).", n.del)
		if n.delCamel != n.del {
			fmt.Fprintf(&b, "  %q\n  %s(uid: ID): %s\n", "Delete the "+n.typ+" with uid; answers it as it was, for client caches to evict it by its id.", n.delCamel, n.typ)
		}
		writeBatchMutations(&b, t)
	}
	b.WriteString("}\n")
	if subscribe {
		subscriptionSDL(&b, tables)
	}
	return b.String()
}

func capitalized(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func dedupe(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

func writeTableTypes(b *strings.Builder, t Table, byName map[string]Table) {
	n := namesOf(t)
	fmt.Fprintf(b, "\n%q\ntype %s {\n  uid: ID!\n  \"The uid again, under the name client caches normalise records by.\"\n  id: ID!\n", "A record of the table "+t.Name+".", n.typ)
	for _, f := range t.Fields {
		writeDescription(b, f.Description)
		fmt.Fprintf(b, "  %s: %s\n", f.Name, outputType(f))
	}
	writeRelationFields(b, t, byName)
	writeHighlightsField(b, t)
	b.WriteString("  createdAt: DateTime!\n  updatedAt: DateTime!\n}\n")

	fmt.Fprintf(b, "\n%q\ninput %s {\n", "The fields of "+withArticle(n.typ)+". Create needs the required ones; update takes any of them.", n.input)
	for _, f := range t.Fields {
		writeDescription(b, f.Description)
		fmt.Fprintf(b, "  %s: %s\n", f.Name, inputType(f))
	}
	b.WriteString("}\n")

	fmt.Fprintf(b, "\n%q\ninput %s {\n  uid: IDFilter\n", "Conditions on "+t.Name+": every one given must hold; and, or and not combine nested conditions.", n.where)
	for _, f := range t.Fields {
		if f.Type.Scalar != store.JSON {
			fmt.Fprintf(b, "  %s: %s\n", f.Name, filterName(f.Type))
		}
	}
	fmt.Fprintf(b, "  createdAt: DateTimeFilter\n  updatedAt: DateTimeFilter\n  and: [%s!]\n  or: [%s!]\n  not: %s\n}\n", n.where, n.where, n.where)

	fmt.Fprintf(b, "\nenum %s { uid", n.field)
	for _, f := range t.Fields {
		if sortable(f) {
			fmt.Fprintf(b, " %s", f.Name)
		}
	}
	b.WriteString(" createdAt updatedAt }\n")
	fmt.Fprintf(b, "\n\"A page of %s.\"\ntype %s {\n  edges: [%s!]!\n  pageInfo: PageInfo!\n  \"How many %s match where, over every page.\"\n  totalCount: Int!\n}\n", t.Name, n.connType, n.edgeType, t.Name)
	fmt.Fprintf(b, "\n\"%s and its position, to continue after it.\"\ntype %s {\n  cursor: String!\n  node: %s!\n}\n", capitalized(withArticle(n.typ)), n.edgeType, n.typ)
	fmt.Fprintf(b, "\n\"One entry of orderBy: a field and its direction.\"\ninput %s { field: %s!, direction: OrderDirection = ASC }\n", n.order, n.field)
}

func sortable(f store.Field) bool { return !f.Type.List && f.Type.Scalar != store.JSON }

func writeDescription(b *strings.Builder, d string) {
	if d == "" {
		return
	}
	// A JSON string is a valid GraphQL string: the same escapes.
	q, _ := json.Marshal(d)
	fmt.Fprintf(b, "  %s\n", q)
}

// outputType is the GraphQL type of a field in the record type. An optional String reads
// back as "" when never set, so it is never null.
func outputType(f store.Field) string {
	s := string(f.Type.Scalar)
	if f.File != nil {
		s = "File"
	}
	if f.Type.List {
		s = "[" + s + "!]"
	}
	if f.Required || (f.Type.Scalar == store.String && !f.Type.List) {
		s += "!"
	}
	return s
}

// inputType is the GraphQL type of a field in the input type: every field is optional there,
// create checks the required ones itself to name the missing field.
func inputType(f store.Field) string {
	s := string(f.Type.Scalar)
	if f.File != nil {
		s = "Upload"
	}
	if f.Type.List {
		return "[" + s + "]"
	}
	return s
}
