package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tools/cloud"
)

const priceFiles = "../../testdata/pricefiles/"

// The command reads one real excerpt of each provider's price file format, writes the prices
// of what the table lists (into the base region's table, or under published for a derived
// region), leaves out what it does not list, and reports both.
func TestRefreshFromProviderFiles(t *testing.T) {
	out := filepath.Join(t.TempDir(), "prices.json")
	var stdout, stderr bytes.Buffer
	err := run([]string{"-table", "testdata/table.json", "-out", out, "-date", "2026-11-24",
		"-aws", priceFiles + "aws-ec2-us-east-2.json",
		"-azure", priceFiles + "azure-westeurope-vm-disk.json", "-azure", priceFiles + "azure-westeurope-postgresql.json",
		"-google", priceFiles + "google-compute-a2.json"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	// The Windows license, the disk and the database are priced apart from Linux compute in
	// Azure: West Europe's factor (0.12/0.096) misses each of them. A2 is priced 12 vCPUs x
	// 0.031611 + 85 GiB x 0.004237 + one A100 at 2.933908.
	want := `aws/us-east-2: 1 confirmed, 0 changed, 0 not in the table
azurerm/westeurope: 0 confirmed, 3 changed, 1 not in the table
  changed databaseHourly postgres-flexible B_Standard_B1ms 0.02125 -> 0.0199
  changed managedDiskMonthly P10 24.64 -> 21.68
  changed windowsInstanceHourly Standard_D2s_v3 0.235 -> 0.212
  not in the table: postgres-flexible (databaseStorageGBMonth)
google/us-central1: 0 confirmed, 1 changed, 0 not in the table
  changed instanceHourly a2-highgpu-1g 3.6 -> 3.673385
google/us-east1: 0 confirmed, 1 changed, 0 not in the table
  changed instanceHourly a2-highgpu-1g 3.6 -> 3.673385
google/us-west1: region not in the table (add it under derived with its reference price), left out
wrote ` + out + "\n"
	if stdout.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", stdout.String(), want)
	}
	b, pt := readTable(t, out)
	we := pt.Derived["azurerm/westeurope"].Published
	east2 := pt.Derived["aws/us-east-2"].Published
	for what, got := range map[string]float64{
		"westeurope Windows D2s_v3": we.WindowsInstanceHourly["Standard_D2s_v3"],
		"westeurope P10":            we.ManagedDiskMonthly["P10"],
		"westeurope B1ms":           we.DatabaseHourly["postgres-flexible"]["B_Standard_B1ms"],
		"us-central1 a2":            pt.Regions["google/us-central1"].InstanceHourly["a2-highgpu-1g"],
		"us-east-2 gp3":             east2.BlockStorageGBMonth["gp3"],
	} {
		if want := map[string]float64{"westeurope Windows D2s_v3": 0.212, "westeurope P10": 21.68, "westeurope B1ms": 0.0199,
			"us-central1 a2": 3.673385, "us-east-2 gp3": 0.08}[what]; got != want {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	// The BYOL Windows p3.8xlarge and the reserved-only m5.large of the offer file are not
	// on-demand Linux prices: neither is written.
	if len(east2.InstanceHourly) != 0 || strings.Contains(string(b), "p3.8xlarge") {
		t.Errorf("us-east-2 instances %v: only the gp3 volume is an on-demand price the table lists", east2.InstanceHourly)
	}
	if v := pt.Verified["azurerm/westeurope"]; v != "Azure Retail Prices API, effective 2017-06-17, 2018-05-01, 2021-12-01: "+
		"databaseHourly postgres-flexible B_Standard_B1ms, managedDiskMonthly P10, windowsInstanceHourly Standard_D2s_v3; read 2026-11-24" {
		t.Errorf("verified westeurope: %q", v)
	}
	if _, ok := pt.Verified["google/us-west1"]; ok || len(pt.Verified) != 4 {
		t.Errorf("verified %v: want the four regions written", pt.Verified)
	}
}

// A file of another format, or without a price the table uses, is an error that names it;
// -n reports without writing.
func TestRefreshRefusesAndDryRun(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run([]string{"-table", "testdata/table.json", "-aws", priceFiles + "azure-westeurope-vm-disk.json"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "azure-westeurope-vm-disk.json: read an AWS offer file: no on-demand price") {
		t.Errorf("an Azure page read as an AWS offer file: %v", err)
	}
	table := filepath.Join(t.TempDir(), "prices.json")
	src, err := os.ReadFile("testdata/table.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(table, src, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := run([]string{"-n", "-table", table, "-google", priceFiles + "google-compute-a2.json"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, src) || !strings.Contains(stdout.String(), "a2-highgpu-1g 3.6 -> 3.673385") || strings.Contains(stdout.String(), "wrote") {
		t.Errorf("-n wrote the table or reported nothing:\n%s", stdout.String())
	}
}

// karpenterFiles are the flags that read the vendored Karpenter price tables.
var karpenterFiles = []string{"-karpenter-aws", priceFiles + "karpenter-aws-us-east-1.go", "-karpenter-aws", priceFiles + "karpenter-aws-us-gov.go",
	"-karpenter-azure", priceFiles + "karpenter-azure-vm.go",
	"-karpenter-gcp", priceFiles + "karpenter-gcp-prices.json", "-karpenter-gcp-date", "2026-08-03"}

// karpenter-provider-aws's table lists every instance type of us-east-1: the base region's
// table becomes that list, new types added and a type the file does not list (m5.small, which
// AWS never offered) removed. karpenter-provider-azure's gives Linux sizes per region; its AMD
// v5 sizes, some of which carry the Windows price, are not read. karpenter-provider-gcp's gives
// machine types per region, dated by the flag since the file holds no date.
func TestRefreshFromKarpenterTables(t *testing.T) {
	out := filepath.Join(t.TempDir(), "prices.json")
	var stdout, stderr bytes.Buffer
	args := append([]string{"-table", "testdata/table.json", "-out", out, "-date", "2026-11-25"}, karpenterFiles...)
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	for _, line := range []string{
		"aws/us-east-1: 2 confirmed, 0 changed, 0 not in the table\n" +
			"  added 1365 listed by the file: instanceHourly a1.2xlarge, instanceHourly a1.4xlarge, instanceHourly a1.large, instanceHourly a1.medium, instanceHourly a1.metal and 1360 more\n" +
			"  removed instanceHourly m5.small: not in the file's list of the region's types\n",
		"azurerm/eastus: 1 confirmed, 0 changed, 29 not in the table\n",
		"azurerm/westeurope: 1 confirmed, 0 changed, 29 not in the table\n",
		"azurerm/uksouth: region not in the table",
		"google/us-east1: 0 confirmed, 2 changed, 14 not in the table\n" +
			"  changed instanceHourly a2-highgpu-1g 3.6 -> 3.673385\n" +
			"  changed instanceHourly n1-standard-1 0.0475 -> 0.04749975\n",
	} {
		if !strings.Contains(stdout.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, stdout.String())
		}
	}
	_, pt := readTable(t, out)
	east := pt.Regions["aws/us-east-1"].InstanceHourly
	if _, ok := east["m5.small"]; ok || len(east) != 1367 || east["x8g.medium"] != 0.0977 || east["u7i-12tb.224xlarge"] == 0 {
		t.Errorf("us-east-1: %d types, m5.small %v, x8g.medium %v: want the file's 1367", len(east), east["m5.small"], east["x8g.medium"])
	}
	if v := pt.Verified["aws/us-east-1"]; !strings.HasPrefix(v, "karpenter-provider-aws generated price table (AWS Pricing API, EC2 on-demand Linux), effective 2026-07-20: ") ||
		!strings.HasSuffix(v, " and 1359 more; read 2026-11-25") {
		t.Errorf("verified us-east-1: %q", v)
	}
	if got := pt.Regions["azurerm/eastus"].InstanceHourly["Standard_D2as_v5"]; got != 0.086 || strings.Contains(pt.Verified["azurerm/eastus"], "D2as_v5") {
		t.Errorf("eastus Standard_D2as_v5 %v, verified %q: the file's AMD v5 prices are not read", got, pt.Verified["azurerm/eastus"])
	}
	if we := pt.Derived["azurerm/westeurope"]; we.Price != 0.12 || we.Published != nil {
		t.Errorf("westeurope %+v: the reference price confirmed, nothing else listed", we)
	}
	if e1 := pt.Derived["google/us-east1"]; e1.Price != 0.04749975 || e1.Published.InstanceHourly["a2-highgpu-1g"] != 3.673385 ||
		!strings.Contains(pt.Verified["google/us-east1"], "gcloud-compute.com, from Cloud Billing SKUs), effective 2026-08-03: ") {
		t.Errorf("us-east1 %+v, verified %q", e1, pt.Verified["google/us-east1"])
	}
}

// A Karpenter table of another format, or karpenter-provider-gcp's without the date it does
// not hold, is refused with the reason.
func TestKarpenterTablesRefused(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-karpenter-gcp", priceFiles + "karpenter-gcp-prices.json"}, "-karpenter-gcp needs -karpenter-gcp-date: the file holds no date"},
		{[]string{"-karpenter-aws", priceFiles + "azure-westeurope-vm-disk.json"}, "azure-westeurope-vm-disk.json: read a Karpenter price table: "},
		{[]string{"-karpenter-azure", priceFiles + "LICENSE.karpenter-provider-azure"}, "LICENSE.karpenter-provider-azure: read a Karpenter price table: "},
		{[]string{"-karpenter-gcp", priceFiles + "karpenter-aws-us-east-1.go", "-karpenter-gcp-date", "2026-08-03"},
			"karpenter-aws-us-east-1.go: read karpenter-provider-gcp's price table: "},
		{[]string{"-karpenter-gcp", priceFiles + "google-compute-a2.json", "-karpenter-gcp-date", "2026-08-03"},
			"google-compute-a2.json: read karpenter-provider-gcp's price table: no on-demand price"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(append([]string{"-n", "-table", "testdata/table.json"}, tt.args...), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %q", tt.args, err, tt.want)
		}
	}
}

// The shipped table holds what the vendored price files say: running the command on it with
// them changes, adds and removes nothing.
func TestShippedTableIsWhatThePriceFilesSay(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := append([]string{"-n", "-table", "../../prices.json",
		"-aws", priceFiles + "aws-ec2-us-east-2.json",
		"-azure", priceFiles + "azure-westeurope-vm-disk.json", "-azure", priceFiles + "azure-westeurope-postgresql.json",
		"-google", priceFiles + "google-compute-a2.json"}, karpenterFiles...)
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	report := stdout.String()
	if !strings.Contains(report, "aws/us-east-1: 1367 confirmed, 0 changed") || !strings.Contains(report, "azurerm/japaneast: 30 confirmed, 0 changed") ||
		!strings.Contains(report, "google/europe-west4: 16 confirmed, 0 changed") {
		t.Errorf("report:\n%s", report)
	}
	for _, line := range strings.Split(report, "\n") {
		if strings.HasPrefix(line, "  ") || (line != "" && !strings.Contains(line, " 0 changed, 0 not in the table")) {
			t.Errorf("prices.json differs from the price files (run go run ./tools/cloud/cmd/prices with them): %s", line)
		}
	}
}

// readTable reads a price table the command wrote.
func readTable(t *testing.T, name string) ([]byte, *cloud.PriceTable) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := cloud.ReadPriceTable(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return b, pt
}
