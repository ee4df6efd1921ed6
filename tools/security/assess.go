package security

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/cloud"
	"github.com/platform-dev/platform/tools/workspace"
)

// Scopes of an assessment.
const (
	ScopeCode           = "code"
	ScopeInfrastructure = "infrastructure"
	ScopeBoth           = "both"
)

// DefaultLimit is how many findings a call returns unless it asks for another number.
const DefaultLimit = 200

// Options select an assessment.
type Options struct {
	Path     string // folder or file below a workspace root; "" for the first root
	Scope    string // code, infrastructure or both
	Severity string // minimum severity reported; "" for low
	Limit    int    // findings returned, most severe first; 0 for DefaultLimit
	// Baseline names a saved JSON report (a workspace path) whose findings are not reported
	// again; "" uses BaselineFile in the assessed folder when there is one.
	Baseline string
	// History adds the secrets that commits of the folder's git repository added and later
	// commits removed (scope code or both).
	History bool
}

// Assessor is the security_assessment tool. It is safe for concurrent use: all calls share one
// pool of file workers (one per core), one Go analysis at a time (type-checking a module is
// the largest allocation), and a cache of per-file results keyed by content hash.
type Assessor struct {
	ws      *workspace.Workspace
	log     *slog.Logger
	secrets *detect.Detector
	cache   *fileCache
	workers chan struct{} // a token per running file scan, shared by every call
	goSlot  chan struct{} // a token per running Go analysis
	goCache *lru.Cache[string, goResult]
	goSeen  sync.Map   // module folders analysed before: their next analysis waits for the walk's hashes
	iac     *iacEngine // Trivy's IaC checks; nil when the helper is not installed
}

// Option configures an Assessor.
type Option func(*Assessor)

// WithIaCHelper names the platform-iac program that runs Trivy's IaC checks; "" runs only
// platform's own infrastructure rules. Without this option, New looks for it with
// FindIaCHelper.
func WithIaCHelper(path string) Option {
	return func(a *Assessor) {
		a.iac = nil
		if path != "" {
			a.iac = newIaCEngine(path, a.log)
		}
	}
}

// New returns the assessor over ws. Close stops the IaC helper it may start.
func New(ws *workspace.Workspace, logger *slog.Logger, opts ...Option) (*Assessor, error) {
	d, err := newSecretDetector()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	goCache, err := lru.New[string, goResult](64)
	if err != nil {
		return nil, err
	}
	a := &Assessor{ws: ws, log: logger, secrets: d, cache: newFileCache(),
		workers: make(chan struct{}, runtime.GOMAXPROCS(0)), goSlot: make(chan struct{}, 1), goCache: goCache}
	WithIaCHelper(FindIaCHelper())(a)
	for _, o := range opts {
		o(a)
	}
	return a, nil
}

// Close stops the IaC helper, when one runs.
func (a *Assessor) Close() {
	if a.iac != nil {
		a.iac.Close()
	}
}

// Assess runs the assessment. All findings at or above the minimum severity are in the
// report, up to the limit (Omitted counts the rest).
func (a *Assessor) Assess(ctx context.Context, opts Options) (*Report, error) {
	all, rep, err := a.findings(ctx, opts)
	if err != nil {
		return nil, err
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	rep.Summary = summarize(all)
	if len(all) > limit {
		rep.Omitted = len(all) - limit
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d less severe findings left out: raise severity, narrow path, or raise limit (up to 5000)", rep.Omitted))
		all = all[:limit]
	}
	// limit holds for the notes too (one per unparsed file can be many); the count of the
	// rest stays, and the notes that say the answer is partial have their own fields
	// (truncated, omitted).
	if len(rep.Notes) > limit {
		rep.OmittedNotes = len(rep.Notes) - limit
		rep.Notes = rep.Notes[:limit]
	}
	rep.Findings = append([]Finding{}, all...) // [] rather than null when there is none
	return rep, nil
}

// notDeployed matches the vendored paths whose declarations are not the project's
// infrastructure: other people's code and test fixtures (their secrets are still leaks and
// still reported). Linguist's other vendored paths, env/ and .github/ among them, hold the
// project's own declarations.
var notDeployed = regexp.MustCompile(`(^|/)(node_modules|vendors?|bower_components|Godeps|[Tt]hird[-_]?[Pp]arty|3rd[-_]?party|testdata|[Tt]ests?/fixtures|[Ss]pecs?/fixtures)/`)

// budget returns the context the work runs in: when ctx has a deadline, the work stops at
// 80% of the time left (24 s of the server's 30), so that the scans in flight can finish and
// the findings collected so far can be answered, flagged truncated, before the caller's
// deadline turns the whole call into a timeout.
func budget(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, time.Until(dl)*4/5)
}

// findings collects every finding at or above the minimum severity, most severe first.
func (a *Assessor) findings(ctx context.Context, opts Options) ([]Finding, *Report, error) {
	switch opts.Scope {
	case ScopeCode, ScopeInfrastructure, ScopeBoth:
	default:
		return nil, nil, tools.InvalidArgument("scope", "must be one of code, infrastructure, both (got %q)", opts.Scope)
	}
	if opts.Severity == "" {
		opts.Severity = "low"
	}
	if rank(opts.Severity) < 0 {
		return nil, nil, tools.InvalidArgument("severity", "must be one of low, medium, high, critical (got %q)", opts.Severity)
	}
	dir, err := a.ws.Resolve("path", opts.Path)
	if err != nil {
		return nil, nil, err
	}
	bl, blName, err := a.baseline(dir, opts.Baseline)
	if err != nil {
		return nil, nil, err
	}
	code := opts.Scope != ScopeInfrastructure
	infra := opts.Scope != ScopeCode
	rep := &Report{Scope: opts.Scope, Severity: opts.Severity, Baseline: blName}
	if _, rel, ok := a.ws.Root(dir); ok {
		rep.Path = rel
	}
	work, cancel := budget(ctx)
	defer cancel()

	// The first analysis of a module cannot be in the cache: gosec, the slowest step, starts
	// on it at once, in parallel with the walk. Later ones wait for the walk to hash the Go
	// files and look the result up first.
	var early chan goResult
	if _, seen := a.goSeen.LoadOrStore(dir, true); code && !seen && insideModule(a.ws, dir) {
		early = make(chan goResult, 1)
		go func() {
			var res goResult
			if a.acquireGo(ctx, work, dir) {
				res.findings, res.notes = goFindings(work, dir, a.shown(dir))
				<-a.goSlot
			}
			early <- res
		}()
	}

	var out []Finding
	var notes []string
	var mu sync.Mutex // guards out, notes, closed and the counters while file workers run
	closed := false   // set when the budget ran out: scans still running drop their findings
	var wg sync.WaitGroup
	collector := cloud.NewCollector()
	goFiles := map[string]string{} // absolute -> workspace-relative
	goSums := sha256.New()         // the Go sources and module files, for the Go analysis cache
	var goModDirs []string
	ignores := map[string]suppressions{}
	var iacFiles []iacFile // the declarations for Trivy, read by the walk
	iacBytes := 0          // bounded by iacMaxBytes: past it, the rest of the tree gets our rules only
	iacLeft := 0           // declaration files past iacMaxBytes
	walked, scanned, cached := 0, 0, 0
	err = a.ws.Walk(work, dir, func(f workspace.File) error {
		walked++
		if walked%500 == 0 {
			tools.ReportProgress(ctx, float64(walked), 0, fmt.Sprintf("%d files read", walked))
		}
		content := f.Content
		if f.Vendored && !f.Binary {
			content = vendoredContent(f)
		}
		if f.Binary || content == nil {
			return nil
		}
		if s := parseSuppressions(content); s != nil {
			ignores[f.Rel] = s
		}
		k := fileKey{rel: f.Rel, vendored: f.Vendored}
		if infra && !(f.Vendored && notDeployed.MatchString(f.Rel)) {
			// Linguist's vendored paths include env/ and .github/: the team's own declarations.
			own := f
			own.Content, own.Vendored = content, false
			k.secrets = collector.Add(own)
			if isDockerfile(f.Rel) {
				k.secrets, k.docker = true, true
			}
			switch {
			case !(k.secrets || k.docker || chartFile(f.Rel)) || a.iac == nil:
			case iacBytes+len(content) > iacMaxBytes:
				iacLeft++
			default:
				iacFiles = append(iacFiles, iacFile{Path: f.Rel, Content: string(content)})
				iacBytes += len(content)
			}
		}
		switch {
		case !code || f.Generated || f.Vendored:
		case path.Base(f.Rel) == "go.mod" || path.Base(f.Rel) == "go.sum":
			if path.Base(f.Rel) == "go.mod" {
				goModDirs = append(goModDirs, filepath.Dir(f.Path))
			}
			fmt.Fprintf(goSums, "%s\x00%x\x00", f.Rel, sha256.Sum256(content))
		case f.Language == "Go":
			goFiles[f.Path] = f.Rel
			fmt.Fprintf(goSums, "%s\x00%x\x00", f.Rel, sha256.Sum256(content))
		}
		k.secrets = k.secrets || code
		k.code = code && !f.Generated && !f.Vendored && f.Language != "Go"
		if !k.secrets && !k.docker && !k.code {
			return nil
		}
		// The scans run on the shared workers while the walk goes on; waiting for a worker
		// holds the walk back, so a call never holds more files than workers.
		select {
		case a.workers <- struct{}{}:
		case <-work.Done():
			return work.Err()
		}
		wg.Add(1)
		go func() {
			defer func() { <-a.workers; wg.Done() }()
			fs, hit, err := a.scanFile(work, k, f, content)
			mu.Lock()
			defer mu.Unlock()
			if closed || work.Err() != nil {
				return // cut short, or too late for the answer
			}
			if err != nil {
				notes = append(notes, err.Error())
			}
			out = append(out, fs...)
			scanned++
			if hit {
				cached++
			}
		}()
		return nil
	})
	if work.Err() == nil {
		wg.Wait()
	}
	// Out of time, the answer does not wait for the scans in flight: they stop at their next
	// check of work and leave their findings out.
	mu.Lock()
	closed = true
	out = slices.Clone(out)
	rep.Notes = append(rep.Notes, notes...)
	n, hits := scanned, cached
	mu.Unlock()
	switch {
	case errors.Is(err, workspace.ErrFileLimit):
		rep.Notes = append(rep.Notes, "the folder has more files than one walk reads: the assessment is incomplete; narrow path")
	case err != nil && ctx.Err() == nil && work.Err() != nil:
		rep.Truncated = true
	case err != nil:
		return nil, nil, fmt.Errorf("assess %s: %w", a.shown(dir), err)
	}
	if work.Err() != nil && ctx.Err() == nil {
		rep.Truncated = true
	}
	if infra { // the declarations read so far, even when the time ran out
		inv := collector.Inventory()
		out = append(out, infraFindings(ctx, inv, a.secrets)...)
		for _, e := range inv.Errors {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s:%d not parsed: %s", e.File, e.Line, e.Message))
		}
		// A file past a reading limit goes to no other parser: Trivy's would expand it too.
		refused := map[string]bool{}
		for _, e := range inv.Errors {
			refused[e.File] = refused[e.File] || e.Bound != ""
		}
		iacFiles = slices.DeleteFunc(iacFiles, func(f iacFile) bool { return refused[f.Path] })
		var notes []string
		out, notes = a.trivy(ctx, work, iacFiles, out)
		rep.Notes = append(rep.Notes, notes...)
		if iacLeft > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%d declaration files past the %d MB Trivy reads in one call got platform's rules only: narrow path", iacLeft, iacMaxBytes>>20))
		}
		if work.Err() != nil && ctx.Err() == nil {
			rep.Truncated = true
		}
	}
	if code && !rep.Truncated {
		if insideModule(a.ws, dir) && !slices.Contains(goModDirs, dir) {
			goModDirs = append(goModDirs, dir) // the folder's own module lies above it
		}
		sort.Strings(goModDirs)
		fs, notes := a.goModules(ctx, work, goModDirs, goFiles, fmt.Sprintf("%x", goSums.Sum(nil)), dir, early)
		out, rep.Notes = append(out, fs...), append(rep.Notes, notes...)
		rep.Truncated = work.Err() != nil && ctx.Err() == nil
	}
	if opts.History && code && !rep.Truncated {
		fs, notes, err := a.historySecrets(work, dir)
		if _, bad := tools.IsArgumentError(err); bad {
			return nil, nil, err
		}
		if err != nil && work.Err() == nil {
			notes = append(notes, fmt.Sprintf("git history not scanned: %v", err))
		}
		out, rep.Notes = append(out, fs...), append(rep.Notes, notes...)
		rep.Truncated = work.Err() != nil && ctx.Err() == nil
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if rep.Truncated {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the time budget ran out after %d files: findings are partial; narrow path or call again (scanned files are cached)", n))
	}
	a.log.Debug("security_assessment", "path", rep.Path, "files", walked, "scanned", n, "cached", hits)
	floor := rank(opts.Severity)
	kept := out[:0]
	for _, f := range mergeCredentials(out) {
		f.Fingerprint = fingerprint(f)
		switch {
		case rank(f.Severity) < floor:
		case ignores[f.File].covers(f):
			rep.Suppressed++
		case bl.accepts(f):
			rep.Baselined++
		default:
			kept = append(kept, f)
		}
	}
	sortFindings(kept)
	return kept, rep, nil
}

// baseline loads the baseline a call names, or BaselineFile in dir when the call names none
// and it exists. name is how the report shows it.
func (a *Assessor) baseline(dir, arg string) (bl baseline, name string, err error) {
	file := ""
	if arg != "" {
		if file, err = a.ws.Resolve("baseline", arg); err != nil {
			return nil, "", err
		}
	} else if fi, err := os.Stat(filepath.Join(dir, BaselineFile)); err == nil && fi.Mode().IsRegular() {
		file = filepath.Join(dir, BaselineFile)
	} else {
		return nil, "", nil
	}
	bl, err = loadBaseline(file)
	if err != nil {
		return nil, "", tools.InvalidArgument("baseline", "%s: %v", a.shown(file), err)
	}
	return bl, a.shown(file), nil
}

// goResult is what gosec said about one module: findings with absolute file names, and notes.
type goResult struct {
	findings []Finding
	notes    []string
}

// goModules runs gosec on each module folder, one module at a time across all calls, and
// keeps only findings in the files the walk listed. Results are cached by the hash of every Go
// source and module file of the walk: unchanged code is not type-checked again. early, when
// not nil, brings the result for earlyDir of an analysis started before the walk.
func (a *Assessor) goModules(ctx, work context.Context, dirs []string, goFiles map[string]string, sum, earlyDir string, early chan goResult) ([]Finding, []string) {
	var out []Finding
	var notes []string
	for _, d := range dirs {
		key := d + "\x00" + sum
		res, ok := a.goCache.Get(key)
		switch {
		case d == earlyDir && early != nil:
			res = <-early
			if work.Err() == nil {
				a.goCache.Add(key, res)
			}
		case !ok:
			if !a.acquireGo(ctx, work, d) {
				return out, notes
			}
			// A call that waited may find the result of the one it waited for.
			if res, ok = a.goCache.Get(key); !ok {
				tools.ReportProgress(ctx, 0, 0, "analysing the Go packages of "+a.shown(d))
				res.findings, res.notes = goFindings(work, d, a.shown(d))
				if work.Err() == nil {
					a.goCache.Add(key, res)
				}
			}
			<-a.goSlot
		}
		if work.Err() != nil {
			return out, notes
		}
		notes = append(notes, res.notes...)
		for _, f := range res.findings {
			rel, ok := goFiles[f.File]
			if !ok {
				continue // generated, ignored, a test, or outside the folder asked about
			}
			f.File, f.Location = rel, fmt.Sprintf("%s:%d", rel, f.Line)
			out = append(out, f)
		}
	}
	return out, notes
}

// acquireGo takes the Go analysis slot, saying so while it waits; false when work ended first.
func (a *Assessor) acquireGo(ctx, work context.Context, dir string) bool {
	select {
	case a.goSlot <- struct{}{}:
		return true
	default:
	}
	tools.ReportProgress(ctx, 0, 0, "waiting for the Go analysis of "+a.shown(dir))
	select {
	case a.goSlot <- struct{}{}:
		return true
	case <-work.Done():
		return false
	}
}

// shown is how notes name a folder: relative to its workspace root, never the server's path.
func (a *Assessor) shown(dir string) string {
	if _, rel, ok := a.ws.Root(dir); ok {
		return rel
	}
	return filepath.Base(dir)
}

// insideModule reports whether dir or a folder above it, up to its workspace root, has a go.mod.
func insideModule(ws *workspace.Workspace, dir string) bool {
	root, _, ok := ws.Root(dir)
	if !ok {
		return false
	}
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && fi.Mode().IsRegular() {
			return true
		}
		if d == root || filepath.Dir(d) == d {
			return false
		}
	}
}

// Spec describes security_assessment.
func (a *Assessor) Spec() tools.Spec {
	return tools.Spec{
		Name:  "security_assessment",
		Title: "Security assessment",
		Description: "Finds secrets (gitleaks rules, vendored paths included, optionally in git history) and hard-coded credentials, " +
			"Go vulnerabilities (gosec), injection, unsafe deserialisation, weak crypto, disabled TLS verification and insecure " +
			"randomness in other languages, infrastructure misconfigurations by Trivy's IaC checks (Terraform for AWS, Azure, Google and more, " +
			"CloudFormation, Kubernetes, rendered Helm charts, Dockerfiles) and by platform's rules (open admin ports, public buckets and databases, " +
			"unencrypted storage, wildcard IAM, IMDSv1, privileged or root containers, host namespaces, added capabilities, " +
			"cluster-admin bindings, hostPath, floating image tags, secrets in manifests, Dockerfiles without USER, pods without " +
			"NetworkPolicy or PodDisruptionBudget). Each finding " +
			"has rule, severity, CWE, CIS id where one exists, file:line, remediation and a fingerprint; secrets are masked. " +
			"\"platform:ignore <rule>\" comments and a baseline report silence accepted findings. Past 80% of the time limit " +
			"it answers the findings so far, flagged truncated. format \"sarif\" returns SARIF 2.1.0.",
		InputSchema:  json.RawMessage(inputSchema),
		OutputSchema: json.RawMessage(outputSchema),
	}
}

const inputSchema = `{
  "type": "object",
  "properties": {
    "scope": {"type": "string", "enum": ["code", "infrastructure", "both"], "description": "What to assess."},
    "severity": {"type": "string", "enum": ["low", "medium", "high", "critical"], "default": "low", "description": "Minimum severity reported."},
    "format": {"type": "string", "enum": ["json", "sarif"], "default": "json", "description": "json: findings with a summary; sarif: a SARIF 2.1.0 log."},
    "path": {"type": "string", "maxLength": 4096, "description": "Folder or file below the workspace to assess (default: the workspace root)."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 5000, "default": 200, "description": "Findings returned, most severe first."},
    "history": {"type": "boolean", "default": false, "description": "Also report secrets that commits of the folder's git repository added and later removed (the 500 newest commits; scope code or both)."},
    "baseline": {"type": "string", "maxLength": 4096, "description": "A security_assessment JSON report saved earlier (workspace path): its findings are not reported again. Default: .security-baseline.json in the assessed folder, when present."}
  },
  "required": ["scope"],
  "additionalProperties": false
}`

const outputSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string"},
    "scope": {"type": "string"},
    "severity": {"type": "string"},
    "summary": {"type": "object", "properties": {"total": {"type": "integer"}, "bySeverity": {"type": "object"}, "byCategory": {"type": "object"}}},
    "findings": {"type": "array", "items": {"type": "object", "required": ["ruleId", "severity", "cwe", "location", "message", "remediation", "fingerprint"]}},
    "omitted": {"type": "integer"},
    "suppressed": {"type": "integer", "description": "findings silenced by platform:ignore directives"},
    "baselined": {"type": "integer", "description": "findings accepted by the baseline"},
    "baseline": {"type": "string"},
    "truncated": {"type": "boolean", "description": "the time budget ran out: findings are partial"},
    "notes": {"type": "array", "items": {"type": "string"}},
    "omittedNotes": {"type": "integer", "description": "notes left out by limit"},
    "version": {"type": "string", "description": "SARIF version, with format sarif"},
    "runs": {"type": "array", "description": "SARIF runs, with format sarif"}
  }
}`

type callArgs struct {
	Scope    string `json:"scope"`
	Severity string `json:"severity"`
	Format   string `json:"format"`
	Path     string `json:"path"`
	Limit    int    `json:"limit"`
	Baseline string `json:"baseline"`
	History  bool   `json:"history"`
}

// Call runs security_assessment.
func (a *Assessor) Call(ctx context.Context, raw json.RawMessage) (any, error) {
	var args callArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, tools.InvalidArgument("arguments", "%v", err)
	}
	if args.Limit > 5000 {
		return nil, tools.InvalidArgument("limit", "at most 5000")
	}
	opts := Options{Path: args.Path, Scope: args.Scope, Severity: args.Severity, Limit: args.Limit, Baseline: args.Baseline, History: args.History}
	switch strings.ToLower(args.Format) {
	case "", "json":
		return a.Assess(ctx, opts)
	case "sarif":
		rep, err := a.Assess(ctx, opts)
		if err != nil {
			return nil, err
		}
		return SARIF(rep.Findings), nil
	default:
		return nil, tools.InvalidArgument("format", "must be json or sarif (got %q)", args.Format)
	}
}
