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
// one document per project.
type mongoProjects struct {
	coll *mongo.Collection
}

// mongoProject is a StoredProject as the collection holds it.
type mongoProject struct {
	ID        string    `bson:"_id"`
	Version   int64     `bson:"version"`
	UpdatedAt time.Time `bson:"updatedAt"`
	Document  string    `bson:"document"`
}

func (p mongoProject) stored() *StoredProject {
	return &StoredProject{ID: p.ID, Version: p.Version, UpdatedAt: p.UpdatedAt.UTC(), Document: p.Document}
}

// put writes the new version only over the version it read (optimistic concurrency), so two
// replicas applying documents at once each get a version of their own.
func (p mongoProjects) put(ctx context.Context, id, document string, at time.Time) (prev, cur *StoredProject, err error) {
	for range 100 {
		old, err := p.get(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			next := mongoProject{ID: id, Version: 1, UpdatedAt: at, Document: document}
			_, err := p.coll.InsertOne(ctx, next)
			if mongo.IsDuplicateKeyError(err) {
				continue // created meanwhile
			}
			if err != nil {
				return nil, nil, mongoFail(ctx, fmt.Sprintf("store project %q", id), err)
			}
			return nil, next.stored(), nil
		case err != nil:
			return nil, nil, err
		case old.Document == document:
			return old, old, nil
		}
		next := mongoProject{ID: id, Version: old.Version + 1, UpdatedAt: at, Document: document}
		res, err := p.coll.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: id}, {Key: "version", Value: old.Version}},
			bson.D{{Key: "$set", Value: bson.D{
				{Key: "version", Value: next.Version},
				{Key: "updatedAt", Value: next.UpdatedAt},
				{Key: "document", Value: next.Document},
			}}})
		if err != nil {
			return nil, nil, mongoFail(ctx, fmt.Sprintf("store project %q", id), err)
		}
		if res.MatchedCount == 1 {
			return old, next.stored(), nil
		}
		// Changed or removed meanwhile: read it again.
	}
	return nil, nil, fmt.Errorf("store project %q: changed by others at every attempt", id)
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
	cur, err := p.coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
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

func (p mongoProjects) remove(ctx context.Context, id string) error {
	res, err := p.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return mongoFail(ctx, fmt.Sprintf("delete project %q", id), err)
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("project %q: %w", id, ErrNotFound)
	}
	return nil
}
