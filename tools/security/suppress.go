package security

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/platform-dev/platform/docparse"
)

// ignoreDirective matches "platform:ignore <id>[, <id>...]" in any comment syntax (#, //, --,
// /* */, <!-- -->). An id names a rule ("code/sql-injection") or a rule family
// ("secret/", "gosec/"); "platform:ignore all" silences every rule on that line.
var ignoreDirective = regexp.MustCompile(`platform:ignore[ \t:]+([A-Za-z0-9_./\-]+(?:[ \t]*,[ \t]*[A-Za-z0-9_./\-]+)*)`)

// suppressions are the ignore directives of one file: line -> rule ids. A directive covers its
// own line and the line below it, so it can sit above a statement or at the end of it.
type suppressions map[int][]string

// parseSuppressions reads the directives of a file; nil when it has none (the common case,
// decided without splitting lines).
func parseSuppressions(content []byte) suppressions {
	if !bytes.Contains(content, []byte("platform:ignore")) {
		return nil
	}
	s := suppressions{}
	for i, line := range bytes.Split(content, []byte("\n")) {
		m := ignoreDirective.FindSubmatch(line)
		if m == nil {
			continue
		}
		for _, id := range strings.Split(string(m[1]), ",") {
			id = strings.TrimSpace(id)
			s[i+1] = append(s[i+1], id)
			s[i+2] = append(s[i+2], id)
		}
	}
	return s
}

// covers reports whether a directive silences f.
func (s suppressions) covers(f Finding) bool {
	for _, id := range s[f.Line] {
		for _, rule := range append([]string{f.RuleID}, f.AlsoMatched...) {
			if id == "all" || id == rule || (strings.HasSuffix(id, "/") && strings.HasPrefix(rule, id)) {
				return true
			}
		}
	}
	return false
}

// fingerprint identifies a finding independently of its line, so that a baseline survives
// edits above it: the rule, the file and the message (which names the masked secret, the
// resource or the container concerned).
func fingerprint(f Finding) string {
	sum := sha256.Sum256([]byte(f.RuleID + "\x00" + f.File + "\x00" + f.Message))
	return hex.EncodeToString(sum[:8])
}

// baseline is a multiset of fingerprints: a rule that fires twice in a file with the same
// message is accepted as many times as the baseline saw it.
type baseline map[string]int

// BaselineFile is the name of the baseline an assessment picks up by itself in the folder it
// assesses when the call names none.
const BaselineFile = ".security-baseline.json"

// maxBaselineBytes bounds a baseline file: a saved report, which the MCP server's response
// limit (10 MB) bounds too.
const maxBaselineBytes = 10 << 20

// loadBaseline reads a baseline: a security_assessment JSON report saved earlier (only its
// findings' fingerprints, or ruleId, file and message when a fingerprint is missing, are read).
func loadBaseline(file string) (baseline, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lim := docparse.Limits{MaxBytes: maxBaselineBytes, MaxDepth: docparse.DefaultLimits().MaxDepth}
	b, err := io.ReadAll(io.LimitReader(f, int64(lim.MaxBytes)+1))
	if err != nil {
		return nil, err
	}
	if err := docparse.CheckJSON(b, lim); err != nil {
		return nil, err
	}
	var rep struct {
		Findings []Finding `json:"findings"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("not a security_assessment JSON report: %w", err)
	}
	bl := baseline{}
	for _, f := range rep.Findings {
		fp := f.Fingerprint
		if fp == "" {
			fp = fingerprint(f)
		}
		bl[fp]++
	}
	return bl, nil
}

// accepts consumes one occurrence of f's fingerprint.
func (bl baseline) accepts(f Finding) bool {
	if bl[f.Fingerprint] > 0 {
		bl[f.Fingerprint]--
		return true
	}
	return false
}

// mergeCredentials keeps one finding per leaked credential and location: gitleaks' rules, the
// hard-coded credential rule and the manifest rules often see the same value on the same line.
// The most specific survives (a named gitleaks rule over a platform rule over gitleaks'
// generic rule) and names the others in AlsoMatched, so that an ignore directive of any of
// them still applies; it keeps the resource one of them names.
func mergeCredentials(fs []Finding) []Finding {
	first := map[string]int{} // location -> index in out
	out := fs[:0]
	for _, f := range fs {
		if f.CWE != "CWE-798" {
			out = append(out, f)
			continue
		}
		i, ok := first[f.Location]
		if !ok {
			first[f.Location] = len(out)
			out = append(out, f)
			continue
		}
		kept := &out[i]
		resource := cmp.Or(kept.Resource, f.Resource) // a template rule knows the resource, gitleaks not
		if specificity(f) > specificity(*kept) {
			f.AlsoMatched = append(append(f.AlsoMatched, kept.RuleID), kept.AlsoMatched...)
			*kept = f
		} else {
			kept.AlsoMatched = append(kept.AlsoMatched, f.RuleID)
		}
		kept.Resource = resource
	}
	return out
}

func specificity(f Finding) int {
	switch {
	case f.RuleID == "secret/generic-api-key":
		return rank(f.Severity)
	case strings.HasPrefix(f.RuleID, "secret/"):
		return 20 + rank(f.Severity)
	}
	return 10 + rank(f.Severity)
}
