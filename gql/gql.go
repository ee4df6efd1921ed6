// Package gql generates a project's GraphQL API from its table definitions.
package gql

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/platform-dev/platform/store"
)

// Config is what one project's API is built from.
type Config struct {
	Tables        []store.Table
	Records       *store.Records
	Introspection bool
	DefaultLimit  int
	MaxLimit      int
	MaxBodyBytes  int64
	MaxQueryBytes int
	MaxDepth      int
	Timeout       time.Duration
	Logger        *slog.Logger
}

// API is one project's GraphQL endpoint.
type API struct{ cfg Config }

// New builds a project's API.
func New(cfg Config) (*API, error) { return &API{cfg: cfg}, nil }

// ServeHTTP answers POST /api/v1/graphql.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "GraphQL API under construction", http.StatusNotImplemented)
}
