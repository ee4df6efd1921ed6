package cloud_test

import (
	"strings"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
)

// Every Azure resource kind the table knows is priced from its declaration, in the region of
// its resource group or of the resource it belongs to; what is billed by use, retired or not
// in the table says so.
func TestAzureResourcesArePriced(t *testing.T) {
	a, _ := newAnalyzer(t, "testdata/azure")
	r := call(t, a, `{}`)
	got := byAddress(r)
	for _, tt := range []struct {
		address string
		monthly float64 // -1: unpriced, with note
		note    string
	}{
		{"azurerm_resource_group.rg", 0, ""},
		{"azurerm_linux_virtual_machine.web", 70.08, ""},                // D2s_v3 Linux 0.096 x 730; the image sizes the OS disk
		{"azurerm_windows_virtual_machine.app", 156.95, ""},             // D2s_v3 Windows 0.188 x 730 + OS disk P10 (127 GiB) 19.71
		{"azurerm_virtual_machine.legacy", 97.87, ""},                   // os_profile_windows_config: DS1_v2 Windows 0.126 x 730 + S10 5.89
		{"azurerm_linux_virtual_machine_scale_set.workers", 192.47, ""}, // (F2s_v2 0.0846 x 730 + OS disk E4 2.40) x 3
		{"azurerm_kubernetes_cluster.aks", 353.32, ""},                  // Standard tier 0.10 x 730 + D4s_v5 0.192 x 730 x 2 (min_count)
		{"azurerm_kubernetes_cluster_node_pool.win", 548.96, ""},        // D4s_v3 Windows 0.376 x 730 x 2
		{"azurerm_managed_disk.data", 19.71, ""},                        // 100 GiB Premium_LRS is billed as P10 (128 GiB)
		{"azurerm_managed_disk.ultra", -1, `disk type "UltraSSD_LRS" not in the price table`},
		{"azurerm_storage_account.logs", -1, "usage-based: Cool_LRS blob storage 0.01 per GB-month"},
		{"azurerm_mssql_server.sql", 0, ""},
		{"azurerm_mssql_database.app", 371.89, ""},  // GP_Gen5_2 0.5044 x 730 + 0.115 x 32 GB
		{"azurerm_mssql_database.small", 14.75, ""}, // S0 0.0202 x 730, storage included
		{"azurerm_mssql_database.pooled", 0, ""},
		{"azurerm_mssql_database.serverless", -1, "usage-based: serverless"},
		{"azurerm_postgresql_flexible_server.pg", 274.6, ""}, // (0.178 x 730 + 0.115 x 64 GB) x 2 for the HA standby
		{"azurerm_mysql_flexible_server.my", 17.41, ""},      // 0.0207 x 730 + 0.115 x 20 GB
		{"azurerm_service_plan.linux", 246.74, ""},           // P1v3 Linux 0.169 x 730 x 2 workers
		{"azurerm_service_plan.functions", -1, "usage-based: Functions consumption plan"},
		{"azurerm_app_service_plan.legacy", 73, ""}, // S1 Windows 0.10 x 730
		{"azurerm_lb.front", 18.25, ""},             // Standard 0.025 x 730
		{"azurerm_lb.basic", 0, ""},
		{"azurerm_public_ip.front", 3.65, ""}, // Standard 0.005 x 730
		{"azurerm_nat_gateway.out", 32.85, ""},
		{"azurerm_nat_gateway_public_ip_association.out", 0, ""},
		{"azurerm_redis_cache.cache", 100.74, ""}, // Standard C1 0.138 x 730
		{"azurerm_cosmosdb_account.db", 0, ""},
		{"azurerm_cosmosdb_sql_database.shared", 23.36, ""},  // 400 RU/s: 4 x 0.008 x 730
		{"azurerm_cosmosdb_sql_container.orders", 350.4, ""}, // autoscale to 4000 RU/s: 40 x 0.012 x 730
		{"azurerm_key_vault.kv", 0, ""},
		{"azurerm_key_vault_key.hsm", -1, "HSM-protected key"},
		{"azurerm_postgresql_server.old", -1, "retired on 2025-03-28"},
	} {
		e, ok := got[tt.address]
		switch {
		case !ok:
			t.Errorf("%s: not in the inventory", tt.address)
		case e.Region != "eastus":
			t.Errorf("%s: region %q, want eastus", tt.address, e.Region)
		case tt.monthly < 0 && (e.Cost.Monthly != nil || !strings.Contains(e.Cost.Note, tt.note)):
			t.Errorf("%s: %+v, want unpriced: %s", tt.address, e.Cost, tt.note)
		case tt.monthly >= 0 && (e.Cost.Monthly == nil || *e.Cost.Monthly != tt.monthly):
			t.Errorf("%s: %+v, want %v", tt.address, e.Cost, tt.monthly)
		}
		delete(got, tt.address)
	}
	for addr := range got {
		t.Errorf("%s: not expected", addr)
	}
	// 70.08 + 156.95 + 97.87 + 192.47 + 353.32 + 548.96 + 19.71 + 371.89 + 14.75 + 274.6 + 17.41
	// + 246.74 + 73 + 18.25 + 3.65 + 32.85 + 100.74 + 23.36 + 350.4 = 2967
	if r.Cost.MonthlyTotal != 2967 || r.Cost.Unpriced != 6 {
		t.Errorf("total %v with %d unpriced, want 2967 with 6", r.Cost.MonthlyTotal, r.Cost.Unpriced)
	}
	for addr, basis := range map[string]string{
		"azurerm_linux_virtual_machine.web":   "Linux Standard_D2s_v3 0.096/h x 730 h x 1 (OS disk not included: its size comes from the image)",
		"azurerm_windows_virtual_machine.app": "Windows Standard_D2s_v3 0.188/h x 730 h x 1 + OS disk Premium_LRS P10 (up to 128 GiB) 19.71/month x 1",
	} {
		if b := byAddress(r)[addr].Cost.Basis; b != basis {
			t.Errorf("%s: basis %q, want %q", addr, b, basis)
		}
	}
}

// Terragoat's Azure files name every location through var.location or their resource group:
// each resource gets East US, and the free, usage-based and retired ones say which they are.
// The files are the excerpt tools/security pins for its recall figures.
func TestTerragoatAzureRegionsAndFreeResources(t *testing.T) {
	a, _ := newAnalyzer(t, "../security/testdata/iac/terragoat/azure")
	r := call(t, a, `{}`)
	var priced []string
	for _, e := range r.Resources {
		if e.Region != "eastus" {
			t.Errorf("%s: region %q, want eastus", e.Address, e.Region)
		}
		if e.Cost.Monthly != nil && *e.Cost.Monthly > 0 {
			priced = append(priced, e.Address)
		}
	}
	got := byAddress(r)
	for addr, note := range map[string]string{
		"azurerm_mysql_server.example":              "retired on 2024-09-16",
		"azurerm_postgresql_server.example":         "retired on 2025-03-28",
		"azurerm_storage_account.example":           "usage-based",
		"azurerm_network_watcher_flow_log.flow_log": "usage-based",
	} {
		if c := got[addr].Cost; c == nil || c.Monthly != nil || !strings.Contains(c.Note, note) {
			t.Errorf("%s: %+v, want unpriced: %s", addr, c, note)
		}
	}
	// A 1 GiB Standard_LRS disk is billed as S4, the smallest Standard HDD tier (32 GiB): 1.54.
	if len(priced) != 1 || r.Cost.MonthlyTotal != 1.54 || r.Cost.Unpriced != 4 || len(r.Resources) != 21 {
		t.Errorf("priced above 0: %v, total %v, %d of %d unpriced; want the disk alone at 1.54, 4 of 21 unpriced",
			priced, r.Cost.MonthlyTotal, r.Cost.Unpriced, len(r.Resources))
	}
}

// West Europe is derived from East US by its Linux D2s_v3 price (0.12/0.096), but the prices
// cmd/prices read from Azure's price files for it replace the scaled ones: the Windows license
// and the managed disk follow the factor less closely than compute does.
func TestPublishedPricesReplaceScaledOnes(t *testing.T) {
	tf := `resource "azurerm_resource_group" "rg" {
  name     = "eu"
  location = "West Europe"
}
resource "azurerm_linux_virtual_machine" "linux" {
  location = azurerm_resource_group.rg.location
  size     = "Standard_D2s_v3"
}
resource "azurerm_windows_virtual_machine" "windows" {
  location = azurerm_resource_group.rg.location
  size     = "Standard_D2s_v3"
}
resource "azurerm_managed_disk" "data" {
  location             = azurerm_resource_group.rg.location
  storage_account_type = "Premium_LRS"
  disk_size_gb         = 128
}
`
	a, _ := newAnalyzer(t, testenv.TempTree(t, map[string]string{"main.tf": tf}))
	got := byAddress(call(t, a, `{}`))
	for addr, want := range map[string]float64{
		"azurerm_linux_virtual_machine.linux":     87.6,   // scaled: 0.096 x 1.25 = 0.12/h
		"azurerm_windows_virtual_machine.windows": 154.76, // published 0.212/h, where scaling gives 0.235
		"azurerm_managed_disk.data":               21.68,  // published P10, where scaling gives 24.64
	} {
		if c := got[addr].Cost; c == nil || c.Monthly == nil || *c.Monthly != want {
			t.Errorf("%s: %+v, want %v", addr, c, want)
		}
	}
}

// Azure resources group under the services of Azure's price list, and "azure" names the
// provider.
func TestAzureServices(t *testing.T) {
	a, _ := newAnalyzer(t, "testdata/azure")
	for args, want := range map[string]int{`{"service":"azure"}`: 32, `{"service":"virtual-machines"}`: 4, `{"service":"aks"}`: 2,
		`{"service":"storage"}`: 3, `{"service":"sql-database"}`: 5, `{"service":"cosmos-db"}`: 3, `{"service":"app-service"}`: 3} {
		if r := call(t, a, args); len(r.Resources) != want {
			t.Errorf("%s: %d resources, want %d", args, len(r.Resources), want)
		}
	}
}
