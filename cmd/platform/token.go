package main

import (
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
		project, sub, dataDir, claims string
		ttl                           time.Duration
	)
	cmd := &cobra.Command{
		Use:   "token --project demo --sub alice",
		Short: "Print a development token for a project that trusts the development issuer",
		Long: "Print an ID token signed by the development issuer (its key is in the data folder), " +
			"with iss " + tenant.DevIssuerName + ", aud the project id and sub the given subject. " +
			"Send it as Authorization: Bearer <token> to <project>.<domain>/api/v1/graphql.",
		Args: cobra.NoArgs,
	}
	envErr := bindAll(cmd.Flags(), []setting{
		stringSetting(&dataDir, "data", "PLATFORM_DATA", "./data", "data folder of the serve process whose development issuer signs the token"),
	})
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
		iss, err := tenant.LoadDevIssuer(dataDir)
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
