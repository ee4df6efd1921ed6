package coord

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sessions keep a value per key that lives ttl from its last use, on every replica.
type Sessions struct {
	rdb redis.UniversalClient
	key func(id string) string
	ttl time.Duration
}

// NewSessions returns the sessions kept under key(id), living ttl from their last use.
func NewSessions(rdb redis.UniversalClient, key func(id string) string, ttl time.Duration) *Sessions {
	return &Sessions{rdb: rdb, key: key, ttl: ttl}
}

// Put starts (or replaces) session id.
func (s *Sessions) Put(ctx context.Context, id string, value []byte) error {
	if err := s.rdb.Set(ctx, s.key(id), value, s.ttl).Err(); err != nil {
		return fmt.Errorf("store session: %w", err)
	}
	return nil
}

// Use answers session id's value and extends its life; ok is false when there is none.
func (s *Sessions) Use(ctx context.Context, id string) (value []byte, ok bool, err error) {
	value, err = s.rdb.GetEx(ctx, s.key(id), s.ttl).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read session: %w", err)
	}
	return value, true, nil
}

// Delete ends session id.
func (s *Sessions) Delete(ctx context.Context, id string) error {
	if err := s.rdb.Del(ctx, s.key(id)).Err(); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}
