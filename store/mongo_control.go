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

// ErrNotFound is returned when a looked-up document does not exist.
var ErrNotFound = errors.New("not found")

// StoredProject is a project document as the control database keeps it. Document is the
// canonical JSON of the project; keeping it as text keeps every key and value exactly as the
// operator wrote it, whatever the characters (MongoDB field names may not start with "$").
type StoredProject struct {
	ID        string    `bson:"_id"`
	Version   int64     `bson:"version"`
	UpdatedAt time.Time `bson:"updatedAt"`
	Document  string    `bson:"document"`
}

// Projects is the control database's collection of project documents.
type Projects struct {
	coll *mongo.Collection
}

// Projects returns the project registry's collection.
func (s *Stores) Projects() *Projects {
	return &Projects{coll: s.Control().Collection("projects")}
}

// Put creates or replaces a project document, bumping its version, and returns what was
// stored before (nil when the project is new) and the new version.
func (p *Projects) Put(ctx context.Context, id, document string) (prev *StoredProject, version int64, err error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	res := p.coll.FindOneAndUpdate(ctx,
		bson.D{{Key: "_id", Value: id}},
		bson.D{
			{Key: "$set", Value: bson.D{{Key: "document", Value: document}, {Key: "updatedAt", Value: now}}},
			{Key: "$inc", Value: bson.D{{Key: "version", Value: int64(1)}}},
		},
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.Before))
	var old StoredProject
	switch err := res.Decode(&old); {
	case errors.Is(err, mongo.ErrNoDocuments):
		return nil, 1, nil
	case err != nil:
		return nil, 0, fmt.Errorf("store project %q: %w", id, err)
	}
	return &old, old.Version + 1, nil
}

// Get returns one project document, or ErrNotFound.
func (p *Projects) Get(ctx context.Context, id string) (*StoredProject, error) {
	var sp StoredProject
	err := p.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&sp)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("project %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load project %q: %w", id, err)
	}
	return &sp, nil
}

// List returns every project document, ordered by id.
func (p *Projects) List(ctx context.Context) ([]StoredProject, error) {
	cur, err := p.coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	var out []StoredProject
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}

// Delete removes a project document; ErrNotFound when there was none.
func (p *Projects) Delete(ctx context.Context, id string) error {
	res, err := p.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return fmt.Errorf("delete project %q: %w", id, err)
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("project %q: %w", id, ErrNotFound)
	}
	return nil
}

// DropProjectDatabase deletes every record of a project.
func (s *Stores) DropProjectDatabase(ctx context.Context, projectID, mongoURI string) error {
	db, err := s.ProjectDatabase(ctx, projectID, mongoURI)
	if err != nil {
		return err
	}
	if err := db.Drop(ctx); err != nil {
		return fmt.Errorf("drop database of project %q: %w", projectID, err)
	}
	return nil
}
