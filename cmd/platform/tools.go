package main

import (
	"context"
	"log/slog"

	"github.com/platform-dev/platform/tools"
)

// buildTools assembles the analyses the MCP server offers, reading below the workspace roots.
func buildTools(ctx context.Context, cfg serveConfig, hub *tools.Hub, logger *slog.Logger) (tools.Set, func(), error) {
	return tools.Set{}, func() {}, nil
}
