package telemetry

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// Project label values that cannot be project ids (ids have no underscore), so they never
// collide with a real project.
const (
	// ProjectOther stands for every project beyond the most active ones.
	ProjectOther = "_other"
	// ProjectNone labels requests for no project: the apex host, health checks, unknown hosts.
	ProjectNone = "_none"
)

// ProjectLabels bounds the project label: at most Max projects have their own label, the
// rest share ProjectOther. Labels go to projects as they first appear while seats are free;
// every window the seats are handed to the projects with the most requests in that window,
// and the series of a project that lost its seat are dropped, so a flood of projects costs
// at most Max+2 label values and a quiet project does not keep its seat forever.
type ProjectLabels struct {
	max    int
	window time.Duration
	drop   func(project string)

	mu       sync.Mutex
	seated   map[string]bool
	counts   map[string]uint64 // requests in the current window, by project
	rerankAt time.Time
}

// NewProjectLabels returns labels for at most max projects, reranked every window; drop is
// called (with the lock held, so it must not call back) for a project that loses its seat.
func NewProjectLabels(max int, window time.Duration, drop func(project string)) *ProjectLabels {
	return &ProjectLabels{
		max: max, window: window, drop: drop,
		seated: map[string]bool{}, counts: map[string]uint64{},
		rerankAt: time.Now().Add(window),
	}
}

// Label counts a request for project and returns its label value.
func (p *ProjectLabels) Label(project string) string {
	if project == "" {
		return ProjectNone
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.window > 0 && time.Now().After(p.rerankAt) {
		p.rerank()
	}
	p.counts[project]++
	if p.seated[project] {
		return project
	}
	if len(p.seated) < p.max {
		p.seated[project] = true
		return project
	}
	return ProjectOther
}

// Rerank gives the seats to the most active projects of the window now ending (ties go to
// the lower id, so the result does not depend on map order) and starts a new window.
func (p *ProjectLabels) Rerank() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rerank()
}

func (p *ProjectLabels) rerank() {
	ids := make([]string, 0, len(p.counts))
	for id := range p.counts {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		return cmp.Or(cmp.Compare(p.counts[b], p.counts[a]), cmp.Compare(a, b))
	})
	keep := map[string]bool{}
	for _, id := range ids[:min(len(ids), p.max)] {
		keep[id] = true
	}
	for id := range p.seated {
		if !keep[id] && p.drop != nil {
			p.drop(id)
		}
	}
	p.seated, p.counts = keep, map[string]uint64{}
	p.rerankAt = time.Now().Add(p.window)
}
