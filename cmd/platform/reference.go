package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// referenceEntry is one row of the configuration reference.
type referenceEntry struct {
	Command string `json:"command"`
	Flag    string `json:"flag"`
	Env     string `json:"env,omitempty"`
	Default string `json:"default"`
	Help    string `json:"help"`
}

func configReference() []referenceEntry {
	var out []referenceEntry
	add := func(command string, settings []setting) {
		for _, s := range settings {
			out = append(out, referenceEntry{Command: command, Flag: "--" + s.flag, Env: s.env, Default: s.def, Help: s.help})
		}
	}
	add("serve", (&serveConfig{}).settings())
	add("apply / versions / rollback / undelete / quotas / documents", (&applyConfig{}).settings())
	add("export / import", (&transferConfig{}).settings())
	add("restore", append((&storeConfig{}).settings(), (&backupTargetConfig{}).settings()...))
	return out
}

func newReferenceCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "config-reference",
		Short: "Print every flag and environment variable (markdown or json); docs/operations.md embeds it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch format {
			case "markdown":
				writeReferenceMarkdown(cmd.OutOrStdout(), configReference())
				return nil
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(configReference())
			}
			return fmt.Errorf("format %q: want markdown or json", format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "markdown", "markdown or json")
	return cmd
}

func writeReferenceMarkdown(w io.Writer, entries []referenceEntry) {
	command := ""
	for _, e := range entries {
		if e.Command != command {
			command = e.Command
			fmt.Fprintf(w, "\n### platform %s\n\n| flag | environment | default | meaning |\n|---|---|---|---|\n", command)
		}
		def := e.Default
		if def == "" {
			def = "(empty)"
		}
		env := e.Env
		if env == "" {
			env = "-"
		}
		fmt.Fprintf(w, "| `%s` | `%s` | `%s` | %s |\n", e.Flag, env, def, strings.ReplaceAll(e.Help, "|", "\\|"))
	}
}
