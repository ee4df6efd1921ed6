package security_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/security"
	"github.com/platform-dev/platform/tools/workspace"
)

func assessorOn(t testing.TB, dir string) *security.Assessor {
	t.Helper()
	ws, err := workspace.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	// platform's own rules only: these tests pin them; iac_test.go tests Trivy's checks.
	a, err := security.New(ws, nil, security.WithIaCHelper(""))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// locations lists "rule location" of every finding.
func locations(rep *security.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.RuleID+" "+f.Location)
	}
	return out
}

// Secrets (gitleaks:allow on each line of this test: they are planted, not leaked).
const (
	awsKey    = "AKIAZ3MHQB7XK4RL2PNA"                                   // gitleaks:allow
	githubPAT = "ghp_R8kZ2vQm4Xw7Lp9Tn3Jb6Yc1Hs5Fd0Ga2Ke4"               // gitleaks:allow
	slackTok  = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx" // gitleaks:allow
)

// Paths Linguist calls vendored (config/env/, vendor/, testdata/, node_modules/) are third-party
// code for the code rules, but a secret committed there leaks all the same: each one is
// reported once, labelled vendored.
func TestSecretsInVendoredPathsAreReportedOnceAndLabelled(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{
		"config/env/prod.env":           "AWS_ACCESS_KEY_ID=" + awsKey + "\n",
		"vendor/github.com/x/y/conf.go": "package y\n\nconst token = \"" + githubPAT + "\"\n",
		"testdata/fixture.txt":          "slack: " + slackTok + "\n",
		"node_modules/pkg/index.js":     "module.exports = { key: '" + awsKey + "' };\n",
		"app/settings.py":               "GITHUB = \"" + githubPAT + "\"\n",
	})
	rep := assess(t, assessorOn(t, dir), `{"scope":"both"}`)
	got := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Category != security.CategorySecret {
			t.Errorf("unexpected %s at %s", f.RuleID, f.Location)
			continue
		}
		file := f.File
		if got[file] {
			t.Errorf("%s reported twice", file)
		}
		got[file] = true
		if want := file != "app/settings.py"; f.Vendored != want {
			t.Errorf("%s: vendored %v, want %v", f.Location, f.Vendored, want)
		}
	}
	for _, file := range []string{"config/env/prod.env", "vendor/github.com/x/y/conf.go", "testdata/fixture.txt", "node_modules/pkg/index.js", "app/settings.py"} {
		if !got[file] {
			t.Errorf("no secret found in %s; got %v", file, locations(rep))
		}
	}
}

// A credential that several rules see (gitleaks' generic rule, the hard-coded credential rule,
// the manifest rules) is one finding that names the others.
func TestOneFindingPerSecretAndLocation(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{
		"Dockerfile": "FROM python:3.12\nENV API_TOKEN=abcd1234efgh5678ijkl\nUSER app\n", // gitleaks:allow
		"k8s.yaml": `apiVersion: v1
kind: Pod
metadata: {name: api}
spec:
  containers:
    - name: api
      image: api:1.0
      securityContext: {runAsNonRoot: true}
      env:
        - name: DB_PASSWORD
          value: "Zx9-qLw3-Vb7T-pR2m"
`,
	})
	rep := assess(t, assessorOn(t, dir), `{"scope":"both"}`)
	per := map[string][]security.Finding{}
	for _, f := range rep.Findings {
		if f.CWE == "CWE-798" {
			per[f.Location] = append(per[f.Location], f)
		}
	}
	for _, loc := range []string{"Dockerfile:2", "k8s.yaml:10"} {
		if len(per[loc]) != 1 {
			t.Errorf("%s: %d credential findings, want 1: %+v", loc, len(per[loc]), per[loc])
		}
	}
	if fs := per["Dockerfile:2"]; len(fs) == 1 && (fs[0].RuleID != "docker/secret-in-image" || !contains(fs[0].AlsoMatched, "secret/generic-api-key")) {
		t.Errorf("Dockerfile:2 kept %s, also %v", fs[0].RuleID, fs[0].AlsoMatched)
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// A mask never shows more than 4 characters, and none of a secret shorter than 12.
func TestMasksRevealNothingOfShortSecrets(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{
		"docker-compose.yml": "services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD: Tr0ub4dor&3\n",
		"settings.py":        "DB_PASSWORD = \"hunter2hunter2-prod\"\n",
	})
	rep := assess(t, assessorOn(t, dir), `{"scope":"both"}`)
	b, _ := json.Marshal(rep)
	for _, leak := range []string{"Tr0u", "Tr0ub4dor", "hunter2hunter2"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("output shows %q: %s", leak, b)
		}
	}
	if !strings.Contains(string(b), "******** (11 chars)") || !strings.Contains(string(b), "hunt************ (19 chars)") {
		t.Errorf("masks not as documented: %s", b)
	}
}

// Each case is one Python, JavaScript or Java file; want says whether code/sql-injection fires.
func TestSQLInjectionCases(t *testing.T) {
	for _, tt := range []struct {
		name, file, src string
		want            bool
	}{
		{"py adjacent literals with %", "a.py", "def f(c, u, p):\n    c.execute(\"SELECT * FROM users WHERE username='%s' \"\n              \"AND password='%s'\" % (u, p))\n", true},
		{"py adjacent literals with format", "a.py", "def f(c, u):\n    c.execute(\"SELECT id FROM users \"\n              \"WHERE name = '{}'\".format(u))\n", true},
		{"py concatenation", "a.py", "def f(c, u):\n    c.execute(\"SELECT * FROM t WHERE id = \" + u)\n", true},
		{"py f-string", "a.py", "def f(c, u):\n    c.execute(f\"DELETE FROM t WHERE id = {u}\")\n", true},
		{"py variable formatted later", "a.py", "def f(c, u):\n    q = \"SELECT * FROM t WHERE name = '%s'\"\n    c.execute(q % u)\n", true},
		{"py variable extended later", "a.py", "def f(c, u):\n    q = \"SELECT * FROM t WHERE name = \"\n    q += u\n    c.execute(q)\n", true},
		{"py bound parameter", "a.py", "def f(c, u):\n    c.execute(\"SELECT * FROM t WHERE name = %s\", (u,))\n", false},
		{"py adjacent constant literals", "a.py", "def f(c, u):\n    c.execute(\"SELECT * FROM t \"\n              \"WHERE name = %s\", (u,))\n", false},
		{"py int parameter", "a.py", "def f(c, uid: int):\n    c.execute(\"SELECT * FROM t WHERE id = %d\" % uid)\n", false},
		{"py constant table", "a.py", "TABLE = 'users'\ndef f(c, u):\n    c.execute(\"SELECT * FROM \" + TABLE + \" WHERE id = %s\", (u,))\n", false},
		{"js concatenation after constant pieces", "a.js", "function f(db, id) {\n  db.query('SELECT * FROM t ' + 'WHERE id = ' + id);\n}\n", true},
		{"js placeholder", "a.js", "function f(db, id) {\n  db.query('SELECT * FROM t WHERE id = $1', [id]);\n}\n", false},
		{"java concatenation", "A.java", "class A { void f(java.sql.Statement s, String id) throws Exception {\n s.executeQuery(\"SELECT * FROM t WHERE id = '\" + id + \"'\");\n} }\n", true},
		{"java String.format", "A.java", "class A { void f(java.sql.Statement s, String id) throws Exception {\n s.executeQuery(String.format(\"SELECT * FROM t WHERE id = '%s'\", id));\n} }\n", true},
		{"java constants", "A.java", "class A { static final String T = \"t\"; static final String COLS = \"a, b\";\n void f(java.sql.Connection c) throws Exception {\n c.prepareStatement(\"SELECT \" + COLS + \" FROM \" + T_NAME + \" WHERE id = ?\");\n} }\n", false},
		{"java int parameter", "A.java", "class A { void f(java.sql.Statement s, int id) throws Exception {\n s.executeQuery(\"SELECT * FROM t WHERE id = \" + id);\n} }\n", false},
		{"java length", "A.java", "class A { void f(java.sql.Statement s, String id) throws Exception {\n s.executeQuery(\"SELECT * FROM t LIMIT \" + id.length());\n} }\n", false},
		{"java placeholder pieces", "A.java", "class A { void f(java.sql.Connection c) throws Exception {\n c.prepareStatement(\"SELECT * FROM t \" +\n   \"WHERE id = ?\");\n} }\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := testenv.TempTree(t, map[string]string{tt.file: tt.src})
			rep := assess(t, assessorOn(t, dir), `{"scope":"code"}`)
			got := false
			for _, f := range rep.Findings {
				got = got || f.RuleID == "code/sql-injection"
			}
			if got != tt.want {
				t.Errorf("sql-injection %v, want %v; findings %v", got, tt.want, locations(rep))
			}
		})
	}
}

func TestHardcodedCredentials(t *testing.T) {
	for _, tt := range []struct {
		file, src string
		want      bool
	}{
		{"a.py", "DB_PASSWORD = \"s3cr3t-Pa55\"\n", true},
		{"a.py", "conn = connect(host='db', password='s3cr3t-Pa55')\n", true},
		{"a.py", "cfg = {\"api_key\": \"k-93jf83hf8\"}\n", true},
		{"a.py", "password = os.environ['DB_PASSWORD']\n", false},
		{"a.py", "KEY_PASSWORD = \"password\"\n", false},
		{"a.py", "password = \"\"\n", false},
		{"a.py", "password_field = \"s3cr3t-Pa55\"\n", false},
		{"a.js", "const apiKey = 'k-93jf83hf8';\n", true},
		{"a.js", "const cfg = { password: 'hunter22' };\n", true},
		{"a.js", "const cfg = { password: process.env.PW };\n", false},
		{"a.ts", "export class C { private readonly clientSecret = \"cs-83hf8e7\"; }\n", true},
		{"a.ts", "const secret = '${SECRET}';\n", false},
		{"A.java", "class A { private static final String DB_PASSWORD = \"s3cr3t-Pa55\"; }\n", true},
		{"A.java", "class A { String password = System.getenv(\"PW\"); }\n", false},
	} {
		t.Run(tt.file+" "+tt.src, func(t *testing.T) {
			dir := testenv.TempTree(t, map[string]string{tt.file: tt.src})
			rep := assess(t, assessorOn(t, dir), `{"scope":"code"}`)
			got := false
			for _, f := range rep.Findings {
				if f.CWE == "CWE-798" {
					got = true
					if f.Line != 1 || f.Category != security.CategorySecret {
						t.Errorf("finding %+v", f)
					}
				}
			}
			if got != tt.want {
				t.Errorf("credential found %v, want %v: %v", got, tt.want, locations(rep))
			}
		})
	}
}

// Without a module cache the go command may not load a module at all: it needs a newer
// toolchain it cannot download (GOTOOLCHAIN=local, GOPROXY=off), or a dependency that is not
// there. gosec's AST rules still run on the parsed files, and a note says how far it got.
func TestGoFindingsWithoutTheModuleCache(t *testing.T) {
	main := `package main

import (
	"crypto/md5"
	"fmt"
	"os/exec"

	"example.invalid/never/dep"
)

func main() {
	fmt.Println(md5.Sum([]byte(dep.Name)))
	_ = exec.Command("sh", "-c", dep.Name).Run()
}
`
	for _, tt := range []struct{ name, gomod, note string }{
		{"newer toolchain", "module example.com/svc\n\ngo 1.99\n\nrequire example.invalid/never v1.2.3\n", "AST rules ran on the parsed files"},
		{"missing dependency", "module example.com/svc\n\ngo 1.22\n\nrequire example.invalid/never v1.2.3\n", "findings may be incomplete"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := assess(t, assessorOn(t, testenv.TempTree(t, map[string]string{"go.mod": tt.gomod, "main.go": main})), `{"scope":"code"}`)
			got := strings.Join(locations(rep), "\n")
			for _, want := range []string{"gosec/G501 main.go:4", "gosec/G401 main.go:12", "gosec/G204 main.go:13"} {
				if !strings.Contains(got, want) {
					t.Errorf("missing %s in\n%s", want, got)
				}
			}
			if !strings.Contains(strings.Join(rep.Notes, " "), tt.note) {
				t.Errorf("notes %q do not say %q", rep.Notes, tt.note)
			}
		})
	}
}

// Ignore directives silence one rule (or a family, or all) on their line or the next; the
// report counts what they silenced.
func TestIgnoreDirectives(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{
		"a.py": `import hashlib, os
def f(c, u, cmd):
    c.execute("SELECT * FROM t WHERE id = " + u)  # platform:ignore code/sql-injection
    # platform:ignore code/command-injection
    os.system(cmd)
    hashlib.md5(u)  # platform:ignore code/sql-injection (another rule: still reported)
    os.system(cmd + u)  # platform:ignore code/
`,
		"main.tf": `resource "aws_security_group" "ssh" {
  # platform:ignore iac/ingress-open-admin-port
  ingress {
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}
`,
	})
	rep := assess(t, assessorOn(t, dir), `{"scope":"both"}`)
	if got := strings.Join(locations(rep), ","); got != "code/weak-hash a.py:6" {
		t.Errorf("findings %s, want only the weak hash", got)
	}
	if rep.Suppressed != 4 {
		t.Errorf("suppressed %d, want 4", rep.Suppressed)
	}
}

// A baseline (a report saved earlier) hides the findings it lists, by fingerprint, even after
// they moved; a new finding still shows.
func TestBaselineShowsOnlyNewFindings(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{
		"a.py": "import os\ndef f(c, u):\n    c.execute(\"SELECT * FROM t WHERE id = \" + u)\n",
	})
	a := assessorOn(t, dir)
	first := assess(t, a, `{"scope":"code"}`)
	if first.Summary.Total != 1 {
		t.Fatalf("first run: %v", locations(first))
	}
	saved, _ := json.Marshal(first)
	if err := os.WriteFile(filepath.Join(dir, "baseline.json"), saved, 0o644); err != nil {
		t.Fatal(err)
	}
	// The old finding moves two lines down; a new one appears.
	if err := os.WriteFile(filepath.Join(dir, "a.py"), []byte("import os\n\n\ndef f(c, u):\n    c.execute(\"SELECT * FROM t WHERE id = \" + u)\n    os.system(u)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := assess(t, a, `{"scope":"code","baseline":"baseline.json"}`)
	if got := strings.Join(locations(rep), ","); got != "code/command-injection a.py:6" || rep.Baselined != 1 || rep.Baseline != "baseline.json" {
		t.Errorf("with baseline: %s, baselined %d (%q)", got, rep.Baselined, rep.Baseline)
	}
	// The conventional name is picked up without being named.
	if err := os.Rename(filepath.Join(dir, "baseline.json"), filepath.Join(dir, security.BaselineFile)); err != nil {
		t.Fatal(err)
	}
	if rep := assess(t, a, `{"scope":"code"}`); rep.Baselined != 1 || rep.Baseline != security.BaselineFile {
		t.Errorf("default baseline not used: %+v", rep)
	}
	if _, err := a.Call(context.Background(), json.RawMessage(`{"scope":"code","baseline":"a.py"}`)); err == nil {
		t.Error("a file that is not a report accepted as baseline")
	}
	// A baseline is read within bounds: 10 MB, and the depth of every document.
	for name, content := range map[string]string{
		"deep.json":  `{"findings": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
		"large.json": `{"findings": [], "x": "` + strings.Repeat("x", 10<<20) + `"}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := a.Call(context.Background(), json.RawMessage(`{"scope":"code","baseline":"`+name+`"}`))
		if err == nil || !strings.Contains(err.Error(), map[string]string{"deep.json": "deeper than 100 levels", "large.json": "larger than 10485760 bytes"}[name]) {
			t.Errorf("baseline %s: %v", name, err)
		}
	}
}

// The cache is by content: an edited file is scanned again, an unchanged one answers the same.
func TestEditedFileIsScannedAgain(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{
		"a.py": "import os\ndef f(u):\n    os.system(u)\n",
		"b.py": "import pickle\ndef g(b):\n    return pickle.loads(b)\n",
	})
	a := assessorOn(t, dir)
	before := strings.Join(locations(assess(t, a, `{"scope":"code"}`)), ",")
	if err := os.WriteFile(filepath.Join(dir, "a.py"), []byte("import os\ndef f(u):\n    eval(u)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	after := strings.Join(locations(assess(t, a, `{"scope":"code"}`)), ",")
	if before != "code/command-injection a.py:3,code/unsafe-deserialization b.py:3" || after != "code/eval a.py:3,code/unsafe-deserialization b.py:3" {
		t.Errorf("before %s; after %s", before, after)
	}
}

// A tree too large for the caller's deadline answers partial findings flagged truncated before
// the deadline, not a timeout.
func TestTruncatedBeforeTheDeadline(t *testing.T) {
	files := map[string]string{}
	for i := range 4000 {
		files[fmt.Sprintf("pkg%02d/m%04d.py", i%40, i)] = strings.Repeat("def f(c, u):\n    c.execute(\"SELECT * FROM t WHERE id = \" + u)\n", 30)
	}
	a := assessorOn(t, testenv.TempTree(t, files))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := a.Call(ctx, json.RawMessage(`{"scope":"code","limit":1}`))
	if err != nil {
		t.Fatalf("err %v, want a partial report", err)
	}
	rep := out.(*security.Report)
	if !rep.Truncated || rep.Summary.Total == 0 || ctx.Err() != nil {
		t.Errorf("truncated %v, %d findings, ctx %v", rep.Truncated, rep.Summary.Total, ctx.Err())
	}
}

// Ten calls at once share the workers and the Go analysis slot: every one answers, with the
// same findings, and the ones that wait say so through the progress seam.
func TestConcurrentCallsShareTheWorkers(t *testing.T) {
	a := newAssessor(t)
	var mu sync.Mutex
	var messages []string
	ctx := tools.WithProgress(context.Background(), func(_, _ float64, msg string) {
		mu.Lock()
		messages = append(messages, msg)
		mu.Unlock()
	})
	totals := make([]int, 10)
	var wg sync.WaitGroup
	for i := range totals {
		wg.Go(func() {
			rep, err := a.Assess(ctx, security.Options{Scope: security.ScopeBoth})
			if err != nil {
				t.Error(err)
				return
			}
			totals[i] = rep.Summary.Total
		})
	}
	wg.Wait()
	for i, n := range totals {
		if n != len(planted) {
			t.Errorf("call %d: %d findings, want %d", i, n, len(planted))
		}
	}
	if !slices.ContainsFunc(messages, func(m string) bool { return strings.HasPrefix(m, "analysing the Go packages of gosvc") }) {
		t.Errorf("progress messages %q", messages)
	}
}

// Linguist calls env/ vendored, yet Terraform environments live there: their declarations are
// assessed; test fixtures and third-party folders are not the project's infrastructure.
func TestDeclarationsUnderVendoredPaths(t *testing.T) {
	sg := `resource "aws_security_group" "ssh" {
  ingress {
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}
`
	dir := testenv.TempTree(t, map[string]string{"env/prod/main.tf": sg, "testdata/main.tf": sg, "vendor/mod/main.tf": sg})
	rep := assess(t, assessorOn(t, dir), `{"scope":"infrastructure"}`)
	if got := strings.Join(locations(rep), ","); got != "iac/ingress-open-admin-port env/prod/main.tf:2" {
		t.Errorf("findings %s", got)
	}
}

// Configurations unsafe as written that tfsec, Checkov and kube-score report: one finding each,
// none for the safe forms beside them.
func TestExplicitMisconfigurations(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{
		"main.tf": `resource "aws_db_instance" "open" {
  publicly_accessible = true
  storage_encrypted   = true
}
resource "aws_db_instance" "closed" {
  publicly_accessible = false
  storage_encrypted   = true
}
resource "aws_instance" "v1" {
  metadata_options {
    http_tokens = "optional"
  }
}
resource "aws_instance" "v2" {
  metadata_options {
    http_tokens = "required"
  }
}
`,
		"k8s.yaml": `apiVersion: v1
kind: Pod
metadata: {name: node-agent}
spec:
  hostNetwork: true
  hostPID: false
  securityContext: {runAsNonRoot: true}
  containers:
    - name: agent
      image: agent:1.0
      securityContext:
        allowPrivilegeEscalation: true
        capabilities:
          add: ["NET_BIND_SERVICE", "SYS_ADMIN"]
    - name: safe
      image: agent:1.0
      securityContext:
        allowPrivilegeEscalation: false
        capabilities:
          drop: ["ALL"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ci-admin}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - kind: ServiceAccount
    name: ci
    namespace: default
`,
	})
	rep := assess(t, assessorOn(t, dir), `{"scope":"infrastructure"}`)
	want := "iac/host-namespace k8s.yaml:5,iac/dangerous-capabilities k8s.yaml:14,iac/cluster-admin-binding k8s.yaml:28," +
		"iac/public-database main.tf:2,iac/no-network-policy k8s.yaml:1,iac/privilege-escalation k8s.yaml:12,iac/imds-v1 main.tf:11," +
		"iac/ephemeral-storage-limit k8s.yaml:9,iac/ephemeral-storage-request k8s.yaml:9,iac/ephemeral-storage-limit k8s.yaml:15,iac/ephemeral-storage-request k8s.yaml:15," +
		"iac/rds-single-az main.tf:1,iac/rds-without-enhanced-monitoring main.tf:1,iac/rds-single-az main.tf:5,iac/rds-without-enhanced-monitoring main.tf:5"
	if got := strings.Join(locations(rep), ","); got != want {
		t.Errorf("findings\n%s\nwant\n%s", got, want)
	}
}

// Policies that let any AWS principal in (a role's trust policy, a KMS key policy) without a
// Condition, and data services public as written or by AWS's default, which Checkov reports
// and Trivy has no check for: one finding each, naming the resource, none for the safe forms.
func TestAnyPrincipalAndPublicDataServices(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{
		"stack.yaml": `AWSTemplateFormatVersion: "2010-09-09"
Resources:
  OpenRole:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Statement:
          - Effect: Allow
            Principal: {AWS: ["arn:aws:iam::123456789012:root", "*"]}
            Action: sts:AssumeRole
  PartnerRole:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Statement:
          - Effect: Allow
            Principal: {AWS: "*"}
            Action: sts:AssumeRole
            Condition: {StringEquals: {"sts:ExternalId": "partner-7"}}
  Key:
    Type: AWS::KMS::Key
    Properties:
      KeyPolicy:
        Statement:
          - Effect: Allow
            Principal: "*"
            Action: kms:*
            Resource: "*"
  Warehouse:
    Type: AWS::Redshift::Cluster
    Properties:
      NodeType: dc2.large
      PubliclyAccessible: true
  Migration:
    Type: AWS::DMS::ReplicationInstance
    Properties:
      ReplicationInstanceClass: dms.t3.micro
  PrivateMigration:
    Type: AWS::DMS::ReplicationInstance
    Properties:
      ReplicationInstanceClass: dms.t3.micro
      PubliclyAccessible: false
`,
		"main.tf": `resource "aws_iam_role" "open" {
  assume_role_policy = jsonencode({
    Statement = [{ Effect = "Allow", Principal = { AWS = "*" }, Action = "sts:AssumeRole" }]
  })
}
resource "aws_iam_role" "ec2" {
  assume_role_policy = jsonencode({
    Statement = [{ Effect = "Allow", Principal = { Service = "ec2.amazonaws.com" }, Action = "sts:AssumeRole" }]
  })
}
resource "aws_redshift_cluster" "open" {
  publicly_accessible = true
}
`,
	})
	rep := assess(t, assessorOn(t, dir), `{"scope":"infrastructure"}`)
	wantResourceFindings(t, rep, func(rule string) bool { return rule == "iac/any-principal" || rule == "iac/public-database" }, []string{
		"iac/any-principal main.tf:2 aws_iam_role.open",
		"iac/any-principal stack.yaml:6 OpenRole",
		"iac/any-principal stack.yaml:23 Key",
		"iac/public-database main.tf:12 aws_redshift_cluster.open",
		"iac/public-database stack.yaml:33 Warehouse",
		"iac/public-database stack.yaml:34 Migration",
	})
}

// CloudFormation settings Checkov checks and Trivy does not evaluate on CloudFormation: one
// finding each, naming the resource, none for the safe forms beside them.
func TestCloudFormationSettings(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{"stack.yaml": `AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Open:
    Type: AWS::ApiGateway::Method
    Properties:
      HttpMethod: GET
      AuthorizationType: NONE
  Preflight:
    Type: AWS::ApiGateway::Method
    Properties:
      HttpMethod: OPTIONS
      AuthorizationType: NONE
  Keyed:
    Type: AWS::ApiGateway::Method
    Properties:
      HttpMethod: POST
      AuthorizationType: NONE
      ApiKeyRequired: true
  Bare:
    Type: AWS::ApiGateway::Stage
    Properties:
      StageName: prod
  Full:
    Type: AWS::ApiGateway::Stage
    Properties:
      StageName: prod
      TracingEnabled: true
      CacheClusterEnabled: true
      AccessLogSetting: {DestinationArn: "arn:aws:logs:us-east-1:123456789012:log-group:api"}
  Https:
    Type: AWS::ElasticLoadBalancingV2::Listener
    Properties:
      Protocol: HTTPS
      Port: 443
  Pinned:
    Type: AWS::ElasticLoadBalancingV2::Listener
    Properties:
      Protocol: HTTPS
      Port: 443
      SslPolicy: ELBSecurityPolicy-TLS13-1-2-2021-06
  Web:
    Type: AWS::EC2::Instance
    Properties:
      NetworkInterfaces:
        - AssociatePublicIpAddress: true
          DeviceIndex: "0"
  Private:
    Type: AWS::EC2::Instance
    Properties:
      NetworkInterfaces:
        - AssociatePublicIpAddress: false
          DeviceIndex: "0"
`})
	rep := assess(t, assessorOn(t, dir), `{"scope":"infrastructure"}`)
	wantResourceFindings(t, rep, func(rule string) bool {
		return strings.HasPrefix(rule, "iac/api-") || rule == "iac/listener-default-tls-policy" || rule == "iac/instance-public-ip"
	}, []string{
		"iac/api-method-without-auth stack.yaml:7 Open",
		"iac/api-stage-without-access-log stack.yaml:19 Bare",
		"iac/api-stage-without-cache stack.yaml:19 Bare",
		"iac/api-stage-without-tracing stack.yaml:19 Bare",
		"iac/instance-public-ip stack.yaml:45 Web",
		"iac/listener-default-tls-policy stack.yaml:33 Https",
	})
}

// wantResourceFindings compares the findings of the rules keep accepts, as "rule file:line
// resource", with want, in any order.
func wantResourceFindings(t *testing.T, rep *security.Report, keep func(rule string) bool, want []string) {
	t.Helper()
	var got []string
	for _, f := range rep.Findings {
		if keep(f.RuleID) {
			got = append(got, fmt.Sprintf("%s %s %s", f.RuleID, f.Location, f.Resource))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A secret committed and removed later is still in every clone: the history scan reports it
// (once, where it was added), and a secret still in the file only once, from the working tree.
func TestSecretsInGitHistory(t *testing.T) {
	dir := t.TempDir()
	git := testenv.NewGit(t, dir)
	git.Commit("change", map[string]string{"deploy.env": "REGION=eu-west-1\nAWS_ACCESS_KEY_ID=" + awsKey + "\n", "ci.env": "TOKEN=" + githubPAT + "\n"})
	git.Commit("change", map[string]string{"deploy.env": "REGION=eu-west-1\nAWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID}\n"})
	a := assessorOn(t, dir)
	if got := strings.Join(locations(assess(t, a, `{"scope":"code"}`)), ","); got != "secret/github-pat ci.env:1" {
		t.Errorf("without history: %s", got)
	}
	rep := assess(t, a, `{"scope":"code","history":true}`)
	if got := strings.Join(locations(rep), ","); got != "secret/github-pat ci.env:1,secret/aws-access-token deploy.env:2" {
		t.Errorf("with history: %s", got)
	}
	if len(rep.Findings) == 2 && !strings.Contains(rep.Findings[1].Message, "no longer in the file") {
		t.Errorf("message %q", rep.Findings[1].Message)
	}
}

// The data service, logging and encryption rules where they read more than Checkov's tests
// show: values the template leaves to deployment (a parameter without default) are not
// judged, kinds of resource a setting does not apply to are skipped (gateway load balancers,
// asymmetric, HMAC and imported keys, Aurora instances), the safe forms Checkov does not list
// pass (logs to CloudWatch, an INFO field log level, a list of audit event kinds), overrides
// that disarm Log4JRCE fail, and the Terraform resources Trivy has no check for answer as
// their CloudFormation twins.
func TestDataServiceSettings(t *testing.T) {
	dir := testenv.TempTree(t, map[string]string{"stack.yaml": `AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Retention: {Type: Number}
  Key: {Type: String}
Resources:
  LeftToDeployment:
    Type: AWS::Logs::LogGroup
    Properties:
      RetentionInDays: !Ref Retention
  Gateway:
    Type: AWS::ElasticLoadBalancingV2::LoadBalancer
    Properties:
      Type: gateway
  ToCloudWatch:
    Type: AWS::Redshift::Cluster
    Properties:
      NodeType: ra3.xlplus
      LoggingProperties: {LogDestinationType: cloudwatch, LogExports: [connectionlog, userlog]}
  Hmac:
    Type: AWS::KMS::Key
    Properties:
      KeySpec: HMAC_256
      KeyUsage: GENERATE_VERIFY_MAC
  Symmetric:
    Type: AWS::KMS::Key
    Properties:
      Description: data key
  Imported:
    Type: AWS::KMS::Key
    Properties:
      Origin: EXTERNAL
  Aurora:
    Type: AWS::RDS::DBInstance
    Properties:
      Engine: aurora-postgresql
      MonitoringInterval: 60
  Counted:
    Type: AWS::WAFv2::WebACL
    Properties:
      Rules:
        - Name: bad-inputs
          Statement:
            ManagedRuleGroupStatement:
              VendorName: AWS
              Name: AWSManagedRulesKnownBadInputsRuleSet
              RuleActionOverrides:
                - Name: Log4JRCE
                  ActionToUse: {Count: {}}
          OverrideAction: {None: {}}
  Blocked:
    Type: AWS::WAFv2::WebACL
    Properties:
      Rules:
        - Name: bad-inputs
          Statement:
            ManagedRuleGroupStatement:
              VendorName: AWS
              Name: AWSManagedRulesKnownBadInputsRuleSet
          OverrideAction: {None: {}}
  Info:
    Type: AWS::AppSync::GraphQLApi
    Properties:
      LogConfig: {CloudWatchLogsRoleArn: "arn:aws:iam::123456789012:role/appsync", FieldLogLevel: INFO}
  Kinds:
    Type: AWS::DocDB::DBClusterParameterGroup
    Properties:
      Parameters: {audit_logs: "ddl,dml_write"}
  ManagedAlias:
    Type: AWS::DynamoDB::Table
    Properties:
      SSESpecification:
        SSEEnabled: true
        KMSMasterKeyId: alias/aws/dynamodb
  ParameterKey:
    Type: AWS::SecretsManager::Secret
    Properties:
      KmsKeyId: !Ref Key
`, "main.tf": `resource "aws_cloudwatch_log_group" "forever" {
  name              = "app"
  retention_in_days = 0
}
resource "aws_cloudwatch_log_group" "month" {
  retention_in_days = 30
}
resource "aws_lb" "web" {
  name = "web"
}
resource "aws_lb" "logged" {
  access_logs {
    bucket  = "logs"
    enabled = true
  }
}
resource "aws_lb" "gateway" {
  load_balancer_type = "gateway"
}
resource "aws_elb" "classic" {
  access_logs {
    bucket = "logs"
  }
}
resource "aws_db_instance" "db" {
  engine              = "postgres"
  monitoring_interval = 0
}
resource "aws_docdb_cluster_parameter_group" "plain" {
  family = "docdb5.0"
  parameter {
    name  = "tls"
    value = "disabled"
  }
}
resource "aws_redshift_parameter_group" "ssl" {
  family = "redshift-1.0"
  parameter {
    name  = "require_ssl"
    value = "true"
  }
}
resource "aws_qldb_ledger" "open" {
  name             = "ledger"
  permissions_mode = "ALLOW_ALL"
}
resource "aws_sagemaker_notebook_instance" "nb" {
  kms_key_id = "arn:aws:kms:us-east-1:123456789012:key/nb"
  instance_metadata_service_configuration {
    minimum_instance_metadata_service_version = "1"
  }
}
resource "aws_elasticache_replication_group" "cache" {
  transit_encryption_enabled = true
}
resource "aws_elasticache_replication_group" "auth" {
  transit_encryption_enabled = true
  auth_token                 = var.token
}
resource "aws_appsync_graphql_api" "api" {
  name = "api"
}
`})
	rep := assess(t, assessorOn(t, dir), `{"scope":"infrastructure"}`)
	ours := map[string]bool{}
	for _, ids := range checkovChecks {
		for _, id := range ids {
			ours[id] = strings.HasPrefix(id, "iac/")
		}
	}
	for _, id := range []string{"iac/any-principal", "iac/public-database", "iac/iam-wildcard", "iac/unencrypted-storage"} {
		ours[id] = false // older rules, pinned by the tests above
	}
	wantResourceFindings(t, rep, func(rule string) bool { return ours[rule] }, []string{
		"iac/kms-key-without-rotation stack.yaml:24 Symmetric",
		"iac/waf-without-log4j-rule stack.yaml:40 Counted",
		"iac/aws-managed-key stack.yaml:73 ManagedAlias",
		"iac/log-group-without-retention main.tf:3 aws_cloudwatch_log_group.forever",
		"iac/lb-without-access-log main.tf:8 aws_lb.web",
		"iac/rds-single-az main.tf:25 aws_db_instance.db",
		"iac/rds-without-enhanced-monitoring main.tf:27 aws_db_instance.db",
		"iac/docdb-tls-disabled main.tf:33 aws_docdb_cluster_parameter_group.plain",
		"iac/docdb-without-audit-log main.tf:31 aws_docdb_cluster_parameter_group.plain",
		"iac/qldb-allow-all main.tf:45 aws_qldb_ledger.open",
		"iac/imds-v1 main.tf:50 aws_sagemaker_notebook_instance.nb",
		"iac/redis-without-auth main.tf:54 aws_elasticache_replication_group.cache",
		"iac/appsync-without-logging main.tf:60 aws_appsync_graphql_api.api",
	})
}
