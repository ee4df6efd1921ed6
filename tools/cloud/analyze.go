package cloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/workspace"
)

// URI is the resource that serves the latest inventory and estimate of the workspace.
const URI = "service://infrastructure/cloud"

// Options select what Analyze reports.
type Options struct {
	Path         string // folder or file below a workspace root; "" for the first root
	Service      string // ec2, s3, rds, lambda, kubernetes, ... or a provider (aws, gcp); "" for all
	Region       string // provider region; "" for all
	CostAnalysis bool
	// BaseRef, a git revision (branch, tag, commit, HEAD~1), asks for a cost diff from that
	// version of the folder to HeadRef, or to the working tree when HeadRef is "".
	BaseRef string
	HeadRef string
}

// Report is the answer of analyze_cloud_resources.
type Report struct {
	Path            string            `json:"path"`
	Service         string            `json:"service,omitempty"`
	Region          string            `json:"region,omitempty"`
	Summary         Summary           `json:"summary"`
	Resources       []ResourceEntry   `json:"resources"`
	Recommendations []Recommendation  `json:"recommendations"`
	Cost            *CostSummary      `json:"cost,omitempty"`
	CostDiff        *CostDiff         `json:"costDiff,omitempty"`
	Errors          []FileError       `json:"errors,omitempty"`
	Notes           []string          `json:"notes,omitempty"`
	inventory       *Inventory        // the whole inventory, before filters
	filtered        []*Resource       // resources after filters
	services        map[string]string // service -> provider, of everything found
}

// Summary counts what the report covers.
type Summary struct {
	Files           int            `json:"files"`
	Resources       int            `json:"resources"`
	ByService       map[string]int `json:"byService"`
	BySource        map[string]int `json:"bySource"`
	Recommendations int            `json:"recommendations"`
}

// ResourceEntry is a resource as the report lists it.
type ResourceEntry struct {
	Address  string `json:"address"`
	Type     string `json:"type"`
	Service  string `json:"service"`
	Provider string `json:"provider"`
	Region   string `json:"region,omitempty"`
	Source   string `json:"source"`
	Location string `json:"location"`
	Count    int    `json:"count"`
	Cost     *Cost  `json:"cost,omitempty"`
}

// CostSummary totals the monthly estimates.
type CostSummary struct {
	Currency       string                 `json:"currency"`
	PriceSource    string                 `json:"priceSource"`
	PriceDate      string                 `json:"priceDate"`
	MonthlyTotal   float64                `json:"monthlyTotal"`
	Unpriced       int                    `json:"unpriced"` // resources whose price is unknown, not in the total
	ByService      map[string]ServiceCost `json:"byService"`
	MonthlySavings float64                `json:"monthlySavings"` // sum of the priced recommendations
}

// ServiceCost is the estimate of one service.
type ServiceCost struct {
	Monthly  float64 `json:"monthly"`
	Priced   int     `json:"priced"`
	Unpriced int     `json:"unpriced"`
}

// Scan walks dir (an absolute path below a root of ws) and returns its inventory.
func Scan(ctx context.Context, ws *workspace.Workspace, dir string) (*Inventory, error) {
	c := NewCollector()
	err := ws.Walk(ctx, dir, func(f workspace.File) error {
		c.Add(f)
		return nil
	})
	if err != nil && !errors.Is(err, workspace.ErrFileLimit) {
		shown := filepath.Base(dir)
		if _, rel, ok := ws.Root(dir); ok {
			shown = rel // the workspace's name for it, not the server's path
		}
		return nil, fmt.Errorf("scan %s: %w", shown, err)
	}
	inv := c.Inventory()
	if errors.Is(err, workspace.ErrFileLimit) {
		inv.Truncated = true
	}
	return inv, nil
}

// awsRegion matches AWS region names (us-east-1, ap-southeast-2, us-gov-west-1), which differ
// from Google's (us-central1, europe-west4).
var awsRegion = regexp.MustCompile(`^[a-z]{2}(-gov)?-[a-z]+-\d+$`)

// providerAliases lets a caller name a provider the way people say it.
var providerAliases = map[string]string{"gcp": "google", "azure": "azurerm", "k8s": "kubernetes", "docker": "compose"}

// Report analyses an inventory: filters, recommendations and, with opts.CostAnalysis, prices.
func (pt *PriceTable) Report(inv *Inventory, opts Options) *Report {
	rep := &Report{
		Service:   opts.Service,
		Region:    opts.Region,
		Errors:    inv.Errors,
		inventory: inv,
		Summary:   Summary{Files: len(inv.Files), ByService: map[string]int{}, BySource: map[string]int{}},
		services:  map[string]string{},
	}
	want := strings.ToLower(opts.Service)
	if a, ok := providerAliases[want]; ok {
		want = a
	}
	idx := map[string]*Resource{}
	excludedNoRegion := 0
	for _, r := range inv.Resources {
		idx[r.Address] = r
		if r.Data {
			continue
		}
		rep.services[r.Service] = r.Provider
		if want != "" && r.Service != want && r.Provider != want {
			continue
		}
		if opts.Region != "" && r.Region != opts.Region {
			// CloudFormation declares no region: it is deployed into the AWS region asked about.
			if r.Region != "" || r.Source != SourceCloudFormation || !awsRegion.MatchString(opts.Region) {
				if r.Region == "" {
					excludedNoRegion++
				}
				continue
			}
		}
		rep.filtered = append(rep.filtered, r)
	}
	if want != "" && len(rep.filtered) == 0 {
		var names []string
		for s := range rep.services {
			names = append(names, s)
		}
		sort.Strings(names)
		rep.Notes = append(rep.Notes, fmt.Sprintf("no resource of service %q; services found: %s", opts.Service, strings.Join(names, ", ")))
	}
	if excludedNoRegion > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d resources that declare no region (Kubernetes, compose, Terraform without a provider region) are left out by the region filter", excludedNoRegion))
	}
	if inv.Truncated {
		rep.Notes = append(rep.Notes, "the workspace has more files than one walk reads: the inventory is incomplete; analyse a sub-folder with path")
	}
	rc := &recommender{all: inv.Resources, prices: pt, fallbackRegion: opts.Region, cost: opts.CostAnalysis}
	for _, r := range rep.filtered {
		rc.check(r)
	}
	sort.SliceStable(rc.out, func(i, j int) bool {
		a, b := rc.out[i], rc.out[j]
		sa, sb := savingOf(a), savingOf(b)
		if sa != sb {
			return sa > sb
		}
		return a.Evidence < b.Evidence
	})
	rep.Recommendations = rc.out
	if rep.Recommendations == nil {
		rep.Recommendations = []Recommendation{}
	}
	var cs *CostSummary
	if opts.CostAnalysis {
		cs = &CostSummary{Currency: pt.Currency, PriceSource: pt.Source, PriceDate: pt.Date, ByService: map[string]ServiceCost{}}
		for _, rec := range rep.Recommendations {
			if rec.MonthlySaving != nil {
				cs.MonthlySavings += *rec.MonthlySaving
			}
		}
		cs.MonthlySavings = math.Round(cs.MonthlySavings*100) / 100
	}
	rep.Resources = []ResourceEntry{}
	for _, r := range rep.filtered {
		e := ResourceEntry{Address: r.Address, Type: r.Type, Service: r.Service, Provider: r.Provider, Region: r.Region,
			Source: r.Source, Location: r.Location(), Count: r.Count}
		rep.Summary.ByService[r.Service]++
		rep.Summary.BySource[r.Source]++
		if cs != nil {
			c := pt.Estimate(r, opts.Region, idx)
			e.Cost = &c
			sc := cs.ByService[r.Service]
			if c.Monthly != nil {
				sc.Monthly = math.Round((sc.Monthly+*c.Monthly)*100) / 100
				cs.MonthlyTotal += *c.Monthly
				sc.Priced++
			} else {
				sc.Unpriced++
				cs.Unpriced++
			}
			cs.ByService[r.Service] = sc
		}
		rep.Resources = append(rep.Resources, e)
	}
	if cs != nil {
		cs.MonthlyTotal = math.Round(cs.MonthlyTotal*100) / 100
		rep.Cost = cs
	}
	rep.Summary.Resources = len(rep.Resources)
	rep.Summary.Recommendations = len(rep.Recommendations)
	return rep
}

func savingOf(r Recommendation) float64 {
	if r.MonthlySaving == nil {
		return -1
	}
	return *r.MonthlySaving
}

// Analyzer is the analyze_cloud_resources tool and the service://infrastructure/cloud
// resource. It is safe for concurrent use.
type Analyzer struct {
	ws     *workspace.Workspace
	prices *PriceTable
	hub    *tools.Hub
	log    *slog.Logger

	mu     sync.Mutex
	latest *Report // of the first root with default options; nil until read or refreshed
}

// New returns the analyzer over ws and starts a watcher that refreshes the resource, and tells
// hub, when a declaration file below a root changes. The watcher stops when ctx ends.
func New(ctx context.Context, ws *workspace.Workspace, hub *tools.Hub, logger *slog.Logger) (*Analyzer, error) {
	pt, err := Prices()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	a := &Analyzer{ws: ws, prices: pt, hub: hub, log: logger}
	if err := a.watch(ctx); err != nil {
		return nil, fmt.Errorf("cloud watcher: %w", err)
	}
	return a, nil
}

// Analyze inventories opts.Path and reports on it.
func (a *Analyzer) Analyze(ctx context.Context, opts Options) (*Report, error) {
	dir, err := a.ws.Resolve("path", opts.Path)
	if err != nil {
		return nil, err
	}
	inv, err := Scan(ctx, a.ws, dir)
	if err != nil {
		return nil, err
	}
	rep := a.prices.Report(inv, opts)
	rep.Path = a.display(dir)
	if opts.HeadRef != "" && opts.BaseRef == "" {
		return nil, tools.InvalidArgument("head_ref", "needs base_ref: the diff goes from base_ref to head_ref")
	}
	if opts.BaseRef != "" {
		priced := opts
		priced.CostAnalysis = true
		head, headName := rep, "working tree"
		if !opts.CostAnalysis {
			head = a.prices.Report(inv, priced)
		}
		if opts.HeadRef != "" {
			hinv, err := scanRevision(ctx, a.ws, dir, opts.HeadRef)
			if err != nil {
				return nil, err
			}
			head, headName = a.prices.Report(hinv, priced), opts.HeadRef
		}
		binv, err := scanRevision(ctx, a.ws, dir, opts.BaseRef)
		if err != nil {
			return nil, err
		}
		rep.CostDiff = diffCosts(a.prices.Report(binv, priced), head, opts.BaseRef, headName)
	}
	return rep, nil
}

func (a *Analyzer) display(dir string) string {
	if _, rel, ok := a.ws.Root(dir); ok {
		return rel
	}
	return dir
}

// Spec describes analyze_cloud_resources.
func (a *Analyzer) Spec() tools.Spec {
	return tools.Spec{
		Name:  "analyze_cloud_resources",
		Title: "Analyze cloud resources",
		Description: "Inventories the cloud resources the workspace declares (Terraform and `terraform show -json` plans, " +
			"CloudFormation/SAM, Kubernetes manifests, docker-compose), estimates their monthly on-demand cost from the " +
			"price table shipped with the server, and recommends optimisations with file:line evidence and their saving. " +
			"With base_ref (a git revision) it adds the cost diff from that version to the working tree or head_ref.",
		InputSchema:  json.RawMessage(inputSchema),
		OutputSchema: json.RawMessage(outputSchema),
	}
}

const inputSchema = `{
  "type": "object",
  "properties": {
    "service": {"type": "string", "maxLength": 64, "description": "Only this service (ec2, ebs, s3, rds, lambda, dynamodb, eks, compute, gcs, cloudsql, kubernetes, compose, ...) or provider (aws, gcp, azure, kubernetes)."},
    "region": {"type": "string", "maxLength": 64, "description": "Only resources in this provider region (e.g. us-east-1); CloudFormation resources are priced in it."},
    "cost_analysis": {"type": "boolean", "default": true, "description": "Estimate monthly cost per resource and service, and the saving of each recommendation."},
    "path": {"type": "string", "maxLength": 4096, "description": "Folder or file below the workspace to analyse (default: the workspace root)."},
    "base_ref": {"type": "string", "maxLength": 256, "description": "A git revision (branch, tag, commit, HEAD~1): adds costDiff, the monthly estimate's change from this version of the folder to head_ref or the working tree."},
    "head_ref": {"type": "string", "maxLength": 256, "description": "With base_ref: the git revision to compare with instead of the working tree."}
  },
  "additionalProperties": false
}`

const outputSchema = `{
  "type": "object",
  "required": ["path", "summary", "resources", "recommendations"],
  "properties": {
    "path": {"type": "string"},
    "summary": {"type": "object"},
    "resources": {"type": "array", "items": {"type": "object", "required": ["address", "type", "service", "location"]}},
    "recommendations": {"type": "array", "items": {"type": "object", "required": ["id", "resource", "evidence", "action"]}},
    "cost": {"type": "object"},
    "costDiff": {"type": "object", "description": "with base_ref: totals of both versions, their delta, and the resources added, removed or repriced"},
    "errors": {"type": "array", "description": "declaration files that did not parse (file, line, message); bound names the reading limit a file passed (size, depth, alias nodes, expanded size), whose resources are then left out"},
    "notes": {"type": "array", "items": {"type": "string"}}
  }
}`

type callArgs struct {
	Service      string `json:"service"`
	Region       string `json:"region"`
	CostAnalysis *bool  `json:"cost_analysis"`
	Path         string `json:"path"`
	BaseRef      string `json:"base_ref"`
	HeadRef      string `json:"head_ref"`
}

// Call runs analyze_cloud_resources.
func (a *Analyzer) Call(ctx context.Context, raw json.RawMessage) (any, error) {
	var args callArgs
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, tools.InvalidArgument("arguments", "%v", err)
		}
	}
	opts := Options{Path: args.Path, Service: args.Service, Region: args.Region, CostAnalysis: true, BaseRef: args.BaseRef, HeadRef: args.HeadRef}
	if args.CostAnalysis != nil {
		opts.CostAnalysis = *args.CostAnalysis
	}
	return a.Analyze(ctx, opts)
}

// Info describes service://infrastructure/cloud.
func (a *Analyzer) Info() tools.ResourceInfo {
	return tools.ResourceInfo{
		URI:         URI,
		Name:        "Cloud Infrastructure",
		Description: "Inventory, monthly estimate and recommendations of the cloud resources the workspace declares; updated when a declaration file changes.",
		MIMEType:    "application/json",
	}
}

// Read returns the latest inventory and estimate of the first workspace root.
func (a *Analyzer) Read(ctx context.Context) (any, error) {
	a.mu.Lock()
	rep := a.latest
	a.mu.Unlock()
	if rep != nil {
		return rep, nil
	}
	return a.refresh(ctx)
}

// refresh recomputes the resource and reports whether it changed.
func (a *Analyzer) refresh(ctx context.Context) (*Report, error) {
	rep, err := a.Analyze(ctx, Options{CostAnalysis: true})
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.latest = rep
	a.mu.Unlock()
	return rep, nil
}
