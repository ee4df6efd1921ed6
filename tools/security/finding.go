// Package security assesses a workspace for security problems: secrets (gitleaks' detector and
// default rules), Go code (gosec's rules and analyzers), code in other languages (rules over
// the tokens of a real lexer, so comments and string contents never match as code), and
// infrastructure misconfigurations of the declarations the cloud package inventories and of
// Dockerfiles.
package security

import (
	"fmt"
	"sort"
	"strings"

	"github.com/securego/gosec/v2/report/sarif"
)

// Severity levels, lowest first.
var severities = []string{"low", "medium", "high", "critical"}

func rank(sev string) int {
	for i, s := range severities {
		if s == sev {
			return i
		}
	}
	return -1
}

// Categories of findings.
const (
	CategorySecret         = "secret"
	CategoryCode           = "code"
	CategoryInfrastructure = "infrastructure"
)

// Finding is one problem with where it is and what to do about it.
type Finding struct {
	RuleID      string `json:"ruleId"`
	Title       string `json:"title"` // what the rule finds, the same for all its findings
	Severity    string `json:"severity"`
	Category    string `json:"category"`
	CWE         string `json:"cwe"`
	CIS         string `json:"cis,omitempty"`
	File        string `json:"file"`
	Line        int    `json:"line"`
	Location    string `json:"location"` // file:line
	Message     string `json:"message"`
	Remediation string `json:"remediation"`
	Tool        string `json:"tool"` // gitleaks, gosec or platform
	// Resource names the declared resource an infrastructure finding is about: its Terraform
	// address, CloudFormation logical id or Kubernetes kind/namespace/name, as the rule knows it.
	Resource string `json:"resource,omitempty"`
	// Fingerprint identifies the finding across edits that move it (rule, file, message); a
	// baseline lists the fingerprints a team has accepted.
	Fingerprint string `json:"fingerprint"`
	// Vendored marks a finding in third-party code (vendor/, node_modules/, ...): still a leak
	// when it is a secret, but not the team's own code.
	Vendored bool `json:"vendored,omitempty"`
	// AlsoMatched names the other rules that found the same credential at the same place.
	AlsoMatched []string `json:"alsoMatched,omitempty"`
	secret      string   // the secret itself, for the history scan only; never shown nor cached
}

// Summary counts findings.
type Summary struct {
	Total      int            `json:"total"`
	BySeverity map[string]int `json:"bySeverity"`
	ByCategory map[string]int `json:"byCategory"`
}

// Report is the answer of security_assessment in JSON format.
type Report struct {
	Path     string    `json:"path"`
	Scope    string    `json:"scope"`
	Severity string    `json:"severity"` // the minimum reported
	Summary  Summary   `json:"summary"`
	Findings []Finding `json:"findings"`
	// Omitted counts findings left out by the limit, most severe kept.
	Omitted int `json:"omitted,omitempty"`
	// Suppressed counts findings silenced by ignore directives in the code, Baselined those
	// accepted by the baseline named in Baseline.
	Suppressed int    `json:"suppressed,omitempty"`
	Baselined  int    `json:"baselined,omitempty"`
	Baseline   string `json:"baseline,omitempty"`
	// Truncated says that the time budget of the call ran out: the findings are those of the
	// files scanned until then (Notes say how far it got).
	Truncated bool     `json:"truncated,omitempty"`
	Notes     []string `json:"notes,omitempty"`
	// OmittedNotes counts notes left out by the limit.
	OmittedNotes int `json:"omittedNotes,omitempty"`
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if ra, rb := rank(a.Severity), rank(b.Severity); ra != rb {
			return ra > rb
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.RuleID < b.RuleID
	})
}

func summarize(fs []Finding) Summary {
	s := Summary{Total: len(fs), BySeverity: map[string]int{}, ByCategory: map[string]int{}}
	for _, sev := range severities {
		s.BySeverity[sev] = 0
	}
	for _, f := range fs {
		s.BySeverity[f.Severity]++
		s.ByCategory[f.Category]++
	}
	return s
}

// mask shows enough of a secret to find it again and not enough to use it: the first 4
// characters of a secret of 12 or more, none of a shorter one (4 characters of an 8-character
// password are half of it).
func mask(secret string) string {
	secret = strings.TrimSpace(secret)
	n := len(secret)
	switch {
	case n == 0:
		return ""
	case n < 12:
		return fmt.Sprintf("******** (%d chars)", n)
	default:
		return secret[:4] + strings.Repeat("*", min(n-4, 12)) + fmt.Sprintf(" (%d chars)", n)
	}
}

// SARIF returns the findings as a SARIF 2.1.0 log, one rule per rule id, with the CWE as a
// taxonomy reference.
func SARIF(fs []Finding) *sarif.Report {
	var rules []*sarif.ReportingDescriptor
	index := map[string]int{}
	var results []*sarif.Result
	for _, f := range fs {
		i, ok := index[f.RuleID]
		if !ok {
			i = len(rules)
			index[f.RuleID] = i
			rd := &sarif.ReportingDescriptor{
				ID:               f.RuleID,
				Name:             f.RuleID,
				ShortDescription: sarif.NewMultiformatMessageString(f.Title),
				Help:             sarif.NewMultiformatMessageString(f.Remediation),
				Properties: &sarif.PropertyBag{
					"tags":              []string{f.Category, f.CWE},
					"security-severity": securitySeverity(f.Severity),
				},
				DefaultConfiguration: &sarif.ReportingConfiguration{Level: level(f.Severity)},
			}
			rules = append(rules, rd)
		}
		props := sarif.PropertyBag{"severity": f.Severity, "cwe": f.CWE, "remediation": f.Remediation, "tool": f.Tool}
		if f.CIS != "" {
			props["cis"] = f.CIS
		}
		line := max(f.Line, 1)
		res := sarif.NewResult(f.RuleID, i, level(f.Severity), f.Message, nil, "").
			WithLocations(sarif.NewLocation(sarif.NewPhysicalLocation(
				sarif.NewArtifactLocation(f.File), sarif.NewRegion(line, line, 1, 1, ""))))
		res.Properties = &props
		results = append(results, res)
	}
	driver := sarif.NewToolComponent("platform security_assessment", "1.0.0", "https://github.com/platform-dev/platform").
		WithRules(rules...)
	run := sarif.NewRun(sarif.NewTool(driver)).WithResults(results...)
	return sarif.NewReport("2.1.0", "https://json.schemastore.org/sarif-2.1.0.json").WithRuns(run)
}

func level(sev string) sarif.Level {
	switch sev {
	case "critical", "high":
		return sarif.Error
	case "medium":
		return sarif.Warning
	}
	return sarif.Note
}

// securitySeverity is the CVSS-like score GitHub code scanning reads to rank alerts.
func securitySeverity(sev string) string {
	return map[string]string{"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0"}[sev]
}
