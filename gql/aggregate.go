package gql

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	graphql "github.com/graph-gophers/graphql-go"

	"github.com/platform-dev/platform/store"
)

// aggregateNames are the names productsAggregate generates: its query field, its result
// type, the type of sum and avg (one Float per numeric field) and that of min and max.
func aggregateNames(t Table) (field, result, numbers, bounds string) {
	return t.Name + "Aggregate", t.TypeName + "Aggregate", t.TypeName + "Numbers", t.TypeName + "Bounds"
}

// aggKey is a key the aggregates of a table offer: its name and GraphQL type.
type aggKey struct {
	name string
	typ  string
}

// numberKeys are the fields sum and avg add up: Int and Float.
func numberKeys(t Table) []aggKey {
	var out []aggKey
	for _, f := range t.Fields {
		if !f.Type.List && (f.Type.Scalar == store.Int || f.Type.Scalar == store.Float) {
			out = append(out, aggKey{f.Name, "Float"})
		}
	}
	return out
}

// boundKeys are the keys min and max order: Int, Float, String, ID and DateTime fields, and
// createdAt and updatedAt.
func boundKeys(t Table) []aggKey {
	var out []aggKey
	for _, f := range t.Fields {
		switch f.Type.Scalar {
		case store.Int, store.Float, store.String, store.ID, store.DateTime:
			if !f.Type.List {
				out = append(out, aggKey{f.Name, string(f.Type.Scalar)})
			}
		}
	}
	return append(out, aggKey{fieldCreatedAt, "String"}, aggKey{fieldUpdatedAt, "String"})
}

// writeAggregateTypes writes the types of t's aggregates.
func writeAggregateTypes(b *strings.Builder, t Table) {
	_, result, numbers, bounds := aggregateNames(t)
	nums := numberKeys(t)
	fmt.Fprintf(b, "\n%q\ntype %s {\n  %q\n  count: Int!\n", "Aggregates of the "+t.Name+" a where selects, of those you may read; a field no record has a value of is null.", result, "How many records match.")
	if len(nums) > 0 {
		fmt.Fprintf(b, "  %q\n  sum: %s!\n  %q\n  avg: %s!\n", "The sum of each number field.", numbers, "The mean of each number field.", numbers)
	}
	fmt.Fprintf(b, "  %q\n  min: %s!\n  %q\n  max: %s!\n}\n", "The smallest value of each field (strings byte by byte).", bounds, "The largest value of each field.", bounds)
	if len(nums) > 0 {
		fmt.Fprintf(b, "\n%q\ntype %s {\n", "A figure over each number field of the "+t.Name+".", numbers)
		for _, k := range nums {
			fmt.Fprintf(b, "  %s: %s\n", k.name, k.typ)
		}
		b.WriteString("}\n")
	}
	fmt.Fprintf(b, "\n%q\ntype %s {\n", "The smallest or largest value of each field of the "+t.Name+" that has an order.", bounds)
	for _, k := range boundKeys(t) {
		fmt.Fprintf(b, "  %s: %s\n", k.name, k.typ)
	}
	b.WriteString("}\n")
}

// aggregateResolver binds t's productsAggregate with add.
func (a *API) aggregateResolver(t *table, add func(name string, fn reflect.Value)) {
	at := newAggTypes(t.def)
	fn := reflect.FuncOf([]reflect.Type{reflect.TypeFor[context.Context](), reflect.TypeFor[args]()}, []reflect.Type{at.result, errorType}, false)
	field, _, _, _ := aggregateNames(t.def)
	add(field, a.resolver(fn, noted(a, "aggregate", t.aggregate(at))))
}

// writeAggregateQuery writes productsAggregate into the Query type.
func writeAggregateQuery(b *strings.Builder, t Table) {
	field, result, _, _ := aggregateNames(t)
	fmt.Fprintf(b, "  %q\n  %s(where: %s%s): %s!\n", "Count, sum, average, minimum and maximum of the "+t.Name+" matching where, computed by the database.", field, namesOf(t).where, searchArg(t), result)
}

// aggTypes are the Go types of one table's aggregate results, built at run time like the
// record type.
type aggTypes struct {
	result, numbers, bounds reflect.Type
}

func newAggTypes(t Table) aggTypes {
	var at aggTypes
	fields := func(keys []aggKey, typeOf func(aggKey) reflect.Type) reflect.Type {
		var sf []reflect.StructField
		for i, k := range keys {
			sf = append(sf, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: typeOf(k), Tag: reflect.StructTag(fmt.Sprintf(`graphql:%q`, k.name))})
		}
		return reflect.StructOf(sf)
	}
	at.bounds = fields(boundKeys(t), func(k aggKey) reflect.Type {
		switch k.typ {
		case "Int":
			return reflect.TypeFor[*int32]()
		case "Float":
			return reflect.TypeFor[*float64]()
		case "ID":
			return reflect.TypeFor[*graphql.ID]()
		case "DateTime":
			return reflect.TypeFor[*stamp]()
		}
		if k.name == fieldCreatedAt || k.name == fieldUpdatedAt {
			return reflect.TypeFor[*stamp]()
		}
		return reflect.TypeFor[*string]()
	})
	sf := []reflect.StructField{{Name: "Count", Type: reflect.TypeFor[int32](), Tag: `graphql:"count"`}}
	if nums := numberKeys(t); len(nums) > 0 {
		at.numbers = fields(nums, func(aggKey) reflect.Type { return reflect.TypeFor[*float64]() })
		sf = append(sf,
			reflect.StructField{Name: "Sum", Type: at.numbers, Tag: `graphql:"sum"`},
			reflect.StructField{Name: "Avg", Type: at.numbers, Tag: `graphql:"avg"`})
	}
	sf = append(sf,
		reflect.StructField{Name: "Min", Type: at.bounds, Tag: `graphql:"min"`},
		reflect.StructField{Name: "Max", Type: at.bounds, Tag: `graphql:"max"`})
	at.result = reflect.StructOf(sf)
	return at
}

// aggregate answers productsAggregate(where): the figures the operation selects, computed
// by the store over where ANDed with the read rule's filter; when the rule must see each
// record, over the records it allows, in Go.
func (t *table) aggregate(at aggTypes) func(context.Context, args) (reflect.Value, error) {
	return func(ctx context.Context, a args) (reflect.Value, error) {
		return t.aggregated(ctx, at, a, graphql.SelectedFieldNames(ctx))
	}
}

// aggregated computes the figures the selected paths (sum.price, min.createdAt, ...) name.
func (t *table) aggregated(ctx context.Context, at aggTypes, a args, selected []string) (reflect.Value, error) {
	f, err := t.selection(a)
	if err != nil {
		return reflect.Value{}, err
	}
	type slot struct{ part, field string }
	var aggs []store.Aggregate
	var slots []slot
	for _, path := range selected {
		part, key, ok := strings.Cut(path, ".")
		if !ok {
			continue
		}
		aggs = append(aggs, store.Aggregate{Func: store.AggFunc(part), Key: key})
		slots = append(slots, slot{part, key})
	}
	res := reflect.New(at.result).Elem()
	access, check, err := t.readAccess(ctx)
	if errors.Is(err, ErrForbidden) {
		return res, nil
	}
	if err != nil {
		return reflect.Value{}, err
	}
	f = store.And(f, access)
	var got store.Aggregated
	if !check {
		if got, err = t.records.Aggregate(ctx, t.def.Name, f, aggs); err != nil {
			return reflect.Value{}, err
		}
	} else {
		g := guardFrom(ctx)
		acc, err := store.NewAggregator(t.def.Table, aggs)
		if err != nil {
			return reflect.Value{}, err
		}
		err = t.records.Each(ctx, t.def.Name, store.Query{Filter: f}, func(rec store.Record) (bool, error) {
			ok, err := t.allowed(g, Read, rec, nil)
			if ok {
				err = acc.Add(rec)
			}
			return err == nil, err
		})
		if err != nil {
			return reflect.Value{}, err
		}
		got = acc.Result()
	}
	// A figure of a String field (min, max) is a stored value: the answer holds it.
	var size int64
	for _, v := range got.Values {
		size += 8
		if s, ok := v.(string); ok {
			size += int64(len(s))
		}
	}
	if err := budgetFrom(ctx).take(t, 0, size, 1); err != nil {
		return reflect.Value{}, err
	}
	if got.Count > math.MaxInt32 {
		return reflect.Value{}, userError(CodeBadUserInput, fmt.Sprintf("%s matches %d records, more than an Int can hold: narrow where", t.def.Name+"Aggregate", got.Count))
	}
	res.FieldByName("Count").SetInt(got.Count)
	for i, s := range slots {
		part := res.FieldByName(capitalized(s.part))
		field := part.Field(fieldIndex(part.Type(), s.field))
		setAggValue(field, got.Values[i])
	}
	return res, nil
}

// fieldIndex is the index of the field of st that answers the GraphQL field name.
func fieldIndex(st reflect.Type, name string) int {
	for i := range st.NumField() {
		if st.Field(i).Tag.Get("graphql") == name {
			return i
		}
	}
	return -1
}

// setAggValue sets the pointer field to v, a value as store.Aggregate answers it; nil leaves
// it null.
func setAggValue(field reflect.Value, v any) {
	if v == nil {
		return
	}
	p := reflect.New(field.Type().Elem())
	switch x := v.(type) {
	case float64:
		p.Elem().SetFloat(x)
	case int64:
		if p.Elem().Kind() == reflect.Float64 {
			p.Elem().SetFloat(float64(x))
		} else {
			p.Elem().SetInt(x)
		}
	case string:
		p.Elem().SetString(x)
	case time.Time:
		p.Elem().Set(reflect.ValueOf(stamp(x)))
	default:
		return
	}
	field.Set(p)
}
