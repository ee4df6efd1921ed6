package security_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools/security"
	"github.com/platform-dev/platform/tools/workspace"
)

// iacHelper is the platform-iac program TestMain builds once for the tests of Trivy's checks.
var iacHelper string

func TestMain(m *testing.M) {
	os.Exit(runWithHelper(m))
}

func runWithHelper(m *testing.M) int {
	dir, err := os.MkdirTemp("", "platform-iac")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	iacHelper = filepath.Join(dir, security.IaCHelperName)
	// The same command as `make build`: the helper is its own module and needs jsonv2.
	build := exec.Command("go", "build", "-o", iacHelper, ".")
	build.Dir = "trivyhelper"
	build.Env = append(os.Environ(), "GOEXPERIMENT=jsonv2")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build %s: %v\n%s", security.IaCHelperName, err, out)
		return 1
	}
	return m.Run()
}

// trivyAssessor assesses dir with Trivy's checks through the helper at helper.
func trivyAssessor(t testing.TB, dir, helper string) *security.Assessor {
	t.Helper()
	ws, err := workspace.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := security.New(ws, nil, security.WithIaCHelper(helper))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func infraReport(t testing.TB, a *security.Assessor, path string) *security.Report {
	t.Helper()
	rep, err := a.Assess(context.Background(), security.Options{Path: path, Scope: security.ScopeInfrastructure, Limit: 5000})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func find(rep *security.Report, rule, location string) (security.Finding, bool) {
	for _, f := range rep.Findings {
		if f.RuleID == rule && f.Location == location {
			return f, true
		}
	}
	return security.Finding{}, false
}

// TestTrivyChecksWithOurRules: Trivy's checks run on Terraform, Kubernetes, compose-free
// Dockerfiles; where one of our rules finds the same problem Trivy's finding stays and names
// ours; our rules without a Trivy check (wildcard IAM, secrets in manifests) still report.
func TestTrivyChecksWithOurRules(t *testing.T) {
	rep := infraReport(t, trivyAssessor(t, "testdata/ws", iacHelper), "")
	for _, n := range rep.Notes {
		if strings.Contains(n, "Trivy") {
			t.Errorf("note: %s", n)
		}
	}
	cases := []struct {
		rule, location, tool, also string
	}{
		{"AWS-0107", "infra/main.tf:11", "trivy", "iac/ingress-open-admin-port"},
		{"AWS-0092", "infra/main.tf:23", "trivy", "iac/public-bucket"},
		{"KSV-0017", "infra/k8s/deploy.yaml:13", "trivy", "iac/privileged-container"},
		{"KSV-0023", "infra/k8s/deploy.yaml:5", "trivy", "iac/hostpath-volume"},
		{"DS-0002", "infra/docker/Dockerfile:1", "trivy", ""},
		{"iac/iam-wildcard", "infra/main.tf:33", "platform", ""},
		{"iac/secret-in-manifest", "infra/k8s/deploy.yaml:18", "platform", ""},
	}
	for _, c := range cases {
		f, ok := find(rep, c.rule, c.location)
		if !ok {
			t.Errorf("no %s at %s", c.rule, c.location)
			continue
		}
		if f.Tool != c.tool || f.Title == "" || f.Remediation == "" || f.Severity == "" {
			t.Errorf("%s at %s: tool %q title %q remediation %q severity %q", c.rule, c.location, f.Tool, f.Title, f.Remediation, f.Severity)
		}
		if c.also != "" && !slices.Contains(f.AlsoMatched, c.also) {
			t.Errorf("%s at %s: alsoMatched %v, want %s", c.rule, c.location, f.AlsoMatched, c.also)
		}
	}
	for _, f := range rep.Findings {
		for _, gone := range []string{"iac/ingress-open-admin-port", "iac/public-bucket", "iac/privileged-container"} {
			if f.RuleID == gone && f.Tool == "platform" && strings.HasPrefix(f.File, "infra/main.tf") {
				t.Errorf("%s at %s reported twice: by Trivy and by our rule", gone, f.Location)
			}
		}
	}
}

// TestTrivyHelperRestartsAfterACrash: a helper that dies costs the call its Trivy findings
// (with a note), never the answer, and the next call starts a new one.
func TestTrivyHelperRestartsAfterACrash(t *testing.T) {
	// This helper answers one request and exits, as a crash after the first call would.
	once := filepath.Join(t.TempDir(), "once")
	script := fmt.Sprintf("#!/bin/sh\nhead -n 1 | %q\n", iacHelper)
	if err := os.WriteFile(once, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	a := trivyAssessor(t, "testdata/ws", once)
	for i, path := range []string{"infra", "infra/k8s", "infra/docker"} { // no cache hit
		rep := infraReport(t, a, path)
		trivy := 0
		for _, f := range rep.Findings {
			if f.Tool == "trivy" {
				trivy++
			}
		}
		died := slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "IaC helper died") })
		switch {
		case i == 1 && (!died || trivy != 0):
			t.Errorf("call 2 (helper gone): died note %v, %d Trivy findings; notes %q", died, trivy, rep.Notes)
		case i != 1 && (died || trivy == 0):
			t.Errorf("call %d: died note %v, %d Trivy findings; notes %q", i+1, died, trivy, rep.Notes)
		}
		if len(rep.Findings) == 0 {
			t.Errorf("call %d: no findings at all", i+1)
		}
	}
}

// TestTrivyScanPastTheDeadlineIsTruncated: a call whose time runs out while Trivy works
// answers what it has, flagged truncated; the helper is replaced and the next call is whole.
func TestTrivyScanPastTheDeadlineIsTruncated(t *testing.T) {
	a := trivyAssessor(t, "testdata/ws", iacHelper)
	// Compiling the checks alone takes over a second: 600 ms cannot be enough.
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	rep, err := a.Assess(ctx, security.Options{Path: "infra", Scope: security.ScopeInfrastructure})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Truncated {
		t.Errorf("not truncated; notes %q", rep.Notes)
	}
	rep = infraReport(t, a, "infra")
	if rep.Truncated {
		t.Errorf("second call truncated: %q", rep.Notes)
	}
	if _, ok := find(rep, "AWS-0107", "infra/main.tf:11"); !ok {
		t.Errorf("second call without Trivy's findings: %q", rep.Notes)
	}
}

// TestWithoutTheHelperOurRulesRunAndANoteSaysSo.
func TestWithoutTheHelperOurRulesRunAndANoteSaysSo(t *testing.T) {
	rep := infraReport(t, trivyAssessor(t, "testdata/ws", ""), "infra")
	if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "Trivy's IaC checks did not run") }) {
		t.Errorf("notes %q", rep.Notes)
	}
	if _, ok := find(rep, "iac/ingress-open-admin-port", "infra/main.tf:7"); !ok {
		t.Error("our rules did not run")
	}
}

// TestTrivyIgnoreComments: Trivy's own inline syntax silences its checks, and platform:ignore
// with the check id does too.
func TestTrivyIgnoreComments(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{"main.tf": `resource "aws_security_group_rule" "ssh" {
  type        = "ingress"
  description = "ssh"
  from_port   = 22
  to_port     = 22
  protocol    = "tcp"
  #trivy:ignore:AVD-AWS-0107
  cidr_blocks = ["0.0.0.0/0"]
}
resource "aws_security_group_rule" "rdp" {
  type        = "ingress"
  description = "rdp"
  from_port   = 3389
  to_port     = 3389
  protocol    = "tcp"
  cidr_blocks = ["0.0.0.0/0"] # platform:ignore AWS-0107
}
resource "aws_security_group_rule" "ssh_too" {
  type        = "ingress"
  description = "ssh too"
  from_port   = 22
  to_port     = 22
  protocol    = "tcp"
  cidr_blocks = ["0.0.0.0/0"]
}
`})
	rep := infraReport(t, trivyAssessor(t, dir, iacHelper), "")
	var got []string
	for _, f := range rep.Findings {
		if f.RuleID == "AWS-0107" {
			got = append(got, f.Location)
		}
	}
	if strings.Join(got, ",") != "main.tf:24" || rep.Suppressed != 1 {
		t.Errorf("AWS-0107 at %v, want only main.tf:24 (suppressed %d)", got, rep.Suppressed)
	}
}

// TestHelmChartsAreRendered: a chart's templates are rendered with its default values and
// Trivy's Kubernetes checks run on the result; the templates are not read as manifests, and
// the findings point at the template's lines.
func TestHelmChartsAreRendered(t *testing.T) {
	rep := infraReport(t, trivyAssessor(t, "testdata/iac/helm", iacHelper), "")
	byFile := map[string][]string{}
	for _, f := range rep.Findings {
		byFile[f.File] = append(byFile[f.File], f.RuleID)
	}
	deploy := byFile["metadata-db/templates/deployment.yaml"]
	for _, id := range []string{"KSV-0014", "KSV-0012", "KSV-0013"} {
		if !slices.Contains(deploy, id) {
			t.Errorf("rendered deployment: no %s; findings by file %v; notes %q", id, byFile, rep.Notes)
		}
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "not parsed") {
			t.Errorf("a template was read as a manifest: %s", n)
		}
	}
	// Lines point into the template, at the rendered line's key (the same occurrence), not
	// into the rendered manifest (one line further down here, after its "# Source:" comment).
	template, err := os.ReadFile("testdata/iac/helm/metadata-db/templates/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(template), "\n")
	for _, c := range []struct{ rule, text string }{
		{"KSV-0013", "- name: {{ .Chart.Name }}"}, // the container
		{"KSV-0014", "- name: {{ .Chart.Name }}"},
		{"KSV-0110", "metadata:"}, // the Deployment's namespace
		{"KSV-0117", "apiVersion: apps/v1"},
	} {
		if _, ok := find(rep, c.rule, "metadata-db/templates/deployment.yaml:"+strconv.Itoa(lineOf(lines, c.text))); !ok {
			t.Errorf("no %s at the template's line %q; findings %v", c.rule, c.text, locations(rep))
		}
	}
}

// lineOf is the number of the first line whose text, without indentation, is text.
func lineOf(lines []string, text string) int {
	for i, l := range lines {
		if strings.TrimSpace(l) == text {
			return i + 1
		}
	}
	return 0
}

// TestTrivyOnCloudFormation: a template is recognised as CloudFormation and Trivy's AWS checks
// run on its resources, lines pointing into the template.
func TestTrivyOnCloudFormation(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{"stack.yaml": `AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Logs:
    Type: AWS::S3::Bucket
    Properties:
      AccessControl: PublicRead
  Admin:
    Type: AWS::EC2::SecurityGroup
    Properties:
      GroupDescription: admin
      SecurityGroupIngress:
        - IpProtocol: tcp
          FromPort: 22
          ToPort: 22
          CidrIp: 0.0.0.0/0
`})
	rep := infraReport(t, trivyAssessor(t, dir, iacHelper), "")
	for _, want := range []string{"AWS-0092", "AWS-0107"} {
		if !slices.ContainsFunc(rep.Findings, func(f security.Finding) bool {
			return f.RuleID == want && f.Tool == "trivy" && f.File == "stack.yaml" && f.Line > 1
		}) {
			t.Errorf("no %s in stack.yaml; findings %v", want, locations(rep))
		}
	}
}
