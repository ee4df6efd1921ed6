package gql

import (
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
)

// responseKeys gives un-aliased mutation fields in the seed's spelling the response key the
// seed shows: createproduct answers under createProduct, deleteproduct under deleteProduct,
// and updateproduct under createProduct, as the seed's update row shows. Executors name a
// result after the field or its alias, so the document is rewritten before execution to
// carry these keys as aliases. An alias the caller wrote is kept.
type responseKeys struct {
	key   map[string]string // seed spelling -> response key
	camel map[string]string // seed spelling -> camelCase field name, when key is taken
	// maxTokens bounds the parse, as graph-gophers' query length limit bounds its own.
	maxTokens int
}

func newResponseKeys(tables []*table, maxTokens int) responseKeys {
	rk := responseKeys{key: map[string]string{}, camel: map[string]string{}, maxTokens: maxTokens}
	for _, t := range tables {
		n := t.names
		for _, p := range [][3]string{
			{n.create, n.createCamel, n.createCamel},
			{n.update, n.createCamel, n.updateCamel},
			{n.del, n.delCamel, n.delCamel},
		} {
			if p[0] != p[1] {
				rk.key[p[0]], rk.camel[p[0]] = p[1], p[2]
			}
		}
	}
	return rk
}

// rewrite returns query with the response keys added as aliases; query itself when there is
// nothing to add or it does not parse (graph-gophers then reports why).
func (rk responseKeys) rewrite(query string) string {
	if len(rk.key) == 0 || !strings.Contains(query, "mutation") {
		return query
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, rk.maxTokens)
	if err != nil {
		return query
	}
	inserts := map[int]splice{} // by rune offset: the alias to insert there
	for _, op := range doc.Operations {
		if op.Operation != ast.Mutation {
			continue
		}
		var fields []*ast.Field
		collectFields(doc, op.SelectionSet, map[string]bool{}, &fields)
		used := map[string]string{} // response key -> field name
		var pending []*ast.Field
		for _, f := range fields {
			if _, ok := rk.key[f.Name]; ok && !aliased(query, f) {
				pending = append(pending, f)
				continue
			}
			used[f.Alias] = f.Name
		}
		for _, f := range pending {
			key := rk.key[f.Name]
			if name, ok := used[key]; ok && name != f.Name {
				key = rk.camel[f.Name]
			}
			used[key] = f.Name
			inserts[f.Position.Start] = splice{text: key + ": ", end: f.Position.Start}
		}
	}
	if len(inserts) == 0 {
		return query
	}
	return spliced(query, inserts)
}

// splice replaces the runes of a document from the offset it is keyed by up to end with text.
type splice struct {
	text string
	end  int
}

// spliced applies splices, keyed by rune offset, that do not overlap.
func spliced(query string, splices map[int]splice) string {
	starts := make([]int, 0, len(splices))
	for o := range splices {
		starts = append(starts, o)
	}
	sort.Ints(starts)
	var b strings.Builder
	b.Grow(len(query) + 24*len(starts))
	r, next, skipTo := 0, 0, 0
	for _, c := range query {
		if next < len(starts) && starts[next] == r {
			b.WriteString(splices[r].text)
			skipTo = splices[r].end
			next++
		}
		if r >= skipTo {
			b.WriteRune(c)
		}
		r++
	}
	return b.String()
}

// collectFields lists the fields of a selection set, through fragments, as executors merge
// them into one response object.
func collectFields(doc *ast.QueryDocument, set ast.SelectionSet, seen map[string]bool, out *[]*ast.Field) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			*out = append(*out, s)
		case *ast.InlineFragment:
			collectFields(doc, s.SelectionSet, seen, out)
		case *ast.FragmentSpread:
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if fd := doc.Fragments.ForName(s.Name); fd != nil {
				collectFields(doc, fd.SelectionSet, seen, out)
			}
		}
	}
}

// aliased reports whether the caller wrote an alias for f: the parser records a missing
// alias as the field's name, so the token after the first name tells.
func aliased(query string, f *ast.Field) bool {
	if f.Alias != f.Name {
		return true
	}
	l := lexer.New(&ast.Source{Input: query})
	for {
		tok, err := l.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			return false
		}
		if tok.Pos.Start == f.Position.Start {
			next, err := l.ReadToken()
			return err == nil && next.Kind == lexer.Colon
		}
	}
}

// operationInfo is what the endpoint needs to know of the operation a request runs before
// graph-gophers executes it.
type operationInfo struct {
	kind ast.Operation
	// introspects: it asks for __schema or __type (graph-gophers leaves those fields out
	// when introspection is off; the endpoint tells the client why instead).
	introspects bool
	// metaOnly: every root field is __schema, __type or __typename.
	metaOnly bool
}

// operation reads the operation of the document that opName selects. A document that does not
// parse, or names no single operation, reads as a query of data: graph-gophers then reports
// why. The document is parsed only when it can matter: for a GET (which must not run a
// mutation), when it names a meta field, or may be a subscription (which HTTP does not run).
func (rk responseKeys) operation(query, opName string, get bool) operationInfo {
	info := operationInfo{kind: ast.Query}
	if !get && !strings.Contains(query, "__") && !strings.Contains(query, "subscription") {
		return info
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, rk.maxTokens)
	if err != nil {
		return info
	}
	ops := doc.Operations
	if opName != "" {
		ops = nil
		if op := doc.Operations.ForName(opName); op != nil {
			ops = ast.OperationList{op}
		}
	}
	for _, op := range ops {
		var fields []*ast.Field
		collectFields(doc, op.SelectionSet, map[string]bool{}, &fields)
		for _, f := range fields {
			if op.Operation == ast.Query && (f.Name == "__schema" || f.Name == "__type") {
				info.introspects = true
			}
		}
	}
	if len(ops) != 1 {
		return info
	}
	info.kind = ops[0].Operation
	var fields []*ast.Field
	collectFields(doc, ops[0].SelectionSet, map[string]bool{}, &fields)
	info.metaOnly = info.kind == ast.Query && len(fields) > 0
	for _, f := range fields {
		if !strings.HasPrefix(f.Name, "__") {
			info.metaOnly = false
		}
	}
	return info
}
