package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/platform-dev/platform/tenant"
)

// newTokenCmd mints a token from the development issuer whose key `serve` keeps in the data
// folder, for projects that trust it (the demo project does).
func newTokenCmd() *cobra.Command {
	var (
		project, sub, claims string
		ttl                  time.Duration
		stores               storeConfig
	)
	cmd := &cobra.Command{
		Use:   "token --project demo --sub alice",
		Short: "Print a development token for a project that trusts the development issuer",
		Long: "Print an ID token signed by the development issuer (its key is in the data folder), " +
			"with iss " + tenant.DevIssuerName + ", aud the project id and sub the given subject. " +
			"Send it as Authorization: Bearer <token> to <project>.<domain>/api/v1/graphql.",
		Args: cobra.NoArgs,
	}
	envErr := bindAll(cmd.Flags(), stores.settings())
	fs := cmd.Flags()
	fs.StringVar(&project, "project", tenant.DemoProjectID, "project id (the token's audience)")
	fs.StringVar(&sub, "sub", "", "subject: the caller's id, stored as the owner of the records it creates")
	fs.DurationVar(&ttl, "ttl", time.Hour, "lifetime of the token")
	fs.StringVar(&claims, "claims", "", "extra claims as a JSON object, for custom access rules")
	_ = cmd.MarkFlagRequired("sub")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if envErr != nil {
			return envErr
		}
		var extra map[string]any
		if claims != "" {
			if err := json.Unmarshal([]byte(claims), &extra); err != nil {
				return fmt.Errorf("--claims: want a JSON object such as {\"role\":\"admin\"}: %w", err)
			}
		}
		// A token for a project that does not exist, or does not trust the issuer, would only
		// be refused later by the API, with less to say about why.
		st, err := stores.open(cmd.Context(), cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		err = tenant.CheckDevTokenProject(cmd.Context(), st.Projects(), project)
		if cerr := st.Close(context.WithoutCancel(cmd.Context())); err == nil && cerr != nil {
			return fmt.Errorf("close stores: %w", cerr)
		}
		if err != nil {
			return err
		}
		iss, err := tenant.LoadDevIssuer(stores.DataDir)
		if err != nil {
			return err
		}
		tok, err := iss.Mint(project, sub, ttl, extra)
		if err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), tok)
		return nil
	}
	return cmd
}
