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

// documents remembers what the endpoint reads from a document before executing it (its
// operation, the text with the seed's response keys added, and its plan), so that a document
// sent again is not parsed for that a second time. Each API has its own, so an entry always
// belongs to the schema it was read against. graph-gophers parses and validates every
// document it executes (v1.11.0 has no API to keep a prepared one); a plan, where the
// document has one, runs without it.
type documents struct {
	keys responseKeys
	// plan makes the plan of a document's operation, nil when it has none; nested the
	// nested plan of one that selects a relation closing a cycle.
	plan   func(query, opName string) *plan
	nested func(query, opName string) *nested
	shape  func(query, opName string) shape
	// seen is nil for an API without tables: nothing runs there.
	// Entries are pointers: a hit copies no document out of the cache.
	seen *lru.Cache[docKey, *prepared]
}

type docKey struct {
	query, opName string
	get           bool
}

// prepared is a document as the endpoint runs it: op decides whether and where, exec is the
// text graph-gophers executes, fill completes its answer (introspection.go), plan (nil for
// most documents) runs it without graph-gophers.
type prepared struct {
	op   operationInfo
	exec string
	fill *metaFill
	plan *plan
	// nested, when set, runs the document instead of graph-gophers (nested.go).
	nested *nested
	// planned: plan was made (a document gets one when it is sent again).
	planned bool
	// shape is its cost estimate and what the budget charges per record (cost.go).
	shape shape
}

func newDocuments(keys responseKeys, plan func(query, opName string) *plan, nested func(query, opName string) *nested, shape func(query, opName string) shape) documents {
	// New fails only for a size below 1.
	seen, _ := lru.New[docKey, *prepared](documentsKept)
	return documents{keys: keys, plan: plan, nested: nested, shape: shape, seen: seen}
}

// prepare reads the operation that opName selects in query, sent by GET or not, and the text
// to execute, remembering them for a document of at most documentMaxBytes.
func (d documents) prepare(query, opName string, get bool) *prepared {
	k := docKey{query, opName, get}
	if d.seen != nil {
		if p, ok := d.seen.Get(k); ok {
			if !p.planned {
				// A document sent once pays nothing for a plan; one sent again, once. The
				// entry is replaced, not changed: a request may be running the first.
				q := *p
				q.plan, q.planned = d.plan(query, opName), true
				d.seen.Add(k, &q)
				return &q
			}
			return p
		}
	}
	p := &prepared{op: d.keys.operation(query, opName, get), exec: d.keys.rewrite(query)}
	if d.shape != nil {
		p.shape = d.shape(query, opName)
	}
	if d.nested != nil {
		// The text with the response keys: a nested plan answers mutations under them.
		p.nested = d.nested(p.exec, opName)
	}
	if p.op.introspects {
		p.exec, p.fill = completeIntrospection(p.exec, opName, d.keys.maxTokens)
	}
	if d.seen != nil && len(query) <= documentMaxBytes {
		d.seen.Add(k, p)
	}
	return p
}
