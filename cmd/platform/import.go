package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/platform-dev/platform/tenant"
)

func newImportCmd() *cobra.Command {
	var (
		cfg     transferConfig
		input   string
		replace bool
	)
	cmd := &cobra.Command{
		Use:   "import [-f file.jsonl]",
		Short: "Create a project and its records from a `platform export`",
		Long: "Read a `platform export` and write the project's records, with their uid, owner and times, into the " +
			"embedded store (--data) or MongoDB (--mongodb-uri), then store its document. Records are written beside " +
			"the project's tables and take their place in one step once the whole export has been read and checked, so " +
			"an export that is cut or refused changes nothing. The project's tables must be empty unless --replace is " +
			"given, which replaces their records. A running server serves the imported records at once, and a changed " +
			"document once its cache refreshes (--project-cache-refresh). With --server it sends the export to a running " +
			"server's admin API instead (POST /admin/v1/projects/{id}/import), with an operator key or the project's admin key.",
		Args: cobra.NoArgs,
	}
	envErr := bindAll(cmd.Flags(), cfg.settings())
	cmd.Flags().StringVarP(&input, "file", "f", "-", "export to read (- for standard input)")
	cmd.Flags().BoolVar(&replace, "replace", false, "replace the records of the tables the export holds, and the project's document")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if envErr != nil {
			return envErr
		}
		in := cmd.InOrStdin()
		if input != "-" {
			f, err := os.Open(input)
			if err != nil {
				return fmt.Errorf("read export: %w", err)
			}
			defer f.Close()
			in = f
		}
		progress := newProgress(printLines(cmd.ErrOrStderr()), "imported")
		if cfg.Server != "" {
			return importRemote(cmd.Context(), cfg, in, replace, progress)
		}
		stores, err := cfg.open(cmd.Context(), cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		defer stores.Close(context.WithoutCancel(cmd.Context()))
		id, err := tenant.Import(cmd.Context(), stores, in, tenant.ImportOptions{Replace: replace, Who: "platform import", Progress: progress.add})
		what := "+ records of " + input
		if replace {
			what = "~ records replaced by " + input
		}
		if aerr := tenant.AuditLocal(cmd.Context(), stores, "import", id, input, []string{what}, err); err == nil && aerr != nil {
			return aerr
		}
		if err != nil {
			return err
		}
		progress.done("project " + id)
		return nil
	}
	return cmd
}
