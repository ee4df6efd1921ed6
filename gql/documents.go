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
// operation, the text with the seed's response keys added, and its execution plan), so that
// a document sent again is neither parsed nor validated a second time. Each API has its
// own, so an entry always belongs to the schema it was read against.
type documents struct {
	keys responseKeys
	// plan makes the execution plan of a document's operation, nil when graph-gophers
	// runs it (introspection).
	plan  func(query, opName string) *plan
	shape func(query, opName string) shape
	// seen is nil for an API without tables: nothing runs there.
	// Entries are pointers: a hit copies no document out of the cache.
	seen *lru.Cache[docKey, *prepared]
}

type docKey struct {
	query, opName string
	get           bool
}

// prepared is a document as the endpoint runs it: op decides whether and where, exec is the
// text graph-gophers validates (and executes, for introspection), fill completes an
// introspection answer (introspection.go), plan runs it.
type prepared struct {
	op   operationInfo
	exec string
	fill *metaFill
	plan *plan
	// shape is its cost estimate and what the budget charges per record (cost.go).
	shape shape
}

func newDocuments(keys responseKeys, newPlan func(query, opName string) *plan, shape func(query, opName string) shape) documents {
	// New fails only for a size below 1.
	seen, _ := lru.New[docKey, *prepared](documentsKept)
	return documents{keys: keys, plan: newPlan, shape: shape, seen: seen}
}

// prepare reads the operation that opName selects in query, sent by GET or not, the text
// to execute and its plan, remembering them for a document of at most documentMaxBytes.
func (d documents) prepare(query, opName string, get bool) *prepared {
	k := docKey{query, opName, get}
	if d.seen != nil {
		if p, ok := d.seen.Get(k); ok {
			return p
		}
	}
	p := &prepared{op: d.keys.operation(query, opName, get), exec: d.keys.rewrite(query)}
	if d.shape != nil {
		p.shape = d.shape(query, opName)
	}
	if d.plan != nil && !p.op.introspects {
		// The text with the response keys: the plan answers mutations under them.
		p.plan = d.plan(p.exec, opName)
	}
	if p.op.introspects {
		p.exec, p.fill = completeIntrospection(p.exec, opName, d.keys.maxTokens)
	}
	if d.seen != nil && len(query) <= documentMaxBytes {
		d.seen.Add(k, p)
	}
	return p
}
