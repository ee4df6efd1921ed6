package code

import "context"

// CodebaseOptions are analyze_codebase's arguments for callers in Go; zero Depth and Limit
// take the tool's defaults.
type CodebaseOptions struct {
	Path     string // below a workspace root; "" for the first root
	Language string // a Linguist name, "" for all
	Depth    int
	Limit    int
}

// Codebase answers what analyze_codebase answers, for other analyses (consult_expert) that
// call it from Go.
func (a *Analyzer) Codebase(ctx context.Context, o CodebaseOptions) (*CodebaseReport, error) {
	args := analyzeArgs{Path: o.Path, Language: o.Language, Depth: defaultDepth, Limit: defaultLimit}
	if o.Depth != 0 {
		args.Depth = count(o.Depth)
	}
	if o.Limit != 0 {
		args.Limit = count(o.Limit)
	}
	return a.codebase(ctx, args)
}

// PatternOptions are detect_patterns' arguments for callers in Go; "" Scope is project and
// zero Limit the tool's default.
type PatternOptions struct {
	Scope       string // file, directory or project
	Path        string
	PatternType string // architectural, design, anti-pattern or a pattern's name; "" for all
	Limit       int
}

// Patterns answers what detect_patterns answers, for callers in Go.
func (a *Analyzer) Patterns(ctx context.Context, o PatternOptions) (*PatternReport, error) {
	args := patternsArgs{Scope: o.Scope, Path: o.Path, PatternType: o.PatternType, Limit: defaultLimit}
	if args.Scope == "" {
		args.Scope = "project"
	}
	if o.Limit != 0 {
		args.Limit = count(o.Limit)
	}
	return a.patterns(ctx, args)
}
