package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/platform-dev/platform/tenant"
)

type applyConfig struct {
	Server, Token, DataDir string
	Timeout                time.Duration
	// DryRun and DropData are the admin API's dryRun and dropData (per run, not settings).
	DryRun, DropData bool
}

func (c *applyConfig) settings() []setting {
	return []setting{
		stringSetting(&c.Server, "server", "PLATFORM_SERVER", "http://localhost:8080", "the service's apex URL"),
		stringSetting(&c.Token, "admin-token", "PLATFORM_ADMIN_TOKEN", "", "admin API token or operator key; empty: read <data>/admin-token"),
		stringSetting(&c.DataDir, "data", "PLATFORM_DATA", "./data", "data folder of a local `serve`, where its generated admin token is"),
		durationSetting(&c.Timeout, "timeout", "PLATFORM_APPLY_TIMEOUT", 30*time.Second, "time one request may take"),
	}
}

func newApplyCmd() *cobra.Command {
	var cfg applyConfig
	var files []string
	cmd := &cobra.Command{
		Use:   "apply -f project.yaml [-f other.yaml]",
		Short: "Create or replace projects from YAML or JSON documents, and print what changed",
		Args:  cobra.NoArgs,
	}
	envErr := bindAll(cmd.Flags(), cfg.settings())
	cmd.Flags().StringArrayVarP(&files, "file", "f", nil, "project document (YAML or JSON; - for standard input)")
	_ = cmd.MarkFlagRequired("file")
	cmd.Flags().BoolVar(&cfg.DryRun, "dry-run", false, "print what applying would change and do to the records, and what in them refuses it; apply nothing")
	cmd.Flags().BoolVar(&cfg.DropData, "drop-data", false, "let a removed table that holds records go, dropping its records")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if envErr != nil {
			return envErr
		}
		// A missing token is said once, before any file is read.
		if _, err := applyToken(cfg); err != nil {
			return err
		}
		for _, f := range files {
			if err := applyFile(cmd.Context(), cmd.OutOrStdout(), cmd.InOrStdin(), cfg, f); err != nil {
				return err
			}
		}
		return nil
	}
	return cmd
}

func applyToken(cfg applyConfig) (string, error) {
	if cfg.Token != "" {
		return cfg.Token, nil
	}
	b, err := os.ReadFile(filepath.Join(cfg.DataDir, "admin-token"))
	if err != nil {
		return "", fmt.Errorf("no admin token: set --admin-token or PLATFORM_ADMIN_TOKEN (a local serve keeps one in %s)", filepath.Join(cfg.DataDir, "admin-token"))
	}
	return strings.TrimSpace(string(b)), nil
}

// applyFile validates a document locally (so YAML mistakes are reported with their line) and
// sends it to the admin API, which validates it again: the server is the authority.
func applyFile(ctx context.Context, out io.Writer, stdin io.Reader, cfg applyConfig, file string) error {
	in := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("read %s: %w", file, err)
		}
		defer f.Close()
		in = f
	}
	// One byte past the bound is enough for ParseDocument to refuse the document by its size.
	data, err := io.ReadAll(io.LimitReader(in, tenant.MaxDocumentBytes+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	p, err := tenant.ParseDocument(data)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	body, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	var raw json.RawMessage
	if err := adminCall(ctx, cfg, "apply "+file, http.MethodPut, "/admin/v1/projects/"+url.PathEscape(p.ID)+cfg.query(), body, &raw); err != nil {
		return err
	}
	return printApplied(out, "apply "+file, cfg, raw, func(res tenant.PutResult) string {
		return tenant.ApplyOutcome(res.Created, res.Changes)
	})
}

// query is the admin API's query of an apply or a rollback run with cfg.
func (c applyConfig) query() string {
	q := url.Values{}
	if c.DryRun {
		q.Set("dryRun", "true")
	}
	if c.DropData {
		q.Set("dropData", "true")
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// printApplied prints the answer of an apply or a rollback: the project's outcome, then its
// changes and what they do to the records; a dry run's as printDryRun does.
func printApplied(out io.Writer, command string, cfg applyConfig, raw []byte, outcome func(tenant.PutResult) string) error {
	if cfg.DryRun {
		return printDryRun(out, command, raw)
	}
	var res tenant.PutResult
	if err := json.Unmarshal(raw, &res); err != nil || res.Project == nil {
		return errors.Join(fmt.Errorf("%s: unexpected answer", command), err)
	}
	fmt.Fprintf(out, "project %s %s (version %d)\n", res.Project.ID, outcome(res), res.Project.Version)
	printIndented(out, res.Changes, res.Data, res.Warnings)
	return nil
}

// printDryRun prints a dry run's answer as an apply prints its own; the records' problems
// fail the command, as the apply would.
func printDryRun(out io.Writer, command string, raw []byte) error {
	var res tenant.DryRunResult
	if err := json.Unmarshal(raw, &res); err != nil || !res.DryRun || res.Project == nil {
		return errors.Join(fmt.Errorf("%s --dry-run: unexpected answer", command), err)
	}
	fmt.Fprintf(out, "project %s would be %s (dry run: nothing applied)\n", res.Project.ID, tenant.ApplyOutcome(res.Created, res.Changes))
	printIndented(out, res.Changes, res.Data, res.Warnings)
	if len(res.Problems) == 0 {
		return nil
	}
	fmt.Fprintf(out, "the records refuse it:\n")
	for _, p := range res.Problems {
		fmt.Fprintf(out, "  %s: %s\n", p.Path, p.Message)
	}
	return fmt.Errorf("%s --dry-run: the records refuse the document", command)
}

// printIndented prints the lines of an apply's answer, indented.
func printIndented(out io.Writer, lists ...[]string) {
	for _, l := range lists {
		for _, line := range l {
			fmt.Fprintf(out, "  %s\n", line)
		}
	}
}
