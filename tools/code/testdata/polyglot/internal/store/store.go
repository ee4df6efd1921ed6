// Package store keeps data.
package store

import (
	"github.com/google/uuid"

	"example.com/poly/internal/handler"
)

// Store is a data store.
type Store struct{ id string }

// Open opens the store.
func Open() *Store { return &Store{id: uuid.NewString()} }

// Name names the store.
func (s *Store) Name() string { return s.id }

// Debug is a planted mistake: the store reaches back up into the HTTP layer.
func Debug() *handler.Handler { return handler.New() }
