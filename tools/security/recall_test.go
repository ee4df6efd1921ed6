package security_test

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tools/security"
)

// expected is one finding of a reference tool, with the checks of ours that report it.
type expected struct {
	file     string
	resource string // when the reference names it: only a finding naming it counts
	ours     []string
	label    string // the reference tool's name of the check
}

// kubeScoreChecks names, for each kube-score critical check, the checks of Trivy or ours that
// report the same problem.
var kubeScoreChecks = map[string][]string{
	"The container is privileged":                             {"KSV-0017"},
	"Image with latest tag":                                   {"KSV-0013"},
	"Container has no configured security context":            {"KSV-0118", "KSV-0014", "KSV-0012", "KSV-0020", "KSV-0021"},
	"The pod has a container with a writable root filesystem": {"KSV-0014"},
	"The container running with a low group ID":               {"KSV-0021"},
	"The container is running with a low user ID":             {"KSV-0020"},
	"CPU limit is not set":                                    {"KSV-0011"},
	"CPU request is not set":                                  {"KSV-0015"},
	"Memory limit is not set":                                 {"KSV-0018"},
	"Memory request is not set":                               {"KSV-0016"},
	"Ephemeral Storage limit is not set":                      {"iac/ephemeral-storage-limit"},
	"Ephemeral Storage request is not set":                    {"iac/ephemeral-storage-request"},
	"The pod does not have a matching NetworkPolicy":          {"iac/no-network-policy"},
	"No matching PodDisruptionBudget was found":               {"iac/no-pod-disruption-budget"},
	"Container is missing a readinessProbe":                   {"iac/missing-readiness-probe"},
}

// checkovChecks names, for each Checkov CloudFormation check whose tests fail a resource in
// testdata/iac/checkov-cfn, the checks of Trivy or ours that report the same problem. Checkov's
// checks that none of ours reports are in checkov-no-counterpart.tsv there.
var checkovChecks = map[string][]string{
	"CKV_AWS_2":   {"AWS-0054"},
	"CKV_AWS_3":   {"AWS-0026", "iac/unencrypted-storage"},
	"CKV_AWS_5":   {"AWS-0048"},
	"CKV_AWS_6":   {"AWS-0043"},
	"CKV_AWS_7":   {"AWS-0065", "iac/kms-key-without-rotation"},
	"CKV_AWS_8":   {"AWS-0008"},
	"CKV_AWS_16":  {"AWS-0080", "iac/unencrypted-storage"},
	"CKV_AWS_17":  {"AWS-0180", "AWS-0082", "iac/public-database"},
	"CKV_AWS_18":  {"AWS-0089"},
	"CKV_AWS_20":  {"AWS-0092", "iac/public-bucket"},
	"CKV_AWS_21":  {"AWS-0090"},
	"CKV_AWS_23":  {"AWS-0099", "AWS-0124", "iac/sg-rule-without-description"},
	"CKV_AWS_24":  {"AWS-0107", "iac/ingress-open-admin-port"},
	"CKV_AWS_25":  {"AWS-0107", "iac/ingress-open-admin-port"},
	"CKV_AWS_26":  {"AWS-0095"},
	"CKV_AWS_27":  {"AWS-0096"},
	"CKV_AWS_28":  {"AWS-0024"},
	"CKV_AWS_29":  {"AWS-0045"},
	"CKV_AWS_30":  {"AWS-0051"},
	"CKV_AWS_31":  {"AWS-0051", "iac/redis-without-auth"},
	"CKV_AWS_32":  {"AWS-0032"},
	"CKV_AWS_33":  {"iac/any-principal"},
	"CKV_AWS_34":  {"AWS-0012", "iac/cloudfront-allows-http"},
	"CKV_AWS_35":  {"AWS-0015"},
	"CKV_AWS_36":  {"AWS-0016"},
	"CKV_AWS_40":  {"AWS-0143", "iac/policy-attached-to-user"},
	"CKV_AWS_42":  {"AWS-0037"},
	"CKV_AWS_43":  {"AWS-0064"},
	"CKV_AWS_44":  {"AWS-0076"},
	"CKV_AWS_45":  {"iac/secret-in-template"},
	"CKV_AWS_46":  {"AWS-0029", "iac/secret-in-user-data"},
	"CKV_AWS_47":  {"AWS-0023"},
	"CKV_AWS_51":  {"AWS-0031"},
	"CKV_AWS_53":  {"AWS-0086", "iac/public-bucket"},
	"CKV_AWS_54":  {"AWS-0087", "iac/public-bucket"},
	"CKV_AWS_55":  {"AWS-0091", "iac/public-bucket"},
	"CKV_AWS_56":  {"AWS-0093", "iac/public-bucket"},
	"CKV_AWS_57":  {"AWS-0092", "iac/public-bucket"},
	"CKV_AWS_58":  {"AWS-0039"},
	"CKV_AWS_59":  {"AWS-0004", "iac/api-method-without-auth"},
	"CKV_AWS_60":  {"iac/any-principal"},
	"CKV_AWS_61":  {"iac/role-trusts-account"},
	"CKV_AWS_62":  {"iac/iam-wildcard"},
	"CKV_AWS_63":  {"iac/iam-wildcard"},
	"CKV_AWS_64":  {"AWS-0084"},
	"CKV_AWS_65":  {"AWS-0034"},
	"CKV_AWS_66":  {"iac/log-group-without-retention"},
	"CKV_AWS_67":  {"AWS-0014"},
	"CKV_AWS_68":  {"AWS-0011"},
	"CKV_AWS_69":  {"AWS-0072"},
	"CKV_AWS_71":  {"iac/redshift-without-audit-log"},
	"CKV_AWS_73":  {"AWS-0003", "AWS-0111", "iac/api-stage-without-tracing"},
	"CKV_AWS_74":  {"AWS-0021"},
	"CKV_AWS_76":  {"AWS-0001", "AWS-0113", "iac/api-stage-without-access-log"},
	"CKV_AWS_78":  {"AWS-0018"},
	"CKV_AWS_79":  {"AWS-0130", "AWS-0028", "iac/imds-v1"},
	"CKV_AWS_80":  {"AWS-0074"},
	"CKV_AWS_81":  {"AWS-0073", "AWS-0179"},
	"CKV_AWS_82":  {"AWS-0007"},
	"CKV_AWS_83":  {"AWS-0046"},
	"CKV_AWS_84":  {"AWS-0042"},
	"CKV_AWS_85":  {"AWS-0020"},
	"CKV_AWS_86":  {"AWS-0010"},
	"CKV_AWS_87":  {"iac/public-database"},
	"CKV_AWS_88":  {"AWS-0009", "iac/instance-public-ip"},
	"CKV_AWS_89":  {"iac/public-database"},
	"CKV_AWS_90":  {"iac/docdb-tls-disabled"},
	"CKV_AWS_91":  {"iac/lb-without-access-log"},
	"CKV_AWS_92":  {"iac/lb-without-access-log"},
	"CKV_AWS_94":  {"iac/glue-catalog-unencrypted"},
	"CKV_AWS_95":  {"AWS-0001", "AWS-0116", "iac/api-stage-without-access-log"},
	"CKV_AWS_96":  {"AWS-0079", "iac/unencrypted-storage"},
	"CKV_AWS_97":  {"AWS-0035"},
	"CKV_AWS_99":  {"iac/glue-security-configuration-unencrypted"},
	"CKV_AWS_100": {"iac/eks-nodegroup-open-ssh"},
	"CKV_AWS_101": {"AWS-0075"},
	"CKV_AWS_103": {"AWS-0047", "iac/listener-default-tls-policy", "iac/listener-plain-http"},
	"CKV_AWS_104": {"iac/docdb-without-audit-log"},
	"CKV_AWS_105": {"iac/redshift-ssl-not-required"},
	"CKV_AWS_107": {"iac/iam-credentials-exposure"},
	"CKV_AWS_109": {"iac/iam-permissions-management", "iac/iam-wildcard"},
	"CKV_AWS_111": {"iac/iam-write-unconstrained", "iac/iam-wildcard"},
	"CKV_AWS_115": {"iac/lambda-without-concurrency-limit"},
	"CKV_AWS_116": {"iac/lambda-without-dlq"},
	"CKV_AWS_117": {"iac/lambda-outside-vpc"},
	"CKV_AWS_118": {"iac/rds-without-enhanced-monitoring"},
	"CKV_AWS_119": {"AWS-0025", "iac/aws-managed-key"},
	"CKV_AWS_120": {"AWS-0190", "iac/api-stage-without-cache"},
	"CKV_AWS_123": {"iac/vpc-endpoint-service-auto-accept"},
	"CKV_AWS_131": {"AWS-0052"},
	"CKV_AWS_136": {"AWS-0033"},
	"CKV_AWS_149": {"AWS-0098", "iac/aws-managed-key"},
	"CKV_AWS_154": {"AWS-0127", "AWS-0085"},
	"CKV_AWS_155": {"AWS-0109"},
	"CKV_AWS_156": {"AWS-0109"},
	"CKV_AWS_157": {"iac/rds-single-az"},
	"CKV_AWS_158": {"AWS-0017"},
	"CKV_AWS_160": {"iac/aws-managed-key"},
	"CKV_AWS_161": {"AWS-0176"},
	"CKV_AWS_162": {"AWS-0176", "iac/rds-cluster-without-iam-auth"},
	"CKV_AWS_163": {"AWS-0030"},
	"CKV_AWS_164": {"iac/transfer-server-public"},
	"CKV_AWS_165": {"AWS-0024", "iac/no-point-in-time-recovery"},
	"CKV_AWS_166": {"iac/aws-managed-key"},
	"CKV_AWS_170": {"iac/qldb-allow-all"},
	"CKV_AWS_172": {"iac/deletion-protection-disabled"},
	"CKV_AWS_173": {"iac/lambda-env-without-cmk"},
	"CKV_AWS_174": {"AWS-0013"},
	"CKV_AWS_187": {"iac/aws-managed-key"},
	"CKV_AWS_192": {"iac/waf-without-log4j-rule"},
	"CKV_AWS_193": {"iac/appsync-without-logging"},
	"CKV_AWS_194": {"iac/appsync-without-logging"},
	"CKV_AWS_195": {"iac/glue-without-security-configuration"},
	"CKV_AWS_197": {"AWS-0070"},
	"CKV_AWS_258": {"iac/lambda-url-without-auth"},
	"CKV_AWS_260": {"AWS-0107", "iac/ingress-open-http"},
	"CKV_AWS_291": {"iac/msk-public-brokers"},
	"CKV_AWS_317": {"AWS-0042"},
	"CKV_AWS_360": {"iac/short-backup-retention"},
	"CKV_AWS_361": {"iac/short-backup-retention"},
	"CKV_AWS_363": {"iac/lambda-deprecated-runtime"},
	"CKV_AWS_364": {"AWS-0067", "iac/lambda-permission-without-source"},
	"CKV_AWS_366": {"iac/cognito-unauthenticated-identities"},
	"CKV_AWS_367": {"iac/aws-managed-key"},
	"CKV_AWS_368": {"iac/aws-managed-key"},
	"CKV_AWS_369": {"iac/sagemaker-traffic-unencrypted"},
	"CKV_AWS_370": {"iac/sagemaker-model-network-access"},
	"CKV_AWS_371": {"iac/imds-v1"},
	"CKV_AWS_373": {"iac/aws-managed-key"},
	"CKV_AWS_384": {"iac/secret-in-template"},
}

// readRows reads a tab-separated file with # comments.
func readRows(t *testing.T, name string) [][]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") || sc.Text() == "" {
			continue
		}
		rows = append(rows, strings.Split(sc.Text(), "\t"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// readExpected reads a reference tool's findings with file and resource naming the columns
// of the file and the resource (0 for none), and check the checks of ours that report a row.
func readExpected(t *testing.T, name string, file, resource int, check func(cols []string) (label string, ours []string)) []expected {
	t.Helper()
	var out []expected
	for _, cols := range readRows(t, name) {
		label, ours := check(cols)
		if ours == nil {
			t.Fatalf("%s: no checks of ours for %q", name, label)
		}
		w := expected{file: cols[file], ours: ours, label: label}
		if resource > 0 {
			w.resource = cols[resource]
		}
		out = append(out, w)
	}
	return out
}

// recall counts the reference findings that a finding of the report covers: per file and
// reference check, as many as the report has findings of the equivalent checks there.
func recall(rep *security.Report, want []expected) (found int, missed map[string]int) {
	type key struct{ file, resource, label string }
	need := map[key]int{}
	ours := map[key][]string{}
	for _, w := range want {
		k := key{w.file, w.resource, w.label}
		need[k]++
		ours[k] = w.ours
	}
	missed = map[string]int{}
	for k, n := range need {
		have := 0
		for _, f := range rep.Findings {
			if f.File == k.file && (k.resource == "" || f.Resource == k.resource) &&
				(slices.Contains(ours[k], f.RuleID) || containsAny(ours[k], f.AlsoMatched)) {
				have++
			}
		}
		found += min(n, have)
		if have < n {
			missed[k.label] += n - have
		}
	}
	return found, missed
}

// falsePositives lists the findings of platform's own rules on resources the reference
// passes: in a folder of the reference's tests, a resource that none of the reference's checks
// mapped to the rule fails there (the folder's PASS templates, or the passing resources of a
// FAIL template). Those checkovStale names are counted apart, as stale.
func falsePositives(rep *security.Report, want []expected) (checked, stale int, wrong []string) {
	seen := map[string]bool{}
	type key struct{ dir, rule string }
	failed := map[key]map[string]bool{}
	for _, w := range want {
		for _, id := range w.ours {
			k := key{path.Dir(w.file), id}
			if failed[k] == nil {
				failed[k] = map[string]bool{}
			}
			failed[k][w.file+" "+w.resource] = true
		}
	}
	for _, f := range rep.Findings {
		fails, ok := failed[key{path.Dir(f.File), f.RuleID}]
		if !ok || f.Tool != "platform" {
			continue
		}
		checked++
		k := f.RuleID + " " + f.File + " " + f.Resource
		switch {
		case fails[f.File+" "+f.Resource]:
		case checkovStale[k] != "":
			seen[k] = true
		default:
			wrong = append(wrong, fmt.Sprintf("%s %s %s", f.RuleID, f.Location, f.Resource))
		}
	}
	return checked, len(seen), wrong
}

func containsAny(list, of []string) bool {
	for _, s := range of {
		if slices.Contains(list, s) {
			return true
		}
	}
	return false
}

// TestRecallOnVulnerableByDesignRepositories: against the findings tfsec, kube-score and
// Checkov report on pinned excerpts of terragoat, kubernetes-goat and Checkov's own
// CloudFormation tests (testdata/iac/README.md), security_assessment finds at least 90%; a
// Checkov finding counts only when ours names the same resource, and platform's own rules
// report no resource that Checkov's tests pass.
func TestRecallOnVulnerableByDesignRepositories(t *testing.T) {
	cases := []struct {
		repo, reference string
		file, resource  int
		check           func(cols []string) (string, []string)
	}{
		{"terragoat", "tfsec.tsv", 0, 0, func(cols []string) (string, []string) {
			return cols[2], []string{strings.TrimPrefix(cols[2], "AVD-")}
		}},
		{"kubernetes-goat", "kube-score.tsv", 0, 0, func(cols []string) (string, []string) {
			return cols[4], kubeScoreChecks[cols[4]]
		}},
		{"checkov-cfn", "checkov.tsv", 1, 3, func(cols []string) (string, []string) {
			return cols[0], checkovChecks[cols[0]]
		}},
	}
	for _, c := range cases {
		t.Run(c.repo, func(t *testing.T) {
			dir := filepath.Join("testdata/iac", c.repo)
			want := readExpected(t, filepath.Join(dir, c.reference), c.file, c.resource, c.check)
			rep := infraReport(t, trivyAssessor(t, dir, iacHelper), "")
			found, missed := recall(rep, want)
			t.Logf("%s: %d of %d %s findings (%.0f%%), %d findings in all; missed %v",
				c.repo, found, len(want), strings.TrimSuffix(c.reference, ".tsv"), 100*float64(found)/float64(len(want)), len(rep.Findings), missed)
			if found*10 < len(want)*9 {
				t.Errorf("recall %d of %d, below 90%%; missed %v", found, len(want), missed)
			}
			if c.resource == 0 {
				return // the reference names no resources: what it passes is unknown
			}
			checked, stale, wrong := falsePositives(rep, want)
			if c.repo == "checkov-cfn" && stale != len(checkovStale) {
				t.Errorf("%d of the %d findings where Checkov's data is stale (checkovStale)", stale, len(checkovStale))
			}
			t.Logf("%s: %d findings of platform's rules in the folders of the checks they map to, %d on resources the reference passes", c.repo, checked, len(wrong))
			if len(wrong) > 0 {
				t.Errorf("platform's rules report resources %s passes:\n%s", strings.TrimSuffix(c.reference, ".tsv"), strings.Join(wrong, "\n"))
			}
		})
	}
}

// TestCheckovChecksWithoutCounterpart: the Checkov checks left out of the CloudFormation
// recall are only those none of ours reports, each listed once with the resources its tests
// fail.
func TestCheckovChecksWithoutCounterpart(t *testing.T) {
	checks, failed := 0, 0
	for _, row := range readRows(t, "testdata/iac/checkov-cfn/checkov-no-counterpart.tsv") {
		if ours, ok := checkovChecks[row[0]]; ok {
			t.Errorf("%s is listed without counterpart but maps to %v", row[0], ours)
		}
		n, err := strconv.Atoi(row[1])
		if err != nil || n <= 0 {
			t.Errorf("%s: failed resources %q", row[0], row[1])
		}
		checks++
		failed += n
	}
	t.Logf("%d Checkov checks without a counterpart, failing %d resources in their tests; %d checks mapped", checks, failed, len(checkovChecks))
}

// checkovStale are resources that Checkov's tests pass and a rule of ours rightly fails, with
// why: Checkov's data is older than ours there.
var checkovStale = map[string]string{
	// Checkov's list of deprecated runtimes has nodejs18.x commented out ("Uncomment on Sept
	// 1, 2025"); AWS deprecated it on 2025-09-01.
	"iac/lambda-deprecated-runtime example_DeprecatedLambdaRuntime/example.yaml Pass": "nodejs18.x",
}
