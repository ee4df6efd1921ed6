package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// AggFunc is a function an Aggregate computes over the values of one key.
type AggFunc string

// The aggregate functions. Each leaves out records without a value for the key, and answers
// nil when no record has one. Sum and Avg take Int and Float keys and answer a float64; Min
// and Max take Int, Float, String, ID and DateTime keys (uid, createdAt and updatedAt too)
// and answer a value of the key's type: int64, float64, string or time.Time. Strings
// compare byte by byte.
const (
	Sum AggFunc = "sum"
	Avg AggFunc = "avg"
	Min AggFunc = "min"
	Max AggFunc = "max"
)

// Aggregate asks for one function of one key's values.
type Aggregate struct {
	Func AggFunc
	Key  string
}

// Aggregated is what Records.Aggregate answers: how many records the filter selects, and
// each Aggregate's value in the order asked.
type Aggregated struct {
	Count  int64
	Values []any
}

// check reports an aggregate the table cannot compute.
func (a Aggregate) check(t *Table) (Scalar, error) {
	ft, ok := t.KeyType(a.Key)
	if !ok || a.Key == KeyOwner {
		return "", fmt.Errorf("store: %s has no key %q to aggregate", t.Name, a.Key)
	}
	numeric := ft.Scalar == Int || ft.Scalar == Float
	switch {
	case ft.List || ft.Scalar == JSON || ft.Scalar == Boolean:
		return "", fmt.Errorf("store: %s.%s (%s) cannot be aggregated", t.Name, a.Key, ft.Scalar)
	case (a.Func == Sum || a.Func == Avg) && !numeric:
		return "", fmt.Errorf("store: %s of %s.%s: want an Int or Float key", a.Func, t.Name, a.Key)
	case a.Func != Sum && a.Func != Avg && a.Func != Min && a.Func != Max:
		return "", fmt.Errorf("store: unknown aggregate function %q", a.Func)
	}
	return ft.Scalar, nil
}

// Aggregate counts the records f selects and computes aggs over them, in the database: one
// SQL query with aggregate functions on SQLite; on MongoDB a count, a $group stage per key
// summed or averaged and a sorted find per minimum or maximum.
func (r *Records) Aggregate(ctx context.Context, table string, f Filter, aggs []Aggregate) (Aggregated, error) {
	t, err := r.table(table)
	if err != nil {
		return Aggregated{}, err
	}
	for _, a := range aggs {
		if _, err := a.check(t); err != nil {
			return Aggregated{}, err
		}
	}
	if f.IsNone() {
		return Aggregated{Values: make([]any, len(aggs))}, nil
	}
	res, err := r.b.aggregate(ctx, t, f, aggs)
	if err != nil {
		return Aggregated{}, err
	}
	for i, a := range aggs {
		res.Values[i] = aggValue(t, a, res.Values[i])
	}
	return res, nil
}

// aggValue converts what a database answers for a into the Go type Aggregate promises.
func aggValue(t *Table, a Aggregate, v any) any {
	if v == nil {
		return nil
	}
	if a.Func == Sum || a.Func == Avg {
		switch x := v.(type) {
		case int64:
			return float64(x)
		case int32:
			return float64(x)
		}
		return v
	}
	ft, _ := t.KeyType(a.Key)
	switch x := v.(type) {
	case int32:
		v = int64(x)
	case float64:
		if ft.Scalar == Int {
			return int64(x)
		}
	}
	return fromSQL(t, a.Key, v)
}

func (p *sqliteProject) aggregate(ctx context.Context, t *Table, flt Filter, aggs []Aggregate) (Aggregated, error) {
	f, cols, release, err := p.fileFor(ctx, t)
	if err != nil {
		return Aggregated{}, err
	}
	defer release()
	c := sqlCompiler{t: t, cols: cols}
	where, err := c.where(flt)
	if err != nil {
		return Aggregated{}, err
	}
	exprs := []string{"count(*)"}
	for _, a := range aggs {
		exprs = append(exprs, string(a.Func)+"("+keyExpr(a.Key, cols)+")")
	}
	vals, err := f.row(ctx, t, `SELECT `+strings.Join(exprs, ", ")+` FROM `+sqlTable(t)+` WHERE `+where, c.args, true)
	if err != nil {
		return Aggregated{}, sqlFailed(ctx, "aggregate "+t.Name, err)
	}
	n, ok := vals[0].(int64)
	if !ok {
		return Aggregated{}, fmt.Errorf("aggregate %s: SQLite answered %T for the count", t.Name, vals[0])
	}
	return Aggregated{Count: n, Values: vals[1:]}, nil
}

// aggregate asks MongoDB for the count; for each key summed or averaged, how many records
// have a number there and a $group stage with its $sum; for each minimum or maximum, the
// first record in the key's order, which the key's index answers where there is one.
// $group's $avg, $min and $max would do it in one stage, but FerretDB implements only $sum
// and $count (and only the first accumulator of a stage), and the backend answers the same
// on both.
func (b *mongoBackend) aggregate(ctx context.Context, t *Table, f Filter, aggs []Aggregate) (Aggregated, error) {
	filter, err := mongoFilter(t, f)
	if err != nil {
		return Aggregated{}, err
	}
	res := Aggregated{Values: make([]any, len(aggs))}
	if res.Count, err = b.count(ctx, t, f); err != nil || res.Count == 0 {
		return res, err
	}
	coll := b.db.Collection(t.Name)
	sums := map[string]mongoSum{}
	for i, a := range aggs {
		key := mongoKey(a.Key)
		switch a.Func {
		case Sum, Avg:
			got, ok := sums[a.Key]
			if !ok {
				if got, err = b.sum(ctx, t, filter, key); err != nil {
					return Aggregated{}, err
				}
				sums[a.Key] = got
			}
			if got.n == 0 {
				continue
			}
			total, _ := aggValue(t, Aggregate{Func: Sum}, got.s).(float64)
			res.Values[i] = total
			if a.Func == Avg {
				res.Values[i] = total / float64(got.n)
			}
		case Min, Max:
			dir := 1
			if a.Func == Max {
				dir = -1
			}
			raw, err := coll.FindOne(ctx, bson.D{{Key: "$and", Value: bson.A{filter, bson.D{{Key: key, Value: bson.D{{Key: "$ne", Value: nil}}}}}}},
				options.FindOne().SetSort(bson.D{{Key: key, Value: dir}}).SetProjection(bson.D{{Key: key, Value: 1}})).Raw()
			if errors.Is(err, mongo.ErrNoDocuments) {
				continue
			}
			if err != nil {
				return Aggregated{}, mongoFail(ctx, "aggregate "+t.Name, err)
			}
			res.Values[i] = goValue(raw.Lookup(key))
		}
	}
	return res, nil
}

// mongoSum is how many of the records a filter selects have a number at a key, and their
// sum.
type mongoSum struct {
	n int64
	s any
}

// sum counts the numbers at key among the records filter selects and adds them up. Two
// commands: FerretDB computes only the first accumulator of a $group right.
func (b *mongoBackend) sum(ctx context.Context, t *Table, filter bson.D, key string) (mongoSum, error) {
	coll := b.db.Collection(t.Name)
	n, err := coll.CountDocuments(ctx, bson.D{{Key: "$and", Value: bson.A{filter, bson.D{{Key: key, Value: bson.D{{Key: "$type", Value: "number"}}}}}}})
	if err != nil {
		return mongoSum{}, mongoFail(ctx, "aggregate "+t.Name, err)
	}
	if n == 0 {
		return mongoSum{}, nil
	}
	cur, err := coll.Aggregate(ctx, bson.A{
		bson.D{{Key: "$match", Value: filter}},
		bson.D{{Key: "$group", Value: bson.D{{Key: mongoID, Value: nil}, {Key: "s", Value: bson.D{{Key: "$sum", Value: "$" + key}}}}}},
	})
	if err != nil {
		return mongoSum{}, mongoFail(ctx, "aggregate "+t.Name, err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	if !cur.Next(ctx) {
		return mongoSum{}, mongoFail(ctx, "aggregate "+t.Name, cmp.Or(cur.Err(), errors.New("no group")))
	}
	return mongoSum{n: n, s: goValue(cur.Current.Lookup("s"))}, nil
}

// Aggregator computes aggregates in Go, with the meaning Records.Aggregate gives them, over
// records handed to it one by one: for records a rule allows one by one, which no database
// filter selects.
type Aggregator struct {
	t    *Table
	aggs []Aggregate
	res  Aggregated
	sums []float64
	ns   []int64
}

// NewAggregator returns an Aggregator of aggs over the records of t.
func NewAggregator(t Table, aggs []Aggregate) (*Aggregator, error) {
	t.index()
	for _, a := range aggs {
		if _, err := a.check(&t); err != nil {
			return nil, err
		}
	}
	return &Aggregator{t: &t, aggs: aggs, res: Aggregated{Values: make([]any, len(aggs))}, sums: make([]float64, len(aggs)), ns: make([]int64, len(aggs))}, nil
}

// Add counts rec and adds its values.
func (g *Aggregator) Add(rec Record) error {
	vals, err := g.t.Values(rec)
	if err != nil {
		return err
	}
	g.res.Count++
	for i, a := range g.aggs {
		v := vals[a.Key]
		if v == nil {
			continue
		}
		switch a.Func {
		case Sum, Avg:
			switch x := v.(type) {
			case int64:
				g.sums[i] += float64(x)
			case float64:
				g.sums[i] += x
			default:
				continue
			}
			g.ns[i]++
		case Min, Max:
			cur := g.res.Values[i]
			if c, ok := compareValues(v, cur); ok && (cur == nil || a.Func == Min && c < 0 || a.Func == Max && c > 0) {
				g.res.Values[i] = v
			}
		}
	}
	return nil
}

// Result answers the count and the aggregates of the records added so far.
func (g *Aggregator) Result() Aggregated {
	out := Aggregated{Count: g.res.Count, Values: make([]any, len(g.aggs))}
	for i, a := range g.aggs {
		switch {
		case a.Func == Min || a.Func == Max:
			out.Values[i] = g.res.Values[i]
		case g.ns[i] == 0:
		case a.Func == Sum:
			out.Values[i] = g.sums[i]
		default:
			out.Values[i] = g.sums[i] / float64(g.ns[i])
		}
	}
	return out
}

// compareValues orders two values of one key; cur nil compares as ok, 0.
func compareValues(v, cur any) (int, bool) {
	if cur == nil {
		return 0, true
	}
	num := func(x any) (float64, bool) {
		switch n := x.(type) {
		case int64:
			return float64(n), true
		case float64:
			return n, true
		}
		return 0, false
	}
	if a, ok := num(v); ok {
		b, ok := num(cur)
		return cmp.Compare(a, b), ok
	}
	switch a := v.(type) {
	case string:
		b, ok := cur.(string)
		return strings.Compare(a, b), ok
	case time.Time:
		b, ok := cur.(time.Time)
		return a.Compare(b), ok
	}
	return 0, false
}
