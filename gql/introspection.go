package gql

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
)

// graph-gophers v1.11 introspects by an older spec: its __Directive has no isRepeatable,
// its __Type no isOneOf, its __Schema no description, so graphql-js's getIntrospectionQuery
// with every option on fails validation. An introspection document is therefore executed with
// each such field replaced by __typename under the same response key (valid everywhere,
// and it keeps the key's place, @skip and @include), and the answer then gets the value the
// field has in a project's schema: it declares no repeatable directive, no oneOf input and
// no schema description.
var missingMeta = map[string]map[string]string{
	"__Directive": {"isRepeatable": "false"},
	"__Type":      {"isOneOf": "false"},
	"__Schema":    {"description": "null"},
}

// metaFields are the introspection fields that lead to an object, by the type that has them,
// with the type they lead to; "" is an operation's root.
var metaFields = map[string]map[string]string{
	"":             {"__schema": "__Schema", "__type": "__Type"},
	"__Schema":     {"types": "__Type", "queryType": "__Type", "mutationType": "__Type", "subscriptionType": "__Type", "directives": "__Directive"},
	"__Type":       {"fields": "__Field", "interfaces": "__Type", "possibleTypes": "__Type", "enumValues": "__EnumValue", "inputFields": "__InputValue", "ofType": "__Type"},
	"__Field":      {"args": "__InputValue", "type": "__Type"},
	"__InputValue": {"type": "__Type"},
	"__Directive":  {"args": "__InputValue"},
}

// metaFill says which response keys of an answer get the value of a field graph-gophers
// lacks: values at this object, next for the objects below a key (and each element of a
// list there).
type metaFill struct {
	values map[string]string // response key -> JSON value
	next   map[string]*metaFill
}

// completeIntrospection rewrites a document that introspects so that graph-gophers can run
// it (see missingMeta), and answers the fill its answer then needs for the operation opName
// selects; query itself and nil when nothing needs it.
func completeIntrospection(query, opName string, maxTokens int) (string, *metaFill) {
	if !strings.Contains(query, "isRepeatable") && !strings.Contains(query, "isOneOf") && !strings.Contains(query, "description") {
		return query, nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, maxTokens)
	if err != nil {
		return query, nil
	}
	w := metaWalk{doc: doc, edits: map[int]*ast.Field{}}
	var fill *metaFill
	for _, op := range doc.Operations {
		f := &metaFill{}
		w.selections(op.SelectionSet, "", f, map[string]bool{})
		if op.Name == opName || len(doc.Operations) == 1 {
			fill = f
		}
	}
	if len(w.edits) == 0 {
		return query, nil
	}
	return w.rewrite(query), fill
}

type metaWalk struct {
	doc   *ast.QueryDocument
	edits map[int]*ast.Field // by the rune offset the field starts at
}

// selections walks a selection set of an object of type typ (a meta type, or "" for the
// root), noting the fields to replace and what their answer needs in f.
func (w *metaWalk) selections(set ast.SelectionSet, typ string, f *metaFill, spreading map[string]bool) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			// A field with arguments or a selection is left for graph-gophers to refuse.
			if v, ok := missingMeta[typ][s.Name]; ok && len(s.Arguments) == 0 && len(s.SelectionSet) == 0 {
				w.edits[s.Position.Start] = s
				if f.values == nil {
					f.values = map[string]string{}
				}
				f.values[s.Alias] = v
				continue
			}
			next, ok := metaFields[typ][s.Name]
			if !ok {
				continue
			}
			if f.next == nil {
				f.next = map[string]*metaFill{}
			}
			child := f.next[s.Alias]
			if child == nil {
				child = &metaFill{}
				f.next[s.Alias] = child
			}
			w.selections(s.SelectionSet, next, child, spreading)
		case *ast.InlineFragment:
			w.selections(s.SelectionSet, typ, f, spreading)
		case *ast.FragmentSpread:
			// A fragment that spreads itself is invalid; the walk must still end.
			fd := w.doc.Fragments.ForName(s.Name)
			if fd == nil || spreading[s.Name] {
				continue
			}
			spreading[s.Name] = true
			w.selections(fd.SelectionSet, typ, f, spreading)
			delete(spreading, s.Name)
		}
	}
}

// rewrite replaces each noted field, from its alias or name to its name, with
// "key: __typename".
func (w *metaWalk) rewrite(query string) string {
	var toks []lexer.Token
	l := lexer.New(&ast.Source{Input: query})
	for {
		tok, err := l.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			break
		}
		toks = append(toks, tok)
	}
	splices := map[int]splice{}
	for i, tok := range toks {
		f := w.edits[tok.Pos.Start]
		if f == nil {
			continue
		}
		// The field's name is the token after "alias :", or the first.
		end := tok.Pos.End
		if i+2 < len(toks) && toks[i+1].Kind == lexer.Colon {
			end = toks[i+2].Pos.End
		}
		splices[tok.Pos.Start] = splice{text: f.Alias + ": __typename", end: end}
	}
	return spliced(query, splices)
}

// apply writes data, an answer of the rewritten document, with the noted keys given their
// values; data itself when f is nil or data is not the JSON graph-gophers writes.
func (f *metaFill) apply(data json.RawMessage) json.RawMessage {
	if f == nil || len(data) == 0 {
		return data
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out bytes.Buffer
	out.Grow(len(data) + 64)
	if err := f.copy(dec, &out); err != nil {
		return data
	}
	return out.Bytes()
}

// copy copies the next JSON value of dec to out, keeping the order of keys, filling what f
// says.
func (f *metaFill) copy(dec *json.Decoder, out *bytes.Buffer) error {
	if f == nil {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		out.Write(raw)
		return nil
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		out.WriteByte('{')
		for i := 0; dec.More(); i++ {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := k.(string)
			if i > 0 {
				out.WriteByte(',')
			}
			js, _ := json.Marshal(key)
			out.Write(js)
			out.WriteByte(':')
			if v, ok := f.values[key]; ok {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return err
				}
				out.WriteString(v)
				continue
			}
			if err := f.next[key].copy(dec, out); err != nil {
				return err
			}
		}
		out.WriteByte('}')
	case json.Delim('['):
		out.WriteByte('[')
		for i := 0; dec.More(); i++ {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := f.copy(dec, out); err != nil {
				return err
			}
		}
		out.WriteByte(']')
	default:
		js, err := json.Marshal(tok)
		if err != nil {
			return err
		}
		out.Write(js)
		return nil
	}
	_, err = dec.Token() // the closing delimiter
	return err
}
