package code

import (
	"path"
	"slices"
	"sort"
)

// A workspace root may hold several repositories or modules. A project is the folder of an
// outermost manifest (go.mod, package.json, Cargo.toml, pyproject.toml, requirements.txt,
// pom.xml, build.gradle): manifests nested in it (Go submodules, Cargo and npm workspace
// members, Maven modules) belong to it, since its parts import each other. Files outside
// every project form the project of the root folder itself.

// Project is a module root below the analysed path.
type Project struct {
	Path      string   `json:"path"`
	Name      string   `json:"name,omitempty"`
	Manifests []string `json:"manifests"` // the manifests at its top
	Files     int      `json:"files"`
	Code      int      `json:"code"`
}

// project is one project's part of a snapshot.
type project struct {
	Project
	snap *snapshot
}

// projects splits snap by project, largest first. A root that is itself a project, or holds
// none, is one project.
func projects(snap *snapshot) []project {
	var dirs []string
	tops := map[string][]*fileInfo{}
	for _, fi := range snap.files {
		if fi.F != nil && fi.F.Manifest != nil && !fi.Vendored {
			tops[path.Dir(fi.Rel)] = append(tops[path.Dir(fi.Rel)], fi)
		}
	}
	if tops[snap.base] == nil {
		for _, d := range sortedKeys(tops) { // a folder sorts before the folders below it
			if !slices.ContainsFunc(dirs, func(o string) bool { return under(d, o) }) {
				dirs = append(dirs, d)
			}
		}
	}
	if len(dirs) == 0 {
		dirs = []string{snap.base}
	}
	byDir := map[string]*project{}
	var out []*project
	for _, d := range dirs {
		p := &project{Project: Project{Path: d, Manifests: []string{}},
			snap: &snapshot{root: snap.root, base: d, byRel: map[string]*fileInfo{}, truncated: snap.truncated}}
		for _, m := range tops[d] {
			p.Manifests = append(p.Manifests, m.Rel)
			if p.Name == "" {
				p.Name = m.F.Manifest.Name
			}
		}
		byDir[d] = p
		out = append(out, p)
	}
	for _, fi := range snap.files {
		d := snap.base
		for _, pd := range dirs {
			if under(fi.Rel, pd) {
				d = pd
				break
			}
		}
		p := byDir[d]
		if p == nil { // files outside every project: the root folder's own
			p = &project{Project: Project{Path: d, Manifests: []string{}},
				snap: &snapshot{root: snap.root, base: d, byRel: map[string]*fileInfo{}, truncated: snap.truncated}}
			byDir[d] = p
			out = append(out, p)
		}
		p.snap.files = append(p.snap.files, fi)
		p.snap.byRel[fi.Rel] = fi
		p.Files++
		if fi.counted() {
			p.Code += fi.F.Lines.Code
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Code != out[j].Code {
			return out[i].Code > out[j].Code
		}
		return out[i].Path < out[j].Path
	})
	res := make([]project, 0, len(out))
	for _, p := range out {
		res = append(res, *p)
	}
	return res
}

// projectOf is the project of projs that rel lies in ("" when none).
func projectOf(projs []project, rel string) string {
	best := ""
	for _, p := range projs {
		if under(rel, p.Path) && (best == "" || len(p.Path) > len(best)) {
			best = p.Path
		}
	}
	return best
}
