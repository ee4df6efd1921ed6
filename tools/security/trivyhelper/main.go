// Command platform-iac runs Trivy's infrastructure-as-code scanners (Terraform,
// CloudFormation, Kubernetes, Helm charts rendered with their default values, Dockerfile) with the checks embedded in Trivy, fully offline,
// for the security package of platform. It is a separate program in a module of its own
// because Trivy brings a hundred modules, needs GOEXPERIMENT=jsonv2 and replaces the default
// slog handler: the server starts it once, keeps it, and a crash or a memory blow-up here
// costs one call, never the server.
//
// Protocol: one JSON request per line on standard input, one JSON response per line on
// standard output, in order. A request carries the files to scan (path and content); the
// response carries the failed checks. The checks are compiled once, on the first request.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/aquasecurity/trivy/pkg/iac/detection"
	"github.com/aquasecurity/trivy/pkg/iac/rego"
	"github.com/aquasecurity/trivy/pkg/iac/scan"
	"github.com/aquasecurity/trivy/pkg/iac/scanners/cloudformation"
	cfparser "github.com/aquasecurity/trivy/pkg/iac/scanners/cloudformation/parser"
	"github.com/aquasecurity/trivy/pkg/iac/scanners/dockerfile"
	helmparser "github.com/aquasecurity/trivy/pkg/iac/scanners/helm/parser"
	"github.com/aquasecurity/trivy/pkg/iac/scanners/kubernetes"
	"github.com/aquasecurity/trivy/pkg/iac/scanners/options"
	"github.com/aquasecurity/trivy/pkg/iac/scanners/terraform"
	"github.com/aquasecurity/trivy/pkg/log"
	"github.com/aquasecurity/trivy/pkg/mapfs"
)

// File is one file to scan, its path relative to the scanned folder.
type File struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Request asks for one scan.
type Request struct {
	Files []File `json:"files"`
}

// Finding is one failed check.
type Finding struct {
	ID         string   `json:"id"`     // AWS-0086, KSV-0017, DS-0002, ...
	AVDID      string   `json:"avdId"`  // AVD-AWS-0086: what Trivy's reports print
	LongID     string   `json:"longId"` // aws-s3-block-public-acls: tfsec's name of the check
	Aliases    []string `json:"aliases,omitempty"`
	Severity   string   `json:"severity"`
	Title      string   `json:"title"`
	Message    string   `json:"message"`
	Resolution string   `json:"resolution"`
	File       string   `json:"file"`
	Line       int      `json:"line"`
	EndLine    int      `json:"endLine"`
	Resource   string   `json:"resource,omitempty"` // Terraform address, CloudFormation logical id, ...
	Source     string   `json:"source"`             // terraform, cloudformation, kubernetes, helm, dockerfile
	Links      []string `json:"links,omitempty"`
}

// Response answers one request.
type Response struct {
	Findings []Finding `json:"findings"`
	Error    string    `json:"error,omitempty"`
}

// scanner is what every Trivy IaC scanner offers.
type scanner interface {
	ScanFS(ctx context.Context, fsys fs.FS, dir string) (scan.Results, error)
}

func main() {
	maxMemory := flag.Int64("max-memory", 0, "address space limit in bytes (RLIMIT_AS); 0 for none")
	flag.Parse()
	if *maxMemory > 0 {
		// A runaway scan then fails an allocation and ends this process, not the machine.
		lim := &syscall.Rlimit{Cur: uint64(*maxMemory), Max: uint64(*maxMemory)}
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, lim); err != nil {
			fmt.Fprintf(os.Stderr, "platform-iac: set memory limit: %v\n", err)
		}
	}
	// Trivy logs through slog; its messages (files it could not parse) go to stderr, which
	// the server logs, and never mix with the responses on stdout.
	log.SetDefault(log.New(log.NewHandler(os.Stderr, &log.Options{Level: slog.LevelWarn})))
	if err := serve(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "platform-iac: %v\n", err)
		os.Exit(1)
	}
}

// serve answers requests until in ends.
func serve(ctx context.Context, in io.Reader, out io.Writer) error {
	e := newEngine()
	r := bufio.NewReader(in)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var req Request
			var resp Response
			if err := json.Unmarshal(line, &req); err != nil {
				resp.Error = fmt.Sprintf("bad request: %v", err)
			} else {
				resp.Findings, err = e.scan(ctx, req.Files)
				if err != nil {
					resp.Error = err.Error()
				}
			}
			if resp.Findings == nil {
				resp.Findings = []Finding{}
			}
			if err := enc.Encode(resp); err != nil {
				return fmt.Errorf("write response: %w", err)
			}
			if err := w.Flush(); err != nil {
				return fmt.Errorf("write response: %w", err)
			}
			// The files of one request are garbage now: give the memory back before idling.
			debug.FreeOSMemory()
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read request: %w", err)
		}
	}
}

// engine holds the compiled checks, shared by the scanners of every request.
type engine struct {
	checks *rego.Scanner
	err    error
}

func newEngine() *engine { return &engine{} }

// regoOptions select Trivy's embedded checks and libraries and nothing from the network.
func regoOptions() []options.ScannerOption {
	return []options.ScannerOption{
		rego.WithEmbeddedPolicies(true),
		rego.WithEmbeddedLibraries(true),
	}
}

// compile loads and compiles the embedded checks once (about 2 s).
func (e *engine) compile() error {
	if e.checks != nil || e.err != nil {
		return e.err
	}
	rs := rego.NewScanner(regoOptions()...)
	if err := rs.LoadPolicies(mapfs.New()); err != nil {
		e.err = fmt.Errorf("load embedded checks: %w", err)
		return e.err
	}
	e.checks = rs
	return nil
}

// scan sorts the files by kind and runs each kind's scanner on its own in-memory folder, so
// that a generic scanner never parses another kind's files.
func (e *engine) scan(ctx context.Context, files []File) ([]Finding, error) {
	if err := e.compile(); err != nil {
		return nil, err
	}
	kinds := map[string]*mapfs.FS{}
	var charts []string // folders with a Chart.yaml: their files are rendered, not read as they are
	for _, f := range files {
		if path.Base(f.Path) == "Chart.yaml" {
			charts = append(charts, path.Dir(path.Clean(strings.TrimPrefix(f.Path, "/"))))
		}
	}
	for _, f := range files {
		name := path.Clean(strings.TrimPrefix(f.Path, "/"))
		kind := kindOf(name, f.Content)
		if slices.ContainsFunc(charts, func(c string) bool { return c == "." || strings.HasPrefix(name, c+"/") }) {
			kind = "helm"
		}
		if kind == "" {
			continue
		}
		fsys, ok := kinds[kind]
		if !ok {
			fsys = mapfs.New()
			kinds[kind] = fsys
		}
		if err := fsys.MkdirAll(path.Dir(name), 0o755); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if err := fsys.WriteVirtualFile(name, []byte(f.Content), 0o644); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	var out []Finding
	var errs []string
	for _, kind := range []string{"terraform", "cloudformation", "kubernetes", "helm", "dockerfile"} {
		fsys, ok := kinds[kind]
		if !ok {
			continue
		}
		if kind == "helm" {
			found, err := e.scanCharts(ctx, fsys, charts)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", kind, err))
			}
			out = append(out, found...)
			continue
		}
		res, err := e.scanner(kind).ScanFS(ctx, fsys, ".")
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", kind, err))
			continue
		}
		found := findings(kind, res)
		if kind == "cloudformation" {
			nameResources(ctx, fsys, found)
		}
		out = append(out, found...)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}

// scanner returns a fresh scanner of kind over the compiled checks: fresh, because the
// Terraform scanner accumulates options on every scan.
func (e *engine) scanner(kind string) scanner {
	opts := append(regoOptions(), rego.WithRegoScanner(e.checks))
	switch kind {
	case "terraform":
		return terraform.New(append(opts,
			terraform.ScannerWithDownloadsAllowed(false),
			terraform.ScannerWithSkipCachedModules(true),
			terraform.ScannerWithAllDirectories(true))...)
	case "cloudformation":
		return cloudformation.New(opts...)
	case "kubernetes":
		return kubernetes.NewScanner(opts...)
	default:
		return dockerfile.NewScanner(opts...)
	}
}

// kindOf tells which scanner reads a file, by Trivy's own detection; "" for none.
func kindOf(name, content string) string {
	switch {
	case detection.IsTerraformFile(name):
		return "terraform"
	case detection.IsType(name, strings.NewReader(content), detection.FileTypeDockerfile):
		return "dockerfile"
	case detection.IsType(name, strings.NewReader(content), detection.FileTypeCloudFormation):
		return "cloudformation"
	case detection.IsType(name, strings.NewReader(content), detection.FileTypeKubernetes):
		return "kubernetes"
	}
	return ""
}

// findings converts the failed results of one scanner.
func findings(kind string, res scan.Results) []Finding {
	var out []Finding
	for _, r := range res.GetFailed() {
		rule := r.Rule()
		rng := r.Range()
		file, line, end := rng.GetFilename(), rng.GetStartLine(), rng.GetEndLine()
		out = append(out, Finding{
			ID:         rule.ID,
			AVDID:      avdID(rule),
			LongID:     rule.LongID,
			Aliases:    rule.Aliases,
			Severity:   strings.ToLower(string(rule.Severity)),
			Title:      rule.Summary,
			Message:    r.Description(),
			Resolution: rule.Resolution,
			File:       strings.TrimPrefix(file, "./"),
			Line:       line,
			EndLine:    end,
			Resource:   resource(kind, r),
			Source:     kind,
			Links:      rule.Links,
		})
	}
	return out
}

// scanCharts renders each chart with its default values, as Trivy's Helm scanner does, and
// runs the Kubernetes checks on every rendered document; unlike that scanner it points each
// finding into the template the document came from (the "# Source:" comment Helm writes),
// since the rendered text is something the user never sees.
func (e *engine) scanCharts(ctx context.Context, fsys *mapfs.FS, charts []string) ([]Finding, error) {
	var out []Finding
	var errs []string
	for _, chart := range charts {
		p, err := helmparser.New()
		if err != nil {
			return out, fmt.Errorf("helm parser: %w", err)
		}
		manifests, err := p.ParseFS(ctx, fsys, chart)
		if err != nil {
			errs = append(errs, fmt.Sprintf("render chart %s: %v", chart, err))
			continue
		}
		rendered := mapfs.New()
		docs := map[string]helmparser.Manifest{}
		for i, m := range manifests {
			// One file per document, even when a template renders several.
			name := fmt.Sprintf("%d/%s", i, m.Path)
			if err := rendered.MkdirAll(path.Dir(name), 0o755); err != nil {
				return out, fmt.Errorf("%s: %w", name, err)
			}
			if err := rendered.WriteVirtualFile(name, []byte(m.Content), 0o644); err != nil {
				return out, fmt.Errorf("%s: %w", name, err)
			}
			docs[name] = m
		}
		res, err := e.scanner("kubernetes").ScanFS(ctx, rendered, ".")
		if err != nil {
			errs = append(errs, fmt.Sprintf("chart %s: %v", chart, err))
			continue
		}
		for _, f := range findings("helm", res) {
			doc, ok := docs[f.File]
			if !ok {
				continue
			}
			f.File = path.Join(chart, doc.Path)
			template, err := fs.ReadFile(fsys, f.File)
			if err != nil {
				return out, fmt.Errorf("chart %s: %w", chart, err)
			}
			f.Line = templateLine(string(template), doc.Content, f.Line)
			f.EndLine = f.Line
			out = append(out, f)
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}

// templateLine finds the line of a template that produced line of its rendered document:
// the line whose text the rendered line repeats literally, else the line of the same key
// (image:, securityContext:, ...), taking the same occurrence when the text or key appears
// more than once; else the resource's first line (apiVersion: or kind:), else 1.
func templateLine(template, rendered string, line int) int {
	tl := strings.Split(template, "\n")
	rl := strings.Split(rendered, "\n")
	if line >= 1 && line <= len(rl) {
		text := yamlLine(rl[line-1])
		key, _, isKey := strings.Cut(text, ":")
		matchers := []func(string) bool{func(s string) bool { return s == text }}
		if isKey && key != "" && !strings.ContainsAny(key, " {") {
			matchers = append(matchers, func(s string) bool { return strings.HasPrefix(s, key+":") })
		}
		for _, match := range matchers {
			nth := 0 // occurrences in the rendered document up to line
			for _, r := range rl[:line] {
				if match(yamlLine(r)) {
					nth++
				}
			}
			for i, t := range tl {
				if match(yamlLine(t)) {
					if nth--; nth == 0 {
						return i + 1
					}
				}
			}
		}
	}
	for i, t := range tl {
		if s := yamlLine(t); strings.HasPrefix(s, "apiVersion:") || strings.HasPrefix(s, "kind:") {
			return i + 1
		}
	}
	return 1
}

// yamlLine is a line of YAML without its indentation and list dash.
func yamlLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.TrimSpace(strings.TrimPrefix(s, "- "))
}

// resource names what a finding is about as Trivy knows it: for Terraform the resource block
// (its metadata's root: Trivy's own reference may be an attribute, ingress.cidr_blocks);
// CloudFormation's is replaced by nameResources.
func resource(kind string, r scan.Result) string {
	if kind == "terraform" {
		return r.Metadata().Root().Reference()
	}
	return r.Metadata().Reference()
}

// nameResources sets the CloudFormation findings' resource to the logical id of the resource
// whose lines hold the finding: Trivy's own reference for it is a line range. The templates
// are parsed a second time for this, which costs little next to the checks.
func nameResources(ctx context.Context, fsys fs.FS, found []Finding) {
	type resource struct {
		id          string
		first, last int
	}
	byFile := map[string][]resource{}
	contexts, err := cfparser.New().ParseFS(ctx, fsys, ".")
	if err != nil {
		return // the findings keep Trivy's reference
	}
	for _, c := range contexts {
		if c == nil {
			continue
		}
		for id, r := range c.Resources {
			rng := r.Range()
			file := strings.TrimPrefix(rng.GetFilename(), "./")
			byFile[file] = append(byFile[file], resource{id, rng.GetStartLine(), rng.GetEndLine()})
		}
	}
	for i, f := range found {
		for _, r := range byFile[f.File] {
			if f.Line >= r.first && f.Line <= r.last {
				found[i].Resource = r.id
				break
			}
		}
	}
}

// avdID is the check's id in Trivy's vulnerability database (AVD-AWS-0086), which Trivy's
// reports and tfsec print.
func avdID(rule scan.Rule) string {
	if strings.HasPrefix(rule.ID, "AVD-") {
		return rule.ID
	}
	return "AVD-" + rule.ID
}
