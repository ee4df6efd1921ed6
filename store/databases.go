package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// databases is one of the two ways the service keeps data: the embedded SQLite files, or
// MongoDB. Stores holds exactly one.
type databases interface {
	// projects is the control database's registry of project documents.
	projects() projectsBackend
	// operators is the control database's keys and audit log.
	operators() operatorsBackend
	// usage is the control database's store of project usage.
	usage() usageBackend
	// project opens (or creates) a project's database; mongoURI names a dedicated cluster
	// (the mongo backend only).
	project(ctx context.Context, projectID, mongoURI string) (backend, error)
	ping(ctx context.Context) error
	close(ctx context.Context) error
}

// projectsBackend keeps project documents and their history.
type projectsBackend interface {
	// put stores document as the project's current one unless it is the one already
	// stored, and keeps it in the history with by; it answers what was stored before (nil
	// for a new project) and what is stored now. A deleted project is ErrDeleted.
	put(ctx context.Context, id, document string, by Applied, at time.Time) (prev, cur *StoredProject, err error)
	get(ctx context.Context, id string) (*StoredProject, error) // deleted or not; ErrNotFound
	list(ctx context.Context) ([]StoredProject, error)          // deleted or not, ordered by id
	// withWebhooks lists the projects not deleted that declare webhooks, or whose document
	// was stored before the registry noted it (Applied.Webhooks), ordered by id.
	withWebhooks(ctx context.Context) ([]StoredProject, error)
	// markWebhooks notes whether version of the project declares webhooks; nothing when
	// another version is stored.
	markWebhooks(ctx context.Context, id string, version int64, webhooks bool) error
	// markDeleted marks a project deleted at at; ErrNotFound, or ErrDeleted when it is already.
	markDeleted(ctx context.Context, id string, at time.Time) error
	// restore clears the mark; ErrNotFound, or ErrNotDeleted.
	restore(ctx context.Context, id string) (*StoredProject, error)
	// purge removes the document and its history; ErrNotFound.
	purge(ctx context.Context, id string) error
	// versions lists the history newest first, without documents; version answers one,
	// with its document. Both ErrNotFound.
	versions(ctx context.Context, id string) ([]StoredVersion, error)
	version(ctx context.Context, id string, n int64) (*StoredVersion, error)
	// quotas answers the quotas the operator set on a project (none: empty); setQuotas
	// replaces them, and an empty set removes them. purge removes them too.
	quotas(ctx context.Context, id string) (map[string]int64, error)
	setQuotas(ctx context.Context, id string, q map[string]int64) error
	// documents answers the project's registered documents as the text setDocuments
	// stored ("" for none); setDocuments replaces it, and "" removes it. purge removes it too.
	documents(ctx context.Context, id string) (string, error)
	setDocuments(ctx context.Context, id, manifest string) error
}

// StoredProject is a project document as the control database keeps it. Document is the
// canonical JSON of the project; keeping it as text keeps every key and value exactly as the
// operator wrote it.
type StoredProject struct {
	ID        string
	Version   int64
	UpdatedAt time.Time
	Document  string
	// DeletedAt is when the project was deleted without purge (zero while it serves): its
	// document, history and records are kept until it is restored or purged.
	DeletedAt time.Time
}

// Applied is what a project's history keeps of an applied document besides the document.
type Applied struct {
	// Who applied it: the client and its address ("platform apply from 10.0.0.7").
	Who string
	// Changes describes how the document changes prev (nil for a new project), one line a
	// change; it is called inside the write, with the document the write replaces.
	Changes func(prev *StoredProject) []string
	// Webhooks says that the document declares webhooks: Projects.WithWebhooks lists it.
	Webhooks bool
}

// StoredVersion is one applied version of a project's document.
type StoredVersion struct {
	Version   int64
	AppliedAt time.Time
	Who       string
	Changes   []string
	Document  string // empty in a list of versions
}

var (
	// ErrDeleted is a project deleted without purge: it does not serve, and its id cannot
	// be taken by a new project until it is restored or purged.
	ErrDeleted = errors.New("project deleted")
	// ErrNotDeleted is a restore of a project that serves.
	ErrNotDeleted = errors.New("project not deleted")
)

// Projects is the registry of project documents.
type Projects struct{ b projectsBackend }

// Projects returns the project registry.
func (s *Stores) Projects() *Projects { return &Projects{b: s.db.projects()} }

// Put creates or replaces a project document and keeps it in the project's history with by.
// An unchanged document changes nothing: the version and time stay. It answers what was
// stored before (nil when the project is new) and what is stored now; ErrDeleted for a
// project deleted without purge.
func (p *Projects) Put(ctx context.Context, id, document string, by Applied) (prev, cur *StoredProject, err error) {
	return p.b.put(ctx, id, document, by, now())
}

// Get returns one project document; ErrNotFound when there is none, and also ErrDeleted
// (both match) when it was deleted without purge.
func (p *Projects) Get(ctx context.Context, id string) (*StoredProject, error) {
	sp, err := p.b.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !sp.DeletedAt.IsZero() {
		return nil, fmt.Errorf("project %q: %w (%w)", id, ErrNotFound, ErrDeleted)
	}
	return sp, nil
}

// Lookup returns one project document, deleted or not; ErrNotFound when there is none.
func (p *Projects) Lookup(ctx context.Context, id string) (*StoredProject, error) {
	return p.b.get(ctx, id)
}

// List returns every project document but the deleted ones, ordered by id.
func (p *Projects) List(ctx context.Context) ([]StoredProject, error) {
	all, err := p.b.list(ctx)
	return slices.DeleteFunc(all, func(sp StoredProject) bool { return !sp.DeletedAt.IsZero() }), err
}

// WithWebhooks returns the project documents, not deleted, that declare webhooks, ordered
// by id, so that finding them reads none of the others: those of Put with Applied.Webhooks,
// and those stored before the registry noted it, until MarkWebhooks says they have none.
func (p *Projects) WithWebhooks(ctx context.Context) ([]StoredProject, error) {
	return p.b.withWebhooks(ctx)
}

// MarkWebhooks notes whether version of project id declares webhooks (a document stored
// before Put noted it); nothing when another version is stored.
func (p *Projects) MarkWebhooks(ctx context.Context, id string, version int64, webhooks bool) error {
	return p.b.markWebhooks(ctx, id, version, webhooks)
}

// Deleted returns the projects deleted without purge, ordered by id.
func (p *Projects) Deleted(ctx context.Context) ([]StoredProject, error) {
	all, err := p.b.list(ctx)
	return slices.DeleteFunc(all, func(sp StoredProject) bool { return sp.DeletedAt.IsZero() }), err
}

// Delete marks a project deleted, keeping its document and history: ErrNotFound when there
// is none, ErrDeleted when it is deleted already.
func (p *Projects) Delete(ctx context.Context, id string) error {
	return p.b.markDeleted(ctx, id, now())
}

// Restore brings back a project deleted without purge, as it was; ErrNotFound, or
// ErrNotDeleted for a project that serves.
func (p *Projects) Restore(ctx context.Context, id string) (*StoredProject, error) {
	return p.b.restore(ctx, id)
}

// Purge removes a project document and its history, deleted or not; ErrNotFound.
func (p *Projects) Purge(ctx context.Context, id string) error { return p.b.purge(ctx, id) }

// Versions lists every applied version of a project's document, newest first, without the
// documents; ErrNotFound when there is no such project, deleted or not.
func (p *Projects) Versions(ctx context.Context, id string) ([]StoredVersion, error) {
	return p.b.versions(ctx, id)
}

// Version returns version n of a project's document; ErrNotFound.
func (p *Projects) Version(ctx context.Context, id string, n int64) (*StoredVersion, error) {
	return p.b.version(ctx, id, n)
}

// changesOf is by's description of the change from prev.
func (by Applied) changesOf(prev *StoredProject) []string {
	if by.Changes == nil {
		return []string{}
	}
	if c := by.Changes(prev); c != nil {
		return c
	}
	return []string{}
}

// ProjectRecords serves a project's tables, as they are defined now, from its database (on its
// dedicated cluster when mongoURI is set). It does not create tables or indexes: Ensure does,
// when a definition is applied.
func (s *Stores) ProjectRecords(ctx context.Context, projectID, mongoURI string, tables []Table) (*Records, error) {
	b, err := s.db.project(ctx, projectID, mongoURI)
	if err != nil {
		return nil, err
	}
	r := newRecords(b, tables)
	r.logSlow(s.slow.of(projectID), s.slow.threshold)
	if hasFileFields(tables) {
		r.files = s.ProjectBlobs(projectID)
	}
	return r, nil
}
