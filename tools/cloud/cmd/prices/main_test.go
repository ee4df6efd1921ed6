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
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := cloud.ReadPriceTable(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
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
