package cloud_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools/cloud"
)

func byAddress(r *cloud.Report) map[string]cloud.ResourceEntry {
	out := map[string]cloud.ResourceEntry{}
	for _, e := range r.Resources {
		out[e.Address] = e
	}
	return out
}

// The same thing declared in Terraform and in CloudFormation belongs to the same service.
func TestOneServiceVocabulary(t *testing.T) {
	pairs := [][2]string{
		{"aws_subnet", "AWS::EC2::Subnet"}, {"aws_vpc", "AWS::EC2::VPC"}, {"aws_route_table", "AWS::EC2::RouteTable"},
		{"aws_internet_gateway", "AWS::EC2::InternetGateway"}, {"aws_nat_gateway", "AWS::EC2::NatGateway"},
		{"aws_volume_attachment", "AWS::EC2::VolumeAttachment"}, {"aws_ebs_volume", "AWS::EC2::Volume"},
		{"aws_instance", "AWS::EC2::Instance"}, {"aws_cloudwatch_log_group", "AWS::Logs::LogGroup"},
		{"aws_api_gateway_rest_api", "AWS::ApiGateway::RestApi"}, {"aws_apigatewayv2_api", "AWS::ApiGatewayV2::Api"},
		{"aws_lb", "AWS::ElasticLoadBalancingV2::LoadBalancer"}, {"aws_elb", "AWS::ElasticLoadBalancing::LoadBalancer"},
		{"aws_acm_certificate", "AWS::CertificateManager::Certificate"}, {"aws_sfn_state_machine", "AWS::StepFunctions::StateMachine"},
		{"aws_db_instance", "AWS::RDS::DBInstance"}, {"aws_lambda_function", "AWS::Lambda::Function"},
	}
	var tf, cfn strings.Builder
	cfn.WriteString("AWSTemplateFormatVersion: '2010-09-09'\nResources:\n")
	for i, p := range pairs {
		tf.WriteString("resource \"" + p[0] + "\" \"r" + string(rune('a'+i)) + "\" {}\n")
		cfn.WriteString("  R" + string(rune('a'+i)) + ":\n    Type: " + p[1] + "\n    Properties: {}\n")
	}
	a, _ := newAnalyzer(t, testenv.TempTree(t, map[string]string{"main.tf": tf.String(), "stack.yaml": cfn.String()}))
	got := byAddress(call(t, a, `{"cost_analysis":false}`))
	for i, p := range pairs {
		ta, ca := p[0]+".r"+string(rune('a'+i)), "R"+string(rune('a'+i))
		if got[ta].Service == "" || got[ta].Service != got[ca].Service {
			t.Errorf("%s is %q, %s is %q", p[0], got[ta].Service, p[1], got[ca].Service)
		}
	}
}

// The same stack in Terraform and in CloudFormation costs the same in every region: the
// template is priced in the region asked for, the Terraform in its provider's.
func TestTerraformAndCloudFormationCostTheSame(t *testing.T) {
	tf := `provider "aws" { region = "%s" }
resource "aws_instance" "web" { instance_type = "t3.medium" }
resource "aws_nat_gateway" "nat" { subnet_id = "subnet-1" }
resource "aws_ebs_volume" "data" {
  size = 100
  type = "gp3"
}
resource "aws_db_instance" "db" {
  engine            = "postgres"
  instance_class    = "db.t3.micro"
  allocated_storage = 20
}
resource "aws_subnet" "a" { vpc_id = "vpc-1" }
`
	cfn := `AWSTemplateFormatVersion: '2010-09-09'
Resources:
  Web:
    Type: AWS::EC2::Instance
    Properties: {InstanceType: t3.medium}
  Nat:
    Type: AWS::EC2::NatGateway
    Properties: {SubnetId: subnet-1}
  Data:
    Type: AWS::EC2::Volume
    Properties: {Size: 100, VolumeType: gp3}
  Db:
    Type: AWS::RDS::DBInstance
    Properties: {Engine: postgres, DBInstanceClass: db.t3.micro, AllocatedStorage: 20}
  A:
    Type: AWS::EC2::Subnet
    Properties: {VpcId: vpc-1}
`
	pairs := map[string]string{"aws_instance.web": "Web", "aws_nat_gateway.nat": "Nat", "aws_ebs_volume.data": "Data",
		"aws_db_instance.db": "Db", "aws_subnet.a": "A"}
	for _, region := range []string{"us-east-1", "us-west-2", "eu-central-1", "ap-southeast-1", "sa-east-1"} {
		a, _ := newAnalyzer(t, testenv.TempTree(t, map[string]string{"main.tf": fmt.Sprintf(tf, region), "stack.yaml": cfn}))
		rep := call(t, a, fmt.Sprintf(`{"region":%q}`, region))
		got := byAddress(rep)
		for ta, ca := range pairs {
			te, ce := got[ta], got[ca]
			if te.Cost.Monthly == nil || ce.Cost.Monthly == nil || *te.Cost.Monthly != *ce.Cost.Monthly || te.Service != ce.Service {
				t.Errorf("%s: %s is %s %+v, %s is %s %+v", region, ta, te.Service, te.Cost, ca, ce.Service, ce.Cost)
			}
		}
		if rep.Cost.Unpriced != 0 {
			t.Errorf("%s: %d unpriced", region, rep.Cost.Unpriced)
		}
	}
}

// Resources that cost nothing by themselves are priced at $0, not left unpriced; the charged
// ones whose names extend a free one's are not.
func TestFreeResourcesCostZero(t *testing.T) {
	tf := `provider "aws" { region = "us-east-1" }
resource "aws_route_table" "a" {}
resource "aws_route_table_association" "b" {}
resource "aws_network_acl" "c" {}
resource "aws_ecs_cluster" "d" {}
resource "aws_ecs_task_definition" "e" {}
resource "aws_key_pair" "f" {}
resource "aws_security_group_rule" "g" {}
resource "aws_db_subnet_group" "h" {}
resource "aws_vpc_endpoint" "charged" {}
resource "aws_route53_zone" "charged2" {}
resource "azurerm_resource_group" "i" { location = "eastus" }
resource "azurerm_virtual_network" "j" { location = "eastus" }
resource "azurerm_subnet" "k" {}
resource "azurerm_subnet_network_security_group_association" "l" {}
resource "azurerm_network_interface" "m" { location = "eastus" }
resource "azurerm_role_assignment" "n" {}
resource "azurerm_virtual_network_gateway" "charged3" { location = "eastus" }
resource "azurerm_route_server" "charged4" { location = "eastus" }
`
	cfn := `Resources:
  Rt: {Type: AWS::EC2::RouteTable, Properties: {}}
  Attach: {Type: AWS::EC2::VPCGatewayAttachment, Properties: {}}
  Ingress: {Type: AWS::EC2::SecurityGroupIngress, Properties: {}}
  Cluster: {Type: AWS::ECS::Cluster, Properties: {}}
  Endpoint: {Type: AWS::EC2::VPCEndpoint, Properties: {}}
`
	a, _ := newAnalyzer(t, testenv.TempTree(t, map[string]string{"main.tf": tf, "stack.yaml": cfn}))
	got := byAddress(call(t, a, `{}`))
	if len(got) != 23 {
		t.Errorf("%d resources, want 23", len(got))
	}
	for addr, e := range got {
		charged := strings.Contains(addr, "charged") || addr == "Endpoint"
		if zero := e.Cost.Monthly != nil && *e.Cost.Monthly == 0; zero == charged {
			t.Errorf("%s (%s): cost %+v", addr, e.Type, e.Cost)
		}
	}
}

// Prices come from the declared region: the base regions' own prices, the other regions' derived
// from their reference price; a family a region does not offer is not priced there, and a
// region the table lacks says so and names the ones it knows.
func TestRegionalPrices(t *testing.T) {
	tfs := map[string]string{"aws": `provider "aws" { region = "%s" }
resource "aws_instance" "web" { instance_type = "%s" }
`, "google": `provider "google" { region = "%s" }
resource "google_compute_instance" "web" { machine_type = "%s" }
`, "azurerm": `resource "azurerm_linux_virtual_machine" "web" {
  location = "%s"
  size     = "%s"
}
`}
	for _, tt := range []struct {
		provider    string
		region, typ string
		monthly     float64 // -1: unpriced
		note        string
	}{
		{"aws", "us-east-1", "t3.micro", 7.59, ""},
		{"aws", "us-east-1", "m7i.large", 73.58, ""}, // karpenter-provider-aws's table: 0.1008/h
		{"aws", "us-east-1", "m5.small", -1, `instance type "m5.small" not in the price table`},
		{"aws", "us-gov-west-1", "t3.micro", 8.91, ""}, // karpenter-provider-aws's GovCloud table: 0.0122/h
		{"aws", "us-gov-east-1", "m4.large", -1, `instance type "m4.large" not in the price table`},
		{"aws", "us-west-2", "t3.micro", 7.59, ""},
		{"aws", "us-west-2", "m3.medium", 48.91, ""},
		{"aws", "us-east-2", "m5.large", 70.08, ""},
		{"aws", "us-east-2", "m3.medium", -1, `instance type "m3.medium" not in the price table`},
		{"aws", "eu-west-3", "t3.micro", 8.61, ""},
		{"aws", "eu-central-1", "t3.micro", 8.76, ""},
		{"aws", "eu-central-1", "m5.large", 80.88, ""},
		{"aws", "ap-southeast-1", "t3.micro", 9.64, ""},
		{"aws", "ap-southeast-1", "c5.large", 78.77, ""},
		{"aws", "sa-east-1", "t3.micro", 12.26, ""},
		{"aws", "eu-north-1", "m4.large", -1, `instance type "m4.large" not in the price table`},
		{"aws", "mars-east-1", "t3.micro", -1, "no prices for region aws/mars-east-1 in the table, which knows these aws regions: af-south-1, "},
		{"google", "us-central1", "n1-standard-1", 34.67, ""},
		{"google", "europe-west1", "n1-standard-1", 38.14, ""}, // karpenter-provider-gcp's table: 0.05225175/h
		{"google", "europe-west1", "e2-standard-2", 53.81, ""},
		{"google", "asia-southeast1", "n2-standard-4", 174.92, ""},
		{"azurerm", "East US", "Standard_B2s", 30.37, ""},
		{"azurerm", "westus2", "Standard_D2s_v3", 70.08, ""},
		{"azurerm", "West Europe", "Standard_B2s", 35.04, ""}, // published 0.048/h; the factor gave 0.0416 x 0.12/0.096 = 0.052
		{"azurerm", "uksouth", "Standard_D2s_v5", 81.03, ""},  // published 0.111/h
		{"azurerm", "Mars Central", "Standard_B2s", -1, "no prices for region azurerm/marscentral in the table, which knows these azurerm regions: australiaeast, "},
		{"azurerm", "eastus", "Standard_Q9", -1, `Linux size "Standard_Q9" not in the price table`},
		{"google", "mars1", "n1-standard-1", -1, "no prices for region google/mars1 in the table, which knows these google regions: asia-northeast1, "},
	} {
		a, _ := newAnalyzer(t, testenv.TempTree(t, map[string]string{"main.tf": fmt.Sprintf(tfs[tt.provider], tt.region, tt.typ)}))
		e := byAddress(call(t, a, `{}`))[map[string]string{"aws": "aws_instance.web", "google": "google_compute_instance.web", "azurerm": "azurerm_linux_virtual_machine.web"}[tt.provider]]
		switch {
		case tt.monthly < 0 && (e.Cost.Monthly != nil || !strings.Contains(e.Cost.Note, tt.note)):
			t.Errorf("%s %s: %+v, want unpriced: %s", tt.region, tt.typ, e.Cost, tt.note)
		case tt.monthly >= 0 && (e.Cost.Monthly == nil || *e.Cost.Monthly != tt.monthly):
			t.Errorf("%s %s: %+v, want %v", tt.region, tt.typ, e.Cost, tt.monthly)
		}
	}
}

// A recommendation never names a type that does not exist: n1-standard-1 has no
// e2-standard-1, m1.small no m5.small.
func TestRecommendationsNameOnlyExistingTypes(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{"main.tf": `provider "google" { region = "us-central1" }
resource "google_compute_instance" "small" {
  machine_type = "n1-standard-1"
  zone         = "us-central1-a"
}
resource "google_compute_instance" "mid" {
  machine_type = "n1-standard-2"
  zone         = "us-central1-a"
}
`, "aws.tf": `provider "aws" { region = "us-east-1" }
resource "aws_instance" "old" { instance_type = "m1.small" }
`, "azure.tf": `resource "azurerm_linux_virtual_machine" "small" {
  location = "eastus"
  size     = "Standard_DS1_v2"
}
`})
	a, _ := newAnalyzer(t, dir)
	actions := map[string]string{}
	for _, r := range call(t, a, `{}`).Recommendations {
		if r.ID == cloud.RecPreviousGeneration {
			actions[r.Resource] = r.Action
		}
	}
	for res, bad := range map[string]string{"google_compute_instance.small": "e2-standard-1", "aws_instance.old": "m5.small",
		"azurerm_linux_virtual_machine.small": "Standard_D1s_v5"} {
		if a := actions[res]; a == "" || strings.Contains(a, bad) {
			t.Errorf("%s: action %q", res, a)
		}
	}
	if a := actions["google_compute_instance.mid"]; !strings.Contains(a, "e2-standard-2") {
		t.Errorf("mid: action %q, want e2-standard-2 named", a)
	}
}

// us-east-1's instance table is the list of every type the region offers (read from
// karpenter-provider-aws's generated table), so a previous-generation type is moved to its
// same-named successor when the region has it, with the saving, and to its family when not:
// c5 has no 8xlarge.
func TestRecommendationsFollowTheRegionsTypeList(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{"main.tf": `provider "aws" { region = "us-east-1" }
resource "aws_instance" "m4" { instance_type = "m4.16xlarge" }
resource "aws_instance" "r3" { instance_type = "r3.8xlarge" }
resource "aws_instance" "c4" { instance_type = "c4.8xlarge" }
`})
	a, _ := newAnalyzer(t, dir)
	got := map[string]cloud.Recommendation{}
	for _, r := range call(t, a, `{}`).Recommendations {
		if r.ID == cloud.RecPreviousGeneration {
			got[r.Resource] = r
		}
	}
	for _, tt := range []struct {
		resource, action string
		saving           float64 // -1: none
	}{
		{"aws_instance.m4", "Move to m5.16xlarge:", 93.44}, // (3.2 - 3.072) x 730
		{"aws_instance.r3", "Move to r5.8xlarge:", 470.12}, // (2.66 - 2.016) x 730
		{"aws_instance.c4", "Move to the current c5 family; c4.8xlarge has no same-named size there", -1},
	} {
		r, ok := got[tt.resource]
		switch {
		case !ok || !strings.HasPrefix(r.Action, tt.action):
			t.Errorf("%s: action %q, want %q", tt.resource, r.Action, tt.action)
		case tt.saving >= 0 && (r.MonthlySaving == nil || *r.MonthlySaving != tt.saving):
			t.Errorf("%s: saving %v (%s), want %v", tt.resource, r.MonthlySaving, r.SavingNote, tt.saving)
		case tt.saving < 0 && r.MonthlySaving != nil:
			t.Errorf("%s: saving %v for a type that does not exist", tt.resource, *r.MonthlySaving)
		}
	}
}

// In every region the table knows, a previous-generation recommendation names a type that the
// table lists for that region, or none.
func TestRecommendedTypesExistInTheirRegion(t *testing.T) {
	pt, err := cloud.Prices()
	if err != nil {
		t.Fatal(err)
	}
	tfs := map[string]string{"aws": `provider "aws" { region = %[1]q }
resource "aws_instance" "old" { instance_type = "m4.large" }
resource "aws_instance" "small" { instance_type = "m1.small" }
`, "google": `provider "google" { region = %[1]q }
resource "google_compute_instance" "old" { machine_type = "n1-standard-2" }
resource "google_compute_instance" "small" { machine_type = "n1-standard-1" }
`, "azurerm": `resource "azurerm_linux_virtual_machine" "old" {
  location = %[1]q
  size     = "Standard_D2s_v3"
}
resource "azurerm_windows_virtual_machine" "old" {
  location = %[1]q
  size     = "Standard_E2s_v3"
}
resource "azurerm_linux_virtual_machine" "small" {
  location = %[1]q
  size     = "Standard_DS1_v2"
}
`}
	named := regexp.MustCompile(`^Move to ([A-Za-z0-9._-]+):`)
	for key := range pt.Regions {
		provider, region, _ := strings.Cut(key, "/")
		a, _ := newAnalyzer(t, testenv.TempTree(t, map[string]string{"main.tf": fmt.Sprintf(tfs[provider], region)}))
		seen := map[string]bool{}
		for _, r := range call(t, a, `{}`).Recommendations {
			if r.ID != cloud.RecPreviousGeneration {
				continue
			}
			seen[r.Resource] = true
			table := pt.Regions[key].InstanceHourly
			if strings.Contains(r.Resource, "windows") {
				table = pt.Regions[key].WindowsInstanceHourly
			}
			if m := named.FindStringSubmatch(r.Action); m != nil {
				if _, ok := table[m[1]]; !ok {
					t.Errorf("%s: %s names %s, not in the table for the region", key, r.Resource, m[1])
				}
			} else if !strings.Contains(r.Action, "family") {
				t.Errorf("%s: %s: action %q names neither a type nor a family", key, r.Resource, r.Action)
			}
		}
		if len(seen) != strings.Count(tfs[provider], "resource ") {
			t.Errorf("%s: previous-generation recommendations for %v only", key, seen)
		}
	}
}

// A cost diff between two revisions, and between a revision and the working tree, lists what
// was added, removed and resized with the monthly delta of each.
func TestCostDiffBetweenGitRevisions(t *testing.T) {
	dir := t.TempDir()
	git := testenv.NewGit(t, dir)
	const provider = "provider \"aws\" { region = \"us-east-1\" }\n"
	git.Commit("first", map[string]string{"infra/main.tf": provider +
		"resource \"aws_instance\" \"web\" { instance_type = \"t3.micro\" }\n" +
		"resource \"aws_nat_gateway\" \"nat\" {}\n"})
	git.Run("tag", "v1")
	git.Commit("second", map[string]string{"infra/main.tf": provider +
		"resource \"aws_instance\" \"web\" { instance_type = \"t3.large\" }\n" +
		"resource \"aws_ebs_volume\" \"data\" {\n  size = 100\n  type = \"gp3\"\n}\n"})
	// Uncommitted: the volume grows.
	testenv.WriteTree(t, dir, map[string]string{"infra/main.tf": provider +
		"resource \"aws_instance\" \"web\" { instance_type = \"t3.large\" }\n" +
		"resource \"aws_ebs_volume\" \"data\" {\n  size = 200\n  type = \"gp3\"\n}\n"})
	a, _ := newAnalyzer(t, dir)
	type change struct {
		address, change string
		delta           float64
	}
	for _, tt := range []struct {
		args              string
		base, head, delta float64
		changes           []change
	}{
		// t3.micro 7.59 + NAT 32.85 = 40.44 -> t3.large 60.74 + gp3 100 GB 8 = 68.74
		{`{"path":"infra","base_ref":"v1","head_ref":"HEAD"}`, 40.44, 68.74, 28.3,
			[]change{{"aws_instance.web", "changed", 53.15}, {"aws_nat_gateway.nat", "removed", -32.85}, {"aws_ebs_volume.data", "added", 8}}},
		// HEAD -> working tree: the volume doubles.
		{`{"path":"infra","base_ref":"HEAD"}`, 68.74, 76.74, 8, []change{{"aws_ebs_volume.data", "changed", 8}}},
	} {
		d := call(t, a, tt.args).CostDiff
		if d == nil {
			t.Fatalf("%s: no costDiff", tt.args)
		}
		var got []change
		for _, c := range d.Changes {
			got = append(got, change{c.Address, c.Change, c.Delta})
		}
		if d.BaseTotal != tt.base || d.HeadTotal != tt.head || d.Delta != tt.delta || fmt.Sprint(got) != fmt.Sprint(tt.changes) {
			t.Errorf("%s: %v -> %v (%v): %v; want %v -> %v (%v): %v", tt.args, d.BaseTotal, d.HeadTotal, d.Delta, got, tt.base, tt.head, tt.delta, tt.changes)
		}
	}
	for _, args := range []string{`{"base_ref":"no-such-ref"}`, `{"head_ref":"HEAD"}`} {
		if _, err := a.Call(context.Background(), json.RawMessage(args)); err == nil {
			t.Errorf("%s accepted", args)
		}
	}
}

// A resource whose region changed reads as a move, with both prices and both regions, even
// when the two regions charge the same; a resize in place stays "changed".
func TestCostDiffReadsARegionMoveAsAMove(t *testing.T) {
	dir := t.TempDir()
	git := testenv.NewGit(t, dir)
	const tf = `provider "aws" { region = "us-east-1" }
provider "aws" {
  alias  = "second"
  region = "%s"
}
resource "aws_instance" "web" {
  provider      = aws.second
  instance_type = "t3.micro"
}
resource "aws_instance" "batch" { instance_type = "%s" }
`
	git.Commit("first", map[string]string{"main.tf": fmt.Sprintf(tf, "us-east-1", "t3.micro")})
	a, _ := newAnalyzer(t, dir)
	type change struct {
		address, change, from, to string
		before, after, delta      float64
		basisBefore               string
	}
	for _, tt := range []struct {
		region, batch string
		want          []change
	}{
		// t3.micro is 0.0104/h in us-east-1 and us-east-2: a move at the same price.
		{"us-east-2", "t3.micro", []change{{"aws_instance.web", "moved", "us-east-1", "us-east-2", 7.59, 7.59, 0, "t3.micro 0.0104/h x 730 h x 1"}}},
		// eu-central-1 prices t3.micro at 0.012/h: 8.76.
		{"eu-central-1", "t3.small", []change{
			{"aws_instance.batch", "changed", "", "", 7.59, 15.18, 7.59, "t3.micro 0.0104/h x 730 h x 1"},
			{"aws_instance.web", "moved", "us-east-1", "eu-central-1", 7.59, 8.76, 1.17, "t3.micro 0.0104/h x 730 h x 1"},
		}},
	} {
		testenv.WriteTree(t, dir, map[string]string{"main.tf": fmt.Sprintf(tf, tt.region, tt.batch)})
		d := call(t, a, `{"base_ref":"HEAD"}`).CostDiff
		var got []change
		for _, c := range d.Changes {
			got = append(got, change{c.Address, c.Change, c.FromRegion, c.ToRegion, value(c.Before), value(c.After), c.Delta, c.BasisBefore})
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: changes\n%v\nwant\n%v", tt.region, got, tt.want)
		}
	}
}

func value(v *float64) float64 {
	if v == nil {
		return -1
	}
	return *v
}
