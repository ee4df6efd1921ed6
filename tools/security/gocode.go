package security

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"strings"

	"github.com/securego/gosec/v2"
	"github.com/securego/gosec/v2/analyzers"
	"github.com/securego/gosec/v2/issue"
	"github.com/securego/gosec/v2/rules"
	"golang.org/x/tools/go/packages"
)

// gosecRemediation says what to do for the gosec rules met most often; the others link to
// gosec's rule page.
var gosecRemediation = map[string]string{
	"G101": "Move the credential out of the source into a secret manager or the environment, and rotate it",
	"G102": "Bind to a specific interface (127.0.0.1 or a configured address) instead of all interfaces",
	"G104": "Handle or explicitly discard the error",
	"G106": "Do not use ssh.InsecureIgnoreHostKey: verify host keys with knownhosts",
	"G107": "Validate the URL against an allow-list before requesting it (SSRF)",
	"G108": "Do not expose net/http/pprof on a public listener",
	"G110": "Limit decompressed size with io.LimitReader or io.CopyN",
	"G112": "Set ReadHeaderTimeout on http.Server to resist Slowloris",
	"G114": "Use an http.Server with timeouts instead of http.ListenAndServe",
	"G115": "Check the range before converting between integer types",
	"G201": "Use placeholders (db.Query(\"... WHERE id = ?\", id)) instead of building SQL with fmt.Sprintf",
	"G202": "Use placeholders instead of concatenating SQL",
	"G204": "Do not pass untrusted input to exec.Command; use a fixed program and validated arguments",
	"G301": "Create folders with 0750 or stricter",
	"G302": "Open files with 0600 or stricter",
	"G304": "Clean and confine the path (filepath.Clean, a root directory, os.Root) before opening it",
	"G306": "Write files with 0600 or stricter",
	"G401": "Use SHA-256 or stronger instead of MD5/SHA-1",
	"G402": "Keep TLS verification on (InsecureSkipVerify false) and MinVersion at TLS 1.2 or later",
	"G403": "Use RSA keys of at least 2048 bits",
	"G404": "Use crypto/rand for anything security-relevant",
	"G501": "Import crypto/sha256 instead of crypto/md5",
	"G505": "Import crypto/sha256 instead of crypto/sha1",
}

// goFindings runs gosec's AST rules and SSA analyzers over the packages below dir, a module
// folder or a folder inside a module. Type information comes from the local build and module
// caches only: GOPROXY=off keeps an analysis from downloading anything. Findings carry the
// absolute file name; the caller maps it into the workspace. shown names dir in notes.
func goFindings(ctx context.Context, dir, shown string) ([]Finding, []string) {
	var out []Finding
	var notes []string
	logger := log.New(io.Discard, "", 0)
	{
		conf := &packages.Config{
			Context: ctx,
			Mode:    gosec.LoadMode,
			Dir:     dir,
			Env:     append(os.Environ(), "GOPROXY=off", "GOTOOLCHAIN=local", "GOWORK=off"),
		}
		pkgs, err := packages.Load(conf, "./...")
		if err != nil {
			notes = append(notes, fmt.Sprintf("Go packages in %s not loaded: %v", shown, err))
			return out, notes
		}
		an := gosec.NewAnalyzer(gosec.NewConfig(), false, true, false, 1, logger)
		an.LoadRules(rules.Generate(false).RulesInfo())
		an.LoadAnalyzers(analyzers.Generate(false).AnalyzersInfo())
		incomplete := 0
		for _, pkg := range pkgs {
			if ctx.Err() != nil {
				return out, notes
			}
			if len(pkg.Errors) > 0 {
				incomplete++
			}
			if pkg.Types == nil || len(pkg.Syntax) == 0 {
				continue
			}
			an.CheckRules(pkg)
			an.CheckAnalyzers(pkg)
		}
		if incomplete > 0 {
			notes = append(notes, fmt.Sprintf("%d Go packages in %s have load or type errors (missing modules?): their findings may be incomplete", incomplete, shown))
		}
		issues, _, _ := an.Report()
		for _, is := range issues {
			line, _ := strconv.Atoi(strings.SplitN(is.Line, "-", 2)[0])
			cwe := ""
			if is.Cwe != nil {
				cwe = "CWE-" + is.Cwe.ID
			}
			rem, ok := gosecRemediation[is.RuleID]
			if !ok {
				rem = "See https://securego.io/docs/rules/" + strings.ToLower(is.RuleID) + ".html"
			}
			out = append(out, Finding{
				RuleID:      "gosec/" + is.RuleID,
				Title:       gosecTitle(is),
				Severity:    strings.ToLower(is.Severity.String()),
				Category:    CategoryCode,
				CWE:         cwe,
				File:        is.File,
				Line:        line,
				Message:     is.What,
				Remediation: rem,
				Tool:        "gosec",
			})
		}
	}
	return out, notes
}

// gosecTitle names what a gosec rule finds: the weakness it reports, else its message.
func gosecTitle(is *issue.Issue) string {
	if is.Cwe != nil && is.Cwe.Name != "" {
		return is.Cwe.Name
	}
	return is.What
}
