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
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
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

	mu      sync.Mutex
	clients map[string]*mongo.Client // dedicated clusters, by URI

	updating *updateLocks // shared by every project's Records

	stopFerret func()
	ferretDone chan struct{}
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
	s := &Stores{logger: logger, clients: map[string]*mongo.Client{}, updating: new(updateLocks)}
	defer func() {
		if err != nil {
			_ = s.Close(context.WithoutCancel(ctx))
		}
	}()

	s.MongoURI = cfg.MongoURI
	if s.MongoURI == "" {
		if err := s.startFerret(cfg); err != nil {
			return nil, err
		}
	}
	s.Mongo, err = connectMongo(ctx, s.MongoURI)
	if err != nil {
		return nil, err
	}

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

func (s *Stores) startFerret(cfg Config) error {
	dir, err := filepath.Abs(filepath.Join(cfg.DataDir, "ferretdb"))
	if err != nil {
		return fmt.Errorf("embedded mongodb data folder: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create embedded mongodb data folder: %w", err)
	}
	addr := cfg.EmbeddedMongoAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("embedded mongodb address %q: %w", addr, err)
	}
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: addr},
		Handler:   "sqlite",
		SQLiteURL: "file:" + dir + "/",
		Logger:    slog.New(minLevel{h: s.logger.With("component", "ferretdb").Handler(), min: slog.LevelWarn}),
	})
	if err != nil {
		return fmt.Errorf("start embedded mongodb: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.ferretDone = make(chan struct{})
	go func() {
		defer close(s.ferretDone)
		if err := f.Run(ctx); err != nil {
			s.logger.Error("embedded mongodb stopped", "err", err)
		}
	}()
	s.stopFerret = cancel
	s.EmbeddedMongo = true
	// MongoDBURI blocks until the listener is bound, so the port is known here.
	s.MongoURI = f.MongoDBURI()
	return nil
}

func connectMongo(ctx context.Context, uri string) (*mongo.Client, error) {
	// The URI's own options (serverSelectionTimeoutMS, ...) override these defaults.
	c, err := mongo.Connect(options.Client().SetServerSelectionTimeout(10 * time.Second).ApplyURI(uri))
	if err != nil {
		return nil, fmt.Errorf("connect mongodb: %w", err)
	}
	if err := c.Ping(ctx, readpref.Primary()); err != nil {
		_ = c.Disconnect(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("ping mongodb: %w", err)
	}
	return c, nil
}

// Control returns the control database.
func (s *Stores) Control() *mongo.Database { return s.Mongo.Database(ControlDatabase) }

// ProjectDatabaseName is the database that holds a project's tables.
func ProjectDatabaseName(projectID string) string { return "p_" + projectID }

// ProjectDatabase returns a project's database, on its dedicated cluster when mongoURI is set.
// Clients of dedicated clusters are opened once and shared.
func (s *Stores) ProjectDatabase(ctx context.Context, projectID, mongoURI string) (*mongo.Database, error) {
	if mongoURI == "" {
		return s.Mongo.Database(ProjectDatabaseName(projectID)), nil
	}
	s.mu.Lock()
	c, ok := s.clients[mongoURI]
	s.mu.Unlock()
	if !ok {
		nc, err := connectMongo(ctx, mongoURI)
		if err != nil {
			return nil, fmt.Errorf("project %q: %w", projectID, err)
		}
		s.mu.Lock()
		if c, ok = s.clients[mongoURI]; !ok {
			c = nc
			s.clients[mongoURI] = nc
		}
		s.mu.Unlock()
		if c != nc {
			_ = nc.Disconnect(ctx)
		}
	}
	return c.Database(ProjectDatabaseName(projectID)), nil
}

// PingMongo checks that MongoDB answers.
func (s *Stores) PingMongo(ctx context.Context) error {
	return s.Mongo.Ping(ctx, readpref.Primary())
}

// PingRedis checks that Redis answers.
func (s *Stores) PingRedis(ctx context.Context) error {
	return s.Redis.Ping(ctx).Err()
}

// Close disconnects every client and stops the embedded servers. Embedded FerretDB commits
// each write before acknowledging it, so nothing acknowledged is lost by stopping it.
func (s *Stores) Close(ctx context.Context) error {
	var errs []error
	s.mu.Lock()
	for uri, c := range s.clients {
		errs = append(errs, c.Disconnect(ctx))
		delete(s.clients, uri)
	}
	s.mu.Unlock()
	if s.Mongo != nil {
		errs = append(errs, s.Mongo.Disconnect(ctx))
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
		s.stopFerret()
		select {
		case <-s.ferretDone:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("stop embedded mongodb: %w", ctx.Err()))
		}
	}
	return errors.Join(errs...)
}

// minLevel drops records below min, so a chatty embedded server logs only what matters.
type minLevel struct {
	h   slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.h.Enabled(ctx, l)
}

// Handle drops FerretDB's dumps of the error responses it sends ("Response header" and
// "Response message"): the client receives and reports those errors itself, and the most
// common one, "no such command: 'endSessions'" on every driver disconnect, is harmless.
func (m minLevel) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "Response header") || strings.HasPrefix(r.Message, "Response message") {
		return nil
	}
	return m.h.Handle(ctx, r)
}
func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{h: m.h.WithAttrs(a), min: m.min}
}
func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h: m.h.WithGroup(name), min: m.min}
}
