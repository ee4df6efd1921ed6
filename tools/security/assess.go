package security

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/zricethezav/gitleaks/v8/detect"
	"golang.org/x/sync/errgroup"

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
}

// Assessor is the security_assessment tool. It is safe for concurrent use.
type Assessor struct {
	ws      *workspace.Workspace
	log     *slog.Logger
	secrets *detect.Detector
}

// New returns the assessor over ws.
func New(ws *workspace.Workspace, logger *slog.Logger) (*Assessor, error) {
	d, err := newSecretDetector()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Assessor{ws: ws, log: logger, secrets: d}, nil
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
	rep.Findings = append([]Finding{}, all...) // [] rather than null when there is none
	return rep, nil
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
	code := opts.Scope != ScopeInfrastructure
	infra := opts.Scope != ScopeCode
	rep := &Report{Scope: opts.Scope, Severity: opts.Severity}
	if _, rel, ok := a.ws.Root(dir); ok {
		rep.Path = rel
	}

	// gosec loads type information through the go command, the slowest step: it starts on
	// the folder's own module while the walk runs.
	type goResult struct {
		fs    []Finding
		notes []string
	}
	var early chan goResult
	earlyDir := ""
	if code && insideModule(a.ws, dir) {
		earlyDir = dir
		early = make(chan goResult, 1)
		go func() {
			fs, notes := goFindings(ctx, dir, a.shown(dir))
			early <- goResult{fs, notes}
		}()
	}

	var out []Finding
	var mu sync.Mutex // guards out while file workers append
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	collector := cloud.NewCollector()
	goFiles := map[string]string{} // absolute -> workspace-relative
	var goModDirs []string
	err = a.ws.Walk(ctx, dir, func(f workspace.File) error {
		if f.Vendored || f.Binary || f.Oversize || f.Content == nil {
			return nil
		}
		declaration := false
		if infra {
			declaration = collector.Add(f)
			if isDockerfile(f.Rel) {
				declaration = true
				fs, err := dockerfileFindings(f.Rel, f.Content)
				if err != nil {
					rep.Notes = append(rep.Notes, err.Error())
				}
				mu.Lock()
				out = append(out, fs...)
				mu.Unlock()
			}
		}
		switch {
		case !code || f.Generated:
		case path.Base(f.Rel) == "go.mod":
			goModDirs = append(goModDirs, filepath.Dir(f.Path))
		case f.Language == "Go":
			goFiles[f.Path] = f.Rel
		}
		if !code && !declaration {
			return nil
		}
		// Secrets and token rules are the costly part: run them on a worker per core while
		// the walk goes on.
		g.Go(func() error {
			fs := secrets(gctx, a.secrets, f.Rel, f.Content)
			if code && !f.Generated && f.Language != "Go" {
				fs = append(fs, codeFindings(gctx, f.Rel, f.Language, f.Content)...)
			}
			mu.Lock()
			out = append(out, fs...)
			mu.Unlock()
			return gctx.Err()
		})
		return nil
	})
	if werr := g.Wait(); err == nil && werr != nil {
		err = werr
	}
	if errors.Is(err, workspace.ErrFileLimit) {
		rep.Notes = append(rep.Notes, "the folder has more files than one walk reads: the assessment is incomplete; narrow path")
	} else if err != nil {
		return nil, nil, fmt.Errorf("assess %s: %w", a.shown(dir), err)
	}
	if infra {
		inv := collector.Inventory()
		out = append(out, infraFindings(inv)...)
		for _, e := range inv.Errors {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s:%d not parsed: %s", e.File, e.Line, e.Message))
		}
	}
	if code {
		var raw []Finding
		if early != nil {
			r := <-early
			raw, rep.Notes = append(raw, r.fs...), append(rep.Notes, r.notes...)
		}
		sort.Strings(goModDirs)
		for _, d := range goModDirs {
			if d != earlyDir {
				fs, notes := goFindings(ctx, d, a.shown(d)) // a module nested below the folder
				raw, rep.Notes = append(raw, fs...), append(rep.Notes, notes...)
			}
		}
		for _, f := range raw {
			rel, ok := goFiles[f.File]
			if !ok {
				continue // generated, ignored, a test, or outside the folder asked about
			}
			f.File, f.Location = rel, fmt.Sprintf("%s:%d", rel, f.Line)
			out = append(out, f)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	floor := rank(opts.Severity)
	kept := out[:0]
	for _, f := range out {
		if rank(f.Severity) >= floor {
			kept = append(kept, f)
		}
	}
	sortFindings(kept)
	return kept, rep, nil
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
		Description: "Finds secrets (gitleaks rules), Go vulnerabilities (gosec), injection, unsafe deserialisation, weak crypto, " +
			"disabled TLS verification and insecure randomness in other languages, and infrastructure misconfigurations " +
			"(open admin ports, public buckets, unencrypted storage, wildcard IAM, privileged or root containers, hostPath, " +
			"floating image tags, secrets in manifests, Dockerfiles without USER). Each finding has rule, severity, CWE, " +
			"CIS id where one exists, file:line and remediation; secrets are masked. format \"sarif\" returns SARIF 2.1.0.",
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
    "limit": {"type": "integer", "minimum": 1, "maximum": 5000, "default": 200, "description": "Findings returned, most severe first."}
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
    "findings": {"type": "array", "items": {"type": "object", "required": ["ruleId", "severity", "cwe", "location", "message", "remediation"]}},
    "omitted": {"type": "integer"},
    "notes": {"type": "array", "items": {"type": "string"}},
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
	opts := Options{Path: args.Path, Scope: args.Scope, Severity: args.Severity, Limit: args.Limit}
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
