package gql

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Codes of persisted documents' refusals. PERSISTED_QUERY_NOT_FOUND, with the message
// PersistedQueryNotFound, is what Apollo Client's persisted query link (and every APQ
// client) takes as "send the document with its hash"; PERSISTED_QUERY_ONLY is GraphQL
// Yoga's and Hasura's allow-list refusal: the project runs registered documents only.
const (
	CodePersistedQueryNotFound = "PERSISTED_QUERY_NOT_FOUND"
	CodePersistedQueryOnly     = "PERSISTED_QUERY_ONLY"
)

// PersistedQueries keeps the documents clients send once with their SHA-256 and then by
// the hash alone (Apollo's automatic persisted queries), for every replica of a project
// (store.ProjectQueries, in Redis).
type PersistedQueries interface {
	Document(ctx context.Context, hash string) (string, bool, error)
	Remember(ctx context.Context, hash, document string) error
}

// DocumentHash is the hash a persisted document goes by: its SHA-256 in lower-case hex, as
// Apollo's persisted queries and GraphQL Code Generator's persisted documents (with
// hashAlgorithm sha256) write it.
func DocumentHash(document string) string {
	sum := sha256.Sum256([]byte(document))
	return hex.EncodeToString(sum[:])
}

// persistedExtension is the persistedQuery member of a request's extensions.
type persistedExtension struct {
	PersistedQuery *struct {
		Version    int    `json:"version"`
		SHA256Hash string `json:"sha256Hash"`
	} `json:"persistedQuery"`
}

// persisted settles the document of a request that names one by hash (extensions'
// persistedQuery, or documentId as GraphQL over HTTP's persisted documents send it) and
// holds every document to the project's registered ones when it runs those only: it sets
// req.Query from the hash, or answers the refusal's status, code and message.
func (a *API) persisted(ctx context.Context, req *request, media string) (int, string, string) {
	if len(req.Extensions) == 0 && req.DocumentID == nil && !a.cfg.RegisteredOnly {
		return 0, "", ""
	}
	// A request error: 400 where the media type lets the status say so.
	refused := http.StatusOK
	if media == mediaGraphQLResponse {
		refused = http.StatusBadRequest
	}
	var hash string
	var ext persistedExtension
	if len(req.Extensions) > 0 && json.Unmarshal(req.Extensions, &ext) == nil && ext.PersistedQuery != nil {
		if ext.PersistedQuery.Version != 1 {
			return http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("extensions.persistedQuery.version %d: version 1 is supported", ext.PersistedQuery.Version)
		}
		hash = ext.PersistedQuery.SHA256Hash
	}
	if req.DocumentID != nil {
		hash, _ = strings.CutPrefix(*req.DocumentID, "sha256:")
	}
	hasQuery := req.Query != nil && *req.Query != ""
	if hash == "" {
		if hasQuery && a.cfg.RegisteredOnly && a.cfg.Registered[DocumentHash(*req.Query)] == "" {
			return refused, CodePersistedQueryOnly, "this project runs registered documents only, and this document is not one: register it (platform documents --project <id> -f manifest.json), or send a registered document's hash"
		}
		return 0, "", ""
	}
	if !hasQuery {
		if doc, ok := a.cfg.Registered[hash]; ok {
			req.Query = &doc
			return 0, "", ""
		}
		if a.cfg.RegisteredOnly {
			return refused, CodePersistedQueryOnly, fmt.Sprintf("this project runs registered documents only, and none has the hash %q", hash)
		}
		if a.cfg.Persisted == nil {
			return refused, CodePersistedQueryNotFound, "PersistedQueryNotFound"
		}
		doc, ok, err := a.cfg.Persisted.Document(ctx, hash)
		if err != nil {
			// The client sends the document again, which needs no cache.
			a.cfg.Logger.ErrorContext(ctx, "read a persisted query", "err", err)
		}
		if !ok {
			return refused, CodePersistedQueryNotFound, "PersistedQueryNotFound"
		}
		req.Query = &doc
		return 0, "", ""
	}
	if DocumentHash(*req.Query) != hash {
		return http.StatusBadRequest, CodeBadRequest, "provided sha does not match query: the hash must be the SHA-256 of the query, in lower-case hex"
	}
	if _, ok := a.cfg.Registered[hash]; ok {
		return 0, "", ""
	}
	if a.cfg.RegisteredOnly {
		return refused, CodePersistedQueryOnly, "this project runs registered documents only, and this document is not one: register it (platform documents --project <id> -f manifest.json)"
	}
	// A document over the limit is refused when it runs; the cache keeps none of them.
	if a.cfg.Persisted != nil && len(*req.Query) <= a.cfg.MaxQueryBytes {
		if err := a.cfg.Persisted.Remember(ctx, hash, *req.Query); err != nil {
			a.cfg.Logger.ErrorContext(ctx, "remember a persisted query", "err", err)
		}
	}
	return 0, "", ""
}

// unregistered is the refusal of a subscription document a project that runs registered
// documents only has not registered; "" when it may run.
func (a *API) unregistered(query string) string {
	if !a.cfg.RegisteredOnly || a.cfg.Registered[DocumentHash(query)] != "" {
		return ""
	}
	return "this project runs registered documents only, and this subscription is not one: register it (platform documents --project <id> -f manifest.json)"
}
