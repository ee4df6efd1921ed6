package code

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/platform-dev/platform/tools"
)

// Thresholds of the anti-patterns. They are the usual defaults of linters (gocyclo, SonarQube,
// PMD) rather than tuned to any repository.
const (
	longFunctionLines   = 60
	deepNesting         = 4
	highComplexity      = 15
	godFileCode         = 500
	godFileSymbols      = 25
	godFileFan          = 15
	hugeFileCode        = 1000
	godClassMethods     = 20
	godClassLines       = 500
	maxEvidence         = 8
	minDuplicateWindows = 1
)

// patternKinds maps each pattern name to its kind; pattern_type accepts a kind or a name.
func patternKinds() map[string]string {
	return map[string]string{
		"layered": "architectural", "mvc": "architectural", "hexagonal": "architectural", "repository": "architectural",
		"middleware-chain": "architectural", "plugin-registry": "architectural", "event-driven": "architectural",
		"monorepo":  "architectural",
		"singleton": "design", "factory": "design", "builder": "design", "observer": "design", "adapter": "design",
		"strategy":     "design",
		"import-cycle": "anti-pattern", "god-file": "anti-pattern", "god-class": "anti-pattern", "long-function": "anti-pattern",
		"deep-nesting": "anti-pattern", "high-complexity": "anti-pattern", "duplicated-code": "anti-pattern",
		"unused-export": "anti-pattern", "layer-violation": "anti-pattern",
	}
}

type patternsArgs struct {
	Scope       string `json:"scope"`
	Path        string `json:"path"`
	PatternType string `json:"pattern_type"`
	Limit       count  `json:"limit"`
}

// PatternReport is detect_patterns' answer.
type PatternReport struct {
	Root     string         `json:"root"`
	Scope    string         `json:"scope"`
	Path     string         `json:"path"`
	Filter   string         `json:"patternType,omitempty"`
	Partial  string         `json:"partial,omitempty"`
	Summary  map[string]int `json:"summary"` // findings by kind, before the limit
	Findings []Finding      `json:"findings"`
	Omitted  int            `json:"omitted,omitempty"`
	Hint     string         `json:"hint,omitempty"`
}

// Finding is one pattern or anti-pattern found, with the code that shows it.
type Finding struct {
	Name       string     `json:"name"`
	Kind       string     `json:"kind"` // architectural, design, anti-pattern
	Severity   string     `json:"severity,omitempty"`
	Confidence float64    `json:"confidence"`
	Summary    string     `json:"summary"`
	Evidence   []Evidence `json:"evidence"`
	// OmittedEvidence counts the evidence not shown: past the first 8 places, or cut by limit.
	OmittedEvidence int    `json:"omittedEvidence,omitempty"`
	Why             string `json:"why"`
	Action          string `json:"action"`
	Project         string `json:"project"` // the module root the finding lies in
	score           float64
	magnitude       float64 // orders findings of equal severity: complexity, lines, copies ...
}

// Evidence is a line range in a file.
type Evidence struct {
	File string `json:"file"`
	Line int    `json:"line"`
	End  int    `json:"end,omitempty"`
	Note string `json:"note,omitempty"`
}

type patternsTool struct{ a *Analyzer }

func (patternsTool) Spec() tools.Spec {
	return tools.Spec{
		Name:  "detect_patterns",
		Title: "Detect patterns",
		Description: "Architectural patterns (layered, MVC, hexagonal, repository, middleware chain, plugin registry, event-driven, " +
			"monorepo), design patterns (singleton, factory, builder, observer, adapter, strategy) and anti-patterns (import cycles, " +
			"god files and classes, long functions, deep nesting, high cyclomatic complexity, duplicated code, unused exports, layer " +
			"violations). Each finding has a confidence, evidence as file:line ranges, why it matters and what to do; anti-patterns " +
			"come first, by severity. `scope` file or directory keeps findings with evidence in `path`.",
		InputSchema:  json.RawMessage(patternsInputSchema),
		OutputSchema: json.RawMessage(patternsOutputSchema),
	}
}

func (t patternsTool) Call(ctx context.Context, raw json.RawMessage) (any, error) {
	args := patternsArgs{Scope: "project", Limit: defaultLimit}
	if err := decodeArgs(raw, &args); err != nil {
		return nil, err
	}
	rep, err := t.a.patterns(ctx, args)
	if err != nil {
		return nil, err // not a nil *Report in a non-nil any
	}
	return rep, nil
}

// patterns answers detect_patterns for the Call of the tool and the typed Patterns alike.
func (a *Analyzer) patterns(ctx context.Context, args patternsArgs) (*PatternReport, error) {
	switch args.Scope {
	case "file", "directory", "project":
	default:
		return nil, tools.InvalidArgument("scope", "must be file, directory or project")
	}
	if f := args.PatternType; f != "" && f != "architectural" && f != "design" && f != "anti-pattern" && patternKinds()[f] == "" {
		return nil, tools.InvalidArgument("pattern_type", "unknown pattern type %q: use architectural, design, anti-pattern or a pattern name (%s)",
			f, strings.Join(sortedKeys(patternKinds()), ", "))
	}
	if err := checkLimit(int(args.Limit)); err != nil {
		return nil, err
	}
	if args.Scope == "file" && args.Path == "" {
		return nil, tools.InvalidArgument("path", "scope file needs the path of a file")
	}
	abs, err := a.ws.Resolve("path", args.Path)
	if err != nil {
		return nil, err
	}
	root, rel, _ := a.ws.Root(abs)
	snap, err := a.scan(ctx, root)
	if err != nil {
		return nil, err
	}
	isFile := snap.byRel[rel] != nil
	switch {
	case args.Scope == "file" && !isFile:
		return nil, tools.InvalidArgument("path", "scope file needs a file, and %q is a folder", args.Path)
	case args.Scope == "directory" && isFile:
		return nil, tools.InvalidArgument("path", "scope directory needs a folder, and %q is a file", args.Path)
	}
	// Each project is analysed apart, so that no finding mixes two repositories or modules;
	// scope project keeps the project that holds path (every project when path is the root).
	projs := projects(snap)
	if args.Scope == "project" && rel != "." {
		rel = projectOf(projs, rel)
	} else if args.Scope == "project" {
		rel = "."
	}
	rep := &PatternReport{Root: root, Scope: args.Scope, Path: rel, Filter: args.PatternType, Partial: snap.partialNote(),
		Summary: map[string]int{}, Findings: []Finding{}}
	for i, p := range projs {
		if !under(p.Path, rel) && !under(rel, p.Path) {
			continue
		}
		tools.ReportProgress(ctx, float64(i), float64(len(projs)), "detecting patterns in "+p.Path)
		if err := a.hashWindows(ctx, p.snap); err != nil {
			return nil, err
		}
		for _, f := range buildIndex(p.snap).findings() {
			if !matchesFilter(f, args.PatternType) || !inScope(f, rel) {
				continue
			}
			f.Project = p.Path
			rep.Summary[f.Kind]++
			rep.Findings = append(rep.Findings, f)
		}
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool { return rep.Findings[i].score > rep.Findings[j].score })
	rep.Omitted = capList(&rep.Findings, int(args.Limit))
	for i := range rep.Findings {
		rep.Findings[i].OmittedEvidence += capList(&rep.Findings[i].Evidence, int(args.Limit))
	}
	if rep.Omitted > 0 {
		rep.Hint = fmt.Sprintf("%d more findings; call again with a larger limit (at most %d), a pattern_type, or a narrower scope", rep.Omitted, maxLimit)
	}
	return rep, nil
}

func matchesFilter(f Finding, filter string) bool {
	return filter == "" || f.Kind == filter || f.Name == filter
}

// inScope keeps findings with evidence in the folder or file rel ("." is everything).
func inScope(f Finding, rel string) bool {
	if rel == "." {
		return true
	}
	for _, e := range f.Evidence {
		if under(e.File, rel) {
			return true
		}
	}
	return false
}

func (f *Finding) finish() {
	switch f.Kind {
	case "anti-pattern":
		f.score = map[string]float64{"high": 300, "medium": 200, "low": 100}[f.Severity] + f.Confidence*10
	case "architectural":
		f.score = 50 + f.Confidence*10
	default:
		f.score = 20 + f.Confidence*10
	}
	f.score += min(f.magnitude, 9999) / 10000
	// The summary counts every place; what is not shown, here or by limit, is OmittedEvidence.
	if len(f.Evidence) > maxEvidence {
		f.Summary += fmt.Sprintf(" (%d places)", len(f.Evidence))
		f.OmittedEvidence = len(f.Evidence) - maxEvidence
		f.Evidence = f.Evidence[:maxEvidence]
	}
}

// findings runs every detector over the whole root.
func (ix *index) findings() []Finding {
	var out []Finding
	add := func(fs ...Finding) {
		for _, f := range fs {
			f.finish()
			out = append(out, f)
		}
	}
	add(ix.cycleFindings()...)
	add(ix.sizeFindings()...)
	add(ix.duplicateFindings()...)
	add(ix.unusedExportFindings()...)
	add(ix.layerFindings()...)
	add(ix.architectureFindings()...)
	add(ix.designFindings()...)
	return out
}

func (ix *index) cycleFindings() []Finding {
	var out []Finding
	for _, c := range ix.cycles {
		cy := ix.cycle(c[0], c)
		f := Finding{Name: "import-cycle", Kind: "anti-pattern", Severity: "high", Confidence: 1, magnitude: float64(len(c)),
			Summary: fmt.Sprintf("import cycle of %d units: %s", len(c), strings.Join(cy.Path, " -> ")),
			Why:     "Units in a cycle cannot be built, tested, reused or understood apart; Go refuses to compile package cycles, and in other languages they cause partly initialised modules at start-up.",
			Action:  "Break the cycle: move what both sides need into a third unit, or invert one dependency behind an interface owned by the lower unit."}
		for i, at := range cy.Evidence {
			f.Evidence = append(f.Evidence, Evidence{File: at.File, Line: at.Line, End: at.Line, Note: cy.Path[i] + " imports " + cy.Path[i+1]})
		}
		out = append(out, f)
	}
	return out
}

// sizeFindings: god files and classes, long functions, deep nesting, high complexity.
func (ix *index) sizeFindings() []Finding {
	var out []Finding
	for _, fi := range ix.files {
		if fi.Generated {
			continue
		}
		code := fi.F.Lines.Code
		u := ix.unitOf[fi.Rel]
		fanIn, fanOut := len(ix.in[u]), len(ix.out[u])
		top := 0
		methods := map[string]int{}
		for _, s := range fi.F.Symbols {
			if s.Kind == kindMethod {
				methods[s.Parent]++
			} else {
				top++
			}
		}
		if code >= hugeFileCode || (code >= godFileCode && (top >= godFileSymbols || fanIn >= godFileFan || fanOut >= godFileFan)) {
			sev := "medium"
			if code >= 2*godFileCode || fanIn >= godFileFan {
				sev = "high"
			}
			out = append(out, Finding{Name: "god-file", Kind: "anti-pattern", Severity: sev, Confidence: 0.9, magnitude: float64(code),
				Summary:  fmt.Sprintf("%s has %d code lines, %d top-level symbols, fan-in %d, fan-out %d", fi.Rel, code, top, fanIn, fanOut),
				Evidence: []Evidence{{File: fi.Rel, Line: 1, End: fi.F.Lines.Code + fi.F.Lines.Comment + fi.F.Lines.Blank}},
				Why:      fmt.Sprintf("A file past %d code lines with many responsibilities (%d+ symbols or %d+ imports either way) changes for many reasons, so it conflicts in reviews and breaks unrelated callers.", godFileCode, godFileSymbols, godFileFan),
				Action:   "Split it by responsibility: group the symbols that change together into their own files or packages."})
		}
		for _, s := range fi.F.Symbols {
			lines := s.End - s.Line + 1
			switch {
			case (s.Kind == kindClass || s.Kind == kindStruct) && (methods[s.Name] >= godClassMethods || (s.Kind == kindClass && lines >= godClassLines)):
				out = append(out, Finding{Name: "god-class", Kind: "anti-pattern", Severity: "medium", Confidence: 0.8,
					Summary:  fmt.Sprintf("%s %s has %d methods over %d lines", s.Kind, s.Name, methods[s.Name], lines),
					Evidence: []Evidence{{File: fi.Rel, Line: int(s.Line), End: int(s.End)}},
					Why:      fmt.Sprintf("A type with %d+ methods or %d+ lines usually holds several responsibilities and most of the program's coupling.", godClassMethods, godClassLines),
					Action:   "Extract cohesive groups of methods and the fields they use into smaller types."})
			case s.isFunc():
				out = append(out, functionFindings(fi.Rel, s)...)
			}
		}
	}
	return out
}

// functionFindings: long functions, deep nesting, high complexity. Test functions are
// reported at low severity: table-driven tests are long and branchy by design.
func functionFindings(file string, s symbol) []Finding {
	var out []Finding
	test := isTestFile(file)
	severity := func(value, threshold int) string {
		switch {
		case test:
			return "low"
		case value > 2*threshold:
			return "high"
		case value > threshold:
			return "medium"
		}
		return "low"
	}
	ev := []Evidence{{File: file, Line: int(s.Line), End: int(s.End)}}
	if lines := int(s.End - s.Line + 1); lines > longFunctionLines {
		out = append(out, Finding{Name: "long-function", Kind: "anti-pattern", Severity: severity(lines, 2*longFunctionLines),
			Confidence: 1, magnitude: float64(lines), Evidence: ev,
			Summary: fmt.Sprintf("%s is %d lines long", s.qualified(), lines),
			Why:     fmt.Sprintf("Functions longer than %d lines are hard to read in one screen and to test in isolation.", longFunctionLines),
			Action:  "Extract the steps into well-named helper functions."})
	}
	if s.Nesting > deepNesting {
		out = append(out, Finding{Name: "deep-nesting", Kind: "anti-pattern", Severity: "low", Confidence: 1,
			magnitude: float64(s.Nesting), Evidence: ev,
			Summary: fmt.Sprintf("%s nests control statements %d deep", s.qualified(), s.Nesting),
			Why:     fmt.Sprintf("Nesting deeper than %d levels hides which conditions hold on each line.", deepNesting),
			Action:  "Return early on error and edge cases, and move inner loops into functions."})
	}
	if s.Complexity > highComplexity {
		out = append(out, Finding{Name: "high-complexity", Kind: "anti-pattern", Severity: severity(int(s.Complexity), highComplexity),
			Confidence: 1, magnitude: float64(s.Complexity), Evidence: ev,
			Summary: fmt.Sprintf("%s has cyclomatic complexity %d", s.qualified(), s.Complexity),
			Why:     fmt.Sprintf("Above %d independent paths a function needs that many tests to cover and is where defects cluster.", highComplexity),
			Action:  "Split decisions into smaller functions, replace condition chains with tables or polymorphism."})
	}
	return out
}

// duplicateFindings groups runs of repeated code windows.
func (ix *index) duplicateFindings() []Finding {
	count := map[uint64]int{}
	for _, fi := range ix.files {
		if fi.Generated {
			continue
		}
		seen := map[uint64]bool{}
		for _, h := range fi.F.Blocks.hashes {
			if !seen[h] {
				seen[h] = true
				count[h]++
			} else {
				count[h]++ // repeated within the file
			}
		}
	}
	type run struct {
		file      string
		line, end int
		windows   int
	}
	groups := map[uint64][]run{}
	var order []uint64
	for _, fi := range ix.files {
		if fi.Generated {
			continue
		}
		var cur *run
		var key uint64
		flush := func() {
			if cur != nil && cur.windows >= minDuplicateWindows {
				if groups[key] == nil {
					order = append(order, key)
				}
				groups[key] = append(groups[key], *cur)
			}
			cur = nil
		}
		for i := range fi.F.Blocks.len() {
			b := fi.F.Blocks.at(i)
			if count[b.Hash] < 2 {
				flush()
				continue
			}
			if cur != nil && i > 0 && b.Line <= cur.end+1 {
				cur.end = b.End
				cur.windows++
				continue
			}
			flush()
			cur = &run{file: fi.Rel, line: b.Line, end: b.End, windows: 1}
			key = b.Hash
		}
		flush()
	}
	var out []Finding
	for _, k := range order {
		runs := groups[k]
		if len(runs) < 2 {
			continue
		}
		lines := runs[0].end - runs[0].line + 1
		sev := "low"
		if lines >= 30 {
			sev = "medium"
		}
		f := Finding{Name: "duplicated-code", Kind: "anti-pattern", Severity: sev, Confidence: 0.9, magnitude: float64(lines * len(runs)),
			Summary: fmt.Sprintf("%d copies of a %d-line block", len(runs), lines),
			Why:     fmt.Sprintf("Copies drift apart: a fix made in one is missed in the others. Found as %d or more identical code lines (comments, blank lines and indentation ignored).", dupWindow),
			Action:  "Extract the block into one function (or a shared module) and call it from each place."}
		for _, r := range runs {
			f.Evidence = append(f.Evidence, Evidence{File: r.file, Line: r.line, End: r.end})
		}
		out = append(out, f)
	}
	return out
}

// unusedExportFindings reports exported functions and types whose name no other file mentions.
func (ix *index) unusedExportFindings() []Finding {
	used := map[string]int{}
	for _, fi := range ix.files {
		for name := range fi.F.Uses.all() {
			used[name]++
		}
	}
	entryFiles := map[string]bool{}
	for _, fi := range ix.files {
		if len(fi.F.Entry) > 0 {
			entryFiles[fi.Rel] = true
		}
	}
	var out []Finding
	for _, fi := range ix.files {
		if fi.Generated || entryFiles[fi.Rel] || isTestFile(fi.Rel) || (fi.Lang == "Go" && fi.F.Package == "main") {
			continue
		}
		var ev []Evidence
		var names []string
		for _, s := range fi.F.Symbols {
			if !s.Exported || s.Kind == kindMethod || s.Kind == kindModule || conventionalName(s.Name) {
				continue
			}
			// Its own file mentions it once at least (the declaration).
			if _, own := fi.F.Uses.line(s.Name); used[s.Name] > 1 || (used[s.Name] == 1 && !own) {
				continue
			}
			ev = append(ev, Evidence{File: fi.Rel, Line: int(s.Line), End: int(s.End), Note: s.Kind.String() + " " + s.Name})
			names = append(names, s.Name)
		}
		if len(ev) == 0 {
			continue
		}
		conf := 0.6
		if strings.Contains("/"+fi.Rel, "/internal/") {
			conf = 0.85 // nothing outside the module can import it
		}
		shown := names[:min(len(names), maxEvidence)]
		out = append(out, Finding{Name: "unused-export", Kind: "anti-pattern", Severity: "low", Confidence: conf,
			Summary:  fmt.Sprintf("%s: %d exported names no other file in the workspace uses: %s", fi.Rel, len(names), strings.Join(shown, ", ")),
			Evidence: ev,
			Why:      "Exported names are promises to callers; unused ones are dead code or API kept without a user. Code outside the workspace, reflection or dynamic imports may still use them.",
			Action:   "Delete them, or unexport them until a caller needs them."})
	}
	return out
}

func isTestFile(rel string) bool {
	base := path.Base(rel)
	return strings.HasSuffix(base, "_test.go") || strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") ||
		strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") || strings.Contains("/"+rel, "/tests/") ||
		strings.Contains("/"+rel, "/test/") || strings.Contains("/"+rel, "/__tests__/")
}

// conventionalName reports names that frameworks call, not code: main, init, tests, and the
// methods that satisfy common interfaces.
func conventionalName(n string) bool {
	switch n {
	case "main", "init", "String", "Error", "ServeHTTP", "MarshalJSON", "UnmarshalJSON", "default", "__init__", "setup", "teardown":
		return true
	}
	return strings.HasPrefix(n, "Test") || strings.HasPrefix(n, "Benchmark") || strings.HasPrefix(n, "Example") || strings.HasPrefix(n, "Fuzz")
}

// layers orders the usual layer names from the outside in. A unit's layer is the deepest
// folder of its path with one of these names.
func layerNames() map[string]int {
	return map[string]int{
		"handler": 0, "handlers": 0, "controller": 0, "controllers": 0, "api": 0, "http": 0, "web": 0, "routes": 0, "views": 0, "ui": 0, "cmd": 0, "presentation": 0,
		"service": 1, "services": 1, "usecase": 1, "usecases": 1, "application": 1,
		"repository": 2, "repositories": 2, "repo": 2, "store": 2, "storage": 2, "dao": 2, "db": 2, "persistence": 2, "infrastructure": 2, "data": 2,
		"domain": 3, "model": 3, "models": 3, "entity": 3, "entities": 3, "core": 3,
	}
}

func layerTitle(l int) string {
	return [...]string{"presentation", "application", "data access", "domain"}[l]
}

func unitLayer(unit string) (int, string, bool) {
	dir := unit
	if path.Ext(unit) != "" {
		dir = path.Dir(unit)
	}
	parts := strings.Split(dir, "/")
	names := layerNames()
	for i := len(parts) - 1; i >= 0; i-- {
		if l, ok := names[strings.ToLower(parts[i])]; ok {
			return l, strings.Join(parts[:i+1], "/"), true
		}
	}
	// A file named for its layer (user_repository.py, userController.ts) counts too.
	base := strings.ToLower(strings.TrimSuffix(path.Base(unit), path.Ext(unit)))
	for name, l := range names {
		if len(name) > 4 && strings.HasSuffix(base, name) {
			return l, unit, true
		}
	}
	return 0, "", false
}

// layerFindings reports the layered architecture and the imports that go against it.
func (ix *index) layerFindings() []Finding {
	present := map[int]string{}
	down, up := 0, 0
	var violations []Finding
	for _, from := range sortedKeys(ix.out) {
		lf, fdir, ok := unitLayer(from)
		if !ok {
			continue
		}
		for _, to := range sortedKeys(ix.out[from]) {
			lt, tdir, ok := unitLayer(to)
			if !ok || lt == lf {
				continue
			}
			present[lf], present[lt] = fdir, tdir
			if lt > lf {
				down++
				continue
			}
			up++
			e := ix.out[from][to]
			violations = append(violations, Finding{Name: "layer-violation", Kind: "anti-pattern", Severity: "medium", Confidence: 0.7,
				Summary:  fmt.Sprintf("%s (%s layer) imports %s (%s layer)", from, layerTitle(lf), to, layerTitle(lt)),
				Evidence: []Evidence{{File: e.At[0].File, Line: e.At[0].Line, End: e.At[0].Line, Note: "import of " + to}},
				Why:      "Inner layers must not know outer ones: a data-access or domain unit that imports a handler or service drags the outer layer into every use and test of the inner one.",
				Action:   "Move the shared type inward, or have the inner layer declare an interface that the outer layer implements."})
		}
	}
	if len(present) < 2 || down+up == 0 {
		return nil
	}
	f := Finding{Name: "layered", Kind: "architectural", Confidence: round2(float64(down) / float64(down+up)),
		Summary: fmt.Sprintf("layered architecture over %d layers; %d of %d cross-layer imports point inward", len(present), down, down+up),
		Why:     "Layers let each part change and be tested behind the one below it.",
		Action:  "Keep imports pointing inward (presentation -> application -> data access -> domain); the layer-violation findings list those that do not."}
	for l := 0; l < 4; l++ {
		if d, ok := present[l]; ok {
			f.Evidence = append(f.Evidence, Evidence{File: d, Note: layerTitle(l) + " layer"})
		}
	}
	return append([]Finding{f}, violations...)
}

func round2(x float64) float64 { return float64(int(x*100+0.5)) / 100 }

// architectureFindings: MVC, hexagonal, repository, middleware chain, plugin registry,
// event-driven, monorepo.
func (ix *index) architectureFindings() []Finding {
	out := ix.folderFindings()
	out = append(out, ix.roleFindings()...)
	out = append(out, ix.hintedArchitecture()...)
	return append(out, ix.monorepoFindings()...)
}

// folderFindings recognises MVC and hexagonal architectures by their folder names.
func (ix *index) folderFindings() []Finding {
	dirs := map[string]string{} // lower-case folder name -> first folder with that name
	for _, fi := range ix.files {
		for d := path.Dir(fi.Rel); d != "."; d = path.Dir(d) {
			if _, ok := dirs[strings.ToLower(path.Base(d))]; !ok {
				dirs[strings.ToLower(path.Base(d))] = d
			}
		}
	}
	firstOf := func(names ...string) (string, bool) {
		for _, n := range names {
			if d, ok := dirs[n]; ok {
				return d, true
			}
		}
		return "", false
	}
	var out []Finding
	m, okM := firstOf("models", "model")
	v, okV := firstOf("views", "view", "templates")
	c, okC := firstOf("controllers", "controller")
	if okM && okC {
		conf := 0.7
		ev := []Evidence{{File: m, Note: "models"}, {File: c, Note: "controllers"}}
		if okV {
			conf = 0.9
			ev = append(ev, Evidence{File: v, Note: "views"})
		}
		out = append(out, Finding{Name: "mvc", Kind: "architectural", Confidence: conf, Evidence: ev,
			Summary: "model-view-controller: models, views and controllers live in their own folders",
			Why:     "MVC separates data, presentation and request handling.",
			Action:  "Keep business rules in models (or services), not in controllers or views."})
	}
	ports, okP := firstOf("ports", "port")
	adapters, okA := firstOf("adapters", "adapter")
	domain, okD := firstOf("domain", "core")
	if okA && (okP || okD) {
		conf := 0.6
		ev := []Evidence{{File: adapters, Note: "adapters"}}
		if okP {
			conf = 0.9
			ev = append(ev, Evidence{File: ports, Note: "ports"})
		}
		if okD {
			ev = append(ev, Evidence{File: domain, Note: "domain"})
		}
		out = append(out, Finding{Name: "hexagonal", Kind: "architectural", Confidence: conf, Evidence: ev,
			Summary: "hexagonal (ports and adapters): the domain is reached through ports implemented by adapters",
			Why:     "The domain stays independent of frameworks and storage, which adapters plug in.",
			Action:  "Keep adapters depending on ports, never the domain on adapters."})
	}
	return out
}

// roleFindings recognises repositories and event-driven code by the names of types and
// methods, and by messaging clients among the imports.
func (ix *index) roleFindings() []Finding {
	var repos, events []Evidence
	for _, fi := range ix.files {
		for _, s := range fi.F.Symbols {
			switch {
			case isRepositoryType(s):
				repos = append(repos, Evidence{File: fi.Rel, Line: int(s.Line), End: int(s.End), Note: s.Name})
			case isEventSymbol(s):
				events = append(events, Evidence{File: fi.Rel, Line: int(s.Line), End: int(s.End), Note: s.qualified()})
			}
		}
		for _, r := range ix.imports[fi.Rel] {
			if r.Kind == "external" && isMessagingPackage(r.Package) {
				events = append(events, Evidence{File: fi.Rel, Line: r.Ref.Line, End: r.Ref.Line, Note: "imports " + r.Package})
			}
		}
	}
	var out []Finding
	if len(repos) > 0 {
		out = append(out, Finding{Name: "repository", Kind: "architectural", Confidence: confidenceByCount(len(repos)), Evidence: repos,
			Summary: fmt.Sprintf("repository pattern: %d repository types mediate data access", len(repos)),
			Why:     "Repositories keep storage details out of business code and make it testable with in-memory implementations.",
			Action:  "Let callers depend on repository interfaces, and keep queries inside the repositories."})
	}
	if len(events) > 0 {
		out = append(out, Finding{Name: "event-driven", Kind: "architectural", Confidence: confidenceByCount(len(events)), Evidence: events,
			Summary: fmt.Sprintf("event-driven: %d publish/subscribe points or messaging clients", len(events)),
			Why:     "Events decouple producers from consumers, at the price of harder tracing.",
			Action:  "Document each event's schema and owner; give consumers idempotent handlers."})
	}
	return out
}

func isRepositoryType(s symbol) bool {
	switch s.Kind {
	case kindClass, kindStruct, kindInterface, kindTrait:
		for _, suffix := range []string{"Repository", "Repo", "DAO", "Dao"} {
			if strings.HasSuffix(s.Name, suffix) {
				return true
			}
		}
	}
	return false
}

func isEventSymbol(s symbol) bool {
	if s.isFunc() {
		switch strings.ToLower(s.Name) {
		case "publish", "subscribe", "emit", "dispatch":
			return s.Parent != ""
		}
		return false
	}
	return strings.HasSuffix(s.Name, "EventBus") || strings.HasSuffix(s.Name, "EventEmitter") || strings.HasSuffix(s.Name, "Broker")
}

// hintedArchitecture reports the middleware chains and plugin registries the parsers saw.
func (ix *index) hintedArchitecture() []Finding {
	var out []Finding
	if ev := ix.hintEvidence("middleware"); len(ev) > 0 {
		out = append(out, Finding{Name: "middleware-chain", Kind: "architectural", Confidence: confidenceByCount(len(ev)), Evidence: ev,
			Summary: fmt.Sprintf("middleware chain: %d handlers wrap the next one", len(ev)),
			Why:     "Cross-cutting concerns (auth, logging, limits) apply to every request in one place.",
			Action:  "Keep each middleware single-purpose and its order explicit in one place."})
	}
	if ev := ix.hintEvidence("registry"); len(ev) > 0 {
		out = append(out, Finding{Name: "plugin-registry", Kind: "architectural", Confidence: confidenceByCount(len(ev)), Evidence: ev,
			Summary: fmt.Sprintf("plugin registry: %d registration points add implementations to a shared table", len(ev)),
			Why:     "New implementations plug in without the core knowing them.",
			Action:  "Register from one place at start-up so that the set of plugins is visible."})
	}
	return out
}

func (ix *index) hintEvidence(pattern string) []Evidence {
	var ev []Evidence
	for _, fi := range ix.files {
		for _, h := range fi.F.Hints {
			if h.Pattern == pattern {
				ev = append(ev, Evidence{File: fi.Rel, Line: h.Line, End: h.End, Note: h.Detail})
			}
		}
	}
	return ev
}

// monorepoFindings: several manifests below the root, or several Go programs.
func (ix *index) monorepoFindings() []Finding {
	var mods []Evidence
	for _, m := range ix.manifests {
		if path.Dir(m.Path) != "." && !isTestFile(m.Path) {
			mods = append(mods, Evidence{File: m.Path, Line: 1, Note: m.Kind + " " + m.Name})
		}
	}
	mains := map[string]bool{}
	for _, fi := range ix.files {
		if fi.Lang == "Go" && fi.F.Package == "main" && len(fi.F.Entry) > 0 {
			mains[path.Dir(fi.Rel)] = true
		}
	}
	if len(mods) < 2 && len(mains) < 3 {
		return nil
	}
	ev := mods
	for _, d := range sortedKeys(mains) {
		ev = append(ev, Evidence{File: d, Note: "Go program"})
	}
	return []Finding{{Name: "monorepo", Kind: "architectural", Confidence: confidenceByCount(len(ev)), Evidence: ev,
		Summary: fmt.Sprintf("monorepo: %d modules and %d programs in one repository", len(mods), len(mains)),
		Why:     "Services share one history and can change together, but their boundaries need discipline.",
		Action:  "Give each service its own manifest and owners; make cross-service imports go through published APIs."}}
}

func isMessagingPackage(p string) bool {
	p = strings.ToLower(p)
	for _, k := range []string{"kafka", "nats", "amqp", "rabbitmq", "pika", "pubsub", "eventemitter", "celery", "sqs", "sns", "watermill", "redis"} {
		if strings.Contains(p, k) {
			return true
		}
	}
	return p == "events"
}

func confidenceByCount(n int) float64 {
	switch {
	case n >= 5:
		return 0.9
	case n >= 2:
		return 0.75
	}
	return 0.6
}

// designFindings: singleton, factory, builder, observer, adapter, strategy.
func (ix *index) designFindings() []Finding {
	types := ix.typeMethods()
	byUnit := map[string]*typeInfo{} // unit | type
	for _, t := range types {
		byUnit[ix.unitOf[t.file]+"|"+t.name] = t
	}
	out := ix.hintedDesign()
	out = append(out, ix.adapterFindings(byUnit)...)
	out = append(out, ix.goObserverFindings(byUnit)...)
	out = append(out, typeRoleFindings(types)...)
	return append(out, ix.strategyFindings(types)...)
}

// adapterFindings reports adapters by their structure: the classes whose every method (two or
// more) calls a method of another name on one field, as the parsers saw them, and in Go a
// function type whose method calls the function itself, and a type whose methods (two or
// more) each consist of a call of a method of another name on the same field. Each Go finding
// names the methods that show it. types holds the project's types by unit | name.
func (ix *index) adapterFindings(types map[string]*typeInfo) []Finding {
	const why, action = "Adapters let incompatible interfaces work together without changing either.",
		"Keep adapters thin: translation only, no business rules."
	type forwarder struct{ ev []Evidence }
	var out []Finding
	forwards := map[string]*forwarder{} // unit | type | field
	for _, fi := range ix.files {
		for _, h := range fi.F.Hints {
			switch h.Pattern {
			case "adapter":
				out = append(out, Finding{Name: "adapter", Kind: "design", Confidence: 0.9, Summary: h.Detail,
					Evidence: []Evidence{{File: fi.Rel, Line: h.Line, End: h.End, Note: h.Subject}}, Why: why, Action: action})
			case "forward": // Go only
				field, method, _ := strings.Cut(h.Detail, ".")
				k := ix.unitOf[fi.Rel] + "|" + h.Subject + "|" + field
				if forwards[k] == nil {
					forwards[k] = &forwarder{}
				}
				forwards[k].ev = append(forwards[k].ev, Evidence{File: fi.Rel, Line: h.Line, End: h.End, Note: "forwards to " + field + "." + method})
			}
		}
	}
	for _, k := range sortedKeys(forwards) {
		f := forwards[k]
		parts := strings.Split(k, "|")
		// Only translation: every method of the type forwards to that field. A type with
		// behaviour of its own that delegates a few calls is a wrapper, not an adapter.
		t := types[parts[0]+"|"+parts[1]]
		if len(f.ev) < 2 || t == nil || len(t.methods) != len(f.ev) {
			continue
		}
		ev := append([]Evidence{{File: t.file, Line: t.line, End: t.end, Note: t.name}}, f.ev...)
		out = append(out, Finding{Name: "adapter", Kind: "design", Confidence: confidenceByCount(len(f.ev)), Evidence: ev,
			Summary: fmt.Sprintf("%s adapts its field %s: %d methods each call a method of another name on it", parts[1], parts[2], len(f.ev)),
			Why:     why, Action: action})
	}
	return out
}

const (
	observerWhy    = "Observers let any number of listeners react to a subject's changes without the subject knowing them."
	observerAction = "Make unsubscribing possible and document on which goroutine or thread listeners run."
)

// goObserverFindings reports Go observer subjects by their structure: a method appends a
// value its caller gives to a field of the receiver (or stores it in a map field), and another
// method ranges over that field calling each element.
func (ix *index) goObserverFindings(types map[string]*typeInfo) []Finding {
	type subject struct{ subscribe, notify []Evidence }
	ifaces := ix.goInterfaces()
	subjects := map[string]*subject{} // unit | type | field
	for _, fi := range ix.files {
		for _, h := range fi.F.Hints {
			// Elements of a named type are listeners when it is an interface of one method
			// (a Handler or Listener); a collection of data is ranged over in the same way.
			if fi.Lang != "Go" || (h.Pattern != "subscribe" && h.Pattern != "notify") ||
				(h.Of != "" && len(ifaces[ix.unitOf[fi.Rel]+"|"+h.Of]) != 1) {
				continue
			}
			k := ix.unitOf[fi.Rel] + "|" + h.Subject + "|" + h.Detail
			if subjects[k] == nil {
				subjects[k] = &subject{}
			}
			if h.Pattern == "subscribe" {
				subjects[k].subscribe = append(subjects[k].subscribe, Evidence{File: fi.Rel, Line: h.Line, End: h.End, Note: "adds to " + h.Detail})
			} else {
				subjects[k].notify = append(subjects[k].notify, Evidence{File: fi.Rel, Line: h.Line, End: h.End, Note: "calls each of " + h.Detail})
			}
		}
	}
	var out []Finding
	for _, k := range sortedKeys(subjects) {
		sub := subjects[k]
		parts := strings.Split(k, "|")
		t := types[parts[0]+"|"+parts[1]]
		if t == nil || len(sub.subscribe) == 0 || len(sub.notify) == 0 {
			continue
		}
		ev := append([]Evidence{{File: t.file, Line: t.line, End: t.end, Note: t.name}}, sub.subscribe...)
		out = append(out, Finding{Name: "observer", Kind: "design", Confidence: 0.9, Evidence: append(ev, sub.notify...),
			Summary: fmt.Sprintf("%s is an observer subject: callers add to its field %s and it calls each of them", t.name, parts[2]),
			Why:     observerWhy, Action: observerAction})
	}
	return out
}

// goInterfaces maps the Go interfaces of the project (unit | name) to their methods.
func (ix *index) goInterfaces() map[string][]string {
	ifaces := map[string][]string{}
	for _, fi := range ix.files {
		for _, h := range fi.F.Hints {
			if h.Pattern == "interface" && fi.Lang == "Go" && h.Detail != "" {
				ifaces[ix.unitOf[fi.Rel]+"|"+h.Subject] = strings.Split(h.Detail, ";")
			}
		}
	}
	return ifaces
}

// hintedDesign reports the singletons, factories and (outside Go) observers the parsers saw.
func (ix *index) hintedDesign() []Finding {
	desc := map[string][2]string{
		"singleton": {"One shared instance is global state: it couples every user to it and makes tests order-dependent.",
			"Pass the instance explicitly (dependency injection) unless it truly must be process-wide; make its creation thread-safe."},
		"factory": {"A factory decides which implementation to build, keeping callers free of concrete types.",
			"Keep the choice table in one place and return interfaces."},
		"observer": {observerWhy, observerAction},
	}
	ifaces := ix.goInterfaces()
	var out []Finding
	for _, name := range []string{"singleton", "factory", "observer"} {
		for _, fi := range ix.files {
			for _, h := range fi.F.Hints {
				// A factory returns an interface: choosing among values of one concrete type
				// is parsing or configuring, not choosing an implementation.
				if _, iface := ifaces[ix.unitOf[fi.Rel]+"|"+h.Of]; h.Pattern != name || (h.Of != "" && !iface) {
					continue
				}
				out = append(out, Finding{Name: name, Kind: "design", Confidence: 0.9,
					Summary:  h.Detail,
					Evidence: []Evidence{{File: fi.Rel, Line: h.Line, End: h.End, Note: h.Subject}},
					Why:      desc[name][0], Action: desc[name][1]})
			}
		}
	}
	return out
}

// typeInfo is a declared type with its methods, gathered over all files (Go methods may live
// in several files).
type typeInfo struct {
	name      string
	file      string
	line, end int
	methods   map[string]symbol
	sigs      map[string]string // of Go methods, by name
}

func (ix *index) typeMethods() []*typeInfo {
	// Types are keyed by unit and name: two packages may each have their own Analyzer.
	types := map[string]*typeInfo{}
	for _, fi := range ix.files {
		for _, s := range fi.F.Symbols {
			if s.Kind == kindClass || s.Kind == kindStruct || s.Kind == kindType {
				types[ix.unitOf[fi.Rel]+"|"+s.Name] = &typeInfo{name: s.Name, file: fi.Rel, line: int(s.Line), end: int(s.End),
					methods: map[string]symbol{}, sigs: map[string]string{}}
			}
		}
	}
	for _, fi := range ix.files {
		for _, s := range fi.F.Symbols {
			if t := types[ix.unitOf[fi.Rel]+"|"+s.Parent]; t != nil && s.Kind == kindMethod {
				t.methods[s.Name] = s
				if sig, ok := fi.F.Signatures[s.qualified()]; ok {
					t.sigs[s.Name] = sig
				}
			}
		}
	}
	out := make([]*typeInfo, 0, len(types))
	for _, k := range sortedKeys(types) {
		out = append(out, types[k])
	}
	return out
}

// typeRoleFindings recognises builders (chainable setters and Build).
func typeRoleFindings(types []*typeInfo) []Finding {
	var out []Finding
	for _, t := range types {
		fluent, build := 0, false
		for mn, m := range t.methods {
			if m.Returns == t.name || m.Returns == "Self" || m.Returns == "this" {
				fluent++
			}
			build = build || strings.ToLower(mn) == "build"
		}
		ev := []Evidence{{File: t.file, Line: t.line, End: t.end, Note: t.name}}
		if build && fluent >= 2 {
			out = append(out, Finding{Name: "builder", Kind: "design", Confidence: 0.85, Evidence: ev,
				Summary: fmt.Sprintf("%s is a builder: %d chainable setters and Build", t.name, fluent),
				Why:     "A builder assembles a complex value step by step and validates it once.",
				Action:  "Validate in Build and keep the built value immutable."})
		}
	}
	return out
}

// strategyFindings reports interfaces with two or more implementations: declared ones
// (implements, extends, impl Trait for) and, in Go, types whose methods cover the interface's.
func (ix *index) strategyFindings(types []*typeInfo) []Finding {
	impls := map[string][]Evidence{}
	ifaces := map[string]Evidence{}
	declared := map[string]int{}
	var out []Finding
	strategy := func(name string, decl Evidence, ev []Evidence) {
		out = append(out, Finding{Name: "strategy", Kind: "design", Confidence: confidenceByCount(len(ev)),
			Evidence: append([]Evidence{decl}, ev...),
			Summary:  fmt.Sprintf("%s has %d interchangeable implementations", name, len(ev)),
			Why:      "Strategies let behaviour be chosen at run time behind one interface.",
			Action:   "Choose the implementation in one place (a factory or configuration) and keep the interface small."})
	}
	for _, fi := range ix.files {
		for _, h := range fi.F.Hints {
			switch {
			case h.Pattern == "implements":
				impls[h.Detail] = append(impls[h.Detail], Evidence{File: fi.Rel, Line: h.Line, End: h.End, Note: h.Subject})
			case h.Pattern != "interface":
			case fi.Lang != "Go" && h.Detail != "": // a marker interface (Cloneable) has no behaviour to choose
				ifaces[h.Subject] = Evidence{File: fi.Rel, Line: h.Line, End: h.End, Note: "interface " + h.Subject}
				declared[h.Subject]++
			case fi.Lang == "Go" && h.Detail != "":
				// Go interfaces are implemented implicitly: by every type with methods of the
				// same names and signatures, in the interface's package or one importing it (a
				// type that cannot see the interface shares method names by accident).
				decl := Evidence{File: fi.Rel, Line: h.Line, End: h.End, Note: "interface " + h.Subject}
				u := ix.unitOf[fi.Rel]
				var ev []Evidence
				for _, t := range types {
					tu := ix.unitOf[t.file]
					if (tu == u || ix.out[tu][u] != nil) && (t.name != h.Subject || t.file != fi.Rel) &&
						implementsAll(t, strings.Split(h.Detail, ";")) {
						ev = append(ev, Evidence{File: t.file, Line: t.line, End: t.end, Note: t.name})
					}
				}
				if len(ev) >= 2 {
					strategy(h.Subject, decl, ev)
				}
			}
		}
	}
	// Declared implementations name the interface without its package or enclosing type: an
	// interface name declared twice (Sink.OfInt, Spliterator.OfInt) cannot be told apart.
	for _, name := range sortedKeys(impls) {
		if decl, known := ifaces[name]; len(impls[name]) >= 2 && known && declared[name] == 1 {
			strategy(name, decl, impls[name])
		}
	}
	return out
}

// implementsAll reports whether t has each of methods, given as name and signature.
func implementsAll(t *typeInfo, methods []string) bool {
	for _, m := range methods {
		name, sig, _ := strings.Cut(m, "(")
		if t.sigs[name] != "("+sig {
			return false
		}
	}
	return true
}
