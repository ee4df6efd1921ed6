package gql

import (
	"context"
	"errors"

	"github.com/platform-dev/platform/store"
)

// Operation is what a caller does to a table.
type Operation string

// The operations access rules decide.
const (
	Read   Operation = "read"
	Create Operation = "create"
	Update Operation = "update"
	Delete Operation = "delete"
)

// ErrForbidden is what a Guard's errors wrap when a rule says no. A mutation refused this way
// answers the GraphQL error code FORBIDDEN; a read leaves the refused records out. Any other
// Guard error answers INTERNAL.
var ErrForbidden = errors.New("forbidden")

// Guard decides what the caller of one request may do with a project's records. The project
// layer builds one per request from the project's access rules and the caller's verified
// claims and attaches it with WithGuard before calling (*API).ServeHTTP. Without a Guard in the
// context every operation is allowed and records are created without an owner.
//
// The order of calls for each operation:
//
//   - read (list, fetch by uid, count): Filter(table, Read); its filter is ANDed into the query
//     so that limit, offset and counts stay right. When check is true, Allow(table, Read,
//     record, nil) is called for each record found and records it refuses are left out (a
//     count then counts the records it allows, reading them in pages).
//   - create: Allow(table, Create, nil, data) before the insert.
//   - update: Filter(table, Update) is ANDed into the lookup of the record (a record it
//     excludes is FORBIDDEN when it exists, NOT_FOUND otherwise); when check is true,
//     Allow(table, Update, record, data) is called with the stored record before the write.
//   - delete: as update, with Delete and data nil.
//
// A Filter error wrapping ErrForbidden refuses the operation on every record: reads answer
// nothing, mutations FORBIDDEN.
//
// record holds the stored record: "uid" (a string), "_owner" (the creator's sub, a string,
// "" when created without a Guard), "createdAt" and "updatedAt" (time.Time) and each field
// that is set. data holds the fields the caller sent, a field sent as null holding nil.
// Values in both have these Go types: String and ID string, Int int64, Float float64,
// Boolean bool, DateTime time.Time, JSON what encoding/json decodes (map[string]any, []any,
// string, float64, bool, nil), and lists []any of those.
type Guard interface {
	// Filter returns the filter a record must match for op (store.All: no condition), and
	// whether Allow must still be asked for each record because the filter does not express
	// the whole rule. Filters use the record keys: "uid", "_owner", "createdAt", "updatedAt"
	// and the field names.
	Filter(table string, op Operation) (filter store.Filter, check bool, err error)
	// Allow says whether op may happen to one record: nil, or an error wrapping ErrForbidden.
	Allow(table string, op Operation, record, data map[string]any) error
	// Owner is the caller's subject, stored in "_owner" by create; "" for an anonymous caller.
	Owner() string
}

type guardKey struct{}

// WithGuard returns a context whose requests are decided by g.
func WithGuard(ctx context.Context, g Guard) context.Context {
	return context.WithValue(ctx, guardKey{}, g)
}

// guardFrom returns the request's Guard, or nil when everything is allowed.
func guardFrom(ctx context.Context) Guard {
	g, _ := ctx.Value(guardKey{}).(Guard)
	return g
}
