package security_test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tools/security"
)

// expected is one finding of a reference tool, with the checks of ours that report it.
type expected struct {
	file  string
	ours  []string
	label string // the reference tool's name of the check
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

// readExpected reads a reference tool's findings (tab-separated, # comments) with col
// naming the column of the file and check the checks of ours that report a row.
func readExpected(t *testing.T, name string, file int, check func(cols []string) (label string, ours []string)) []expected {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []expected
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") || sc.Text() == "" {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		label, ours := check(cols)
		if ours == nil {
			t.Fatalf("%s: no checks of ours for %q", name, label)
		}
		out = append(out, expected{file: cols[file], ours: ours, label: label})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// recall counts the reference findings that a finding of the report covers: per file and
// reference check, as many as the report has findings of the equivalent checks there.
func recall(rep *security.Report, want []expected) (found int, missed map[string]int) {
	type key struct{ file, label string }
	need := map[key]int{}
	ours := map[key][]string{}
	for _, w := range want {
		k := key{w.file, w.label}
		need[k]++
		ours[k] = w.ours
	}
	missed = map[string]int{}
	for k, n := range need {
		have := 0
		for _, f := range rep.Findings {
			if f.File == k.file && (slices.Contains(ours[k], f.RuleID) || containsAny(ours[k], f.AlsoMatched)) {
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

func containsAny(list, of []string) bool {
	for _, s := range of {
		if slices.Contains(list, s) {
			return true
		}
	}
	return false
}

// TestRecallOnVulnerableByDesignRepositories: against the findings tfsec and kube-score
// report on pinned excerpts of terragoat and kubernetes-goat (testdata/iac/README.md),
// security_assessment finds at least 90%.
func TestRecallOnVulnerableByDesignRepositories(t *testing.T) {
	cases := []struct {
		repo, reference string
		file            int
		check           func(cols []string) (string, []string)
	}{
		{"terragoat", "tfsec.tsv", 0, func(cols []string) (string, []string) {
			return cols[2], []string{strings.TrimPrefix(cols[2], "AVD-")}
		}},
		{"kubernetes-goat", "kube-score.tsv", 0, func(cols []string) (string, []string) {
			return cols[4], kubeScoreChecks[cols[4]]
		}},
	}
	for _, c := range cases {
		t.Run(c.repo, func(t *testing.T) {
			dir := filepath.Join("testdata/iac", c.repo)
			want := readExpected(t, filepath.Join(dir, c.reference), c.file, c.check)
			rep := infraReport(t, trivyAssessor(t, dir, iacHelper), "")
			found, missed := recall(rep, want)
			t.Logf("%s: %d of %d %s findings (%.0f%%), %d findings in all; missed %v",
				c.repo, found, len(want), strings.TrimSuffix(c.reference, ".tsv"), 100*float64(found)/float64(len(want)), len(rep.Findings), missed)
			if found*10 < len(want)*9 {
				t.Errorf("recall %d of %d, below 90%%; missed %v", found, len(want), missed)
			}
		})
	}
}
