package code

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/go-enry/go-enry/v2"

	"github.com/platform-dev/platform/tools"
)

const (
	defaultDepth = 3
	maxDepth     = 20
	defaultLimit = 50
	maxLimit     = 1000
)

type analyzeArgs struct {
	Path     string `json:"path"`
	Language string `json:"language"`
	Depth    count  `json:"depth"`
	Limit    count  `json:"limit"`
}

// count is an integer argument. JSON Schema's "integer" admits 2.0, which encoding/json does
// not decode into an int.
type count int

func (c *count) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	if f != math.Trunc(f) || math.Abs(f) > 1e9 {
		return fmt.Errorf("%v is not an integer in range", f)
	}
	*c = count(f)
	return nil
}

// CodebaseReport is analyze_codebase's answer, and the content of service://code/analysis.
type CodebaseReport struct {
	Root        string         `json:"root"`
	Path        string         `json:"path"`
	Language    string         `json:"language,omitempty"`
	Depth       int            `json:"depth"`
	Summary     Summary        `json:"summary"`
	Languages   []LanguageStat `json:"languages"`
	Tree        *Folder        `json:"tree"`
	Manifests   []Manifest     `json:"manifests"`
	EntryPoints []EntryPoint   `json:"entryPoints"`
	Hotspots    []Hotspot      `json:"hotspots"` // most complex functions first
	Largest     []Hotspot      `json:"largest"`  // longest functions first
	Files       []FileSymbols  `json:"files"`
	// Projects are the module roots below the path.
	Projects []Project `json:"projects"`
	// ParseErrors names the files with syntax errors; each is still analysed as far as it parses.
	ParseErrors []ParseError `json:"parseErrors"`
	// Skipped names the files not analysed whole, and why (Summary.Skipped counts them all).
	Skipped []SkippedFile  `json:"skipped"`
	Omitted map[string]int `json:"omitted,omitempty"`
	Hint    string         `json:"hint,omitempty"`
}

// Summary totals the files below the path.
type Summary struct {
	Files          int `json:"files"`
	CountedFiles   int `json:"countedFiles"`
	VendoredFiles  int `json:"vendoredFiles"`
	GeneratedFiles int `json:"generatedFiles"`
	BinaryFiles    int `json:"binaryFiles"`
	OversizeFiles  int `json:"oversizeFiles"`
	ParseErrors    int `json:"parseErrors"`
	// Skipped counts the files not analysed whole by reason (see fileInfo.skipped).
	Skipped   map[string]int `json:"skipped,omitempty"`
	Lines     Lines          `json:"lines"`
	Truncated bool           `json:"truncated,omitempty"`
	// Partial says how far a listing stopped early to answer in time got.
	Partial string `json:"partial,omitempty"`
}

// ParseError is a file a parser could not read whole, and where.
type ParseError struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// SkippedFile is a file not analysed whole, on purpose.
type SkippedFile struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
	Bytes  int64  `json:"bytes"`
}

// maxSkippedPerReason bounds the files the answer names for one reason of being skipped,
// the largest first; Summary.Skipped counts them all.
const maxSkippedPerReason = 20

// LanguageStat is one language's share. Parsed says whether comments were told apart (by a
// real parser); otherwise every non-blank line counts as code.
type LanguageStat struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Files  int    `json:"files"`
	Parsed bool   `json:"parsed"`
	Lines
}

// Folder is a node of the folder tree.
type Folder struct {
	Path            string    `json:"path"`
	Files           int       `json:"files"`
	Bytes           int64     `json:"bytes"`
	Code            int       `json:"code"`
	Children        []*Folder `json:"children,omitempty"`
	OmittedChildren int       `json:"omittedChildren,omitempty"`
}

// EntryPoint is where a program starts.
type EntryPoint struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// Hotspot is a function that is large or complex.
type Hotspot struct {
	File       string `json:"file"`
	Symbol     string `json:"symbol"`
	Line       int    `json:"line"`
	End        int    `json:"end"`
	Lines      int    `json:"lines"`
	Complexity int    `json:"complexity"`
	Nesting    int    `json:"nesting"`
}

// FileSymbols is a file with its top-level symbols.
type FileSymbols struct {
	Path           string   `json:"path"`
	Language       string   `json:"language"`
	Code           int      `json:"code"`
	Symbols        []Symbol `json:"symbols"`
	OmittedSymbols int      `json:"omittedSymbols,omitempty"`
}

// Symbol is a declaration as the tools show it.
type Symbol struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Line     int    `json:"line"`
	Exported bool   `json:"exported"`
}

type analyzeTool struct{ a *Analyzer }

func (analyzeTool) Spec() tools.Spec {
	return tools.Spec{
		Name:  "analyze_codebase",
		Title: "Analyze codebase",
		Description: "Structure of the code below a workspace path, from real parsers (Go, Python, JavaScript, TypeScript, Java, Rust): " +
			"languages with code/comment/blank lines (vendored, generated and binary files left out), the folder tree to `depth` with sizes, " +
			"manifests with declared dependencies, entry points, top-level symbols of files within `depth`, and hotspots: the most " +
			"complex functions (cyclomatic complexity) and the longest. `skipped` names the files not analysed whole and why " +
			"(vendored, generated, minified, too large, binary), `summary.skipped` counts them. " +
			"Lists are ordered by importance and capped by `limit`; `omitted` counts what was left out.",
		InputSchema:  json.RawMessage(analyzeInputSchema),
		OutputSchema: json.RawMessage(analyzeOutputSchema),
	}
}

func (t analyzeTool) Call(ctx context.Context, raw json.RawMessage) (any, error) {
	args := analyzeArgs{Depth: defaultDepth, Limit: defaultLimit}
	if err := decodeArgs(raw, &args); err != nil {
		return nil, err
	}
	rep, err := t.a.codebase(ctx, args)
	if err != nil {
		return nil, err // not a nil *Report in a non-nil any
	}
	return rep, nil
}

// codebase answers analyze_codebase for the Call of the tool and the typed Codebase alike.
func (a *Analyzer) codebase(ctx context.Context, args analyzeArgs) (*CodebaseReport, error) {
	if args.Depth < 0 || int(args.Depth) > maxDepth {
		return nil, tools.InvalidArgument("depth", "must be between 0 and %d", maxDepth)
	}
	if err := checkLimit(int(args.Limit)); err != nil {
		return nil, err
	}
	dir, err := a.ws.Resolve("path", args.Path)
	if err != nil {
		return nil, err
	}
	if args.Language != "" {
		lang, ok := languageName(args.Language)
		if !ok {
			return nil, tools.InvalidArgument("language", "unknown language %q (use a Linguist name such as Go, Python, JavaScript, TypeScript, Java, Rust)", args.Language)
		}
		args.Language = lang
	}
	snap, err := a.scan(ctx, dir)
	if err != nil {
		return nil, err
	}
	return buildCodebaseReport(snap, args), nil
}

// decodeArgs reads the arguments the server already validated against the schema; a decode
// error can only come from a caller that skipped validation.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return tools.InvalidArgument("arguments", "%v", err)
	}
	return nil
}

func checkLimit(limit int) error {
	if limit < 1 || limit > maxLimit {
		return tools.InvalidArgument("limit", "must be between 1 and %d", maxLimit)
	}
	return nil
}

// languageName maps what a client wrote ("go", "golang", "ts", "Python") to Linguist's name.
func languageName(s string) (string, bool) {
	if l, ok := enry.GetLanguageByAlias(s); ok {
		return l, true
	}
	for _, l := range []string{"Go", "Python", "JavaScript", "TypeScript", "Java", "Rust"} {
		if strings.EqualFold(l, s) {
			return l, true
		}
	}
	return "", false
}

// under reports whether rel lies in the folder base ("." is everything).
func under(rel, base string) bool {
	return base == "." || rel == base || strings.HasPrefix(rel, base+"/")
}

// relDepth is how many folders down from base rel lies; a file directly in base is at depth 1.
func relDepth(rel, base string) int {
	if base != "." {
		rel = strings.TrimPrefix(strings.TrimPrefix(rel, base), "/")
	}
	return strings.Count(rel, "/") + 1
}

func buildCodebaseReport(snap *snapshot, args analyzeArgs) *CodebaseReport {
	limit := int(args.Limit)
	match := func(fi *fileInfo) bool { return args.Language == "" || fi.Lang == args.Language }
	rep := &CodebaseReport{Root: snap.root, Path: snap.base, Language: args.Language, Depth: int(args.Depth),
		Omitted: map[string]int{}, Manifests: []Manifest{}, EntryPoints: []EntryPoint{}, Hotspots: []Hotspot{}, Files: []FileSymbols{}, ParseErrors: []ParseError{}, Skipped: []SkippedFile{}}
	rep.Summary, rep.Languages = summarize(snap, match)
	for _, p := range projects(snap) {
		rep.Projects = append(rep.Projects, p.Project)
	}
	rep.Tree = folderTree(snap, args, match)

	for _, fi := range snap.files {
		if fi.F == nil || fi.F.Manifest == nil || fi.Vendored {
			continue
		}
		m := *fi.F.Manifest
		m.Path = fi.Rel
		rep.Manifests = append(rep.Manifests, m)
		for _, e := range m.Entries {
			rep.EntryPoints = append(rep.EntryPoints, EntryPoint{File: fi.Rel, Kind: "manifest", Detail: e})
		}
	}
	ms := make([]*Manifest, len(rep.Manifests))
	for i := range rep.Manifests {
		ms[i] = &rep.Manifests[i]
	}
	inheritVersions(ms)
	rep.Omitted["manifests"] = capList(&rep.Manifests, limit)
	for i := range rep.Manifests {
		rep.Omitted["manifestDependencies"] += capList(&rep.Manifests[i].Dependencies, limit)
	}

	var funcs []funcRef
	var listed []*fileInfo // the files whose symbols may be listed
	for _, fi := range snap.files {
		if match(fi) && fi.F != nil && fi.F.ParseError {
			rep.ParseErrors = append(rep.ParseErrors, ParseError{File: fi.Rel, Line: fi.F.ErrorLine, Message: fi.F.ErrorMsg})
		}
		if reason := fi.skipped(); reason != "" && match(fi) {
			rep.Skipped = append(rep.Skipped, SkippedFile{File: fi.Rel, Reason: reason, Bytes: fi.Size})
		}
		if !match(fi) || !fi.counted() {
			continue
		}
		for _, e := range fi.F.Entry {
			rep.EntryPoints = append(rep.EntryPoints, EntryPoint{File: fi.Rel, Line: e.Line, Kind: e.Kind, Detail: e.Detail})
		}
		for i := range fi.F.Symbols {
			if fi.F.Symbols[i].isFunc() {
				funcs = append(funcs, funcRef{fi, &fi.F.Symbols[i]})
			}
		}
		if fi.F.Parsed && relDepth(fi.Rel, snap.base) <= int(args.Depth) {
			listed = append(listed, fi)
		}
	}
	// The largest files first, and only limit of them get their symbols listed: a list for
	// each of GOROOT's files was a third of what the report allocated.
	listed, rep.Omitted["files"] = firstSorted(listed, limit, func(a, b *fileInfo) int {
		return cmp.Compare(b.F.Lines.Code, a.F.Lines.Code)
	})
	for _, fi := range listed {
		fs := FileSymbols{Path: fi.Rel, Language: fi.Lang, Code: fi.F.Lines.Code, Symbols: []Symbol{}}
		for _, s := range fi.F.Symbols {
			if s.Kind != kindMethod {
				fs.Symbols = append(fs.Symbols, Symbol{Name: s.Name, Kind: s.Kind.String(), Line: int(s.Line), Exported: s.Exported})
			}
		}
		fs.OmittedSymbols = capList(&fs.Symbols, min(limit, 100))
		rep.Files = append(rep.Files, fs)
	}
	// Programs before the manifests that name them; the most complex and the largest first.
	sort.SliceStable(rep.EntryPoints, func(i, j int) bool {
		a, b := rep.EntryPoints[i], rep.EntryPoints[j]
		if (a.Kind == "main") != (b.Kind == "main") {
			return a.Kind == "main"
		}
		return a.File < b.File
	})
	// Only limit of each list is kept: selecting them costs a look at each function, where
	// sorting all of a large tree's (over 100,000 in GOROOT) was most of a warm call.
	// They are chosen among references to the functions: a Hotspot for each of GOROOT's was
	// a third of what a cold analysis allocated once all files were read.
	var top []funcRef
	top, rep.Omitted["hotspots"] = firstSorted(funcs, limit, func(a, b funcRef) int {
		if c := cmp.Compare(b.s.Complexity, a.s.Complexity); c != 0 {
			return c
		}
		return cmp.Compare(b.lines(), a.lines())
	})
	rep.Hotspots = hotspots(top)
	top, rep.Omitted["largest"] = firstSorted(funcs, limit, func(a, b funcRef) int {
		if c := cmp.Compare(b.lines(), a.lines()); c != 0 {
			return c
		}
		return cmp.Compare(b.s.Complexity, a.s.Complexity)
	})
	rep.Largest = hotspots(top)
	rep.Omitted["languages"] = capList(&rep.Languages, limit)
	rep.Omitted["entryPoints"] = capList(&rep.EntryPoints, limit)
	rep.Omitted["parseErrors"] = capList(&rep.ParseErrors, limit)
	rep.Omitted["skipped"] = capSkipped(&rep.Skipped, min(limit, maxSkippedPerReason))
	rep.Omitted["projects"] = capList(&rep.Projects, limit)

	rep.Omitted, rep.Hint = omissions(rep.Omitted, limit, "a narrower path, or a language")
	return rep
}

// summarize counts files by what they are and lines by language, largest language first.
func summarize(snap *snapshot, match func(*fileInfo) bool) (Summary, []LanguageStat) {
	s := Summary{Truncated: snap.truncated, Partial: snap.partialNote()}
	langs := map[string]*LanguageStat{}
	for _, fi := range snap.files {
		if !match(fi) {
			continue
		}
		s.Files++
		switch {
		case fi.Vendored:
			s.VendoredFiles++
		case fi.Binary:
			s.BinaryFiles++
		case fi.Oversize:
			s.OversizeFiles++
		case fi.Generated:
			s.GeneratedFiles++
		}
		if fi.F != nil && fi.F.ParseError {
			s.ParseErrors++
		}
		if reason := fi.skipped(); reason != "" {
			if s.Skipped == nil {
				s.Skipped = map[string]int{}
			}
			s.Skipped[reason]++
		}
		if !fi.counted() {
			continue
		}
		s.CountedFiles++
		s.Lines.add(fi.F.Lines)
		ls := langs[fi.Lang]
		if ls == nil {
			ls = &LanguageStat{Name: fi.Lang, Type: languageType(fi.Lang)}
			langs[fi.Lang] = ls
		}
		ls.Files++
		ls.Lines.add(fi.F.Lines)
		ls.Parsed = ls.Parsed || fi.F.Parsed
	}
	out := make([]LanguageStat, 0, len(langs))
	for _, l := range langs {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Code != out[j].Code {
			return out[i].Code > out[j].Code
		}
		return out[i].Name < out[j].Name
	})
	return s, out
}

// capList keeps the first limit items and returns how many it dropped.
// omissions keeps the lists that were cut (nil when none was) and, when any was, says how to
// ask for the rest; narrower names the narrowing arguments of the tool.
func omissions(omitted map[string]int, limit int, narrower string) (map[string]int, string) {
	for k, v := range omitted {
		if v == 0 {
			delete(omitted, k)
		}
	}
	if len(omitted) == 0 {
		return nil, ""
	}
	return omitted, fmt.Sprintf("lists are cut at limit=%d; call again with a larger limit (at most %d), %s", limit, maxLimit, narrower)
}

// firstSorted returns the first limit elements of list in the order slices.SortStableFunc
// would give them (equal elements keep their order in list), and how many it left out,
// without sorting the rest. list is not modified.
// funcRef is a function of a file, a candidate hotspot.
type funcRef struct {
	fi *fileInfo
	s  *symbol
}

func (r funcRef) lines() int { return int(r.s.End - r.s.Line + 1) }

func hotspots(refs []funcRef) []Hotspot {
	out := make([]Hotspot, len(refs))
	for i, r := range refs {
		out[i] = Hotspot{File: r.fi.Rel, Symbol: r.s.qualified(), Line: int(r.s.Line), End: int(r.s.End),
			Lines: r.lines(), Complexity: int(r.s.Complexity), Nesting: int(r.s.Nesting)}
	}
	return out
}

func firstSorted[T any](list []T, limit int, cmp func(a, b T) int) ([]T, int) {
	top := make([]T, 0, min(limit, len(list))+1)
	for _, x := range list {
		if len(top) == limit && cmp(x, top[limit-1]) >= 0 {
			continue
		}
		// After the elements equal to x, which came before it in list.
		i := sort.Search(len(top), func(i int) bool { return cmp(x, top[i]) < 0 })
		top = slices.Insert(top, i, x)
		if len(top) > limit {
			top = top[:limit]
		}
	}
	return top, len(list) - len(top)
}

// capSkipped keeps the largest limit files of each reason, and returns how many it left out.
func capSkipped(list *[]SkippedFile, limit int) int {
	slices.SortStableFunc(*list, func(a, b SkippedFile) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.File, b.File))
	})
	named := map[string]int{}
	kept := (*list)[:0]
	for _, s := range *list {
		if named[s.Reason]++; named[s.Reason] <= limit {
			kept = append(kept, s)
		}
	}
	n := len(*list) - len(kept)
	*list = kept
	return n
}

func capList[T any](list *[]T, limit int) int {
	if len(*list) <= limit {
		return 0
	}
	n := len(*list) - limit
	*list = (*list)[:limit]
	return n
}

func languageType(lang string) string {
	switch enry.GetLanguageType(lang) {
	case enry.Programming:
		return "programming"
	case enry.Markup:
		return "markup"
	case enry.Data:
		return "data"
	case enry.Prose:
		return "prose"
	}
	return "unknown"
}

// folderTree sums files, bytes and code lines per folder down to args.Depth levels below the
// analysed path; each folder's children are ordered by size and capped at args.Limit.
func folderTree(snap *snapshot, args analyzeArgs, match func(*fileInfo) bool) *Folder {
	top := &Folder{Path: snap.base}
	nodes := map[string]*Folder{snap.base: top}
	for _, fi := range snap.files {
		if !match(fi) {
			continue
		}
		code := 0
		if fi.counted() {
			code = fi.F.Lines.Code
		}
		dir := path.Dir(fi.Rel)
		// Walk from the file's folder up to the analysed path, adding to each level shown.
		var chain []string
		for d := dir; under(d, snap.base) && d != snap.base; d = path.Dir(d) {
			chain = append(chain, d)
		}
		top.Files++
		top.Bytes += fi.Size
		top.Code += code
		parent := top
		for i := len(chain) - 1; i >= 0; i-- {
			d := chain[i]
			if relDepth(d, snap.base) > int(args.Depth) {
				break
			}
			n := nodes[d]
			if n == nil {
				n = &Folder{Path: d}
				nodes[d] = n
				parent.Children = append(parent.Children, n)
			}
			n.Files++
			n.Bytes += fi.Size
			n.Code += code
			parent = n
		}
	}
	var order func(f *Folder)
	order = func(f *Folder) {
		sort.Slice(f.Children, func(i, j int) bool {
			if f.Children[i].Bytes != f.Children[j].Bytes {
				return f.Children[i].Bytes > f.Children[j].Bytes
			}
			return f.Children[i].Path < f.Children[j].Path
		})
		f.OmittedChildren = capList(&f.Children, int(args.Limit))
		for _, c := range f.Children {
			order(c)
		}
	}
	order(top)
	return top
}
