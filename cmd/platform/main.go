// Command platform is the one binary of the service: `serve` runs it, `apply` provisions a
// project from a document, `versions`, `rollback` and `undelete` read and restore its
// history, `export` and `import` move a project with its records between stores, `restore`
// brings one back from a backup, `token` mints development tokens, `version` tells the build.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"
)

// version is the service's release; the MCP server reports it in service://system/health.
const version = "0.1.0"

func main() {
	if err := newRootCmd().ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "platform:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "platform",
		Short:         "GraphQL APIs for many projects, and a public MCP server, in one binary",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCmd(), newApplyCmd(), newVersionsCmd(), newRollbackCmd(), newProjectsCmd(), newUndeleteCmd(), newQuotasCmd(), newDocumentsCmd(), newExportCmd(), newImportCmd(), newRestoreCmd(), newVersionCmd(), newReferenceCmd(), newTokenCmd(), newHealthcheckCmd(), newKeysCmd(), newAuditCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "platform %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	}
}
