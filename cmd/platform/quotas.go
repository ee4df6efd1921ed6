package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/platform-dev/platform/tenant"
)

// quotaConfig holds the deployment's default quotas; 0 bounds nothing. The request budget's
// defaults are --graphql-max-result and --graphql-max-records.
type quotaConfig struct {
	RequestsPerMinute, Concurrent, Records, Bytes, Tables, Subscriptions int
}

func (c *quotaConfig) settings() []setting {
	return []setting{
		intSetting(&c.RequestsPerMinute, "quota-requests-per-minute", "PLATFORM_QUOTA_REQUESTS_PER_MINUTE", 0, "default quota: GraphQL requests and realtime connections one project may open per minute, across replicas (429 RATE_LIMITED past it); 0: none"),
		intSetting(&c.Concurrent, "quota-concurrent-requests", "PLATFORM_QUOTA_CONCURRENT_REQUESTS", 0, "default quota: GraphQL requests one project may have in flight at once, across replicas (429 RATE_LIMITED past it); 0: none"),
		intSetting(&c.Records, "quota-records", "PLATFORM_QUOTA_RECORDS", 0, "default quota: records one project may store (QUOTA_EXCEEDED on writes past it; reads go on); 0: none"),
		intSetting(&c.Bytes, "quota-bytes-stored", "PLATFORM_QUOTA_BYTES_STORED", 0, "default quota: bytes one project's database may take, indexes included (QUOTA_EXCEEDED on writes past it); 0: none"),
		intSetting(&c.Tables, "quota-tables", "PLATFORM_QUOTA_TABLES", 0, "default quota: tables one project's document may declare (400 QUOTA_EXCEEDED on apply); 0: none"),
		intSetting(&c.Subscriptions, "quota-subscriptions", "PLATFORM_QUOTA_SUBSCRIPTIONS", 0, "default quota: subscription connections one project may have open, across replicas, in place of --realtime-max-project-connections (429 RATE_LIMITED past it); 0: none"),
	}
}

// quotas are the registry's default quotas, checked against their bounds.
func (c quotaConfig) quotas() (tenant.Quotas, error) {
	q := tenant.Quotas{
		RequestsPerMinute: int64(c.RequestsPerMinute), ConcurrentRequests: int64(c.Concurrent),
		Records: int64(c.Records), BytesStored: int64(c.Bytes), Tables: int64(c.Tables), Subscriptions: int64(c.Subscriptions),
	}
	if err := q.Validate(); err != nil {
		return tenant.Quotas{}, fmt.Errorf("default %w", err)
	}
	return q, nil
}

func newQuotasCmd() *cobra.Command {
	var set []string
	cmd, _ := projectAdminCmd("quotas --project ID [--set NAME=N ...]", "Show a project's quotas and what it uses of them, or change them",
		func(cmd *cobra.Command, cfg applyConfig, project string) error {
			path := "/admin/v1/projects/" + url.PathEscape(project) + "/quotas"
			var rep tenant.QuotaReport
			if len(set) == 0 {
				if err := adminCall(cmd.Context(), cfg, "quotas", http.MethodGet, path, nil, &rep); err != nil {
					return err
				}
			} else {
				patch := map[string]int64{}
				for _, s := range set {
					name, val, ok := strings.Cut(s, "=")
					n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
					if !ok || err != nil {
						return fmt.Errorf("--set %q: want NAME=N, N a whole number", s)
					}
					patch[camel(strings.TrimSpace(name))] = n
				}
				body, _ := json.Marshal(patch) // a map of numbers always encodes
				if err := adminCall(cmd.Context(), cfg, "quotas", http.MethodPut, path, body, &rep); err != nil {
					return err
				}
			}
			return printQuotas(cmd, &rep)
		})
	cmd.Long = "Show the quotas a project is held to, where each comes from (the project's own or the deployment's default), " +
		"and what the project uses of each, with a warning from 80% and exceeded from 100%. --set NAME=N changes one " +
		"(requests-per-minute, concurrent-requests, records, bytes-stored, tables, subscriptions, max-result-bytes, " +
		"max-records-per-request); N=0 takes the default again."
	cmd.Flags().StringArrayVar(&set, "set", nil, "NAME=N: set a quota of the project (repeatable); 0 takes the default")
	return cmd
}

// camel turns requests-per-minute into requestsPerMinute, as the admin API names quotas.
func camel(s string) string {
	var b strings.Builder
	up := false
	for _, r := range s {
		switch {
		case r == '-' || r == '_':
			up = true
		case up:
			b.WriteRune(unicode.ToUpper(r))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func printQuotas(cmd *cobra.Command, rep *tenant.QuotaReport) error {
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "QUOTA\tLIMIT\tFROM\tUSED\tUSE\n")
	for _, l := range rep.Quotas {
		limit, from, used, use := "none", "default", "-", "-"
		if l.Limit > 0 {
			limit = strconv.FormatInt(l.Limit, 10)
		}
		if l.Override != 0 {
			from = "project"
		}
		if l.Used != nil {
			used = strconv.FormatInt(*l.Used, 10)
			if l.Limit > 0 {
				use = strconv.FormatFloat(l.Percent, 'f', 1, 64) + "%"
			}
			if l.Alert != "" {
				use += " " + l.Alert
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", l.Quota, limit, from, used, use)
	}
	return w.Flush()
}
