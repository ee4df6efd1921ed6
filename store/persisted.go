package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/platform-dev/platform/coord"
)

// Documents answers the manifest of documents registered for project id (trusted
// documents), as SetDocuments stored it; "" when none is. It lives beside the project's
// document, in the control database, so every replica serves the same; purge removes it.
func (p *Projects) Documents(ctx context.Context, id string) (string, error) {
	return p.b.documents(ctx, id)
}

// SetDocuments replaces the manifest of project id; "" removes it.
func (p *Projects) SetDocuments(ctx context.Context, id, manifest string) error {
	return p.b.setDocuments(ctx, id, manifest)
}

func (p sqliteProjects) documents(ctx context.Context, id string) (string, error) {
	var manifest string
	err := p.f.reader.QueryRowContext(ctx, `SELECT manifest FROM project_documents WHERE id = ?`, id).Scan(&manifest)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("registered documents of project %q: %w", id, err)
	}
	return manifest, nil
}

func (p sqliteProjects) setDocuments(ctx context.Context, id, manifest string) error {
	var err error
	if manifest == "" {
		_, err = p.f.writer.ExecContext(ctx, `DELETE FROM project_documents WHERE id = ?`, id)
	} else {
		_, err = p.f.writer.ExecContext(ctx, `INSERT INTO project_documents (id, manifest) VALUES (?, ?)
			ON CONFLICT (id) DO UPDATE SET manifest = excluded.manifest`, id, manifest)
	}
	if err != nil {
		return fmt.Errorf("set the registered documents of project %q: %w", id, err)
	}
	return nil
}

func (p mongoProjects) documents(ctx context.Context, id string) (string, error) {
	var doc struct {
		Manifest string `bson:"manifest"`
	}
	err := p.docs.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return "", nil
	case err != nil:
		return "", mongoFail(ctx, fmt.Sprintf("registered documents of project %q", id), err)
	}
	return doc.Manifest, nil
}

func (p mongoProjects) setDocuments(ctx context.Context, id, manifest string) error {
	var err error
	if manifest == "" {
		_, err = p.docs.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	} else {
		_, err = p.docs.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}},
			bson.D{{Key: "_id", Value: id}, {Key: "manifest", Value: manifest}}, options.Replace().SetUpsert(true))
	}
	if err != nil {
		return mongoFail(ctx, fmt.Sprintf("set the registered documents of project %q", id), err)
	}
	return nil
}

// PersistedQueries is the cache of automatic persisted queries (documents clients send once
// with their SHA-256 and then by the hash alone), in Redis so that every replica knows what
// one was sent. Each project keeps at most Max documents, each for TTL after it was last
// sent in full; past Max the oldest are forgotten (a client then sends the document again).
type PersistedQueries struct {
	rdb *redis.Client
	ttl time.Duration
	max int64
}

// PersistedQueries returns the cache with the given bounds.
func (s *Stores) PersistedQueries(ttl time.Duration, max int64) *PersistedQueries {
	return &PersistedQueries{rdb: s.Redis, ttl: ttl, max: max}
}

// ProjectQueries is one project's part of the cache.
type ProjectQueries struct {
	c       *PersistedQueries
	project string
}

// Project is the part of the cache of project id.
func (c *PersistedQueries) Project(id string) *ProjectQueries {
	return &ProjectQueries{c: c, project: id}
}

// The keys are coord's PersistedQuery (a document) and PersistedQueries (the project's
// hashes by expiry, to forget the oldest past the bound).
func (q *ProjectQueries) docKey(hash string) string { return coord.PersistedQuery(q.project, hash) }
func (q *ProjectQueries) indexKey() string          { return coord.PersistedQueries(q.project) }

// Document answers the document sent with hash; false when the cache does not hold it.
func (q *ProjectQueries) Document(ctx context.Context, hash string) (string, bool, error) {
	doc, err := q.c.rdb.Get(ctx, q.docKey(hash)).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("persisted query %s of project %q: %w", hash, q.project, err)
	}
	return doc, true, nil
}

// Remember keeps document under hash, which the caller checked is its SHA-256, and forgets
// the oldest documents past the bound.
func (q *ProjectQueries) Remember(ctx context.Context, hash, document string) error {
	now := time.Now()
	pipe := q.c.rdb.TxPipeline()
	pipe.Set(ctx, q.docKey(hash), document, q.c.ttl)
	pipe.ZAdd(ctx, q.indexKey(), redis.Z{Score: float64(now.Add(q.c.ttl).UnixMilli()), Member: hash})
	pipe.ZRemRangeByScore(ctx, q.indexKey(), "-inf", strconv.FormatInt(now.UnixMilli(), 10))
	pipe.Expire(ctx, q.indexKey(), q.c.ttl)
	card := pipe.ZCard(ctx, q.indexKey())
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("remember persisted query %s of project %q: %w", hash, q.project, err)
	}
	over := card.Val() - q.c.max
	if over <= 0 {
		return nil
	}
	oldest, err := q.c.rdb.ZPopMin(ctx, q.indexKey(), over).Result()
	if err != nil {
		return fmt.Errorf("forget persisted queries of project %q: %w", q.project, err)
	}
	keys := make([]string, len(oldest))
	for i, z := range oldest {
		keys[i] = q.docKey(z.Member.(string))
	}
	if err := q.c.rdb.Del(ctx, keys...).Err(); err != nil {
		return fmt.Errorf("forget persisted queries of project %q: %w", q.project, err)
	}
	return nil
}
