package cloud

import (
	"fmt"
	"regexp"
	"strings"
)

// retired are Azure services Microsoft no longer runs: a declaration of one is not priced, and
// the note names its successor.
var retired = map[string]string{
	"azurerm_postgresql_server": "Azure Database for PostgreSQL single server was retired on 2025-03-28; its successor is azurerm_postgresql_flexible_server",
	"azurerm_mysql_server":      "Azure Database for MySQL single server was retired on 2024-09-16; its successor is azurerm_mysql_flexible_server",
	"azurerm_mariadb_server":    "Azure Database for MariaDB was retired on 2025-09-19; its successor is azurerm_mysql_flexible_server",
}

// operationsOnly is the basis of the Azure resources that have no fixed charge and whose
// operations are billed per use.
const operationsOnly = "no fixed charge: operations are billed per 10,000 (usage-based)"

// azure prices the Azure resource types the table knows; ok is false for the others.
func (pt *PriceTable) azure(p *regionPrices, r *Resource, n float64) (c Cost, ok bool) {
	h := pt.HoursPerMonth
	switch r.Type {
	case "azurerm_linux_virtual_machine", "azurerm_windows_virtual_machine", "azurerm_virtual_machine",
		"azurerm_linux_virtual_machine_scale_set", "azurerm_windows_virtual_machine_scale_set",
		"azurerm_kubernetes_cluster_node_pool":
		size := firstString(r, "size", "vm_size", "sku")
		count, why := vmCount(r)
		if why != "" {
			return unknown("%s", why), true
		}
		vms := pt.vms(p, size, windows(r), count*n)
		if r.Type == "azurerm_kubernetes_cluster_node_pool" {
			return vms, true
		}
		return withOSDisk(p, r, vms, count*n), true
	case "azurerm_kubernetes_cluster":
		tier := firstString(r, "sku_tier")
		if tier == "" {
			tier = "Free" // the API's default
		}
		fee, ok := p.SKUHourly["aks"][tier]
		if !ok {
			return unknown("AKS tier %q not in the price table", tier), true
		}
		size := r.String("default_node_pool", 0, "vm_size")
		count, why := nodeCount(r, "default_node_pool", 0)
		if why != "" {
			return unknown("default node pool: %s", why), true
		}
		nodes := pt.vms(p, size, false, count*n)
		if nodes.Monthly == nil {
			return unknown("default node pool: %s", nodes.Note), true
		}
		return known(fee*h*n+*nodes.Monthly, fmt.Sprintf("%s tier %g/h x %g h + default node pool %s", tier, fee, h, nodes.Basis)), true
	case "azurerm_managed_disk":
		return pt.managedDisk(p, r, n), true
	case "azurerm_storage_account":
		class := firstString(r, "access_tier")
		if class == "" {
			class = "Hot"
		}
		class += "_" + firstString(r, "account_replication_type")
		if price, ok := p.ObjectStorageGBMonth[class]; ok {
			return unknown("usage-based: %s blob storage %g per GB-month plus operations", class, price), true
		}
		return unknown("usage-based: storage per GB-month plus operations"), true
	case "azurerm_mssql_database", "azurerm_sql_database":
		return pt.sqlDatabase(p, r, n), true
	case "azurerm_postgresql_flexible_server", "azurerm_mysql_flexible_server":
		return pt.flexibleServer(p, r, n), true
	case "azurerm_service_plan", "azurerm_app_service_plan":
		return pt.servicePlan(p, r, n), true
	case "azurerm_lb", "azurerm_public_ip":
		kind := map[string]string{"azurerm_lb": "loadBalancer", "azurerm_public_ip": "publicIP"}[r.Type]
		sku := firstString(r, "sku")
		if sku == "" {
			sku = "Basic" // azurerm 3.x's default
		}
		return pt.sku(p, kind, sku, n), true
	case "azurerm_redis_cache":
		sku := fmt.Sprintf("%s_%s%s", r.String("sku_name"), r.String("family"), r.String("capacity"))
		return pt.sku(p, "redis", sku, n), true
	case "azurerm_cosmosdb_sql_database", "azurerm_cosmosdb_sql_container", "azurerm_cosmosdb_mongo_database",
		"azurerm_cosmosdb_mongo_collection", "azurerm_cosmosdb_cassandra_keyspace", "azurerm_cosmosdb_cassandra_table",
		"azurerm_cosmosdb_gremlin_database", "azurerm_cosmosdb_gremlin_graph", "azurerm_cosmosdb_table":
		return pt.cosmos(p, r, n), true
	case "azurerm_network_watcher_flow_log":
		return unknown("usage-based: billed per GB of flow logs collected, plus their storage"), true
	case "azurerm_cosmosdb_account":
		return known(0, "no charge for the account: its databases' and containers' throughput and storage are billed"), true
	case "azurerm_key_vault", "azurerm_key_vault_secret", "azurerm_key_vault_certificate":
		return known(0, operationsOnly), true
	case "azurerm_key_vault_key":
		if strings.HasSuffix(r.String("key_type"), "-HSM") {
			return unknown("HSM-protected key: billed per key-month and per operation, not in the price table"), true
		}
		return known(0, operationsOnly), true
	}
	if why, ok := retired[r.Type]; ok {
		return unknown("%s", why), true
	}
	return Cost{}, false
}

// vms prices count virtual machines of size.
func (pt *PriceTable) vms(p *regionPrices, size string, windows bool, count float64) Cost {
	table, os := p.InstanceHourly, "Linux"
	if windows {
		table, os = p.WindowsInstanceHourly, "Windows"
	}
	price, ok := table[size]
	if !ok {
		return unknown("%s size %q not in the price table", os, size)
	}
	return known(price*pt.HoursPerMonth*count, fmt.Sprintf("%s %s %g/h x %g h x %g", os, size, price, pt.HoursPerMonth, count))
}

// windows reports whether an Azure virtual machine, scale set or node pool runs Windows.
func windows(r *Resource) bool {
	return strings.Contains(r.Type, "windows") || r.Get("os_profile_windows_config") != nil ||
		strings.EqualFold(r.String("os_type"), "Windows") || strings.EqualFold(r.String("storage_os_disk", 0, "os_type"), "Windows")
}

// vmCount is how many machines a virtual machine, scale set or node pool declaration runs.
func vmCount(r *Resource) (float64, string) {
	switch r.Type {
	case "azurerm_linux_virtual_machine_scale_set", "azurerm_windows_virtual_machine_scale_set":
		if v, ok := r.Number("instances"); ok {
			return v, ""
		}
		return 0, "instance count not declared"
	case "azurerm_kubernetes_cluster_node_pool":
		return nodeCount(r)
	}
	return 1, ""
}

// nodeCount reads an AKS node pool's size at path: node_count, or min_count when it
// autoscales (the least it runs).
func nodeCount(r *Resource, path ...any) (float64, string) {
	at := func(k string) []any { return append(append([]any{}, path...), k) }
	for _, k := range []string{"enable_auto_scaling", "auto_scaling_enabled"} {
		if on, ok := r.Bool(at(k)...); ok && on {
			if v, ok := r.Number(at("min_count")...); ok {
				return v, ""
			}
		}
	}
	if v, ok := r.Number(at("node_count")...); ok {
		return v, ""
	}
	return 0, "node count not declared"
}

// diskTiers are the managed disk sizes Azure bills by, in GiB, after the tier's letter (P10,
// E10 and S10 are all 128 GiB).
var diskTiers = []struct {
	tier string
	gb   float64
}{{"1", 4}, {"2", 8}, {"3", 16}, {"4", 32}, {"6", 64}, {"10", 128}, {"15", 256}, {"20", 512},
	{"30", 1024}, {"40", 2048}, {"50", 4096}, {"60", 8192}, {"70", 16384}, {"80", 32767}}

// diskLetter names the tier family of a managed disk's storage account type.
var diskLetter = map[string]string{"Premium_LRS": "P", "StandardSSD_LRS": "E", "Standard_LRS": "S"}

func (pt *PriceTable) managedDisk(p *regionPrices, r *Resource, n float64) Cost {
	size, ok := r.Number("disk_size_gb")
	if !ok {
		return unknown("disk size not declared")
	}
	return diskPrice(p, firstString(r, "storage_account_type"), size, n)
}

// diskPrice prices n managed disks of type typ and size GiB: the smallest tier that holds
// them (Standard HDD starts at S4, so a smaller disk is billed as S4).
func diskPrice(p *regionPrices, typ string, size, n float64) Cost {
	letter, ok := diskLetter[typ]
	if !ok {
		return unknown("disk type %q not in the price table (it prices Premium_LRS, StandardSSD_LRS and Standard_LRS tiers)", typ)
	}
	for _, t := range diskTiers {
		price, ok := p.ManagedDiskMonthly[letter+t.tier]
		if size > t.gb || !ok {
			continue
		}
		return known(price*n, fmt.Sprintf("%s %s%s (up to %g GiB) %g/month x %g", typ, letter, t.tier, t.gb, price, n))
	}
	return unknown("no %s tier of %g GiB or more in the price table", typ, size)
}

// withOSDisk adds a virtual machine's or scale set's OS disk to its compute price when the
// declaration sizes it; otherwise the image sets the size, and the basis says the disk is out.
func withOSDisk(p *regionPrices, r *Resource, vms Cost, count float64) Cost {
	if vms.Monthly == nil {
		return vms
	}
	typ, size, ok := r.String("os_disk", 0, "storage_account_type"), 0.0, false
	if typ != "" {
		size, ok = r.Number("os_disk", 0, "disk_size_gb")
	} else if typ = r.String("storage_os_disk", 0, "managed_disk_type"); typ != "" {
		size, ok = r.Number("storage_os_disk", 0, "disk_size_gb")
	}
	if !ok {
		vms.Basis += " (OS disk not included: its size comes from the image)"
		return vms
	}
	disk := diskPrice(p, typ, size, count)
	if disk.Monthly == nil {
		vms.Basis += " (OS disk not included: " + disk.Note + ")"
		return vms
	}
	return known(*vms.Monthly+*disk.Monthly, vms.Basis+" + OS disk "+disk.Basis)
}

// vCoreSQL matches Azure SQL Database vCore SKUs, which bill storage apart (GP_Gen5_2,
// BC_Gen5_4, HS_Gen5_2); DTU SKUs (Basic, S0, P1) include theirs.
var vCoreSQL = regexp.MustCompile(`^(GP|BC|HS)_`)

func (pt *PriceTable) sqlDatabase(p *regionPrices, r *Resource, n float64) Cost {
	if r.Get("elastic_pool_id") != nil || r.Get("elastic_pool_name") != nil {
		return known(0, "billed through its elastic pool")
	}
	sku := firstString(r, "sku_name", "requested_service_objective_name", "edition")
	switch {
	case sku == "":
		return unknown("SKU not declared")
	case strings.HasPrefix(sku, "GP_S_"):
		return unknown("usage-based: serverless, billed per vCore-second used")
	}
	price, ok := p.DatabaseHourly["mssql"][sku]
	if !ok {
		return unknown("Azure SQL Database SKU %q not in the price table", sku)
	}
	h := pt.HoursPerMonth
	total, basis := price*h*n, fmt.Sprintf("%s %g/h x %g h x %g", sku, price, h, n)
	if vCoreSQL.MatchString(sku) {
		size, ok := r.Number("max_size_gb")
		if !ok {
			return unknown("vCore database: storage (max_size_gb) not declared")
		}
		sp := p.DatabaseStorageGBMonth["mssql"]
		total += sp * size * n
		basis += fmt.Sprintf(" + storage %g/GB-month x %g GB", sp, size)
	}
	return known(total, basis)
}

func (pt *PriceTable) flexibleServer(p *regionPrices, r *Resource, n float64) Cost {
	engine := map[string]string{"azurerm_postgresql_flexible_server": "postgres-flexible", "azurerm_mysql_flexible_server": "mysql-flexible"}[r.Type]
	sku := firstString(r, "sku_name")
	price, ok := p.DatabaseHourly[engine][sku]
	if !ok {
		return unknown("%s SKU %q not in the price table", engine, sku)
	}
	servers := 1.0
	if r.Get("high_availability") != nil {
		servers = 2 // the standby is billed like the primary
	}
	// The storage the server is created with when none is declared: 32 GiB and 20 GiB.
	gb := 32.0
	if v, ok := r.Number("storage_mb"); ok {
		gb = v / 1024
	} else if v, ok := r.Number("storage", 0, "size_gb"); ok {
		gb = v
	} else if engine == "mysql-flexible" {
		gb = 20
	}
	h, sp := pt.HoursPerMonth, p.DatabaseStorageGBMonth[engine]
	return known((price*h*servers+sp*gb*servers)*n,
		fmt.Sprintf("%s %g/h x %g h x %g server + storage %g/GB-month x %g GB x %g", sku, price, h, servers, sp, gb, servers))
}

func (pt *PriceTable) servicePlan(p *regionPrices, r *Resource, n float64) Cost {
	sku, os, workers := firstString(r, "sku_name"), firstString(r, "os_type"), 1.0
	if r.Type == "azurerm_app_service_plan" {
		sku, os = r.String("sku", 0, "size"), firstString(r, "kind")
		if v, ok := r.Number("sku", 0, "capacity"); ok {
			workers = v
		}
		if reserved, _ := r.Bool("reserved"); reserved {
			os = "Linux"
		}
	} else if v, ok := r.Number("worker_count"); ok {
		workers = v
	}
	if sku == "Y1" || (strings.EqualFold(os, "FunctionApp") && sku == "") {
		return unknown("usage-based: Functions consumption plan, billed per execution and GB-second")
	}
	kind := "appServiceWindows"
	if strings.EqualFold(os, "Linux") {
		kind = "appServiceLinux"
	}
	return pt.sku(p, kind, sku, workers*n)
}

// sku prices count instances of a service billed by its SKU.
func (pt *PriceTable) sku(p *regionPrices, kind, sku string, count float64) Cost {
	price, ok := p.SKUHourly[kind][sku]
	if !ok {
		return unknown("%s SKU %q not in the price table", kind, sku)
	}
	if price == 0 {
		return known(0, fmt.Sprintf("%s %s: no charge", kind, sku))
	}
	return known(price*pt.HoursPerMonth*count, fmt.Sprintf("%s %s %g/h x %g h x %g", kind, sku, price, pt.HoursPerMonth, count))
}

// cosmos prices a Cosmos DB database or container's provisioned throughput, per 100 RU/s; at
// its maximum when it autoscales (an hour is billed at the highest RU/s reached, at least a
// tenth of the maximum).
func (pt *PriceTable) cosmos(p *regionPrices, r *Resource, n float64) Cost {
	h := pt.HoursPerMonth
	if ru, ok := r.Number("autoscale_settings", 0, "max_throughput"); ok {
		price := p.ProvisionedThroughputHourly["cosmosAutoscale100RU"]
		return known(ru/100*price*h*n, fmt.Sprintf("autoscale at its maximum: %g RU/s / 100 x %g/h x %g h (one region)", ru, price, h))
	}
	if ru, ok := r.Number("throughput"); ok {
		price := p.ProvisionedThroughputHourly["cosmos100RU"]
		return known(ru/100*price*h*n, fmt.Sprintf("%g RU/s / 100 x %g/h x %g h (one region)", ru, price, h))
	}
	return known(0, "no throughput of its own: it shares its database's, or the account is serverless (usage-based)")
}

// azureSize matches Azure VM sizes: Standard_D2s_v3 is family D, 2 vCPUs, features s,
// version 3.
var azureSize = regexp.MustCompile(`^Standard_([A-Z]+)(\d+)([a-z]*)_v(\d)$`)

// azureSuccessor returns the current-generation size of the same shape for the general
// purpose and memory optimised D and E series (v2 to v4 become v5; DS2_v2 is D2s_v2's old
// name), and the series it belongs to.
func azureSuccessor(size string) (next, series string, ok bool) {
	m := azureSize.FindStringSubmatch(size)
	if m == nil {
		return "", "", false
	}
	family, vcpus, features, version := m[1], m[2], m[3], m[4]
	if family == "DS" {
		family, features = "D", "s"+features
	}
	if (family != "D" && family != "E") || version < "2" || version > "4" {
		return "", "", false
	}
	return fmt.Sprintf("Standard_%s%s%s_v5", family, vcpus, features), family + features + "v5", true
}

// inheritRegions gives Azure resources that declare no literal location the region of the
// resource they name it through (location = azurerm_resource_group.rg.location), or else of the
// first resource they refer to that has one: a database is where its server is, a container
// where its account is, a node pool where its cluster is.
func inheritRegions(rs []*Resource) {
	byAddress := map[string]*Resource{}
	for _, r := range rs {
		byAddress[r.Address] = r
	}
	// Each pass settles one more link of a chain (container -> database -> account).
	for changed := true; changed; {
		changed = false
		for _, r := range rs {
			if r.Provider != "azurerm" || r.Region != "" {
				continue
			}
			refs := r.Refs
			if loc := r.String("location"); Unresolved(loc) {
				if addr, ok := strings.CutSuffix(strings.TrimSuffix(strings.TrimPrefix(loc, "${"), "}"), ".location"); ok {
					refs = append([]string{addr}, refs...)
				}
			}
			for _, ref := range refs {
				if t, ok := byAddress[ref]; ok && t.Region != "" {
					r.Region, changed = t.Region, true
					break
				}
			}
		}
	}
}
