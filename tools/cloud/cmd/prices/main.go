// Command prices refreshes the price table of tools/cloud (prices.json) from the providers'
// published machine-readable price files, read from disk so that an operator with network
// access downloads them and the run itself needs none:
//
//   - -aws: AWS Price List bulk offer files
//     (https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/<region>/index.json):
//     EC2 Linux on-demand instances and EBS volumes.
//   - -azure: pages of the Azure Retail Prices API
//     (https://prices.azure.com/api/retail/prices?$filter=...): virtual machines (Linux and
//     Windows), LRS managed disk tiers, PostgreSQL flexible server compute and storage.
//   - -google: pages of the Cloud Billing Catalog API's Compute Engine SKUs
//     (https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus): predefined
//     machine types, priced from their vCPU, memory and GPU SKUs.
//   - -karpenter-aws: the price table karpenter-provider-aws generates from the AWS Pricing API
//     (pkg/providers/pricing/zz_generated.pricing_aws.go in its Go module): every EC2 instance
//     type of a region, on-demand Linux. It is a complete list: the base region's instance
//     table becomes what it lists.
//   - -karpenter-azure: the price table karpenter-provider-azure generates from the Azure
//     Retail Prices API (pkg/providers/pricing/zz_generated.pricing.go): pay-as-you-go Linux
//     virtual machine sizes per region.
//   - -karpenter-gcp: karpenter-provider-gcp's price table
//     (pkg/providers/pricing/initial-prices.json): Compute Engine machine types per region,
//     on demand. It holds no date, so -karpenter-gcp-date gives the date of the commit that
//     refreshed it.
//
// The AWS and Azure Karpenter tables come with the providers' Go modules, so they can be
// fetched from the Go module proxy where the price APIs are not reachable:
//
//	curl -sSo k.zip https://proxy.golang.org/github.com/aws/karpenter-provider-aws/@v/v1.15.1.zip
//
// Each flag can be given several times. Only prices of what the table lists are written; the
// report on standard output says, per region, how many the files confirmed, which changed,
// and what the files price that the table does not list. With -n nothing is written.
//
//	go run ./tools/cloud/cmd/prices -azure westeurope.json -aws ec2-us-east-2.json
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/platform-dev/platform/tools/cloud"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "prices:", err)
		}
		os.Exit(2)
	}
}

// files collects a repeatable file flag.
type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("prices", flag.ContinueOnError)
	fs.SetOutput(stderr)
	table := fs.String("table", "tools/cloud/prices.json", "the price table to refresh")
	out := fs.String("out", "", "where to write the refreshed table (default: -table)")
	date := fs.String("date", time.Now().UTC().Format(time.DateOnly), "the date the files were read, for the table's verified notes")
	dryRun := fs.Bool("n", false, "report only, write nothing")
	var aws, azure, google, karpenterAWS, karpenterAzure, karpenterGCP files
	fs.Var(&aws, "aws", "an AWS Price List bulk offer file (repeatable)")
	fs.Var(&azure, "azure", "a page of the Azure Retail Prices API (repeatable)")
	fs.Var(&google, "google", "a page of Compute Engine SKUs from the Cloud Billing Catalog API (repeatable)")
	fs.Var(&karpenterAWS, "karpenter-aws", "karpenter-provider-aws's generated price table, zz_generated.pricing_aws.go (repeatable)")
	fs.Var(&karpenterAzure, "karpenter-azure", "karpenter-provider-azure's generated price table, zz_generated.pricing.go (repeatable)")
	fs.Var(&karpenterGCP, "karpenter-gcp", "karpenter-provider-gcp's price table, initial-prices.json (repeatable)")
	gcpDate := fs.String("karpenter-gcp-date", "", "the date of the commit that refreshed the -karpenter-gcp files (they hold none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: price files go after -aws, -azure, -google or a -karpenter- flag", fs.Args())
	}
	if len(karpenterGCP) > 0 && *gcpDate == "" {
		return errors.New("-karpenter-gcp needs -karpenter-gcp-date: the file holds no date")
	}
	if *out == "" {
		*out = *table
	}
	src, err := os.ReadFile(*table)
	if err != nil {
		return err
	}
	pt, err := cloud.ReadPriceTable(bytes.NewReader(src))
	if err != nil {
		return fmt.Errorf("%s: %w", *table, err)
	}
	var obs []cloud.PriceObservation
	readers := []struct {
		names files
		read  func(io.Reader) ([]cloud.PriceObservation, error)
	}{
		{aws, cloud.ReadAWSOffer},
		{azure, cloud.ReadAzureRetailPrices},
		{google, func(r io.Reader) ([]cloud.PriceObservation, error) { return cloud.ReadGoogleSKUs(r, pt) }},
		{karpenterAWS, cloud.ReadKarpenterAWS},
		{karpenterAzure, cloud.ReadKarpenterAzure},
		{karpenterGCP, func(r io.Reader) ([]cloud.PriceObservation, error) { return cloud.ReadKarpenterGCP(r, *gcpDate) }},
	}
	for _, rd := range readers {
		for _, name := range rd.names {
			o, err := readFile(name, rd.read)
			if err != nil {
				return err
			}
			obs = append(obs, o...)
		}
	}
	report, err := pt.Refresh(obs, *date)
	if err != nil {
		return err
	}
	regions := make([]string, 0, len(report))
	for r := range report {
		regions = append(regions, r)
	}
	slices.Sort(regions)
	for _, region := range regions {
		r := report[region]
		if r.NotInTable {
			fmt.Fprintf(stdout, "%s: region not in the table (add it under derived with its reference price), left out\n", region)
			continue
		}
		fmt.Fprintf(stdout, "%s: %d confirmed, %d changed, %d not in the table\n", region, r.Confirmed, len(r.Changed), len(r.Unknown))
		slices.Sort(r.Changed)
		for _, c := range r.Changed {
			fmt.Fprintf(stdout, "  changed %s\n", c)
		}
		if len(r.Added) > 0 {
			slices.Sort(r.Added)
			fmt.Fprintf(stdout, "  added %d listed by the file: %s\n", len(r.Added), abridged(r.Added))
		}
		slices.Sort(r.Removed)
		for _, name := range r.Removed {
			fmt.Fprintf(stdout, "  removed %s: not in the file's list of the region's types\n", name)
		}
		slices.Sort(r.Unknown)
		for _, u := range slices.Compact(r.Unknown) {
			fmt.Fprintf(stdout, "  not in the table: %s\n", u)
		}
	}
	if *dryRun {
		return nil
	}
	b, err := pt.Encode()
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return nil
}

func readFile(name string, read func(io.Reader) ([]cloud.PriceObservation, error)) ([]cloud.PriceObservation, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	obs, err := read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return obs, nil
}

// abridged names the first few of a long list and counts the rest.
func abridged(names []string) string {
	const shown = 5
	if len(names) <= shown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
}
