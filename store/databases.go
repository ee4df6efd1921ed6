package store

import (
	"context"
	"time"
)

// databases is one of the two ways the service keeps data: the embedded SQLite files, or
// MongoDB. Stores holds exactly one.
type databases interface {
	// projects is the control database's registry of project documents.
	projects() projectsBackend
	// project opens (or creates) a project's database; mongoURI names a dedicated cluster
	// (the mongo backend only).
	project(ctx context.Context, projectID, mongoURI string) (backend, error)
	ping(ctx context.Context) error
	close(ctx context.Context) error
}

// projectsBackend keeps project documents.
type projectsBackend interface {
	// put stores document as the project's current one unless it is the one already
	// stored; it answers what was stored before (nil for a new project) and what is stored
	// now.
	put(ctx context.Context, id, document string, at time.Time) (prev, cur *StoredProject, err error)
	get(ctx context.Context, id string) (*StoredProject, error) // ErrNotFound
	list(ctx context.Context) ([]StoredProject, error)          // ordered by id
	remove(ctx context.Context, id string) error                // ErrNotFound
}

// StoredProject is a project document as the control database keeps it. Document is the
// canonical JSON of the project; keeping it as text keeps every key and value exactly as the
// operator wrote it.
type StoredProject struct {
	ID        string
	Version   int64
	UpdatedAt time.Time
	Document  string
}

// Projects is the registry of project documents.
type Projects struct{ b projectsBackend }

// Projects returns the project registry.
func (s *Stores) Projects() *Projects { return &Projects{b: s.db.projects()} }

// Put creates or replaces a project document. An unchanged document changes nothing: the
// version and time stay. It answers what was stored before (nil when the project is new)
// and what is stored now.
func (p *Projects) Put(ctx context.Context, id, document string) (prev, cur *StoredProject, err error) {
	return p.b.put(ctx, id, document, now())
}

// Get returns one project document, or ErrNotFound.
func (p *Projects) Get(ctx context.Context, id string) (*StoredProject, error) {
	return p.b.get(ctx, id)
}

// List returns every project document, ordered by id.
func (p *Projects) List(ctx context.Context) ([]StoredProject, error) { return p.b.list(ctx) }

// Delete removes a project document; ErrNotFound when there is none.
func (p *Projects) Delete(ctx context.Context, id string) error { return p.b.remove(ctx, id) }

// ProjectRecords serves a project's tables, as they are defined now, from its database (on its
// dedicated cluster when mongoURI is set). It does not create tables or indexes: Ensure does,
// when a definition is applied.
func (s *Stores) ProjectRecords(ctx context.Context, projectID, mongoURI string, tables []Table) (*Records, error) {
	b, err := s.db.project(ctx, projectID, mongoURI)
	if err != nil {
		return nil, err
	}
	return newRecords(b, tables), nil
}
