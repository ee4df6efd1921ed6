package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform-dev/platform/pressure"
	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/cloud"
	"github.com/platform-dev/platform/tools/code"
	"github.com/platform-dev/platform/tools/expert"
	"github.com/platform-dev/platform/tools/security"
	"github.com/platform-dev/platform/tools/workspace"
)

// buildTools assembles the six analyses the MCP server offers, in the seed's order, all
// reading below the same workspace roots. The returned function stops their watchers (the
// cloud watcher also stops with ctx).
func buildTools(ctx context.Context, cfg serveConfig, cores int, hub *tools.Hub, reg prometheus.Registerer, logger *slog.Logger) (tools.Set, func(), error) {
	ws, err := workspace.New(splitList(cfg.Workspace)...)
	if err != nil {
		return tools.Set{}, nil, err
	}
	// The default workspace (.) holds the default data folder (./data): its live databases,
	// backups and admin token are never the tools' to read (see WithHidden).
	ws = ws.WithHidden(cfg.DataDir, cfg.Backup.Dir)
	codeA, err := code.New(ctx, ws, hub, logger.With("tool", "code"))
	if err != nil {
		return tools.Set{}, nil, err
	}
	stop := func() {
		if err := codeA.Close(); err != nil {
			logger.Warn("stop code analysis", "err", err)
		}
	}
	fail := func(err error) (tools.Set, func(), error) {
		stop()
		return tools.Set{}, nil, err
	}
	cloudA, err := cloud.New(ctx, ws, hub, logger.With("tool", "cloud"))
	if err != nil {
		return fail(err)
	}
	sec, err := security.New(ws, logger.With("tool", "security"))
	if err != nil {
		return fail(err)
	}
	stopCode := stop
	stop = func() {
		stopCode()
		sec.Close() // the IaC helper process
	}
	codeTools := codeA.Tools()
	ex, err := expert.New(expert.Config{URL: cfg.ExpertURL, Model: cfg.ExpertModel, APIKey: cfg.ExpertAPIKey, Timeout: cfg.ExpertTimeout},
		ws, expert.Sources{Security: sec, Cloud: cloudA, Code: codeA}, logger.With("tool", "expert"))
	if err != nil {
		return fail(err)
	}
	budget, err := analysisBudget(cfg, cores, reg)
	if err != nil {
		return fail(err)
	}
	set := budget.Apply(tools.Set{
		Tools:     append(codeTools, cloudA, sec, ex),
		Resources: []tools.Resource{codeA.Resource(), cloudA},
	})
	logger.Info("mcp tools ready", "workspace", ws.Roots(), "tools", len(set.Tools), "expert_model", cfg.ExpertModel != "" && cfg.ExpertURL != "")
	return set, stop, nil
}

// analysisBudget bounds the analyses as --mcp-analyses, --mcp-analysis-queue and
// --mcp-analysis-memory say. With --role all they run beside the projects' requests, which
// come first: one core is left to the requests, and the analyses run on threads of lower
// priority.
func analysisBudget(cfg serveConfig, cores int, reg prometheus.Registerer) (*tools.Budget, error) {
	maxMemory, err := pressure.ParseBytes(cfg.MCPAnalysisMemory)
	if err != nil {
		return nil, fmt.Errorf("--mcp-analysis-memory or MCP_ANALYSIS_MEMORY: %w", err)
	}
	bc := tools.BudgetConfig{Workers: cfg.MCPAnalyses, Queue: cfg.MCPAnalysisQueue, MaxMemory: maxMemory, Registerer: reg}
	if cfg.Role == roleAll {
		bc.Run = pressure.InBackground
		if bc.Workers == 0 {
			bc.Workers = max(1, cores-1)
		}
	}
	b, err := tools.NewBudget(bc)
	if err != nil {
		return nil, fmt.Errorf("--mcp-analyses, --mcp-analysis-queue: %w", err)
	}
	return b, nil
}
