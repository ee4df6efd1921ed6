package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/platform-dev/platform/gql"
)

// Defaults of the zero PersistedOptions.
const (
	DefaultAPQTTL           = 24 * time.Hour
	DefaultAPQMax           = 1000
	DefaultMaxDocuments     = 1000
	DefaultMaxManifestBytes = 4 << 20
)

// PersistedOptions bound persisted documents: the cache of automatic persisted queries
// (in Redis, shared by the replicas) and the manifests of registered documents (in the
// control database). A manifest's documents are each bounded as any document
// (GraphQLLimits.MaxQueryBytes).
type PersistedOptions struct {
	// APQTTL keeps a document sent by hash that long after it was last sent in full;
	// APQMax bounds the documents a project keeps (past it, the oldest are forgotten).
	APQTTL time.Duration
	APQMax int64
	// MaxDocuments bounds the documents of one manifest, MaxManifestBytes its body.
	MaxDocuments     int
	MaxManifestBytes int64
}

func (o PersistedOptions) withDefaults() PersistedOptions {
	if o.APQTTL <= 0 {
		o.APQTTL = DefaultAPQTTL
	}
	if o.APQMax <= 0 {
		o.APQMax = DefaultAPQMax
	}
	if o.MaxDocuments <= 0 {
		o.MaxDocuments = DefaultMaxDocuments
	}
	if o.MaxManifestBytes <= 0 {
		o.MaxManifestBytes = DefaultMaxManifestBytes
	}
	return o
}

// Manifest is a project's registered documents (trusted documents), as the admin API takes
// and the control database keeps it: Documents by their SHA-256 in lower-case hex, written
// "sha256:<hex>" or "<hex>" (GraphQL Code Generator's persisted-documents.json with
// hashAlgorithm sha256 is such a map), and whether the project runs them only.
type Manifest struct {
	RegisteredOnly bool              `json:"registeredOnly"`
	Documents      map[string]string `json:"documents"`
}

// ManifestReport answers the admin API: how many documents are registered, their hashes
// (sorted) and the mode.
type ManifestReport struct {
	Project        string   `json:"project"`
	RegisteredOnly bool     `json:"registeredOnly"`
	Documents      int      `json:"documents"`
	Hashes         []string `json:"hashes"`
}

// ManifestError is a manifest the admin API refuses, with the reason.
type ManifestError struct{ Reason string }

func (e *ManifestError) Error() string { return "invalid manifest: " + e.Reason }

// check refuses a manifest over the bounds or with a hash that is not its document's, and
// keeps its hashes without the "sha256:" prefix.
func (m *Manifest) check(opts PersistedOptions, maxQueryBytes int) error {
	if len(m.Documents) > opts.MaxDocuments {
		return &ManifestError{Reason: fmt.Sprintf("%d documents, more than the limit of %d", len(m.Documents), opts.MaxDocuments)}
	}
	docs := make(map[string]string, len(m.Documents))
	for _, key := range slices.Sorted(maps.Keys(m.Documents)) {
		hash, doc := strings.TrimPrefix(key, "sha256:"), m.Documents[key]
		docs[hash] = doc
		switch {
		case doc == "":
			return &ManifestError{Reason: fmt.Sprintf("documents.%s is empty", key)}
		case len(doc) > maxQueryBytes:
			return &ManifestError{Reason: fmt.Sprintf("documents.%s is %d bytes long, more than the limit of %d", key, len(doc), maxQueryBytes)}
		case gql.DocumentHash(doc) != hash:
			return &ManifestError{Reason: fmt.Sprintf("documents.%s: the key must be the SHA-256 of the document in lower-case hex (%s); generate the manifest with hashAlgorithm sha256", key, gql.DocumentHash(doc))}
		}
	}
	m.Documents = docs
	return nil
}

// manifestOf reads project id's manifest; the zero Manifest when none is registered.
func (r *Registry) manifestOf(ctx context.Context, id string) (Manifest, error) {
	var m Manifest
	raw, err := r.projects.Documents(ctx, id)
	if err != nil || raw == "" {
		return m, err
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return m, fmt.Errorf("decode the registered documents of project %q: %w", id, err)
	}
	return m, nil
}

// SetManifest replaces project id's registered documents (an empty manifest that does not
// run them only removes them). Every replica serves it from its next request on.
func (r *Registry) SetManifest(ctx context.Context, id string, m Manifest) error {
	if _, err := r.Get(ctx, id); err != nil {
		return err
	}
	if err := m.check(r.opts.Persisted.withDefaults(), r.maxQueryBytes()); err != nil {
		return err
	}
	var raw string
	if len(m.Documents) > 0 || m.RegisteredOnly {
		js, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("encode the registered documents of project %q: %w", id, err)
		}
		raw = string(js)
	}
	if err := r.projects.SetDocuments(ctx, id, raw); err != nil {
		return err
	}
	r.announce(ctx, id)
	return nil
}

// maxQueryBytes is the bound of one document, as the project's API applies it.
func (r *Registry) maxQueryBytes() int {
	if n := r.opts.GraphQL.MaxQueryBytes; n > 0 {
		return n
	}
	return gql.DefaultMaxQueryBytes
}

// persistedConfig sets the persisted documents of project id's API in cfg.
func (r *Registry) persistedConfig(ctx context.Context, id string, cfg *gql.Config) error {
	m, err := r.manifestOf(ctx, id)
	if err != nil {
		return err
	}
	opts := r.opts.Persisted.withDefaults()
	cfg.Persisted = r.stores.PersistedQueries(opts.APQTTL, opts.APQMax).Project(id)
	cfg.Registered, cfg.RegisteredOnly = m.Documents, m.RegisteredOnly
	return nil
}

func (r *Registry) manifestReport(ctx context.Context, id string) (ManifestReport, error) {
	m, err := r.manifestOf(ctx, id)
	if err != nil {
		return ManifestReport{}, err
	}
	hashes := slices.Sorted(maps.Keys(m.Documents))
	if hashes == nil {
		hashes = []string{}
	}
	return ManifestReport{Project: id, RegisteredOnly: m.RegisteredOnly, Documents: len(hashes), Hashes: hashes}, nil
}

// getDocuments answers GET /admin/v1/projects/{id}/documents.
func (r *Registry) getDocuments(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	ctx := c.Request().Context()
	if _, err := r.Get(ctx, id); errors.Is(err, ErrProjectNotFound) {
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	} else if err != nil {
		return r.internal(c, "registered documents", err)
	}
	rep, err := r.manifestReport(ctx, id)
	if err != nil {
		return r.internal(c, "registered documents", err)
	}
	return c.JSON(http.StatusOK, rep)
}

// putDocuments answers PUT /admin/v1/projects/{id}/documents: a Manifest replaces the
// project's registered documents. DELETE removes them (putDocuments with none).
func (r *Registry) putDocuments(c echo.Context) error {
	id := c.Param("id")
	if err := ValidateID(id); err != nil {
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	}
	var m Manifest
	if c.Request().Method == http.MethodPut {
		limit := r.opts.Persisted.withDefaults().MaxManifestBytes
		dec := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, limit))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			if errors.As(err, new(*http.MaxBytesError)) {
				return WriteError(c, http.StatusRequestEntityTooLarge, CodeBadRequest, fmt.Sprintf("the manifest is larger than %d bytes", limit))
			}
			return WriteError(c, http.StatusBadRequest, CodeBadRequest, `the body is not a manifest {"registeredOnly": false, "documents": {"<sha256>": "<document>"}}: `+err.Error())
		}
	}
	ctx := c.Request().Context()
	err := r.SetManifest(ctx, id, m)
	switch {
	case errors.Is(err, ErrProjectNotFound):
		return WriteError(c, http.StatusNotFound, CodeProjectNotFound, "project "+quote(id)+" does not exist")
	case errors.As(err, new(*ManifestError)):
		return WriteError(c, http.StatusBadRequest, CodeBadRequest, err.Error())
	case err != nil:
		return r.internal(c, "register documents", err)
	}
	r.opts.Logger.InfoContext(ctx, "registered documents set", "project", id, "documents", len(m.Documents), "registeredOnly", m.RegisteredOnly)
	noteChange(c, id, []string{fmt.Sprintf("~ registered documents = %d", len(m.Documents)), fmt.Sprintf("~ registeredOnly = %t", m.RegisteredOnly)})
	return r.getDocuments(c)
}
