// Package store owns every connection the service makes to MongoDB and Redis.
//
// There is one code path: the MongoDB Go driver v2 and go-redis v9 talk over the network to
// whatever servers they are given. When no MongoDB URI is configured, Open starts an embedded
// FerretDB (SQLite files under the data folder) on a loopback port; when no Redis URL is
// configured, it starts an in-process miniredis. The clients then connect to those exactly as
// they would to production servers, so tests on the embedded stores exercise the real wire
// protocols.
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// ControlDatabase is the database that holds the project registry.
const ControlDatabase = "platform"

// Config says which stores to use.
type Config struct {
	// DataDir holds the embedded FerretDB files (and anything else the service keeps on disk).
	DataDir string
	// MongoURI selects an external MongoDB; empty starts the embedded FerretDB.
	MongoURI string
	// RedisURL selects an external Redis; empty starts an in-process miniredis.
	RedisURL string
	// EmbeddedMongoAddr and EmbeddedRedisAddr are the loopback addresses the embedded servers
	// listen on ("127.0.0.1:0" when empty). A fixed address lets a second replica, or a shell
	// tool such as mongosh or redis-cli, share the embedded stores.
	EmbeddedMongoAddr string
	EmbeddedRedisAddr string
	// Logger receives the service's logs; the embedded FerretDB logs through it at warn level
	// and above.
	Logger *slog.Logger
}

// Stores is the set of open store clients.
type Stores struct {
	// Mongo is connected to the control cluster (and to every project without a mongoURI).
	Mongo *mongo.Client
	// Redis is shared by rate limits, sessions and cross-replica notifications.
	Redis *redis.Client
	// MongoURI and RedisURL are the addresses the clients use (embedded or external); they
	// carry no credentials when embedded.
	MongoURI string
	RedisURL string
	// Embedded reports which stores run inside this process.
	EmbeddedMongo, EmbeddedRedis bool

	// Backend is "sqlite" (the embedded default) or "mongo".
	Backend string
	db      databases

	logger *slog.Logger

	stopFerret func(context.Context) error
	mini       *miniredis.Miniredis
	miniStop   chan struct{}
	miniDone   chan struct{}
}

// Open connects to the configured stores, starting embedded ones where none is configured.
// On error everything already started is stopped again.
func Open(ctx context.Context, cfg Config) (_ *Stores, err error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &Stores{logger: logger}
	defer func() {
		if err != nil {
			_ = s.Close(context.WithoutCancel(ctx))
		}
	}()

	s.MongoURI = cfg.MongoURI
	if s.MongoURI == "" {
		s.MongoURI, s.stopFerret, err = StartFerretDB(ctx, filepath.Join(cfg.DataDir, "ferretdb"), logger)
		if err != nil {
			return nil, err
		}
		s.EmbeddedMongo = true
	}
	m, err := openMongo(ctx, s.MongoURI)
	if err != nil {
		return nil, err
	}
	s.db, s.Mongo, s.Backend = m, m.client, "mongo"

	s.RedisURL = cfg.RedisURL
	if s.RedisURL == "" {
		addr := cfg.EmbeddedRedisAddr
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		s.mini = miniredis.NewMiniRedis()
		if err := s.mini.StartAddr(addr); err != nil {
			return nil, fmt.Errorf("start embedded redis on %s: %w", addr, err)
		}
		s.EmbeddedRedis = true
		s.RedisURL = "redis://" + s.mini.Addr()
		s.miniStop = make(chan struct{})
		s.miniDone = make(chan struct{})
		go s.expireEmbeddedKeys()
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

// expireEmbeddedKeys moves the embedded Redis's clock forward with real time: miniredis
// expires keys only when told that time passed, and without this, expiring MCP sessions and
// limiter slots would pile up for as long as the process runs.
func (s *Stores) expireEmbeddedKeys() {
	defer close(s.miniDone)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-s.miniStop:
			return
		case now := <-t.C:
			s.mini.FastForward(now.Sub(last))
			last = now
		}
	}
}

// Control returns the control database.
func (s *Stores) Control() *mongo.Database { return s.Mongo.Database(ControlDatabase) }

// PingMongo checks that MongoDB answers.
func (s *Stores) PingMongo(ctx context.Context) error {
	return s.db.ping(ctx)
}

// PingRedis checks that Redis answers.
func (s *Stores) PingRedis(ctx context.Context) error {
	return s.Redis.Ping(ctx).Err()
}

// Close disconnects every client and stops the embedded servers. Embedded FerretDB commits
// each write before acknowledging it, so nothing acknowledged is lost by stopping it.
func (s *Stores) Close(ctx context.Context) error {
	var errs []error
	if s.db != nil {
		errs = append(errs, s.db.close(ctx))
	}
	if s.Redis != nil {
		errs = append(errs, s.Redis.Close())
	}
	if s.mini != nil {
		close(s.miniStop)
		<-s.miniDone
		s.mini.Close()
	}
	if s.stopFerret != nil {
		errs = append(errs, s.stopFerret(ctx))
	}
	return errors.Join(errs...)
}
