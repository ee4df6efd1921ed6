package gql

import (
	lru "github.com/hashicorp/golang-lru/v2"
)

// Bounds of the documents an API remembers: apps send the same few documents again and again,
// so a few dozen of a few KiB each cover them, and a project's worst case stays under
// documentsKept * 3 * documentMaxBytes (the text, and its rewrite at most twice as long).
const (
	documentsKept    = 64
	documentMaxBytes = 4 << 10
)

// documents remembers what the endpoint reads from a document before graph-gophers executes
// it (its operation, and the text with the seed's response keys added), so that a document
// sent again is not parsed for that a second time. Each API has its own, so an entry always
// belongs to the schema it was read against. graph-gophers still parses and validates every
// document it executes: v1.11.0 has no API to keep a prepared one.
type documents struct {
	keys responseKeys
	// seen is nil for an API without tables: nothing runs there.
	seen *lru.Cache[docKey, prepared]
}

type docKey struct {
	query, opName string
	get           bool
}

// prepared is a document as the endpoint runs it: op decides whether and where, exec is the
// text graph-gophers executes, fill completes its answer (introspection.go).
type prepared struct {
	op   operationInfo
	exec string
	fill *metaFill
}

func newDocuments(keys responseKeys) documents {
	// New fails only for a size below 1.
	seen, _ := lru.New[docKey, prepared](documentsKept)
	return documents{keys: keys, seen: seen}
}

// prepare reads the operation that opName selects in query, sent by GET or not, and the text
// to execute, remembering them for a document of at most documentMaxBytes.
func (d documents) prepare(query, opName string, get bool) prepared {
	k := docKey{query, opName, get}
	if d.seen != nil {
		if p, ok := d.seen.Get(k); ok {
			return p
		}
	}
	p := prepared{op: d.keys.operation(query, opName, get), exec: d.keys.rewrite(query)}
	if p.op.introspects {
		p.exec, p.fill = completeIntrospection(p.exec, opName, d.keys.maxTokens)
	}
	if d.seen != nil && len(query) <= documentMaxBytes {
		d.seen.Add(k, p)
	}
	return p
}
