package code

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/platform-dev/platform/tools"
)

const (
	defaultTransitive = 1
	maxTransitive     = 10
	maxLocations      = 5
)

type depsArgs struct {
	Component string `json:"component"`
	Type      string `json:"type"`
	Depth     count  `json:"depth"`
	Limit     count  `json:"limit"`
}

// DependencyReport is find_dependencies' answer.
type DependencyReport struct {
	Component           string         `json:"component"`
	Resolved            Component      `json:"resolved"`
	Type                string         `json:"type"`
	Depth               int            `json:"depth"`
	Partial             string         `json:"partial,omitempty"`
	Imports             []Import       `json:"imports,omitempty"`
	Transitive          []Reach        `json:"transitive,omitempty"`
	Exports             []Export       `json:"exports,omitempty"`
	Importers           []Importer     `json:"importers,omitempty"`
	TransitiveImporters []Reach        `json:"transitiveImporters,omitempty"`
	Cycles              []Cycle        `json:"cycles"`
	Omitted             map[string]int `json:"omitted,omitempty"`
	Hint                string         `json:"hint,omitempty"`
}

// Component is what the component argument named.
type Component struct {
	Kind     string   `json:"kind"` // file, folder, package, module, symbol
	Name     string   `json:"name"`
	Root     string   `json:"root"`
	Units    []string `json:"units"` // Go package folders or files, as the import graph names them
	Files    int      `json:"files"`
	Language string   `json:"language,omitempty"`
	Project  string   `json:"project,omitempty"` // the project whose graph answered
}

// Import is one thing the component imports.
type Import struct {
	Import     string     `json:"import"`
	Kind       string     `json:"kind"` // workspace, external, stdlib, unresolved
	Target     string     `json:"target,omitempty"`
	Package    string     `json:"package,omitempty"`
	Version    string     `json:"version,omitempty"`
	DeclaredIn string     `json:"declaredIn,omitempty"`
	Count      int        `json:"count"`
	Locations  []Location `json:"locations"`
}

// Reach is a unit reached through imports, at a distance greater than one.
type Reach struct {
	Unit  string `json:"unit"`
	Depth int    `json:"depth"`
	Via   string `json:"via"`
}

// Export is an exported symbol of the component and where it is used.
type Export struct {
	Symbol string     `json:"symbol"`
	Kind   string     `json:"kind"`
	File   string     `json:"file"`
	Line   int        `json:"line"`
	Uses   int        `json:"uses"`
	UsedBy []Location `json:"usedBy"`
}

// Importer is a unit that imports the component.
type Importer struct {
	Unit      string     `json:"unit"`
	Locations []Location `json:"locations"`
}

// Cycle is an import cycle through the component: Units is the strongly connected set, Path
// one shortest cycle, Evidence the import that makes each step of Path.
type Cycle struct {
	Units    []string   `json:"units"`
	Path     []string   `json:"path"`
	Evidence []Location `json:"evidence"`
}

type dependenciesTool struct{ a *Analyzer }

func (dependenciesTool) Spec() tools.Spec {
	return tools.Spec{
		Name:  "find_dependencies",
		Title: "Find dependencies",
		Description: "Dependencies of a component: a file, a folder or package, a module name (Go import path, npm/Cargo/Python " +
			"package, Java class or package) or a symbol. `imports`: what it imports, resolved to workspace files or to external " +
			"packages with the version their manifest declares; `exports`: its exported symbols with every place that uses them, " +
			"and who imports it; `both`. `depth` follows imports transitively. Import cycles through the component are always " +
			"reported. An unknown component fails with the closest matches.",
		InputSchema:  json.RawMessage(depsInputSchema),
		OutputSchema: json.RawMessage(depsOutputSchema),
	}
}

func (t dependenciesTool) Call(ctx context.Context, raw json.RawMessage) (any, error) {
	args := depsArgs{Type: "both", Depth: defaultTransitive, Limit: defaultLimit}
	if err := decodeArgs(raw, &args); err != nil {
		return nil, err
	}
	switch args.Type {
	case "imports", "exports", "both":
	default:
		return nil, tools.InvalidArgument("type", "must be imports, exports or both")
	}
	if args.Depth < 1 || int(args.Depth) > maxTransitive {
		return nil, tools.InvalidArgument("depth", "must be between 1 and %d", maxTransitive)
	}
	if err := checkLimit(int(args.Limit)); err != nil {
		return nil, err
	}
	args.Component = strings.TrimSpace(args.Component)
	if args.Component == "" {
		return nil, tools.InvalidArgument("component", "must not be empty")
	}
	root, target, err := t.a.componentPath(args.Component)
	if err != nil {
		return nil, err
	}
	snap, err := t.a.scan(ctx, root)
	if err != nil {
		return nil, err
	}
	ix, comp, files, symbols, err := findInProjects(snap, args.Component, target)
	if err != nil {
		if note := snap.partialNote(); note != "" {
			return nil, fmt.Errorf("%w (%s)", err, note)
		}
		return nil, err
	}
	rep := ix.dependencyReport(args, comp, files, symbols)
	rep.Partial = snap.partialNote()
	return rep, nil
}

// componentPath decides whether the component is a path. When it is, it must resolve inside
// the workspace (a path that leaves it is refused, not searched for as a name); target is the
// resolved path relative to its root. Otherwise the first root is searched by name.
func (a *Analyzer) componentPath(comp string) (root, target string, err error) {
	first := a.ws.Roots()[0]
	// "a/../b" is a path (that Resolve refuses); "example.com/m/..." is a Go package pattern.
	looksLikePath := filepath.IsAbs(comp) || slices.Contains(strings.Split(filepath.ToSlash(comp), "/"), "..")
	if !looksLikePath {
		if _, statErr := os.Lstat(filepath.Join(first, comp)); statErr == nil {
			looksLikePath = true
		}
	}
	if !looksLikePath {
		return first, "", nil
	}
	abs, err := a.ws.Resolve("component", comp)
	if err != nil {
		return "", "", err
	}
	root, rel, _ := a.ws.Root(abs)
	return root, rel, nil
}

// findInProjects finds the component in the project that holds it, so that its graph never
// mixes repositories: the project of a path inside one, else the first project (largest
// first) that has a module or symbol of that name. A path above several projects is looked
// for in the whole root, as asked.
func findInProjects(snap *snapshot, name, target string) (*index, Component, []*fileInfo, []symbolAt, error) {
	projs := projects(snap)
	scopes := []*snapshot{snap}
	if target != "" {
		if p := projectOf(projs, target); p != "" && p != snap.base {
			for _, pr := range projs {
				if pr.Path == p {
					scopes = []*snapshot{pr.snap}
				}
			}
		}
	} else if len(projs) > 1 {
		scopes = scopes[:0]
		for _, pr := range projs {
			scopes = append(scopes, pr.snap)
		}
	}
	var firstErr error
	for _, s := range scopes {
		ix := buildIndex(s)
		comp, files, syms, err := ix.findComponent(name, target)
		if err == nil {
			comp.Project = s.base
			return ix, comp, files, syms, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if len(scopes) > 1 {
		// Not in any project: the closest names come from the whole root.
		_, _, _, err := buildIndex(snap).findComponent(name, target)
		return nil, Component{}, nil, nil, err
	}
	return nil, Component{}, nil, nil, firstErr
}

// findComponent returns the component's description, its files, and (for a symbol) the symbols
// it names.
func (ix *index) findComponent(name, target string) (Component, []*fileInfo, []symbolAt, error) {
	comp := Component{Name: name, Root: ix.snap.root}
	var files []*fileInfo
	pick := func(pred func(*fileInfo) bool) {
		for _, fi := range ix.files {
			if pred(fi) {
				files = append(files, fi)
			}
		}
	}
	if target != "" {
		if fi := ix.snap.byRel[target]; fi != nil {
			comp.Kind = "file"
			if fi.F == nil || !fi.F.source() {
				return comp, nil, nil, fmt.Errorf("%s is not source code in a parsed language (Go, Python, JavaScript, TypeScript, Java, Rust)", target)
			}
			if fi.F.Skipped != "" {
				return comp, nil, nil, fmt.Errorf("%s was not parsed: %s", target, fi.F.Skipped)
			}
			files = []*fileInfo{fi}
		} else {
			comp.Kind = "folder"
			pick(func(fi *fileInfo) bool { return under(fi.Rel, target) })
			if len(files) == 0 {
				return comp, nil, nil, fmt.Errorf("folder %s holds no source code in a parsed language", target)
			}
		}
		return ix.describe(comp, files), files, nil, nil
	}

	if kind, fs := ix.moduleFiles(name); len(fs) > 0 {
		comp.Kind = kind
		return ix.describe(comp, fs), fs, nil, nil
	}

	// Symbols: "Name" or "Type.Method".
	var syms []symbolAt
	for _, fi := range ix.files {
		for _, s := range fi.F.Symbols {
			if s.Name == name || s.qualified() == name {
				syms = append(syms, symbolAt{fi, s})
			}
		}
	}
	if len(syms) > 0 {
		comp.Kind = "symbol"
		seen := map[*fileInfo]bool{}
		for _, s := range syms {
			if !seen[s.fi] {
				seen[s.fi] = true
				files = append(files, s.fi)
			}
		}
		return ix.describe(comp, files), files, syms, nil
	}
	return comp, nil, nil, fmt.Errorf("component %q not found in %s; closest matches: %s", name, ix.snap.root,
		strings.Join(ix.closest(name, 5), ", "))
}

// moduleFiles finds the files of a module or package by name: a Go import path (a module
// or one of its packages), a manifest's name, a Python module, a Java class or package.
func (ix *index) moduleFiles(name string) (kind string, files []*fileInfo) {
	pick := func(pred func(*fileInfo) bool) []*fileInfo {
		var out []*fileInfo
		for _, fi := range ix.files {
			if pred(fi) {
				out = append(out, fi)
			}
		}
		return out
	}
	// An import path names one package, as to the go tool; "path/..." names the packages
	// below it too, and a module whose root folder holds no package is its packages.
	pattern, tree := strings.CutSuffix(name, "/...")
	for _, m := range ix.goMods {
		if pattern == m.path || strings.HasPrefix(pattern, m.path+"/") {
			dir := path.Join(m.dir, strings.TrimPrefix(strings.TrimPrefix(pattern, m.path), "/"))
			if !tree {
				if fs := pick(func(fi *fileInfo) bool { return fi.Lang == "Go" && path.Dir(fi.Rel) == dir }); len(fs) > 0 {
					return "package", fs
				}
			}
			if tree || pattern == m.path {
				if fs := pick(func(fi *fileInfo) bool { return fi.Lang == "Go" && under(fi.Rel, dir) }); len(fs) > 0 {
					return "module", fs
				}
			}
		}
	}
	for _, m := range ix.manifests {
		if m.Name != "" && m.Name == name {
			dir := path.Dir(m.Path)
			if fs := pick(func(fi *fileInfo) bool { return under(fi.Rel, dir) }); len(fs) > 0 {
				return "module", fs
			}
		}
	}
	if f, ok := ix.pyModules[name]; ok {
		return "module", []*fileInfo{ix.snap.byRel[f]}
	}
	if f, ok := ix.javaTypes[name]; ok {
		return "module", []*fileInfo{ix.snap.byRel[f]}
	}
	if fs, ok := ix.javaPkgs[name]; ok && name != "" {
		for _, f := range fs {
			files = append(files, ix.snap.byRel[f])
		}
		return "package", files
	}
	return "", nil
}

type symbolAt struct {
	fi *fileInfo
	s  symbol
}

func (ix *index) describe(c Component, files []*fileInfo) Component {
	seen := map[string]bool{}
	langs := map[string]bool{}
	for _, fi := range files {
		if u := ix.unitOf[fi.Rel]; !seen[u] {
			seen[u] = true
			c.Units = append(c.Units, u)
		}
		langs[fi.Lang] = true
	}
	sort.Strings(c.Units)
	c.Files = len(files)
	if len(langs) == 1 {
		c.Language = files[0].Lang
	}
	return c
}

// closest ranks every name the component could have been by edit distance, with names that
// contain the query first.
func (ix *index) closest(q string, n int) []string {
	cands := map[string]bool{}
	for _, fi := range ix.files {
		cands[fi.Rel] = true
		cands[ix.unitOf[fi.Rel]] = true
		for _, s := range fi.F.Symbols {
			if s.Exported || s.Kind != kindVar {
				cands[s.qualified()] = true
			}
		}
	}
	for _, m := range ix.manifests {
		if m.Name != "" {
			cands[m.Name] = true
		}
	}
	for m := range ix.pyModules {
		cands[m] = true
	}
	for m := range ix.javaTypes {
		cands[m] = true
	}
	type scored struct {
		s string
		d int
	}
	lq := strings.ToLower(q)
	var all []scored
	for c := range cands {
		lc := strings.ToLower(c)
		d := levenshtein.ComputeDistance(lq, lc)
		if strings.Contains(lc, lq) {
			d -= len(q)
		}
		all = append(all, scored{c, d})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].d != all[j].d {
			return all[i].d < all[j].d
		}
		return all[i].s < all[j].s
	})
	var out []string
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.s)
	}
	if len(out) == 0 {
		return []string{"(the workspace has no parsed source code)"}
	}
	return out
}

func (ix *index) dependencyReport(args depsArgs, comp Component, files []*fileInfo, syms []symbolAt) *DependencyReport {
	limit, depth := int(args.Limit), int(args.Depth)
	rep := &DependencyReport{Component: args.Component, Resolved: comp, Type: args.Type, Depth: depth,
		Cycles: []Cycle{}, Omitted: map[string]int{}}
	units := map[string]bool{}
	for _, u := range comp.Units {
		units[u] = true
	}
	inComp := map[string]bool{}
	for _, fi := range files {
		inComp[fi.Rel] = true
	}

	if args.Type != "exports" {
		rep.Imports = ix.componentImports(files, inComp)
		rep.Omitted["imports"] = capList(&rep.Imports, limit)
		rep.Transitive = ix.reach(units, depth, ix.out)
		rep.Omitted["transitive"] = capList(&rep.Transitive, limit)
	}
	if args.Type != "imports" {
		rep.Exports = ix.componentExports(files, syms, units)
		rep.Omitted["exports"] = capList(&rep.Exports, limit)
		// One row per importing unit, however many of the component's units it imports.
		byUnit := map[string]*Importer{}
		for _, u := range sortedKeys(units) {
			for _, from := range sortedKeys(ix.in[u]) {
				if units[from] {
					continue
				}
				im := byUnit[from]
				if im == nil {
					im = &Importer{Unit: from, Locations: []Location{}}
					byUnit[from] = im
				}
				for _, at := range ix.in[u][from].At {
					if len(im.Locations) < maxLocations && !slices.Contains(im.Locations, at) {
						im.Locations = append(im.Locations, at)
					}
				}
			}
		}
		for _, from := range sortedKeys(byUnit) {
			rep.Importers = append(rep.Importers, *byUnit[from])
		}
		sort.SliceStable(rep.Importers, func(i, j int) bool { return len(rep.Importers[i].Locations) > len(rep.Importers[j].Locations) })
		rep.Omitted["importers"] = capList(&rep.Importers, limit)
		rep.TransitiveImporters = ix.reach(units, depth, ix.in)
		rep.Omitted["transitiveImporters"] = capList(&rep.TransitiveImporters, limit)
	}
	for _, c := range ix.cycles {
		for _, u := range c {
			if units[u] {
				rep.Cycles = append(rep.Cycles, ix.cycle(u, c))
				break
			}
		}
	}
	// limit applies to every list: the resolved units, the cycles, and each cycle's units,
	// path and evidence (a cut path is the cycle's first steps; omitted says how many more).
	rep.Omitted["resolvedUnits"] = capList(&rep.Resolved.Units, limit)
	rep.Omitted["cycles"] = capList(&rep.Cycles, limit)
	for i := range rep.Cycles {
		c := &rep.Cycles[i]
		rep.Omitted["cycleUnits"] += capList(&c.Units, limit)
		rep.Omitted["cyclePath"] += capList(&c.Path, limit)
		rep.Omitted["cycleEvidence"] += capList(&c.Evidence, limit)
	}
	rep.Omitted, rep.Hint = omissions(rep.Omitted, limit, "or a narrower component")
	return rep
}

func (ix *index) cycle(start string, comp []string) Cycle {
	c := Cycle{Units: comp, Path: ix.cyclePath(start, comp), Evidence: []Location{}}
	for i := 0; i+1 < len(c.Path); i++ {
		if e := ix.out[c.Path[i]][c.Path[i+1]]; e != nil && len(e.At) > 0 {
			c.Evidence = append(c.Evidence, e.At[0])
		}
	}
	return c
}

// componentImports groups the component's imports by what they reach; imports between the
// component's own files are left out. Workspace imports come first, then external packages,
// then the standard library, each by how often they are imported.
func (ix *index) componentImports(files []*fileInfo, inComp map[string]bool) []Import {
	byKey := map[string]*Import{}
	var order []string
	for _, fi := range files {
		for _, r := range ix.imports[fi.Rel] {
			// One row per unit reached: "from pkg import a, b" reaches pkg/a.py and pkg/b.py.
			// A wildcard ("import b.*") names one package, shown by its first unit.
			targets := []string{""}
			if r.Kind == "workspace" {
				targets = targets[:0]
				for _, u := range ix.targetUnits(r) {
					if !allIn(ix.unitFiles[u], inComp) {
						targets = append(targets, u)
					}
				}
				if r.Ref.Wildcard && len(targets) > 1 {
					targets = targets[:1]
				}
			}
			for _, target := range targets {
				key := r.Kind + "|" + r.Ref.Spec + "|" + target
				im := byKey[key]
				if im == nil {
					im = &Import{Import: r.Ref.Spec, Kind: r.Kind, Target: target, Package: r.Package, Version: r.Version, DeclaredIn: r.Decl, Locations: []Location{}}
					byKey[key] = im
					order = append(order, key)
				}
				im.Count++
				if len(im.Locations) < maxLocations {
					im.Locations = append(im.Locations, Location{File: fi.Rel, Line: r.Ref.Line})
				}
			}
		}
	}
	rank := map[string]int{"workspace": 0, "external": 1, "unresolved": 2, "stdlib": 3}
	out := make([]Import, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if rank[out[i].Kind] != rank[out[j].Kind] {
			return rank[out[i].Kind] < rank[out[j].Kind]
		}
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Import < out[j].Import
	})
	return out
}

func allIn(files []string, set map[string]bool) bool {
	for _, f := range files {
		if !set[f] {
			return false
		}
	}
	return true
}

// reach returns the units first reached from the component's units at distances 2..depth
// (distance 1 is the direct list).
func (ix *index) reach(start map[string]bool, depth int, graph map[string]map[string]*edge) []Reach {
	var out []Reach
	for _, r := range ix.walk(start, depth, graph) {
		if r.Depth > 1 {
			out = append(out, r)
		}
	}
	return out
}

// walk goes through the graph breadth first from start and returns each unit at the distance
// (1..depth) it is first reached at.
func (ix *index) walk(start map[string]bool, depth int, graph map[string]map[string]*edge) []Reach {
	seen := map[string]bool{}
	for u := range start {
		seen[u] = true
	}
	frontier := sortedKeys(start)
	var out []Reach
	for d := 1; d <= depth && len(frontier) > 0; d++ {
		var next []string
		for _, u := range frontier {
			for _, w := range sortedKeys(graph[u]) {
				if seen[w] {
					continue
				}
				seen[w] = true
				next = append(next, w)
				out = append(out, Reach{Unit: w, Depth: d, Via: u})
			}
		}
		frontier = next
	}
	return out
}

// componentExports lists exported symbols (or the named symbols) and where they are used:
// files that import the component's units, or share a unit with it, and mention the name.
func (ix *index) componentExports(files []*fileInfo, syms []symbolAt, units map[string]bool) []Export {
	if syms == nil {
		for _, fi := range files {
			for _, s := range fi.F.Symbols {
				if s.Exported {
					syms = append(syms, symbolAt{fi, s})
				}
			}
		}
	}
	viewers := ix.viewers(units)
	out := make([]Export, 0, len(syms))
	for _, s := range syms {
		e := Export{Symbol: s.s.qualified(), Kind: s.s.Kind.String(), File: s.fi.Rel, Line: int(s.s.Line), UsedBy: []Location{}}
		for _, v := range viewers {
			if v == s.fi {
				continue
			}
			if line, ok := v.F.Uses.line(s.s.Name); ok {
				e.Uses++
				if len(e.UsedBy) < maxLocations {
					e.UsedBy = append(e.UsedBy, Location{File: v.Rel, Line: line})
				}
			}
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Uses > out[j].Uses })
	return out
}
