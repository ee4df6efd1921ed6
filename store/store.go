// Package store owns the service's data: the query model (Filter, Query, keyset cursors)
// and every database access behind it, and the Redis connection.
//
// Records live in one of two backends, chosen by configuration: without a MongoDB URI, SQLite
// files under the data folder (the embedded default: one file for the project registry, one
// per project, with real indexes); with one, MongoDB. Both answer the same queries the same
// way (conformance_test.go holds them to it). Without a Redis URL, Open starts an in-process
// miniredis and connects the same go-redis client to it.
package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/platform-dev/platform/coord/embedded"
)

// Config says which stores to use.
type Config struct {
	// DataDir holds the embedded SQLite files (and anything else the service keeps on disk).
	DataDir string
	// MongoURI selects MongoDB; empty keeps records in SQLite files under DataDir.
	MongoURI string
	// RedisURL selects an external Redis; empty starts an in-process miniredis.
	RedisURL string
	// EmbeddedRedisAddr is the loopback address the embedded Redis listens on
	// ("127.0.0.1:0" when empty). A fixed address lets a shell tool such as redis-cli share it.
	EmbeddedRedisAddr string
	// RedisOnly opens Redis alone, for a replica that serves no project (`serve --role
	// mcp`): no database is opened, and the methods that reach one must not be called.
	RedisOnly bool
	// Logger receives the stores' logs.
	Logger *slog.Logger
	// FilesS3URL, when set, keeps the files of File fields in that S3-compatible bucket,
	// http(s)://<endpoint>/<bucket>[/<prefix>], instead of the data folder.
	FilesS3URL string
	// SlowQuery is how long a find or count takes before its project's slow-query log
	// keeps it (see Stores.SlowQueries); 0 means DefaultSlowQuery.
	SlowQuery time.Duration
}

// Stores is the set of open stores.
type Stores struct {
	// Redis is shared by rate limits, sessions and cross-replica notifications.
	Redis *redis.Client
	// RedisURL is the address the client uses (embedded or external); it carries no
	// credentials when embedded.
	RedisURL string
	// EmbeddedRedis reports whether Redis runs inside this process.
	EmbeddedRedis bool

	// Backend is "sqlite" (the embedded default) or "mongo"; empty when RedisOnly.
	Backend string
	db      databases

	logger  *slog.Logger
	dataDir string
	files   *s3Files // nil: files are kept in the data folder

	slow slowLogs

	changesOnce sync.Once
	changes     *Changes

	mini *embedded.Server
}

// Open opens the configured stores, starting an embedded Redis where none is configured. On
// error everything already opened is closed again.
func Open(ctx context.Context, cfg Config) (_ *Stores, err error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &Stores{logger: logger, dataDir: cfg.DataDir, slow: slowLogs{threshold: cmp.Or(cfg.SlowQuery, DefaultSlowQuery), logs: map[string]*SlowLog{}}}
	defer func() {
		if err != nil {
			_ = s.Close(context.WithoutCancel(ctx))
		}
	}()

	switch {
	case cfg.RedisOnly: // no database
	case cfg.MongoURI == "":
		s.Backend = "sqlite"
		db, err := openSQLite(ctx, cfg.DataDir, logger)
		if err != nil {
			return nil, err
		}
		s.db = db
	default:
		s.Backend = "mongo"
		db, err := openMongo(ctx, cfg.MongoURI)
		if err != nil {
			return nil, err
		}
		s.db = db
	}

	if cfg.FilesS3URL != "" {
		if s.files, err = openS3Files(cfg.FilesS3URL); err != nil {
			return nil, err
		}
	}
	s.RedisURL = cfg.RedisURL
	if s.RedisURL == "" {
		addr := cfg.EmbeddedRedisAddr
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		s.mini, err = embedded.Start(addr)
		if err != nil {
			return nil, fmt.Errorf("start embedded redis on %s: %w", addr, err)
		}
		s.EmbeddedRedis = true
		s.RedisURL = "redis://" + s.mini.Addr()
	}
	ropts, err := redis.ParseURL(s.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("parse redis url: %w", err)
	}
	s.Redis = redis.NewClient(ropts)
	if err := s.Redis.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("ping redis at %s: %w", ropts.Addr, err)
	}
	return s, nil
}

// PingDatabase checks that the database keeping records answers.
func (s *Stores) PingDatabase(ctx context.Context) error {
	if err := s.db.ping(ctx); err != nil {
		return fmt.Errorf("ping %s: %w", s.Backend, err)
	}
	return nil
}

// PingRedis checks that Redis answers.
func (s *Stores) PingRedis(ctx context.Context) error {
	return s.Redis.Ping(ctx).Err()
}

// Close closes the database and Redis and stops the embedded Redis. Every acknowledged write
// is already committed, so nothing is lost by closing.
func (s *Stores) Close(ctx context.Context) error {
	var errs []error
	if s.changes != nil {
		s.changes.feed.Close()
	}
	if s.db != nil {
		errs = append(errs, s.db.close(ctx))
	}
	if s.Redis != nil {
		errs = append(errs, s.Redis.Close())
	}
	if s.mini != nil {
		s.mini.Close()
	}
	return errors.Join(errs...)
}
