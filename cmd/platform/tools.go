package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/code"
	"github.com/platform-dev/platform/tools/workspace"
)

// buildTools assembles the analyses the MCP server offers, all reading below the same
// workspace roots. The returned function stops their watchers.
func buildTools(ctx context.Context, cfg serveConfig, hub *tools.Hub, logger *slog.Logger) (tools.Set, func(), error) {
	ws, err := workspace.New(splitList(cfg.Workspace)...)
	if err != nil {
		return tools.Set{}, nil, err
	}
	codeA, err := code.New(ctx, ws, hub, logger.With("tool", "code"))
	if err != nil {
		return tools.Set{}, nil, err
	}
	set := tools.Set{Tools: codeA.Tools(), Resources: []tools.Resource{codeA.Resource()}}
	closeAll := func() {
		if err := errors.Join(codeA.Close()); err != nil {
			logger.Warn("stop tools", "err", err)
		}
	}
	logger.Info("mcp tools ready", "workspace", ws.Roots(), "tools", len(set.Tools))
	return set, closeAll, nil
}
