// Package cloud inventories the cloud resources a workspace declares (Terraform configuration
// and plan files, CloudFormation and SAM templates, Kubernetes manifests, docker-compose files),
// prices them from a price table shipped with the package, and recommends optimisations with
// the file and line that prove each one.
//
// The parsing is shared: a Collector takes the files of one workspace walk and builds an
// Inventory, which the security assessment reads too, so no declaration is parsed twice.
package cloud

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/platform-dev/platform/docparse"
	"github.com/platform-dev/platform/tools/workspace"
)

// Source formats of declarations.
const (
	SourceTerraform      = "terraform"
	SourceTerraformPlan  = "terraform-plan"
	SourceCloudFormation = "cloudformation"
	SourceKubernetes     = "kubernetes"
	SourceCompose        = "compose"
)

// Resource is one declared resource. Attrs is its attribute tree normalised to JSON-like Go
// values (map[string]any, []any, string, float64, bool, nil): Terraform nested blocks become
// lists of objects under the block type, as `terraform show -json` writes them, so that one rule
// reads HCL and plan files alike. A value that could not be resolved statically is kept as its
// source text wrapped in "${...}".
type Resource struct {
	Address  string `json:"address"`  // aws_instance.web, AWS::S3::Bucket Logs, Deployment/default/api, ...
	Type     string `json:"type"`     // aws_instance, AWS::EC2::Instance, Deployment, compose-service
	Name     string `json:"name"`     // the declared name
	Provider string `json:"provider"` // aws, google, kubernetes, compose
	Service  string `json:"service"`  // ec2, s3, rds, lambda, kubernetes, ...
	Region   string `json:"region,omitempty"`
	Source   string `json:"source"`
	File     string `json:"file"` // workspace-relative, slash-separated
	Line     int    `json:"line"`
	Count    int    `json:"count"` // instances declared (Terraform count, replicas are kept in Attrs)
	// Data marks a Terraform data source: read, not created, so neither priced nor listed.
	Data bool `json:"-"`

	Attrs map[string]any `json:"-"`
	// Refs are the resources this one refers to, as "type.name" (Terraform) or logical ids
	// (CloudFormation).
	Refs  []string       `json:"-"`
	lines map[string]int // attribute path ("ingress.0.cidr_blocks") -> line
}

// Location is "file:line" of the resource.
func (r *Resource) Location() string { return fmt.Sprintf("%s:%d", r.File, r.Line) }

// LineOf returns the line of the attribute at path (keys and list indexes), or of the
// closest enclosing attribute that has one, or of the resource.
func (r *Resource) LineOf(p ...any) int {
	for n := len(p); n > 0; n-- {
		if l, ok := r.lines[joinPath(p[:n])]; ok {
			return l
		}
	}
	return r.Line
}

// At returns "file:line" of the attribute at path.
func (r *Resource) At(p ...any) string { return fmt.Sprintf("%s:%d", r.File, r.LineOf(p...)) }

// Get returns the attribute at path (string keys, int list indexes), nil when absent.
func (r *Resource) Get(p ...any) any { return Lookup(r.Attrs, p...) }

// String returns the attribute at path as a string ("" when absent or not a scalar).
func (r *Resource) String(p ...any) string { return scalarString(r.Get(p...)) }

// Number returns the attribute at path as a number; ok is false when absent or not numeric.
func (r *Resource) Number(p ...any) (float64, bool) { return toNumber(r.Get(p...)) }

// Bool returns the attribute at path as a bool; ok is false when absent or not a boolean.
func (r *Resource) Bool(p ...any) (v, ok bool) {
	switch x := r.Get(p...).(type) {
	case bool:
		return x, true
	case string:
		b, err := strconv.ParseBool(x)
		return b, err == nil
	}
	return false, false
}

// Blocks returns the nested blocks (or list of objects) at path.
func (r *Resource) Blocks(p ...any) []map[string]any { return objects(r.Get(p...)) }

// RefersTo reports whether the resource refers to the resource with address addr.
func (r *Resource) RefersTo(addr string) bool {
	for _, ref := range r.Refs {
		if ref == addr {
			return true
		}
	}
	return false
}

// Lookup walks v along path: string steps index objects, int steps index lists.
func Lookup(v any, p ...any) any {
	for _, step := range p {
		switch s := step.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[s]
		case int:
			l, ok := v.([]any)
			if !ok || s < 0 || s >= len(l) {
				return nil
			}
			v = l[s]
		default:
			return nil
		}
	}
	return v
}

func objects(v any) []map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return []map[string]any{x}
	case []any:
		var out []map[string]any
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

func toNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// Unresolved reports whether v is a value kept as unresolved source text.
func Unresolved(v any) bool {
	s, ok := v.(string)
	return ok && strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}")
}

// maxLinePath bounds the attribute paths whose line is recorded, in bytes of their joined
// form; a longer path takes the line of its closest recorded ancestor. Every node records
// its path, so without a bound a document of kilobyte keys nested a hundred deep writes them
// out again for every node below them (a 400 KB ConfigMap took 28 GB).
const maxLinePath = 512

// setLine records the line of the attribute at path p.
func setLine(lines map[string]int, p []any, line int) {
	if k, ok := pathKey(p); ok {
		lines[k] = line
	}
}

// pathKey is joinPath(p), when it is within maxLinePath.
func pathKey(p []any) (string, bool) {
	n := 0
	for _, s := range p {
		if k, ok := s.(string); ok {
			n += len(k) + 1
		} else {
			n += 8 // a list index
		}
		if n > maxLinePath {
			return "", false
		}
	}
	return joinPath(p), true
}

func joinPath(p []any) string {
	parts := make([]string, len(p))
	for i, s := range p {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, ".")
}

// FileError is a declaration file that could not be parsed.
type FileError struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
	// Bound is the limit the file passed, when that is why it was not read (a few hundred
	// bytes of YAML aliases can expand to gigabytes), or why some of its Terraform
	// expressions were left unevaluated: such a file is handed to no other parser.
	Bound docparse.Bound `json:"bound,omitempty"`
}

// refused is the FileError of a file that passed one of docparse's bounds, or nil.
func refused(rel string, err error) *FileError {
	var le *docparse.LimitError
	switch {
	case errors.As(err, &le):
		return &FileError{File: rel, Line: le.Line, Message: err.Error(), Bound: le.Bound}
	case errors.Is(err, docparse.ErrAliasCycle):
		return &FileError{File: rel, Line: yamlErrorLine(err), Message: err.Error()}
	}
	return nil
}

// Inventory is every resource found below a folder.
type Inventory struct {
	Resources []*Resource `json:"resources"`
	Files     []string    `json:"files"` // declaration files read
	Errors    []FileError `json:"errors,omitempty"`
	// Truncated says the walk stopped at the workspace's file limit.
	Truncated bool `json:"truncated,omitempty"`
	// ImagePins maps image names to the tag (":1.2") or digest ("@sha256:...") that a
	// kustomization's images: transformer sets, which manifests then leave out.
	ImagePins map[string]string `json:"-"`
}

// Collector builds an Inventory from the files of a workspace walk. Terraform files are
// gathered per folder (a module) and resolved together in Inventory, since variables and
// locals of one file are used by the others. It is not safe for concurrent use.
type Collector struct {
	modules map[string]*tfModule // folder -> module
	inv     Inventory
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{modules: map[string]*tfModule{}, inv: Inventory{ImagePins: map[string]string{}}}
}

// Add reads f if it is a declaration file; other files are ignored. It reports whether f was
// one.
func (c *Collector) Add(f workspace.File) bool {
	if f.Content == nil || f.Binary || f.Vendored {
		return false
	}
	name := path.Base(f.Rel)
	ext := strings.ToLower(path.Ext(name))
	switch {
	case ext == ".tf" || ext == ".tfvars":
		dir := path.Dir(f.Rel)
		m := c.modules[dir]
		if m == nil {
			m = &tfModule{dir: dir}
			c.modules[dir] = m
		}
		if err := m.add(f.Rel, f.Content); err != nil {
			c.inv.Errors = append(c.inv.Errors, *err)
		}
		c.inv.Files = append(c.inv.Files, f.Rel)
		return true
	case ext == ".json":
		if !isPlan(f.Content) {
			return c.addTemplate(f, true)
		}
		if ferr := refused(f.Rel, docparse.CheckJSON(f.Content, docparse.DefaultLimits())); ferr != nil {
			c.inv.Errors = append(c.inv.Errors, *ferr)
			return true
		}
		rs, err := parsePlan(f.Rel, f.Content)
		if err != nil {
			c.inv.Errors = append(c.inv.Errors, FileError{File: f.Rel, Message: err.Error()})
			return true
		}
		c.inv.Resources = append(c.inv.Resources, rs...)
		c.inv.Files = append(c.inv.Files, f.Rel)
		return true
	case ext == ".yaml" || ext == ".yml" || ext == ".template":
		return c.addTemplate(f, false)
	}
	return false
}

// addTemplate reads a YAML (or JSON) document stream as CloudFormation, compose or Kubernetes.
func (c *Collector) addTemplate(f workspace.File, jsonOnly bool) bool {
	rs, ok, err := parseYAMLDeclarations(f.Rel, f.Content, jsonOnly, c.inv.ImagePins)
	if !ok {
		return false
	}
	c.inv.Files = append(c.inv.Files, f.Rel)
	if err != nil {
		c.inv.Errors = append(c.inv.Errors, *err)
	}
	c.inv.Resources = append(c.inv.Resources, rs...)
	return true
}

// Inventory resolves the Terraform modules and returns everything collected, ordered by file
// and line.
func (c *Collector) Inventory() *Inventory {
	inv := c.inv
	inv.Resources = append([]*Resource{}, c.inv.Resources...)
	for _, m := range c.modules {
		rs, errs := m.resources()
		inv.Resources = append(inv.Resources, rs...)
		inv.Errors = append(inv.Errors, errs...)
	}
	sort.SliceStable(inv.Resources, func(i, j int) bool {
		a, b := inv.Resources[i], inv.Resources[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	sort.Strings(inv.Files)
	sort.Slice(inv.Errors, func(i, j int) bool { return inv.Errors[i].File < inv.Errors[j].File })
	return &inv
}

// serviceOf maps a resource type to its provider and service. Terraform and CloudFormation
// name the same things differently (aws_subnet and AWS::EC2::Subnet, aws_cloudwatch_log_group
// and AWS::Logs::LogGroup): both map to one vocabulary, the service's name in AWS's own
// documentation and price list, so that a filter or a per-service total means the same for
// both.
func serviceOf(typ string) (provider, service string) {
	if strings.HasPrefix(typ, "AWS::") {
		parts := strings.Split(typ, "::")
		if len(parts) < 3 {
			return "aws", "other"
		}
		if svc, ok := cfnServices[parts[1]+"::"+parts[2]]; ok {
			return "aws", svc
		}
		if svc, ok := cfnServices[parts[1]]; ok {
			return "aws", svc
		}
		return "aws", strings.ToLower(parts[1])
	}
	for _, m := range tfServices {
		if strings.HasPrefix(typ, m.prefix) {
			return m.provider, m.service
		}
	}
	switch {
	case strings.HasPrefix(typ, "aws_"):
		return "aws", strings.SplitN(strings.TrimPrefix(typ, "aws_"), "_", 2)[0]
	case strings.HasPrefix(typ, "google_"):
		return "google", strings.SplitN(strings.TrimPrefix(typ, "google_"), "_", 2)[0]
	case strings.HasPrefix(typ, "kubernetes_"):
		return "kubernetes", "kubernetes"
	}
	provider = strings.SplitN(typ, "_", 2)[0]
	return provider, provider
}

// cfnServices maps CloudFormation namespaces (and, first, namespace::type) whose lower-cased
// name is not the service's to the vocabulary tfServices uses.
var cfnServices = map[string]string{
	"EC2::Volume": "ebs", "EC2::VolumeAttachment": "ebs",
	"EC2::VPC": "vpc", "EC2::Subnet": "vpc", "EC2::RouteTable": "vpc", "EC2::Route": "vpc",
	"EC2::SubnetRouteTableAssociation": "vpc", "EC2::InternetGateway": "vpc", "EC2::VPCGatewayAttachment": "vpc",
	"EC2::NatGateway": "vpc", "EC2::NetworkAcl": "vpc", "EC2::NetworkAclEntry": "vpc", "EC2::VPCEndpoint": "vpc",
	"EC2::EIP": "ec2", "Serverless::Function": "lambda", "Serverless::Api": "apigateway",
	"Serverless::HttpApi": "apigateway", "Serverless::SimpleTable": "dynamodb",
	"AutoScaling": "autoscaling", "ApplicationAutoScaling": "autoscaling",
	"ElasticLoadBalancingV2": "elb", "ElasticLoadBalancing": "elb",
	"ApiGateway": "apigateway", "ApiGatewayV2": "apigateway",
	"Logs": "cloudwatch", "Events": "cloudwatch", "CloudWatch": "cloudwatch",
	"CertificateManager": "acm", "StepFunctions": "sfn", "OpenSearchService": "opensearch", "Elasticsearch": "opensearch",
}

// tfServices names the service of the common Terraform resource types by prefix; the first
// match wins, so longer prefixes come first.
var tfServices = []struct{ prefix, provider, service string }{
	{"aws_instance", "aws", "ec2"},
	{"aws_launch_template", "aws", "ec2"},
	{"aws_launch_configuration", "aws", "ec2"},
	{"aws_eip", "aws", "ec2"},
	{"aws_security_group", "aws", "ec2"},
	{"aws_vpc_security_group", "aws", "ec2"},
	{"aws_key_pair", "aws", "ec2"},
	{"aws_nat_gateway", "aws", "vpc"},
	{"aws_vpc", "aws", "vpc"},
	{"aws_subnet", "aws", "vpc"},
	{"aws_route", "aws", "vpc"},
	{"aws_main_route_table", "aws", "vpc"},
	{"aws_internet_gateway", "aws", "vpc"},
	{"aws_network_acl", "aws", "vpc"},
	{"aws_default_", "aws", "vpc"},
	{"aws_ebs_volume", "aws", "ebs"},
	{"aws_volume_attachment", "aws", "ebs"},
	{"aws_autoscaling", "aws", "autoscaling"},
	{"aws_appautoscaling", "aws", "autoscaling"},
	{"aws_s3_", "aws", "s3"},
	{"aws_db_", "aws", "rds"},
	{"aws_rds_", "aws", "rds"},
	{"aws_lambda_", "aws", "lambda"},
	{"aws_dynamodb_", "aws", "dynamodb"},
	{"aws_eks_", "aws", "eks"},
	{"aws_ecs_", "aws", "ecs"},
	{"aws_lb", "aws", "elb"},
	{"aws_alb", "aws", "elb"},
	{"aws_elb", "aws", "elb"},
	{"aws_iam_", "aws", "iam"},
	{"aws_api_gateway_", "aws", "apigateway"},
	{"aws_apigatewayv2_", "aws", "apigateway"},
	{"aws_cloudwatch_", "aws", "cloudwatch"},
	{"aws_acm_", "aws", "acm"},
	{"aws_sfn_", "aws", "sfn"},
	{"aws_opensearch_", "aws", "opensearch"},
	{"aws_elasticsearch_", "aws", "opensearch"},
	{"google_compute_", "google", "compute"},
	{"google_sql_", "google", "cloudsql"},
	{"google_storage_", "google", "gcs"},
	{"google_cloudfunctions", "google", "cloudfunctions"},
	{"google_cloud_run", "google", "cloudrun"},
	{"google_container_", "google", "gke"},
	{"google_project_iam", "google", "iam"},
	// Azure: the service names of Azure's price list, in lower case.
	{"azurerm_kubernetes_", "azurerm", "aks"},
	{"azurerm_linux_virtual_machine", "azurerm", "virtual-machines"},
	{"azurerm_windows_virtual_machine", "azurerm", "virtual-machines"},
	{"azurerm_virtual_machine", "azurerm", "virtual-machines"},
	{"azurerm_managed_disk", "azurerm", "storage"},
	{"azurerm_storage_", "azurerm", "storage"},
	{"azurerm_mssql_", "azurerm", "sql-database"},
	{"azurerm_sql_", "azurerm", "sql-database"},
	{"azurerm_postgresql_", "azurerm", "postgresql"},
	{"azurerm_mysql_", "azurerm", "mysql"},
	{"azurerm_mariadb_", "azurerm", "mariadb"},
	{"azurerm_service_plan", "azurerm", "app-service"},
	{"azurerm_app_service", "azurerm", "app-service"},
	{"azurerm_linux_web_app", "azurerm", "app-service"},
	{"azurerm_windows_web_app", "azurerm", "app-service"},
	{"azurerm_lb", "azurerm", "load-balancer"},
	{"azurerm_nat_gateway", "azurerm", "nat-gateway"},
	{"azurerm_public_ip", "azurerm", "virtual-network"},
	{"azurerm_virtual_network", "azurerm", "virtual-network"},
	{"azurerm_subnet", "azurerm", "virtual-network"},
	{"azurerm_network_", "azurerm", "virtual-network"},
	{"azurerm_redis_", "azurerm", "redis"},
	{"azurerm_cosmosdb_", "azurerm", "cosmos-db"},
	{"azurerm_key_vault", "azurerm", "key-vault"},
}
