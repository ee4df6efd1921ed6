package gql

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	gqlerrors "github.com/graph-gophers/graphql-go/errors"
)

// budget is what one request (or one subscription event) may answer: bytes and records,
// counted across the whole answer whatever builds it (the executor, or graph-gophers'
// executor in the tests' reference, whose root fields run concurrently). Every record is charged
// where it is read, before it is decoded or written, and again each time a relation places
// it in the answer once more; the answer itself is measured when it is done, which is the
// bound the caller sees. A record counts scale times its stored size plus over, the
// document's repetition of fields and its response keys (shape), so that fields asked
// under many keys cannot answer more than was charged.
type budget struct {
	maxBytes, maxRecords int64
	scale, over          int64
	bytes, records       atomic.Int64
	// spent is the error of the first charge past the budget; every later charge answers it.
	spent atomic.Pointer[Error]
	// wrote: a create, update or delete field ran (the request is a mutation).
	wrote atomic.Bool
}

type budgetKey struct{}

// budgetFrom is the budget of the request ctx runs; nil outside one, where nothing is
// counted.
func budgetFrom(ctx context.Context) *budget {
	b, _ := ctx.Value(budgetKey{}).(*budget)
	return b
}

// start readies b for one request of a document of shape s.
func (b *budget) start(cfg *Config, s shape) {
	b.maxBytes, b.maxRecords = cfg.MaxResultBytes, cfg.MaxRecords
	b.scale, b.over = max(s.scale, 1), s.over
}

// take charges read records and, times times, a record of size stored bytes; the error
// (RESULT_TOO_LARGE) once the budget is spent, naming the table t being read.
func (b *budget) take(t *table, read, size, times int64) error {
	if b == nil {
		return nil
	}
	r := b.records.Add(read)
	n := b.bytes.Add(times * (size*b.scale + b.over))
	if r <= b.maxRecords && n <= b.maxBytes {
		return nil
	}
	if e := b.spent.Load(); e != nil {
		return e
	}
	hint := "ask for fewer fields or records, or page with limit/offset"
	if t != nil {
		hint = fmt.Sprintf("ask for fewer fields or records, or page with limit/offset or %s(first, after)", t.names.connection)
	}
	e := b.exceeded(r > b.maxRecords, n, hint)
	b.spent.CompareAndSwap(nil, e)
	return b.spent.Load()
}

// exceeded is the error of a budget spent: on records, or on bytes with n counted.
func (b *budget) exceeded(records bool, n int64, hint string) *Error {
	if records {
		e := userError(CodeTooLarge, fmt.Sprintf("the request reads more than its budget of %d records: %s", b.maxRecords, hint))
		e.Extra = map[string]any{"limit": b.maxRecords, "unit": "records"}
		return e
	}
	e := userError(CodeTooLarge, fmt.Sprintf("the answer passes the request's budget of %d bytes (%d counted so far): %s", b.maxBytes, n, hint))
	e.Extra = map[string]any{"limit": b.maxBytes, "counted": n, "unit": "bytes"}
	return e
}

// settle is resp as the caller gets it: when the budget was spent, or the answer is longer
// than it, no data and the one error that says so.
func (b *budget) settle(resp response) response {
	e := b.spent.Load()
	if e == nil && int64(len(resp.Data)) <= b.maxBytes {
		return resp
	}
	if e == nil {
		e = b.exceeded(false, int64(len(resp.Data)), "ask for fewer fields or records, or page with limit/offset or a connection's first and after")
	}
	return response{Data: json.RawMessage("null"), Errors: []*gqlerrors.QueryError{{Message: e.Message, Extensions: e.Extensions()}}}
}
