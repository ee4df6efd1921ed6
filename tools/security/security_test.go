package security_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/security"
)

func newAssessor(t *testing.T) *security.Assessor {
	t.Helper()
	return assessorOn(t, "testdata/ws")
}

type want struct{ rule, location, severity string }

// planted lists every problem planted in testdata/ws, one per line of the fixtures; the files
// app/clean.py, web/clean.js and infra/clean/ hold the safe forms and must add nothing.
var planted = []want{
	{"secret/aws-access-token", "config/deploy.env:3", "critical"},
	{"secret/github-pat", "config/deploy.env:4", "critical"},
	{"iac/docker-socket-mount", "infra/docker/compose.yaml:6", "critical"},
	{"iac/iam-wildcard", "infra/main.tf:33", "critical"},
	{"code/sql-injection", "app/db.py:13", "high"},
	{"code/sql-injection", "app/db.py:14", "high"},
	{"code/command-injection", "app/db.py:18", "high"},
	{"code/command-injection", "app/db.py:19", "high"},
	{"code/eval", "app/db.py:20", "high"},
	{"code/unsafe-deserialization", "app/db.py:21", "high"},
	{"code/unsafe-deserialization", "app/db.py:22", "high"},
	{"code/weak-cipher", "app/db.py:24", "high"},
	{"code/tls-verification-disabled", "app/db.py:25", "high"},
	{"gosec/G702", "gosvc/main.go:15", "high"},
	{"gosec/G402", "gosvc/main.go:17", "high"},
	{"docker/secret-in-image", "infra/docker/Dockerfile:3", "high"},
	{"iac/privileged-container", "infra/docker/compose.yaml:4", "high"},
	{"iac/secret-in-manifest", "infra/docker/compose.yaml:8", "high"},
	{"iac/hostpath-volume", "infra/k8s/deploy.yaml:9", "high"},
	{"iac/privileged-container", "infra/k8s/deploy.yaml:16", "high"},
	{"iac/secret-in-manifest", "infra/k8s/deploy.yaml:18", "high"},
	{"iac/secret-in-manifest", "infra/k8s/deploy.yaml:25", "high"},
	{"iac/ingress-open-admin-port", "infra/main.tf:7", "high"},
	{"iac/public-bucket", "infra/main.tf:23", "high"},
	{"iac/ingress-open-admin-port", "infra/main.tf:47", "high"},
	{"code/sql-injection", "java/Repo.java:7", "high"},
	{"code/command-injection", "java/Repo.java:8", "high"},
	{"code/weak-cipher", "java/Repo.java:10", "high"},
	{"code/unsafe-deserialization", "java/Repo.java:11", "high"},
	{"code/sql-injection", "web/server.js:6", "high"},
	{"code/sql-injection", "web/server.js:7", "high"},
	{"code/command-injection", "web/server.js:8", "high"},
	{"code/eval", "web/server.js:9", "high"},
	{"code/tls-verification-disabled", "web/server.js:11", "high"},
	{"code/weak-cipher", "web/server.js:13", "high"},
	{"code/weak-hash", "app/db.py:23", "medium"},
	{"code/insecure-randomness", "app/db.py:26", "medium"},
	{"gosec/G501", "gosvc/main.go:4", "medium"},
	{"gosec/G401", "gosvc/main.go:13", "medium"},
	{"gosec/G204", "gosvc/main.go:15", "medium"},
	{"docker/image-latest-tag", "infra/docker/Dockerfile:1", "medium"},
	{"docker/no-user", "infra/docker/Dockerfile:1", "medium"},
	{"iac/image-latest-tag", "infra/docker/compose.yaml:3", "medium"},
	{"iac/container-runs-as-root", "infra/k8s/deploy.yaml:13", "medium"},
	{"iac/image-latest-tag", "infra/k8s/deploy.yaml:14", "medium"},
	{"iac/unencrypted-storage", "infra/main.tf:26", "medium"},
	{"code/weak-hash", "java/Repo.java:9", "medium"},
	{"code/weak-hash", "web/server.js:10", "medium"},
	{"code/insecure-randomness", "web/server.js:12", "medium"},
	{"iac/no-network-policy", "infra/k8s/deploy.yaml:1", "medium"},
	{"docker/add-remote-url", "infra/docker/Dockerfile:2", "low"},
	{"iac/no-pod-disruption-budget", "infra/k8s/deploy.yaml:1", "low"},
	{"iac/ephemeral-storage-request", "infra/k8s/deploy.yaml:13", "low"},
	{"iac/ephemeral-storage-limit", "infra/k8s/deploy.yaml:13", "low"},
}

func assess(t *testing.T, a *security.Assessor, args string) *security.Report {
	t.Helper()
	out, err := a.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return out.(*security.Report)
}

func TestEveryPlantedFindingAndNothingElse(t *testing.T) {
	a := newAssessor(t)
	rep := assess(t, a, `{"scope":"both"}`)
	got := map[want]bool{}
	for _, f := range rep.Findings {
		got[want{f.RuleID, f.Location, f.Severity}] = true
		if f.CWE == "" || f.Remediation == "" || f.Message == "" || f.Title == "" {
			t.Errorf("incomplete finding %+v", f)
		}
		for _, clean := range []string{"app/clean.py", "web/clean.js", "infra/clean/"} {
			if strings.HasPrefix(f.File, clean) {
				t.Errorf("finding in a clean file: %+v", f)
			}
		}
	}
	for _, w := range planted {
		if !got[w] {
			t.Errorf("missing %+v", w)
		}
		delete(got, w)
	}
	for g := range got {
		t.Errorf("unexpected %+v", g)
	}
	if rep.Summary.Total != len(planted) || rep.Summary.BySeverity["critical"] != 4 || rep.Summary.BySeverity["low"] != 4 {
		t.Errorf("summary %+v", rep.Summary)
	}
}

func TestCISIdsWhereTheyExist(t *testing.T) {
	a := newAssessor(t)
	rep := assess(t, a, `{"scope":"infrastructure"}`)
	cis := map[string]string{}
	for _, f := range rep.Findings {
		cis[f.Location+" "+f.RuleID] = f.CIS
	}
	for k, w := range map[string]string{
		"infra/main.tf:7 iac/ingress-open-admin-port":          "CIS AWS Foundations 5.2 / CIS GCP 3.6-3.7",
		"infra/main.tf:33 iac/iam-wildcard":                    "CIS AWS Foundations 1.16",
		"infra/main.tf:26 iac/unencrypted-storage":             "CIS AWS Foundations 2.2.1",
		"infra/k8s/deploy.yaml:16 iac/privileged-container":    "CIS Kubernetes 5.2.2",
		"infra/docker/compose.yaml:4 iac/privileged-container": "CIS Docker 5.4",
		"infra/docker/Dockerfile:1 docker/no-user":             "CIS Docker 4.1",
		"infra/docker/compose.yaml:8 iac/secret-in-manifest":   "",
	} {
		if got, ok := cis[k]; !ok || got != w {
			t.Errorf("%s: CIS %q (found %v), want %q", k, got, ok, w)
		}
	}
}

func TestSecretsAreMasked(t *testing.T) {
	a := newAssessor(t)
	for _, format := range []string{"json", "sarif"} {
		out, err := a.Call(context.Background(), json.RawMessage(`{"scope":"both","format":"`+format+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(out)
		for _, secret := range []string{"AKIAZ3MHQB7XK4RL2PNA", "ghp_R8kZ2vQm4Xw7Lp9Tn3Jb6Yc1Hs5Fd0Ga2Ke4", // gitleaks:allow (the fixture secrets, to prove they are masked)
			"hunter2-prod-password", "plain-text-password", "abcd1234efgh5678ijkl"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s output shows the secret %s", format, secret)
			}
		}
		if format == "json" && !strings.Contains(string(b), "AKIA************ (20 chars)") {
			t.Error("masked AWS key not shown")
		}
	}
}

func TestScopeAndSeverity(t *testing.T) {
	a := newAssessor(t)
	count := func(args string) (n int, cats map[string]int) {
		rep := assess(t, a, args)
		return rep.Summary.Total, rep.Summary.ByCategory
	}
	// code: secrets (3) and code findings (29); infrastructure: the 23 misconfigurations, one
	// of them the secret gitleaks also finds in the Dockerfile.
	if n, c := count(`{"scope":"code"}`); n != 32 || c["infrastructure"] != 0 || c["secret"] != 3 {
		t.Errorf("code: %d %v", n, c)
	}
	if n, c := count(`{"scope":"infrastructure"}`); n != 23 || c["code"] != 0 || c["secret"] != 0 {
		t.Errorf("infrastructure: %d %v", n, c)
	}
	if n, _ := count(`{"scope":"both","severity":"critical"}`); n != 4 {
		t.Errorf("critical: %d, want 4", n)
	}
	if n, _ := count(`{"scope":"both","severity":"high"}`); n != 35 {
		t.Errorf("high and above: %d, want 35", n)
	}
	rep := assess(t, a, `{"scope":"both","limit":5}`)
	if len(rep.Findings) != 5 || rep.Omitted != len(planted)-5 || rep.Findings[4].Severity != "high" {
		t.Errorf("limit: %d findings, %d omitted", len(rep.Findings), rep.Omitted)
	}
	clean := assess(t, a, `{"scope":"both","path":"infra/clean"}`)
	if b, _ := json.Marshal(clean); clean.Summary.Total != 0 || !strings.Contains(string(b), `"findings":[]`) {
		t.Errorf("clean folder: %s", b)
	}
}

func TestSARIF(t *testing.T) {
	a := newAssessor(t)
	out, err := a.Call(context.Background(), json.RawMessage(`{"scope":"infrastructure","severity":"critical","format":"sarif"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	var log struct {
		Version string `json:"version"`
		Schema  string `json:"$schema"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID               string `json:"id"`
						ShortDescription struct {
							Text string `json:"text"`
						} `json:"shortDescription"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) != 2 || len(log.Runs[0].Tool.Driver.Rules) != 2 {
		t.Fatalf("sarif %s", b)
	}
	if d := log.Runs[0].Tool.Driver.Rules[0].ShortDescription.Text; d != "Docker socket mounted into a container" {
		t.Errorf("rule description %q", d)
	}
	r := log.Runs[0].Results[0]
	loc := r.Locations[0].PhysicalLocation
	if r.RuleID != "iac/docker-socket-mount" || r.Level != "error" || loc.ArtifactLocation.URI != "infra/docker/compose.yaml" || loc.Region.StartLine != 6 {
		t.Errorf("first result %+v", r)
	}
}

func TestArgumentErrors(t *testing.T) {
	a := newAssessor(t)
	for _, args := range []string{`{"scope":"all"}`, `{"scope":"code","severity":"urgent"}`, `{"scope":"code","format":"xml"}`,
		`{"scope":"code","path":"../.."}`, `{"scope":"code","path":"/etc/passwd"}`} {
		_, err := a.Call(context.Background(), json.RawMessage(args))
		if _, ok := tools.IsArgumentError(err); !ok {
			t.Errorf("%s: %v, want an argument error", args, err)
		}
	}
}

func TestCancelledContextStopsTheAssessment(t *testing.T) {
	a := newAssessor(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Call(ctx, json.RawMessage(`{"scope":"both"}`)); err == nil || ctx.Err() == nil {
		t.Fatalf("err %v after cancel", err)
	}
}
