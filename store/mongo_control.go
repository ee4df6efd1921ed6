package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// mongoProjects keeps project documents in the control database's collection "projects",
// one document per project, and every version applied in "project_versions".
type mongoProjects struct {
	coll    *mongo.Collection
	history *mongo.Collection
	quota   *mongo.Collection // "project_quotas": {_id: project, quotas: {name: n}}
	docs    *mongo.Collection // "project_documents": {_id: project, manifest: text}
}

// mongoProject is a StoredProject as the collection holds it.
type mongoProject struct {
	ID        string     `bson:"_id"`
	Version   int64      `bson:"version"`
	UpdatedAt time.Time  `bson:"updatedAt"`
	Document  string     `bson:"document"`
	DeletedAt *time.Time `bson:"deletedAt,omitempty"`
	// Webhooks is absent from a document stored before the registry noted it.
	Webhooks *bool `bson:"webhooks,omitempty"`
}

func (p mongoProject) stored() *StoredProject {
	sp := &StoredProject{ID: p.ID, Version: p.Version, UpdatedAt: p.UpdatedAt.UTC(), Document: p.Document}
	if p.DeletedAt != nil {
		sp.DeletedAt = p.DeletedAt.UTC()
	}
	return sp
}

// mongoVersion is a StoredVersion as project_versions holds it, under the id
// "<project>/<version>".
type mongoVersion struct {
	ID        string    `bson:"_id"`
	Project   string    `bson:"project"`
	Version   int64     `bson:"version"`
	AppliedAt time.Time `bson:"appliedAt"`
	Who       string    `bson:"who"`
	Changes   []string  `bson:"changes"`
	Document  string    `bson:"document,omitempty"`
}

func (v mongoVersion) stored() *StoredVersion {
	return &StoredVersion{Version: v.Version, AppliedAt: v.AppliedAt.UTC(), Who: v.Who, Changes: v.Changes, Document: v.Document}
}

func versionID(id string, n int64) string { return fmt.Sprintf("%s/%d", id, n) }

// notDeleted selects a project document that is not marked deleted.
var notDeleted = bson.E{Key: "deletedAt", Value: bson.D{{Key: "$exists", Value: false}}}

// put writes the new version only over the version it read (optimistic concurrency), so two
// replicas applying documents at once each get a version of their own; only the writer that
// won records the version in the history. A process that dies between the two writes leaves
// that version out of the history (MongoDB transactions need a replica set, FerretDB has
// none), never a version that is not the document.
func (p mongoProjects) put(ctx context.Context, id, document string, by Applied, at time.Time) (prev, cur *StoredProject, err error) {
	for range 100 {
		old, err := p.get(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			next := mongoProject{ID: id, Version: 1, UpdatedAt: at, Document: document, Webhooks: &by.Webhooks}
			_, err := p.coll.InsertOne(ctx, next)
			if mongo.IsDuplicateKeyError(err) {
				continue // created meanwhile
			}
			if err != nil {
				return nil, nil, mongoFail(ctx, fmt.Sprintf("store project %q", id), err)
			}
			return nil, next.stored(), p.record(ctx, next.stored(), by.changesOf(nil), by.Who)
		case err != nil:
			return nil, nil, err
		case !old.DeletedAt.IsZero():
			return nil, nil, fmt.Errorf("store project %q: %w", id, ErrDeleted)
		case old.Document == document:
			return old, old, nil
		}
		next := mongoProject{ID: id, Version: old.Version + 1, UpdatedAt: at, Document: document}
		changes := by.changesOf(old)
		res, err := p.coll.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: id}, {Key: "version", Value: old.Version}, notDeleted},
			bson.D{{Key: "$set", Value: bson.D{
				{Key: "version", Value: next.Version},
				{Key: "updatedAt", Value: next.UpdatedAt},
				{Key: "document", Value: next.Document},
				{Key: "webhooks", Value: by.Webhooks},
			}}})
		if err != nil {
			return nil, nil, mongoFail(ctx, fmt.Sprintf("store project %q", id), err)
		}
		if res.MatchedCount == 1 {
			return old, next.stored(), p.record(ctx, next.stored(), changes, by.Who)
		}
		// Changed or removed meanwhile: read it again.
	}
	return nil, nil, fmt.Errorf("store project %q: changed by others at every attempt", id)
}

// record keeps sp in the history. A version an earlier purge left behind is replaced.
func (p mongoProjects) record(ctx context.Context, sp *StoredProject, changes []string, who string) error {
	v := mongoVersion{ID: versionID(sp.ID, sp.Version), Project: sp.ID, Version: sp.Version, AppliedAt: sp.UpdatedAt, Who: who, Changes: changes, Document: sp.Document}
	if _, err := p.history.ReplaceOne(ctx, bson.D{{Key: "_id", Value: v.ID}}, v, options.Replace().SetUpsert(true)); err != nil {
		return mongoFail(ctx, fmt.Sprintf("project %q: keep version %d in the history", sp.ID, sp.Version), err)
	}
	return nil
}

func (p mongoProjects) markDeleted(ctx context.Context, id string, at time.Time) error {
	res, err := p.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, notDeleted},
		bson.D{{Key: "$set", Value: bson.D{{Key: "deletedAt", Value: at}}}})
	if err != nil {
		return mongoFail(ctx, fmt.Sprintf("delete project %q", id), err)
	}
	if res.MatchedCount == 0 {
		if _, err := p.get(ctx, id); err != nil {
			return err
		}
		return fmt.Errorf("project %q: %w", id, ErrDeleted)
	}
	return nil
}

func (p mongoProjects) restore(ctx context.Context, id string) (*StoredProject, error) {
	var sp mongoProject
	err := p.coll.FindOneAndUpdate(ctx,
		bson.D{{Key: "_id", Value: id}, {Key: "deletedAt", Value: bson.D{{Key: "$exists", Value: true}}}},
		bson.D{{Key: "$unset", Value: bson.D{{Key: "deletedAt", Value: ""}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&sp)
	if errors.Is(err, mongo.ErrNoDocuments) {
		if _, err := p.get(ctx, id); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("project %q: %w", id, ErrNotDeleted)
	}
	if err != nil {
		return nil, mongoFail(ctx, fmt.Sprintf("restore project %q", id), err)
	}
	return sp.stored(), nil
}

// purge removes the document first: history without a document is never shown, and the
// next purge or a new project of the id replaces it.
func (p mongoProjects) purge(ctx context.Context, id string) error {
	res, err := p.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return mongoFail(ctx, fmt.Sprintf("purge project %q", id), err)
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("project %q: %w", id, ErrNotFound)
	}
	if _, err := p.quota.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
		return mongoFail(ctx, fmt.Sprintf("purge the quotas of project %q", id), err)
	}
	if _, err := p.docs.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
		return mongoFail(ctx, fmt.Sprintf("purge the registered documents of project %q", id), err)
	}
	if _, err := p.history.DeleteMany(ctx, bson.D{{Key: "project", Value: id}}); err != nil {
		return mongoFail(ctx, fmt.Sprintf("purge the history of project %q", id), err)
	}
	return nil
}

func (p mongoProjects) versions(ctx context.Context, id string) ([]StoredVersion, error) {
	if _, err := p.get(ctx, id); err != nil {
		return nil, err
	}
	cur, err := p.history.Find(ctx, bson.D{{Key: "project", Value: id}}, options.Find().
		SetSort(bson.D{{Key: "version", Value: -1}}).
		SetProjection(bson.D{{Key: "document", Value: 0}}))
	if err != nil {
		return nil, mongoFail(ctx, fmt.Sprintf("versions of project %q", id), err)
	}
	var all []mongoVersion
	if err := cur.All(ctx, &all); err != nil {
		return nil, mongoFail(ctx, fmt.Sprintf("versions of project %q", id), err)
	}
	out := make([]StoredVersion, len(all))
	for i, v := range all {
		out[i] = *v.stored()
	}
	return out, nil
}

func (p mongoProjects) version(ctx context.Context, id string, n int64) (*StoredVersion, error) {
	var v mongoVersion
	err := p.history.FindOne(ctx, bson.D{{Key: "_id", Value: versionID(id, n)}}).Decode(&v)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("project %q version %d: %w", id, n, ErrNotFound)
	}
	if err != nil {
		return nil, mongoFail(ctx, fmt.Sprintf("project %q version %d", id, n), err)
	}
	return v.stored(), nil
}

func (p mongoProjects) get(ctx context.Context, id string) (*StoredProject, error) {
	var sp mongoProject
	err := p.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&sp)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("project %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, mongoFail(ctx, fmt.Sprintf("load project %q", id), err)
	}
	return sp.stored(), nil
}

func (p mongoProjects) list(ctx context.Context) ([]StoredProject, error) {
	return p.listWhere(ctx, bson.D{})
}

func (p mongoProjects) withWebhooks(ctx context.Context) ([]StoredProject, error) {
	return p.listWhere(ctx, bson.D{notDeleted, {Key: "webhooks", Value: bson.D{{Key: "$ne", Value: false}}}})
}

func (p mongoProjects) markWebhooks(ctx context.Context, id string, version int64, webhooks bool) error {
	_, err := p.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "version", Value: version}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "webhooks", Value: webhooks}}}})
	if err != nil {
		return mongoFail(ctx, fmt.Sprintf("note the webhooks of project %q", id), err)
	}
	return nil
}

// listWhere lists the projects that filter selects.
func (p mongoProjects) listWhere(ctx context.Context, filter bson.D) ([]StoredProject, error) {
	cur, err := p.coll.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, mongoFail(ctx, "list projects", err)
	}
	var all []mongoProject
	if err := cur.All(ctx, &all); err != nil {
		return nil, mongoFail(ctx, "list projects", err)
	}
	out := make([]StoredProject, len(all))
	for i, p := range all {
		out[i] = *p.stored()
	}
	return out, nil
}

func (p mongoProjects) quotas(ctx context.Context, id string) (map[string]int64, error) {
	var doc struct {
		Quotas map[string]int64 `bson:"quotas"`
	}
	err := p.quota.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return map[string]int64{}, nil
	case err != nil:
		return nil, mongoFail(ctx, fmt.Sprintf("quotas of project %q", id), err)
	case doc.Quotas == nil:
		doc.Quotas = map[string]int64{}
	}
	return doc.Quotas, nil
}

func (p mongoProjects) setQuotas(ctx context.Context, id string, q map[string]int64) error {
	var err error
	if len(q) == 0 {
		_, err = p.quota.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	} else {
		_, err = p.quota.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}},
			bson.D{{Key: "_id", Value: id}, {Key: "quotas", Value: q}}, options.Replace().SetUpsert(true))
	}
	if err != nil {
		return mongoFail(ctx, fmt.Sprintf("set the quotas of project %q", id), err)
	}
	return nil
}
