package gql

import "github.com/platform-dev/platform/store"

// Where reads a where object, in the shape the table's where argument takes
// ({"price": {"gt": 10}, "or": [...]}), into a store filter within store.DefaultBounds, for
// conditions kept outside a request (a webhook's). Its errors name the path in v.
func Where(def Table, v any) (store.Filter, error) {
	t := &table{def: def, names: namesOf(def), limits: limits{bounds: store.DefaultBounds}}
	return t.filter(argValue{v: v, set: true})
}
