package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/platform-dev/platform/tenant"
)

// The history commands speak to a running server's admin API, as apply does: the server
// applies a rollback through the checks every document passes, and tells its replicas.

// adminCmd is a command that speaks to a running server's admin API: the apply settings
// (server, token, timeout); run is called once they are read.
func adminCmd(use, short string, run func(cmd *cobra.Command, cfg applyConfig) error) (*cobra.Command, *applyConfig) {
	var cfg applyConfig
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs}
	envErr := bindAll(cmd.Flags(), cfg.settings())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if envErr != nil {
			return envErr
		}
		return run(cmd, cfg)
	}
	return cmd, &cfg
}

// projectAdminCmd is an adminCmd about one project, which --project names.
func projectAdminCmd(use, short string, run func(cmd *cobra.Command, cfg applyConfig, project string) error) (*cobra.Command, *applyConfig) {
	var project string
	cmd, cfg := adminCmd(use, short, func(cmd *cobra.Command, cfg applyConfig) error { return run(cmd, cfg, project) })
	cmd.Flags().StringVar(&project, "project", "", "id of the project")
	_ = cmd.MarkFlagRequired("project")
	return cmd, cfg
}

func newVersionsCmd() *cobra.Command {
	cmd, _ := projectAdminCmd("versions --project ID", "List every applied version of a project's document: when, who, and what changed",
		func(cmd *cobra.Command, cfg applyConfig, project string) error {
			var h tenant.ProjectHistory
			if err := adminCall(cmd.Context(), cfg, "versions", http.MethodGet, "/admin/v1/projects/"+url.PathEscape(project)+"/versions", nil, &h); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if h.Deleted {
				fmt.Fprintf(out, "project %s is deleted (platform undelete --project %s brings it back)\n", h.Project, h.Project)
			}
			for _, v := range h.Versions {
				who := v.Who
				if who == "" {
					who = "(before history was kept)"
				}
				fmt.Fprintf(out, "version %d  %s  %s\n", v.Version, v.AppliedAt, who)
				for _, c := range v.Changes {
					fmt.Fprintf(out, "  %s\n", c)
				}
			}
			return nil
		})
	return cmd
}

func newRollbackCmd() *cobra.Command {
	var to int64
	cmd, cfg := projectAdminCmd("rollback --project ID --to N", "Apply version N of a project's document again, as a new version, and print what changed",
		func(cmd *cobra.Command, cfg applyConfig, project string) error {
			var raw json.RawMessage
			path := "/admin/v1/projects/" + url.PathEscape(project) + "/rollback?to=" + strconv.FormatInt(to, 10)
			if q := cfg.query(); q != "" {
				path += "&" + q[1:]
			}
			if err := adminCall(cmd.Context(), cfg, "rollback", http.MethodPost, path, nil, &raw); err != nil {
				return err
			}
			return printApplied(cmd.OutOrStdout(), "rollback", cfg, raw, func(res tenant.PutResult) string {
				if len(res.Changes) == 0 {
					return "unchanged: version " + strconv.FormatInt(to, 10) + " is the current document"
				}
				return "rolled back to version " + strconv.FormatInt(to, 10)
			})
		})
	cmd.Long = "Apply version N of a project's document (see `platform versions`) again through the admin API: it passes " +
		"every check a new document passes, and becomes a new version. A deleted project is brought back first " +
		"with `platform undelete`."
	cmd.Flags().Int64Var(&to, "to", 0, "the version to apply again")
	_ = cmd.MarkFlagRequired("to")
	cmd.Flags().BoolVar(&cfg.DryRun, "dry-run", false, "print what rolling back would change and do to the records, and what in them refuses it; apply nothing")
	cmd.Flags().BoolVar(&cfg.DropData, "drop-data", false, "let a table the version does not have go, dropping its records")
	return cmd
}

func newUndeleteCmd() *cobra.Command {
	cmd, _ := projectAdminCmd("undelete --project ID", "Bring back a project deleted without purge, with its document, history and records",
		func(cmd *cobra.Command, cfg applyConfig, project string) error {
			var res struct {
				Project *tenant.Project `json:"project"`
			}
			if err := adminCall(cmd.Context(), cfg, "undelete", http.MethodPost, "/admin/v1/projects/"+url.PathEscape(project)+"/undelete", nil, &res); err != nil {
				return err
			}
			if res.Project == nil {
				return fmt.Errorf("undelete %s: unexpected answer", project)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "project %s restored (version %d)\n", res.Project.ID, res.Project.Version)
			return nil
		})
	return cmd
}

// userAgent names the platform command that sends an admin request, for the history.
func userAgent(command string) string { return "platform/" + version + " (" + command + ")" }

// adminCall sends an admin API request for command, with a JSON body or none, and decodes a
// 2xx answer into out (or hands it over as it is into a *[]byte); an error answer becomes an error with its message.
func adminCall(ctx context.Context, cfg applyConfig, command, method, path string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	var rd io.Reader
	contentType := ""
	if body != nil {
		rd, contentType = bytes.NewReader(body), "application/json"
	}
	resp, err := adminRequest(ctx, cfg, command, method, path, rd, contentType)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%s: read answer: %w", command, err)
	}
	if b, ok := out.(*[]byte); ok { // an answer that is not one JSON value (JSON Lines)
		*b = raw
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: unexpected answer: %w", command, err)
	}
	return nil
}

// adminRequest sends an admin API request for command with body (of contentType) or none,
// and answers a 2xx answer for the caller to read and close; an error answer becomes an error
// with its message. command's first word names the command in the User-Agent, which the
// history records.
func adminRequest(ctx context.Context, cfg applyConfig, command, method, path string, body io.Reader, contentType string) (*http.Response, error) {
	token, err := applyToken(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(cfg.Server, "/")+path, body)
	if err != nil {
		return nil, fmt.Errorf("server URL %q: %w", cfg.Server, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("User-Agent", userAgent(strings.Fields(command)[0]))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", command, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: read answer: %w", command, resp.Status, err)
	}
	var eb tenant.ErrorBody
	if json.Unmarshal(raw, &eb) == nil && len(eb.Errors) > 0 {
		return nil, fmt.Errorf("%s: %s: %s", command, resp.Status, eb.Errors[0].Message)
	}
	return nil, fmt.Errorf("%s: %s: %s", command, resp.Status, bytes.TrimSpace(raw))
}
