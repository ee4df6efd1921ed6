package main

import (
	"bytes"
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
}

func (c *applyConfig) settings() []setting {
	return []setting{
		stringSetting(&c.Server, "server", "PLATFORM_SERVER", "http://localhost:8080", "the service's apex URL"),
		stringSetting(&c.Token, "admin-token", "PLATFORM_ADMIN_TOKEN", "", "admin API token; empty: read <data>/admin-token"),
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
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if envErr != nil {
			return envErr
		}
		token, err := applyToken(cfg)
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := applyFile(cmd.Context(), cmd.OutOrStdout(), cmd.InOrStdin(), cfg, token, f); err != nil {
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
func applyFile(ctx context.Context, out io.Writer, stdin io.Reader, cfg applyConfig, token, file string) error {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, tenant.MaxDocumentBytes+1))
	} else {
		data, err = os.ReadFile(file)
	}
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
	endpoint, err := url.JoinPath(cfg.Server, "/admin/v1/projects", p.ID)
	if err != nil {
		return fmt.Errorf("server URL %q: %w", cfg.Server, err)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("User-Agent", userAgent("apply"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("apply %s: %w", file, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("apply %s: read answer: %w", file, err)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		var eb tenant.ErrorBody
		if json.Unmarshal(raw, &eb) == nil && len(eb.Errors) > 0 {
			return fmt.Errorf("apply %s: %s: %s", file, resp.Status, eb.Errors[0].Message)
		}
		return fmt.Errorf("apply %s: %s: %s", file, resp.Status, bytes.TrimSpace(raw))
	}
	var res tenant.PutResult
	if err := json.Unmarshal(raw, &res); err != nil || res.Project == nil {
		return errors.Join(fmt.Errorf("apply %s: unexpected answer from %s", file, endpoint), err)
	}
	fmt.Fprintf(out, "project %s %s (version %d)\n", res.Project.ID, tenant.ApplyOutcome(res.Created, res.Changes), res.Project.Version)
	for _, c := range res.Changes {
		fmt.Fprintf(out, "  %s\n", c)
	}
	return nil
}
