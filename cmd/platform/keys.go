package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/platform-dev/platform/tenant"
)

// The keys and audit commands speak to a running server's admin API, as apply does, with
// the admin token or an operator key whose scope allows them.

func newKeysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Create, list and revoke operator keys (scopes: operator, operator:read, project:<id>:admin, project:<id>:read)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newKeysCreateCmd(), newKeysListCmd(), newKeysRevokeCmd())
	return cmd
}

func newKeysCreateCmd() *cobra.Command {
	var name, scope string
	var expires time.Duration
	cmd, _ := adminCmd("create --name N --scope S [--expires 720h]", "Create a key and print it: it is shown this once, and the server keeps only its hash",
		func(cmd *cobra.Command, cfg applyConfig) error {
			req := map[string]string{"name": name, "scope": scope}
			if expires != 0 {
				req["expiresIn"] = expires.String()
			}
			body, err := json.Marshal(req)
			if err != nil {
				return err
			}
			var k tenant.NewKey
			if err := adminCall(cmd.Context(), cfg, "keys create", http.MethodPost, "/admin/v1/keys", body, &k); err != nil {
				return err
			}
			expiry := "never expires"
			if k.ExpiresAt != "" {
				expiry = "expires " + k.ExpiresAt
			}
			fmt.Fprintf(cmd.OutOrStdout(), "key %s created (scope %s, %s)\n%s\n", k.Name, k.Scope, expiry, k.Key)
			fmt.Fprintln(cmd.ErrOrStderr(), "Keep the key now: it is not shown again.")
			return nil
		})
	cmd.Flags().StringVar(&name, "name", "", "name of the key, as lists and the audit log show it")
	cmd.Flags().StringVar(&scope, "scope", "", "operator, operator:read, project:<id>:admin or project:<id>:read")
	cmd.Flags().DurationVar(&expires, "expires", 0, "lifetime of the key (720h); 0: it does not expire")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("scope")
	return cmd
}

func newKeysListCmd() *cobra.Command {
	cmd, _ := adminCmd("list", "List the keys: name, scope, created, expires, last used (never the keys)",
		func(cmd *cobra.Command, cfg applyConfig) error {
			var list struct{ Keys []tenant.KeyInfo }
			if err := adminCall(cmd.Context(), cfg, "keys list", http.MethodGet, "/admin/v1/keys", nil, &list); err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tSCOPE\tCREATED\tEXPIRES\tLAST USED")
			for _, k := range list.Keys {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", k.Name, k.Scope, k.CreatedAt, cmp.Or(k.ExpiresAt, "never"), cmp.Or(k.LastUsed, "never"))
			}
			return w.Flush()
		})
	return cmd
}

func newKeysRevokeCmd() *cobra.Command {
	var name string
	cmd, _ := adminCmd("revoke --name N", "Revoke a key: every replica refuses it within a second, and the console sessions it opened end",
		func(cmd *cobra.Command, cfg applyConfig) error {
			var out struct{ Revoked tenant.KeyInfo }
			if err := adminCall(cmd.Context(), cfg, "keys revoke", http.MethodDelete, "/admin/v1/keys/"+url.PathEscape(name), nil, &out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "key %s revoked (scope %s)\n", out.Revoked.Name, out.Revoked.Scope)
			return nil
		})
	cmd.Flags().StringVar(&name, "name", "", "name of the key")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func newAuditCmd() *cobra.Command {
	var project, since string
	var raw bool
	cmd, _ := adminCmd("audit [--project X] [--since 24h]", "Print the audit log: every change through the admin API and the console, made or refused, oldest first",
		func(cmd *cobra.Command, cfg applyConfig) error {
			q := url.Values{}
			if project != "" {
				q.Set("project", project)
			}
			if since != "" {
				q.Set("since", since)
			}
			var body []byte
			if err := adminCall(cmd.Context(), cfg, "audit", http.MethodGet, "/admin/v1/audit?"+q.Encode(), nil, &body); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if raw {
				_, err := out.Write(body)
				return err
			}
			sc := bufio.NewScanner(bytes.NewReader(body))
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			for sc.Scan() {
				var l tenant.AuditLine
				if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
					return fmt.Errorf("audit: unexpected line %q: %w", sc.Text(), err)
				}
				what := strings.TrimSpace(l.Action + " " + l.Project + " " + l.Target)
				fmt.Fprintf(out, "%s  %s (%s)  %s  %s  %s\n", l.At, l.Key, l.Scope, l.Client, what, l.Outcome)
				for _, d := range l.Diff {
					fmt.Fprintf(out, "  %s\n", d)
				}
			}
			return sc.Err()
		})
	cmd.Flags().StringVar(&project, "project", "", "only the changes of this project")
	cmd.Flags().StringVar(&since, "since", "", "only the changes since this RFC 3339 time, or this long ago (24h)")
	cmd.Flags().BoolVar(&raw, "jsonl", false, "print the entries as the API answers them, one JSON object a line")
	return cmd
}
