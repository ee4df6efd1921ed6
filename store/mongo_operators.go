package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// mongoOperators keeps keys in the control database's collection "operator_keys" (one
// document per key, under its name) and the audit log in "audit".
type mongoOperators struct {
	keysColl  *mongo.Collection
	auditColl *mongo.Collection
}

func (m *mongoDatabases) operators() operatorsBackend {
	db := m.client.Database(ControlDatabase)
	return mongoOperators{keysColl: db.Collection("operator_keys"), auditColl: db.Collection("audit")}
}

// ensureOperatorIndexes creates the indexes the key look-up and the audit log's reads use,
// those missing only: FerretDB drops the connection on a createIndexes of an index that
// exists.
func ensureOperatorIndexes(ctx context.Context, c *mongo.Client) error {
	db := c.Database(ControlDatabase)
	for _, ix := range []struct {
		coll, name string
		keys       bson.D
		unique     bool
	}{
		{"operator_keys", "hash", bson.D{{Key: "hash", Value: 1}}, true},
		{"audit", "at", bson.D{{Key: "at", Value: 1}}, false},
		{"audit", "project_at", bson.D{{Key: "project", Value: 1}, {Key: "at", Value: 1}}, false},
	} {
		err := db.CreateCollection(ctx, ix.coll)
		var ce mongo.CommandError
		if err != nil && !(errors.As(err, &ce) && ce.Code == 48) { // NamespaceExists
			return mongoFail(ctx, "create "+ix.coll, err)
		}
		specs, err := db.Collection(ix.coll).Indexes().ListSpecifications(ctx)
		if err != nil {
			return mongoFail(ctx, "list the indexes of "+ix.coll, err)
		}
		if slices.ContainsFunc(specs, func(s mongo.IndexSpecification) bool { return s.Name == ix.name }) {
			continue
		}
		m := mongo.IndexModel{Keys: ix.keys, Options: options.Index().SetName(ix.name).SetUnique(ix.unique)}
		if _, err := db.Collection(ix.coll).Indexes().CreateOne(ctx, m); err != nil {
			return mongoFail(ctx, "create the index "+ix.name+" of "+ix.coll, err)
		}
	}
	return nil
}

type mongoOperatorKey struct {
	Name      string     `bson:"_id"`
	Scope     string     `bson:"scope"`
	Hash      string     `bson:"hash"`
	CreatedAt time.Time  `bson:"createdAt"`
	ExpiresAt *time.Time `bson:"expiresAt,omitempty"`
	LastUsed  *time.Time `bson:"lastUsed,omitempty"`
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (k mongoOperatorKey) stored() *StoredKey {
	s := &StoredKey{Name: k.Name, Scope: k.Scope, Hash: k.Hash, CreatedAt: k.CreatedAt.UTC()}
	if k.ExpiresAt != nil {
		s.ExpiresAt = k.ExpiresAt.UTC()
	}
	if k.LastUsed != nil {
		s.LastUsed = k.LastUsed.UTC()
	}
	return s
}

func (o mongoOperators) addKey(ctx context.Context, k StoredKey) error {
	_, err := o.keysColl.InsertOne(ctx, mongoOperatorKey{Name: k.Name, Scope: k.Scope, Hash: k.Hash, CreatedAt: k.CreatedAt,
		ExpiresAt: timeOrNil(k.ExpiresAt), LastUsed: timeOrNil(k.LastUsed)})
	if mongo.IsDuplicateKeyError(err) {
		return fmt.Errorf("key %q: %w", k.Name, ErrKeyExists)
	}
	if err != nil {
		return mongoFail(ctx, fmt.Sprintf("store key %q", k.Name), err)
	}
	return nil
}

func (o mongoOperators) findKey(ctx context.Context, filter bson.D, what string) (*StoredKey, error) {
	var k mongoOperatorKey
	err := o.keysColl.FindOne(ctx, filter).Decode(&k)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	if err != nil {
		return nil, mongoFail(ctx, what, err)
	}
	return k.stored(), nil
}

func (o mongoOperators) keyByHash(ctx context.Context, hash string) (*StoredKey, error) {
	return o.findKey(ctx, bson.D{{Key: "hash", Value: hash}}, "look up key")
}

func (o mongoOperators) keys(ctx context.Context) ([]StoredKey, error) {
	cur, err := o.keysColl.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, mongoFail(ctx, "list keys", err)
	}
	var all []mongoOperatorKey
	if err := cur.All(ctx, &all); err != nil {
		return nil, mongoFail(ctx, "list keys", err)
	}
	out := make([]StoredKey, len(all))
	for i, k := range all {
		out[i] = *k.stored()
	}
	return out, nil
}

func (o mongoOperators) removeKey(ctx context.Context, name string) (*StoredKey, error) {
	var k mongoOperatorKey
	err := o.keysColl.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&k)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("revoke key %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, mongoFail(ctx, fmt.Sprintf("revoke key %q", name), err)
	}
	return k.stored(), nil
}

func (o mongoOperators) touchKey(ctx context.Context, name string, at time.Time) error {
	if _, err := o.keysColl.UpdateOne(ctx, bson.D{{Key: "_id", Value: name}}, bson.D{{Key: "$set", Value: bson.D{{Key: "lastUsed", Value: at}}}}); err != nil {
		return mongoFail(ctx, fmt.Sprintf("key %q: last used", name), err)
	}
	return nil
}

type mongoAudit struct {
	ID      bson.ObjectID `bson:"_id"`
	At      time.Time     `bson:"at"`
	Key     string        `bson:"key"`
	Scope   string        `bson:"scope"`
	Client  string        `bson:"client"`
	Action  string        `bson:"action"`
	Project string        `bson:"project"`
	Target  string        `bson:"target"`
	Diff    []string      `bson:"diff"`
	Outcome string        `bson:"outcome"`
}

func (o mongoOperators) appendAudit(ctx context.Context, e AuditEntry) error {
	if _, err := o.auditColl.InsertOne(ctx, mongoAudit{ID: bson.NewObjectID(), At: e.At, Key: e.Key, Scope: e.Scope, Client: e.Client,
		Action: e.Action, Project: e.Project, Target: e.Target, Diff: e.Diff, Outcome: e.Outcome}); err != nil {
		return mongoFail(ctx, "audit "+e.Action, err)
	}
	return nil
}

func (o mongoOperators) audit(ctx context.Context, q AuditQuery) ([]AuditEntry, error) {
	filter := bson.D{{Key: "at", Value: bson.D{{Key: "$gte", Value: q.Since}}}}
	if q.Project != "" {
		filter = append(filter, bson.E{Key: "project", Value: q.Project})
	}
	if q.Action != "" {
		filter = append(filter, bson.E{Key: "action", Value: q.Action})
	}
	order := 1
	if q.Newest {
		order = -1
	}
	opts := options.Find().SetSort(bson.D{{Key: "at", Value: order}, {Key: "_id", Value: order}})
	if q.Limit > 0 {
		opts.SetLimit(int64(q.Limit))
	}
	cur, err := o.auditColl.Find(ctx, filter, opts)
	if err != nil {
		return nil, mongoFail(ctx, "read the audit log", err)
	}
	var all []mongoAudit
	if err := cur.All(ctx, &all); err != nil {
		return nil, mongoFail(ctx, "read the audit log", err)
	}
	out := make([]AuditEntry, len(all))
	for i, a := range all {
		diff := a.Diff
		if diff == nil {
			diff = []string{}
		}
		out[i] = AuditEntry{At: a.At.UTC(), Key: a.Key, Scope: a.Scope, Client: a.Client, Action: a.Action,
			Project: a.Project, Target: a.Target, Diff: diff, Outcome: a.Outcome}
	}
	return out, nil
}

func (o mongoOperators) pruneAudit(ctx context.Context, before time.Time) (int64, error) {
	res, err := o.auditColl.DeleteMany(ctx, bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: before}}}})
	if err != nil {
		return 0, mongoFail(ctx, "prune the audit log", err)
	}
	return res.DeletedCount, nil
}
