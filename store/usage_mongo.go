package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// mongoUsage keeps usage in the control database's collection "usage", one document per
// project, span and start under the id "<span>/<project>/<start>".
type mongoUsage struct{ coll *mongo.Collection }

func (m *mongoDatabases) usage() usageBackend {
	return mongoUsage{coll: m.client.Database(ControlDatabase).Collection("usage")}
}

func (u mongoUsage) add(ctx context.Context, hours, days []Usage) error {
	type row struct {
		s span
		u *Usage
	}
	var rows []row
	for i := range hours {
		rows = append(rows, row{spanHour, &hours[i]})
	}
	for i := range days {
		rows = append(rows, row{spanDay, &days[i]})
	}
	models := make([]mongo.WriteModel, 0, len(rows))
	for _, rw := range rows {
		s, r := rw.s, rw.u
		inc, mx := bson.D{}, bson.D{}
		for j, p := range r.counters() {
			inc = append(inc, bson.E{Key: usageCounters[j], Value: *p})
		}
		for j, p := range r.gauges() {
			mx = append(mx, bson.E{Key: usageGauges[j], Value: *p})
		}
		models = append(models, mongo.NewUpdateOneModel().
			SetFilter(bson.D{{Key: "_id", Value: string(s) + "/" + r.Project + "/" + r.Start.Format(TimeLayout)}}).
			SetUpdate(bson.D{
				{Key: "$setOnInsert", Value: bson.D{{Key: "project", Value: r.Project}, {Key: "span", Value: string(s)}, {Key: "start", Value: r.Start}}},
				{Key: "$inc", Value: inc},
				{Key: "$max", Value: mx},
			}).SetUpsert(true))
	}
	_, err := u.coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	return err
}

// decodeUsage reads a usage document.
func decodeUsage(doc bson.M) Usage {
	u := Usage{}
	u.Project, _ = doc["project"].(string)
	if t, ok := doc["start"].(bson.DateTime); ok {
		u.Start = t.Time().UTC()
	}
	for i, p := range u.counters() {
		*p = asInt64(doc[usageCounters[i]])
	}
	for i, p := range u.gauges() {
		*p = asInt64(doc[usageGauges[i]])
	}
	return u
}

func asInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int32:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}

func (u mongoUsage) rows(ctx context.Context, s span, project string, from, to time.Time) ([]Usage, error) {
	f := bson.D{{Key: "span", Value: string(s)}, {Key: "start", Value: bson.D{{Key: "$gte", Value: from}, {Key: "$lt", Value: to}}}}
	if project != "" {
		f = append(f, bson.E{Key: "project", Value: project})
	}
	cur, err := u.coll.Find(ctx, f, options.Find().SetSort(bson.D{{Key: "project", Value: 1}, {Key: "start", Value: 1}}))
	if err != nil {
		return nil, err
	}
	return decodeUsages(ctx, cur)
}

// totals sums in the service: FerretDB has no $max accumulator in $group. It reads one row
// per project and day of the range.
func (u mongoUsage) totals(ctx context.Context, s span, from, to time.Time) ([]Usage, error) {
	rows, err := u.rows(ctx, s, "", from, to)
	if err != nil {
		return nil, err
	}
	var out []Usage
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].Project != r.Project {
			out = append(out, Usage{Project: r.Project})
		}
		out[len(out)-1].Add(&r)
	}
	return out, nil
}

func decodeUsages(ctx context.Context, cur *mongo.Cursor) ([]Usage, error) {
	defer cur.Close(ctx)
	var out []Usage
	for cur.Next(ctx) {
		var doc bson.M
		if err := cur.Decode(&doc); err != nil {
			return nil, err
		}
		out = append(out, decodeUsage(doc))
	}
	return out, cur.Err()
}

func (u mongoUsage) prune(ctx context.Context, s span, before time.Time) error {
	_, err := u.coll.DeleteMany(ctx, bson.D{{Key: "span", Value: string(s)}, {Key: "start", Value: bson.D{{Key: "$lt", Value: before}}}})
	return err
}

// createUsageIndex indexes the usage collection as its reads go: by span, project and start.
// Creating it again changes nothing.
func createUsageIndex(ctx context.Context, c *mongo.Client) error {
	_, err := c.Database(ControlDatabase).Collection("usage").Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys:    bson.D{{Key: "span", Value: 1}, {Key: "project", Value: 1}, {Key: "start", Value: 1}},
		Options: options.Index().SetName("span_project_start"),
	})
	if err != nil {
		return fmt.Errorf("index the usage collection: %w", err)
	}
	return nil
}
