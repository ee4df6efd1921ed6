package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/platform-dev/platform/tenant"
)

// newProjectsCmd lists the projects with their usage, through a running server's admin API.
func newProjectsCmd() *cobra.Command {
	var sort, from, to string
	var limit int
	cmd, _ := adminCmd("projects [--sort usage] [--limit N] [--from DAY] [--to DAY]", "List the projects with their usage (last 30 days by default); --sort usage lists the heaviest first",
		func(cmd *cobra.Command, cfg applyConfig) error {
			q := url.Values{}
			for k, v := range map[string]string{"from": from, "to": to, "sort": sort} {
				if v != "" {
					q.Set(k, v)
				}
			}
			q.Set("limit", strconv.Itoa(tenant.MaxUsageList))
			if sort != "" {
				q.Set("limit", strconv.Itoa(limit))
			}
			var listing tenant.UsageListing
			if err := adminCall(cmd.Context(), cfg, "projects", http.MethodGet, "/admin/v1/usage?"+q.Encode(), nil, &listing); err != nil {
				return err
			}
			rows := listing.Projects
			if sort == "" {
				// Every project, by id, with what it used (nothing for those not in the listing).
				var all struct {
					Projects []tenant.ProjectSummary `json:"projects"`
				}
				if err := adminCall(cmd.Context(), cfg, "projects", http.MethodGet, "/admin/v1/projects", nil, &all); err != nil {
					return err
				}
				used := map[string]tenant.UsagePeriod{}
				for _, p := range listing.Projects {
					used[p.Project] = p
				}
				rows = rows[:0:0]
				for _, p := range all.Projects {
					u := used[p.ID]
					u.Project = p.ID
					rows = append(rows, u)
				}
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "usage from %s to %s (UTC days)\n", listing.From, listing.To)
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "PROJECT\tREQUESTS\tERRORS\tBYTES OUT\tREAD\tWRITTEN\tSTORED\tCONN-MIN\tEVENTS\n")
			for _, p := range rows {
				fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%d\n", p.Project, p.Requests, p.Errors, p.BytesOut,
					p.RecordsRead, p.RecordsWritten, p.RecordsStored, p.ConnectionMinutes, p.EventsDelivered)
			}
			return w.Flush()
		})
	cmd.Long = "List the projects with what they used from --from to --to (UTC days, both included; by default the " +
		"last 30 days): requests, errors, bytes answered, records read and written, records stored, realtime " +
		"connection-minutes. Without --sort the projects come by id; with --sort usage (requests) or another " +
		"column of the admin API's usage (errors, bytesOut, recordsRead, ...) the heaviest come first. Usage " +
		"lags by up to the servers' --usage-flush."
	cmd.Flags().StringVar(&sort, "sort", "", "list the heaviest first by usage (requests) or a usage column")
	cmd.Flags().IntVar(&limit, "limit", 20, fmt.Sprintf("with --sort, how many projects to list (at most %d)", tenant.MaxUsageList))
	cmd.Flags().StringVar(&from, "from", "", "first day (YYYY-MM-DD, UTC)")
	cmd.Flags().StringVar(&to, "to", "", "last day (YYYY-MM-DD, UTC; default today)")
	return cmd
}
