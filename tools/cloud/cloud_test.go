package cloud_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/cloud"
	"github.com/platform-dev/platform/tools/workspace"
)

func newAnalyzer(t *testing.T, root string) (*cloud.Analyzer, *tools.Hub) {
	t.Helper()
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	hub := &tools.Hub{}
	a, err := cloud.New(t.Context(), ws, hub, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a, hub
}

func call(t *testing.T, a *cloud.Analyzer, args string) *cloud.Report {
	t.Helper()
	out, err := a.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("call %s: %v", args, err)
	}
	return out.(*cloud.Report)
}

type rec struct {
	id, resource, evidence string
	saving                 float64 // -1: no saving figure
}

func recs(r *cloud.Report) map[rec]bool {
	out := map[rec]bool{}
	for _, x := range r.Recommendations {
		s := -1.0
		if x.MonthlySaving != nil {
			s = *x.MonthlySaving
		}
		out[rec{x.ID, x.Resource, x.Evidence, s}] = true
	}
	return out
}

func TestRecommendationsOfThePlantedFixture(t *testing.T) {
	a, _ := newAnalyzer(t, "testdata/infra")
	got := recs(call(t, a, `{}`))
	want := []rec{
		// n1-standard-2 0.0949995/h -> e2-standard-2 0.06701142/h: (0.0949995-0.06701142) x 730 = 20.43
		{cloud.RecPreviousGeneration, "google_compute_instance.vm", "gcp/main.tf:8", 20.43},
		// t2.medium 0.0464/h -> t3.medium 0.0416/h, 2 instances: 0.0048 x 730 x 2 = 7.008
		{cloud.RecPreviousGeneration, "aws_instance.web", "terraform/main.tf:13", 7.01},
		// m4.large 0.10/h -> m5.large 0.096/h: 0.004 x 730 = 2.92
		{cloud.RecPreviousGeneration, "aws_instance.batch", "plan/plan.json:8", 2.92},
		// unattached 100 GB gp2: 100 x 0.10 = 10
		{cloud.RecUnattached, "aws_ebs_volume.data", "terraform/main.tf:19", 10},
		// idle public IPv4: 0.005 x 730 = 3.65
		{cloud.RecUnattached, "aws_eip.idle", "terraform/main.tf:65", 3.65},
		// 100 GB gp2 -> gp3: 100 x (0.10-0.08) = 2
		{cloud.RecGP2Volume, "aws_ebs_volume.data", "terraform/main.tf:19", 2},
		{cloud.RecGP2Volume, "DataVolume", "cfn/template.yaml:17", -1}, // no region declared
		{cloud.RecNoLifecycle, "UploadBucket", "cfn/template.yaml:25", -1},
		{cloud.RecNoLifecycle, "google_storage_bucket.exports", "gcp/main.tf:20", -1},
		{cloud.RecNoLifecycle, "aws_s3_bucket.assets", "terraform/main.tf:46", -1},
		{cloud.RecNoResources, "compose/cache", "compose/docker-compose.yml:9", -1},
		{cloud.RecNoResources, "Deployment/shop/api", "k8s/app.yaml:17", -1},
		{cloud.RecNoAutoscaling, "Deployment/shop/api", "k8s/app.yaml:1", -1},
		{cloud.RecNoAutoscaling, "aws_instance.web", "terraform/main.tf:11", -1},
		{cloud.RecSingleReplica, "Deployment/shop/api", "k8s/app.yaml:7", -1},
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("missing recommendation %+v", w)
		}
		delete(got, w)
	}
	for g := range got {
		t.Errorf("unexpected recommendation %+v", g)
	}
}

func TestCostOfThePlantedFixtureByHand(t *testing.T) {
	a, _ := newAnalyzer(t, "testdata/infra")
	r := call(t, a, `{}`)
	monthly := map[string]float64{}
	for _, e := range r.Resources {
		if e.Cost != nil && e.Cost.Monthly != nil {
			monthly[e.Address] = *e.Cost.Monthly
		}
	}
	want := map[string]float64{
		"aws_instance.web":                           67.74,  // t2.medium 0.0464 x 730 x 2 = 67.744
		"aws_instance.batch":                         73,     // m4.large 0.10 x 730 = 73
		"aws_ebs_volume.data":                        10,     // gp2 (default type) 0.10 x 100 GB
		"aws_ebs_volume.logs":                        4,      // gp3 0.08 x 50 GB
		"aws_db_instance.main":                       264.48, // postgres db.m5.large 0.178 x 730 x 2 AZ = 259.88, + gp3 0.115 x 20 GB x 2 AZ = 4.60
		"aws_eip.idle":                               3.65,   // 0.005 x 730
		"google_compute_instance.vm":                 69.35,  // n1-standard-2 0.095 x 730 = 69.35
		"aws_volume_attachment.logs":                 0,      // no charge
		"aws_s3_bucket_lifecycle_configuration.logs": 0,
		"DataAttachment":                             0, // no charge, whatever the region
	}
	for addr, w := range want {
		if got, ok := monthly[addr]; !ok || got != w {
			t.Errorf("%s: monthly %v (priced %v), want %v", addr, got, ok, w)
		}
	}
	if len(monthly) != len(want) {
		t.Errorf("priced resources %v, want exactly %v", monthly, want)
	}
	// 67.74 + 73 + 10 + 4 + 264.48 + 3.65 + 69.35 = 492.22
	if r.Cost.MonthlyTotal != 492.22 {
		t.Errorf("total %v, want 492.22", r.Cost.MonthlyTotal)
	}
	// 24 resources, 10 priced.
	if r.Cost.Unpriced != 14 || len(r.Resources) != 24 {
		t.Errorf("unpriced %d of %d, want 14 of 24", r.Cost.Unpriced, len(r.Resources))
	}
	// 20.43 + 10 + 7.01 + 3.65 + 2.92 + 2 = 46.01
	if r.Cost.MonthlySavings != 46.01 {
		t.Errorf("savings %v, want 46.01", r.Cost.MonthlySavings)
	}
	if r.Cost.ByService["ebs"].Monthly != 14 || r.Cost.ByService["ebs"].Priced != 4 || r.Cost.ByService["ebs"].Unpriced != 1 {
		t.Errorf("ebs %+v, want 14 over 4 priced (volumes and both attachments) and the CloudFormation volume unpriced", r.Cost.ByService["ebs"])
	}
	for _, e := range r.Resources {
		if e.Address == "aws_lambda_function.thumbs" && (e.Cost.Monthly != nil || e.Cost.Note == "") {
			t.Errorf("lambda priced %+v: usage-based prices must stay unknown", e.Cost)
		}
	}
}

func TestFilters(t *testing.T) {
	a, _ := newAnalyzer(t, "testdata/infra")
	cases := []struct {
		args      string
		resources []string
	}{
		{`{"service":"rds"}`, []string{"aws_db_instance.main"}},
		{`{"service":"gcp"}`, []string{"google_compute_instance.vm", "google_storage_bucket.exports"}},
		{`{"region":"us-central1"}`, []string{"google_compute_instance.vm", "google_storage_bucket.exports"}},
		{`{"service":"ec2","region":"us-east-1"}`, []string{"AppInstance", "aws_instance.batch", "aws_instance.web", "aws_eip.idle"}},
		{`{"service":"ebs","region":"us-east-1"}`, []string{"DataVolume", "DataAttachment", "aws_ebs_volume.data", "aws_ebs_volume.logs", "aws_volume_attachment.logs"}},
		{`{"service":"lambda","path":"cfn"}`, []string{"Resize"}},
		{`{"service":"nosuch"}`, nil},
	}
	for _, c := range cases {
		r := call(t, a, c.args)
		var got []string
		for _, e := range r.Resources {
			got = append(got, e.Address)
		}
		if len(got) != len(c.resources) {
			t.Errorf("%s: resources %v, want %v", c.args, got, c.resources)
			continue
		}
		for i := range got {
			if got[i] != c.resources[i] {
				t.Errorf("%s: resources %v, want %v", c.args, got, c.resources)
				break
			}
		}
		if c.resources == nil && len(r.Notes) == 0 {
			t.Errorf("%s: no note naming the services found", c.args)
		}
	}
}

func TestCloudFormationIsPricedInTheRegionAskedFor(t *testing.T) {
	a, _ := newAnalyzer(t, "testdata/infra")
	r := call(t, a, `{"region":"us-east-1","path":"cfn"}`)
	got := map[string]float64{}
	for _, e := range r.Resources {
		if e.Cost.Monthly != nil {
			got[e.Address] = *e.Cost.Monthly
		}
	}
	// InstanceType resolves through !Ref to the parameter default t3.micro: 0.0104 x 730 = 7.592.
	// DataVolume: gp2 0.10 x 10 GB = 1.
	if got["AppInstance"] != 7.59 || got["DataVolume"] != 1 || got["DataAttachment"] != 0 {
		t.Errorf("monthly %v", got)
	}
	for _, x := range r.Recommendations {
		// 10 GB x (0.10-0.08) = 0.2
		if x.ID == cloud.RecGP2Volume && (x.MonthlySaving == nil || *x.MonthlySaving != 0.2) {
			t.Errorf("gp2 saving %+v, want 0.2", x)
		}
	}
}

func TestCostAnalysisOff(t *testing.T) {
	a, _ := newAnalyzer(t, "testdata/infra")
	r := call(t, a, `{"cost_analysis":false}`)
	b, _ := json.Marshal(r)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if _, ok := m["cost"]; ok {
		t.Error("cost present with cost_analysis false")
	}
	for _, x := range r.Recommendations {
		if x.MonthlySaving != nil || x.SavingNote != "" {
			t.Errorf("saving present with cost_analysis false: %+v", x)
		}
	}
}

func TestCleanFixtureHasNoRecommendations(t *testing.T) {
	a, _ := newAnalyzer(t, "testdata/clean")
	r := call(t, a, `{}`)
	if len(r.Recommendations) != 0 {
		t.Errorf("recommendations on the clean fixture: %+v", r.Recommendations)
	}
	if r.Summary.Resources != 7 || r.Summary.Files != 2 {
		t.Errorf("summary %+v, want 7 resources in 2 files (settings.yaml is not a declaration)", r.Summary)
	}
	// m6i.large 0.096 x 730 = 70.08; gp3 20 GB x 0.08 = 1.60
	if r.Cost.MonthlyTotal != 71.68 {
		t.Errorf("total %v, want 71.68", r.Cost.MonthlyTotal)
	}
}

func TestPathOutsideTheWorkspaceIsAnArgumentError(t *testing.T) {
	a, _ := newAnalyzer(t, "testdata/infra")
	for _, p := range []string{"../clean", "/etc", "nosuch"} {
		_, err := a.Call(context.Background(), json.RawMessage(`{"path":"`+p+`"}`))
		if _, ok := tools.IsArgumentError(err); !ok {
			t.Errorf("path %q: error %v, want an argument error", p, err)
		}
	}
}

func TestResourceFollowsTheFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`provider "aws" {
  region = "us-east-1"
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	a, hub := newAnalyzer(t, dir)
	updated := make(chan string, 16)
	hub.Listen(func(uri string) { updated <- uri })
	if a.Info().URI != "service://infrastructure/cloud" || a.Info().Name != "Cloud Infrastructure" || a.Info().MIMEType != "application/json" {
		t.Fatalf("info %+v", a.Info())
	}
	first, err := a.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := first.(*cloud.Report).Summary.Resources; n != 0 {
		t.Fatalf("resources %d before the change", n)
	}
	if err := os.WriteFile(filepath.Join(dir, "db.tf"), []byte(`resource "aws_db_instance" "x" {
  engine         = "mysql"
  instance_class = "db.t3.micro"
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-updated:
		if uri != cloud.URI {
			t.Fatalf("updated %q", uri)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no update after a declaration file was written")
	}
	now, err := a.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := now.(*cloud.Report)
	// mysql db.t3.micro 0.017 x 730 = 12.41
	if r.Summary.Resources != 1 || r.Cost.MonthlyTotal != 12.41 {
		t.Fatalf("after the change: %+v, total %v", r.Summary, r.Cost.MonthlyTotal)
	}
}
