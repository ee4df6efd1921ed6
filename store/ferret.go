package store

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/FerretDB/FerretDB/ferretdb"
)

// StartFerretDB starts an embedded FerretDB on a free loopback port with its SQLite files in
// dir, and answers the MongoDB URI it listens on and the function that stops it. It serves
// the mongo backend where no MongoDB runs (tests, and the conversion of a data folder the
// FerretDB-based embedded store wrote). FerretDB logs through logger at warn level and above.
func StartFerretDB(ctx context.Context, dir string, logger *slog.Logger) (uri string, stop func(context.Context) error, err error) {
	if logger == nil {
		logger = slog.Default()
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", nil, fmt.Errorf("embedded ferretdb data folder: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("create embedded ferretdb data folder: %w", err)
	}
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: "127.0.0.1:0"},
		Handler:   "sqlite",
		SQLiteURL: "file:" + dir + "/",
		Logger:    slog.New(minLevel{h: logger.With("component", "ferretdb").Handler(), min: slog.LevelWarn}),
	})
	if err != nil {
		return "", nil, fmt.Errorf("start embedded ferretdb: %w", err)
	}
	// The server outlives the ctx of the call that starts it: only stop ends it.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- f.Run(runCtx) }()
	stop = func(ctx context.Context) error {
		cancel()
		select {
		case err := <-done:
			if err != nil && runCtx.Err() == nil {
				return fmt.Errorf("embedded ferretdb: %w", err)
			}
			return nil
		case <-ctx.Done():
			return fmt.Errorf("stop embedded ferretdb: %w", ctx.Err())
		}
	}
	// MongoDBURI blocks until the listener is bound, so the port is known here.
	return f.MongoDBURI(), stop, nil
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
