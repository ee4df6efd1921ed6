package cloud

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

//go:embed prices.json
var priceJSON []byte

// PriceTable holds on-demand list prices per provider region ("aws/us-east-1").
type PriceTable struct {
	Source        string                  `json:"source"`
	Date          string                  `json:"date"`
	Currency      string                  `json:"currency"`
	HoursPerMonth float64                 `json:"hoursPerMonth"`
	Regions       map[string]regionPrices `json:"regions"`
	// Derived regions are priced from a base region (see derivedRegion), but for the fees in
	// SameEverywhere, which the providers charge at one price in every region.
	Derived        map[string]derivedRegion `json:"derived"`
	SameEverywhere []string                 `json:"sameEverywhere"`
	// Verified names, per region, the provider price files its prices were checked against
	// (written by cmd/prices); a region not listed holds prices transcribed by hand.
	Verified map[string]string `json:"verified,omitempty"`
}

type regionPrices struct {
	InstanceHourly map[string]float64 `json:"instanceHourly,omitempty"`
	// WindowsInstanceHourly are Azure's Windows virtual machine prices, license included.
	WindowsInstanceHourly map[string]float64            `json:"windowsInstanceHourly,omitempty"`
	DatabaseHourly        map[string]map[string]float64 `json:"databaseHourly,omitempty"` // engine -> class -> $/h
	// SKUHourly prices services by the SKU name their declaration uses: kind (redis,
	// appServiceLinux, loadBalancer, ...) -> SKU -> $/h.
	SKUHourly           map[string]map[string]float64 `json:"skuHourly,omitempty"`
	BlockStorageGBMonth map[string]float64            `json:"blockStorageGBMonth,omitempty"`
	// ManagedDiskMonthly are Azure managed disk tiers (P10, E10, S10, LRS): a disk is billed
	// as the smallest tier that holds its size.
	ManagedDiskMonthly          map[string]float64 `json:"managedDiskMonthly,omitempty"`
	DatabaseStorageGBMonth      map[string]float64 `json:"databaseStorageGBMonth,omitempty"`
	ObjectStorageGBMonth        map[string]float64 `json:"objectStorageGBMonth,omitempty"`
	FixedHourly                 map[string]float64 `json:"fixedHourly,omitempty"` // resource type -> $/h
	ProvisionedThroughputHourly map[string]float64 `json:"provisionedThroughputHourly,omitempty"`
	Serverless                  map[string]float64 `json:"serverless,omitempty"`
}

// flat returns the region's one-level tables by their JSON name, and nested its two-level
// ones, so that deriving a region and refreshing prices from a provider's files walk them
// alike.
func (p *regionPrices) flat() map[string]*map[string]float64 {
	return map[string]*map[string]float64{
		"instanceHourly": &p.InstanceHourly, "windowsInstanceHourly": &p.WindowsInstanceHourly,
		"blockStorageGBMonth": &p.BlockStorageGBMonth, "managedDiskMonthly": &p.ManagedDiskMonthly,
		"databaseStorageGBMonth": &p.DatabaseStorageGBMonth, "objectStorageGBMonth": &p.ObjectStorageGBMonth,
		"fixedHourly": &p.FixedHourly, "provisionedThroughputHourly": &p.ProvisionedThroughputHourly,
		"serverless": &p.Serverless,
	}
}

func (p *regionPrices) nested() map[string]*map[string]map[string]float64 {
	return map[string]*map[string]map[string]float64{"databaseHourly": &p.DatabaseHourly, "skuHourly": &p.SKUHourly}
}

// lookup returns the price of key in the table named table (for a nested table, under group).
func (p *regionPrices) lookup(table, group, key string) (float64, bool) {
	if m, ok := p.flat()[table]; ok {
		v, ok := (*m)[key]
		return v, ok
	}
	if m, ok := p.nested()[table]; ok {
		v, ok := (*m)[group][key]
		return v, ok
	}
	return 0, false
}

// set writes the price of key in the table named table, creating the maps it needs.
func (p *regionPrices) set(table, group, key string, v float64) {
	if m, ok := p.flat()[table]; ok {
		if *m == nil {
			*m = map[string]float64{}
		}
		(*m)[key] = v
		return
	}
	if m, ok := p.nested()[table]; ok {
		if *m == nil {
			*m = map[string]map[string]float64{}
		}
		if (*m)[group] == nil {
			(*m)[group] = map[string]float64{}
		}
		(*m)[group][key] = v
	}
}

// each calls fn for every price of p.
func (p *regionPrices) each(fn func(table, group, key string, v float64)) {
	for name, m := range p.flat() {
		for k, v := range *m {
			fn(name, "", k, v)
		}
	}
	for name, m := range p.nested() {
		for g, classes := range *m {
			for k, v := range classes {
				fn(name, g, k, v)
			}
		}
	}
}

// Prices returns the price table shipped with the package, its derived regions priced.
func Prices() (*PriceTable, error) { return readDerived(priceJSON) }

// readDerived decodes a price table and prices its derived regions.
func readDerived(b []byte) (*PriceTable, error) {
	pt, err := ReadPriceTable(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	if err := pt.derive(); err != nil {
		return nil, fmt.Errorf("price table: %w", err)
	}
	return pt, nil
}

// ReadPriceTable decodes a price table as prices.json stores it: derived regions are left
// under Derived, not priced, so that the table can be refreshed and written back.
func ReadPriceTable(r io.Reader) (*PriceTable, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields() // a field this code does not know would be lost on writing back
	var pt PriceTable
	if err := dec.Decode(&pt); err != nil {
		return nil, fmt.Errorf("price table: %w", err)
	}
	return &pt, nil
}

// Cost is the monthly estimate of one resource. Monthly is nil when the price is unknown: the
// type or region is not in the table, the size is not declared, or the charge depends on usage.
type Cost struct {
	Monthly *float64 `json:"monthly"`
	// Basis shows the arithmetic ("t3.micro 0.0104/h x 730 h x 2"), Note why there is none.
	Basis string `json:"basis,omitempty"`
	Note  string `json:"note,omitempty"`
}

func known(v float64, basis string) Cost {
	v = math.Round(v*100) / 100
	return Cost{Monthly: &v, Basis: basis}
}

func unknown(format string, a ...any) Cost { return Cost{Note: fmt.Sprintf(format, a...)} }

// freeTypes are resource types the providers do not charge for by themselves (they configure
// or connect resources that are charged): prefixes of Terraform and CloudFormation types.
var freeTypes = []string{
	"aws_iam_", "aws_security_group", "aws_vpc", "aws_subnet", "aws_route", "aws_main_route_table_association",
	"aws_internet_gateway", "aws_network_acl", "aws_default_", "aws_key_pair",
	"aws_s3_bucket_", "aws_volume_attachment", "aws_eip_association", "aws_appautoscaling_",
	"aws_autoscaling_policy", "aws_autoscaling_attachment", "aws_launch_template", "aws_launch_configuration", "aws_lb_listener",
	"aws_lb_target_group", "aws_alb_listener", "aws_alb_target_group", "aws_db_subnet_group", "aws_db_parameter_group",
	"aws_db_option_group", "aws_rds_cluster_parameter_group", "aws_elasticache_subnet_group", "aws_elasticache_parameter_group",
	"aws_lambda_permission", "aws_lambda_event_source_mapping", "aws_ecs_cluster", "aws_ecs_task_definition",
	"aws_sns_topic_subscription", "aws_sns_topic_policy", "aws_sqs_queue_policy", "aws_api_gateway_deployment",
	"aws_api_gateway_resource", "aws_api_gateway_method", "aws_api_gateway_integration",
	"google_project_iam", "google_compute_firewall", "google_compute_network", "google_compute_subnetwork",
	"google_compute_route", "google_compute_instance_template", "google_service_account", "google_project_service",
	"google_storage_bucket_iam", "google_kms_key_ring",
	"AWS::IAM::", "AWS::EC2::SecurityGroup", "AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::RouteTable",
	"AWS::EC2::Route", "AWS::EC2::SubnetRouteTableAssociation", "AWS::EC2::InternetGateway", "AWS::EC2::NetworkAcl",
	"AWS::EC2::KeyPair", "AWS::S3::BucketPolicy", "AWS::Lambda::Permission", "AWS::Lambda::EventSourceMapping",
	"AWS::EC2::LaunchTemplate", "AWS::EC2::VolumeAttachment", "AWS::EC2::EIPAssociation", "AWS::AutoScaling::LaunchConfiguration",
	"AWS::AutoScaling::ScalingPolicy", "AWS::ApplicationAutoScaling::", "AWS::ElasticLoadBalancingV2::Listener",
	"AWS::ElasticLoadBalancingV2::TargetGroup", "AWS::RDS::DBSubnetGroup", "AWS::RDS::DBParameterGroup",
	"AWS::RDS::DBClusterParameterGroup", "AWS::ElastiCache::SubnetGroup", "AWS::ECS::Cluster", "AWS::ECS::TaskDefinition",
	"AWS::SNS::Subscription", "AWS::SNS::TopicPolicy", "AWS::SQS::QueuePolicy", "AWS::CloudFormation::",
	"AWS::ApiGateway::Deployment", "AWS::ApiGateway::Resource", "AWS::ApiGateway::Method",
	"AWS::EC2::VPCGatewayAttachment", "AWS::EC2::SecurityGroupIngress", "AWS::EC2::SecurityGroupEgress",
	"AWS::EC2::NetworkAclEntry", "AWS::EC2::SubnetNetworkAclAssociation",
	"azurerm_resource_group", "azurerm_virtual_network", "azurerm_subnet", "azurerm_network_security_group",
	"azurerm_network_security_rule", "azurerm_network_interface", "azurerm_route_table", "azurerm_route",
	"azurerm_role_assignment", "azurerm_role_definition", "azurerm_user_assigned_identity",
	"azurerm_sql_server", "azurerm_mssql_server", "azurerm_sql_firewall_rule", "azurerm_mssql_firewall_rule",
	"azurerm_mssql_virtual_network_rule", "azurerm_sql_virtual_network_rule", "azurerm_postgresql_flexible_server_",
	"azurerm_mysql_flexible_server_", "azurerm_mysql_flexible_database", "azurerm_postgresql_configuration",
	"azurerm_postgresql_firewall_rule", "azurerm_mysql_firewall_rule", "azurerm_mysql_configuration",
	"azurerm_storage_account_network_rules", "azurerm_storage_container", "azurerm_key_vault_access_policy",
	"azurerm_network_watcher", "azurerm_nat_gateway_public_ip_association", "azurerm_lb_backend_address_pool",
	"azurerm_lb_rule", "azurerm_lb_probe", "azurerm_lb_nat_rule", "azurerm_lb_outbound_rule",
	"azurerm_app_service_virtual_network_swift_connection",
	"azurerm_kubernetes_cluster_extension", "azurerm_management_lock", "azurerm_monitor_diagnostic_setting",
}

// chargedTypes extend a free type's name but are charged (an interface endpoint by the hour).
var chargedTypes = map[string]bool{"aws_vpc_endpoint": true, "azurerm_virtual_network_gateway": true,
	"azurerm_virtual_network_gateway_connection": true, "azurerm_virtual_network_peering": true,
	"azurerm_route_server": true, "azurerm_network_watcher_flow_log": true}

// free reports whether a resource type costs nothing by itself: a free type's exact name, a
// family ending in "_" or "::", or a free type's own sub-resources (aws_security_group_rule).
func free(typ string) bool {
	if chargedTypes[typ] {
		return false
	}
	for _, f := range freeTypes {
		switch {
		case typ == f,
			(strings.HasSuffix(f, "_") || strings.HasSuffix(f, "::")) && strings.HasPrefix(typ, f),
			len(typ) > len(f) && typ[len(f)] == '_' && strings.HasPrefix(typ, f):
			return true
		}
	}
	return false
}

// region returns the prices of r's region, or why there are none.
func (pt *PriceTable) region(r *Resource, fallback string) (*regionPrices, string, string) {
	reg := r.Region
	if reg == "" {
		reg = fallback
	}
	if reg == "" {
		return nil, "", "region not declared"
	}
	key := r.Provider + "/" + reg
	p, ok := pt.Regions[key]
	if !ok {
		return nil, key, fmt.Sprintf("no prices for region %s in the table, which knows these %s regions: %s", key, r.Provider, pt.regionList(r.Provider))
	}
	return &p, key, ""
}

// regionList names the regions of provider the table prices, for a note that says what a
// region could have been.
func (pt *PriceTable) regionList(provider string) string {
	var names []string
	for key := range pt.Regions {
		if name, ok := strings.CutPrefix(key, provider+"/"); ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "none of that provider"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Estimate prices one resource. fallbackRegion applies to resources that declare no region
// (CloudFormation templates are deployed into a region chosen at deploy time). idx finds the
// resources r refers to (an autoscaling group's launch template).
func (pt *PriceTable) Estimate(r *Resource, fallbackRegion string, idx map[string]*Resource) Cost {
	if r.Provider == "kubernetes" || r.Provider == "compose" {
		return unknown("runs on the capacity of its cluster or host: price the nodes")
	}
	if free(r.Type) {
		return known(0, "no charge for this resource type")
	}
	p, _, why := pt.region(r, fallbackRegion)
	if p == nil {
		return unknown("%s", why)
	}
	h := pt.HoursPerMonth
	n := float64(max(r.Count, 0))
	if r.Provider == "azurerm" {
		if c, ok := pt.azure(p, r, n); ok {
			return c
		}
	}
	switch r.Type {
	case "aws_instance", "AWS::EC2::Instance", "google_compute_instance":
		it := firstString(r, "instance_type", "InstanceType", "machine_type")
		price, ok := p.InstanceHourly[it]
		if !ok {
			return unknown("instance type %q not in the price table", it)
		}
		return known(price*h*n, fmt.Sprintf("%s %g/h x %g h x %g", it, price, h, n))
	case "aws_autoscaling_group":
		size, ok := r.Number("desired_capacity")
		if !ok {
			size, ok = r.Number("min_size")
		}
		if !ok {
			return unknown("group size not declared")
		}
		it := ""
		for _, ref := range r.Refs {
			if t, ok := idx[ref]; ok {
				it = firstString(t, "instance_type")
			}
		}
		price, ok := p.InstanceHourly[it]
		if !ok {
			return unknown("instance type of the launch template %q not in the price table", it)
		}
		return known(price*h*size, fmt.Sprintf("%s %g/h x %g h x %g instances", it, price, h, size))
	case "aws_ebs_volume", "AWS::EC2::Volume", "google_compute_disk":
		size, ok := numberOf(r, "size", "Size")
		if !ok {
			return unknown("volume size not declared")
		}
		vt := firstString(r, "type", "VolumeType")
		if vt == "" {
			vt = map[string]string{"aws": "gp2", "google": "pd-standard"}[r.Provider] // the APIs' defaults
		}
		price, ok := p.BlockStorageGBMonth[vt]
		if !ok {
			return unknown("volume type %q not in the price table", vt)
		}
		return known(price*size*n, fmt.Sprintf("%s %g/GB-month x %g GB x %g", vt, price, size, n))
	case "aws_db_instance", "AWS::RDS::DBInstance":
		return pt.database(p, r, n)
	case "google_sql_database_instance":
		tier := r.String("settings", 0, "tier")
		price, ok := p.DatabaseHourly["any"][tier]
		if !ok {
			return unknown("Cloud SQL tier %q not in the price table", tier)
		}
		return known(price*h, fmt.Sprintf("%s %g/h x %g h", tier, price, h))
	case "aws_dynamodb_table", "AWS::DynamoDB::Table":
		mode := firstString(r, "billing_mode", "BillingMode")
		if mode == "PAY_PER_REQUEST" {
			return unknown("usage-based (on-demand requests)")
		}
		rcu, ok1 := numberOf(r, "read_capacity")
		wcu, ok2 := numberOf(r, "write_capacity")
		if !ok1 || !ok2 {
			rcu, ok1 = r.Number("ProvisionedThroughput", "ReadCapacityUnits")
			wcu, ok2 = r.Number("ProvisionedThroughput", "WriteCapacityUnits")
		}
		if !ok1 || !ok2 {
			return unknown("provisioned capacity not declared")
		}
		pr, pw := p.ProvisionedThroughputHourly["readCapacityUnit"], p.ProvisionedThroughputHourly["writeCapacityUnit"]
		return known((rcu*pr+wcu*pw)*h, fmt.Sprintf("(%g RCU x %g + %g WCU x %g)/h x %g h", rcu, pr, wcu, pw, h))
	case "aws_s3_bucket", "AWS::S3::Bucket", "google_storage_bucket":
		class := firstString(r, "storage_class")
		if class == "" {
			class = "STANDARD"
		}
		return unknown("usage-based: %s storage %g per GB-month plus requests", class, p.ObjectStorageGBMonth[class])
	case "aws_lambda_function", "AWS::Lambda::Function", "AWS::Serverless::Function",
		"google_cloudfunctions_function", "google_cloudfunctions2_function":
		return unknown("usage-based: %g per million requests plus %g per GB-second",
			p.Serverless["requestsPerMillion"], p.Serverless["gbSecond"])
	}
	if price, ok := p.FixedHourly[r.Type]; ok {
		return known(price*h*n, fmt.Sprintf("%g/h x %g h x %g", price, h, n))
	}
	return unknown("resource type %s not in the price table", r.Type)
}

func (pt *PriceTable) database(p *regionPrices, r *Resource, n float64) Cost {
	class := firstString(r, "instance_class", "DBInstanceClass")
	engine := strings.ToLower(firstString(r, "engine", "Engine"))
	switch engine {
	case "postgresql":
		engine = "postgres"
	case "mariadb":
		engine = "mysql" // RDS lists MariaDB at the MySQL price
	}
	price, ok := p.DatabaseHourly[engine][class]
	if !ok {
		return unknown("database %s %s not in the price table", engine, class)
	}
	azs := 1.0
	if v, ok := r.Bool("multi_az"); ok && v {
		azs = 2
	} else if v, ok := r.Bool("MultiAZ"); ok && v {
		azs = 2
	}
	h := pt.HoursPerMonth
	total := price * h * azs * n
	basis := fmt.Sprintf("%s %s %g/h x %g h x %g AZ", engine, class, price, h, azs)
	if size, ok := numberOf(r, "allocated_storage", "AllocatedStorage"); ok {
		st := firstString(r, "storage_type", "StorageType")
		if st == "" {
			st = "gp2"
		}
		sp, ok := p.DatabaseStorageGBMonth[st]
		if !ok {
			return unknown("database storage type %q not in the price table", st)
		}
		total += sp * size * azs * n
		basis += fmt.Sprintf(" + %s %g/GB-month x %g GB x %g AZ", st, sp, size, azs)
	}
	return known(total, basis)
}

// hourly returns the on-demand price of an instance or database class in r's region.
func (pt *PriceTable) hourly(r *Resource, fallbackRegion, class string) (float64, bool) {
	p, _, _ := pt.region(r, fallbackRegion)
	if p == nil {
		return 0, false
	}
	if strings.HasPrefix(class, "db.") {
		engine := strings.ToLower(firstString(r, "engine", "Engine"))
		if engine == "postgresql" {
			engine = "postgres"
		}
		v, ok := p.DatabaseHourly[engine][class]
		return v, ok
	}
	if r.Provider == "azurerm" && windows(r) {
		v, ok := p.WindowsInstanceHourly[class]
		return v, ok
	}
	v, ok := p.InstanceHourly[class]
	return v, ok
}

// exists reports whether an instance or database class is offered in r's region, as far as
// the price table knows (it lists what it prices); when r's region is not in the table, in any
// region of r's provider.
func (pt *PriceTable) exists(r *Resource, fallbackRegion, class string) bool {
	if p, _, _ := pt.region(r, fallbackRegion); p != nil {
		return p.offers(class)
	}
	for key, p := range pt.Regions {
		if strings.HasPrefix(key, r.Provider+"/") && p.offers(class) {
			return true
		}
	}
	return false
}

func (p *regionPrices) offers(class string) bool {
	if _, ok := p.InstanceHourly[class]; ok {
		return true
	}
	if _, ok := p.WindowsInstanceHourly[class]; ok {
		return true
	}
	for _, classes := range p.DatabaseHourly {
		if _, ok := classes[class]; ok {
			return true
		}
	}
	return false
}

// storage returns the price per GB-month of a block volume type in r's region.
func (pt *PriceTable) storage(r *Resource, fallbackRegion, typ string, database bool) (float64, bool) {
	p, _, _ := pt.region(r, fallbackRegion)
	if p == nil {
		return 0, false
	}
	m := p.BlockStorageGBMonth
	if database {
		m = p.DatabaseStorageGBMonth
	}
	v, ok := m[typ]
	return v, ok
}

func firstString(r *Resource, keys ...string) string {
	for _, k := range keys {
		if s := r.String(k); s != "" && !Unresolved(s) {
			return s
		}
	}
	return ""
}

func numberOf(r *Resource, keys ...string) (float64, bool) {
	for _, k := range keys {
		if v, ok := r.Number(k); ok {
			return v, true
		}
	}
	return 0, false
}
