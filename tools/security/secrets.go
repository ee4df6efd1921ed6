package security

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
)

// newSecretDetector builds gitleaks' detector with its default rule set. It reads the
// configuration through its own viper instance: gitleaks' NewDetectorDefaultConfig uses the
// process-wide one, which concurrent calls would race on.
func newSecretDetector() (*detect.Detector, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("gitleaks default config: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("gitleaks default config: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("gitleaks default config: %w", err)
	}
	return detect.NewDetector(cfg), nil
}

// criticalSecrets are gitleaks rules whose secret gives direct access to infrastructure.
var criticalSecrets = []string{"private-key", "aws-access-token", "gcp-", "github-pat", "github-app-token", "gitlab-pat", "stripe-access-token"}

// secrets scans one file's content with gitleaks. A vendored file is shown to gitleaks by its
// base name: gitleaks' default allow-list skips whole folders (node_modules/, vendor/...) that
// this assessment scans on purpose, while its allow-list of file names (lock files, go.sum,
// images) still applies.
func secrets(ctx context.Context, d *detect.Detector, rel string, vendored bool, content []byte) []Finding {
	var out []Finding
	name := rel
	if vendored {
		name = path.Base(rel)
	}
	//lint:ignore SA1019 DetectContext of gitleaks v8 takes only this type; v9 replaces both.
	frag := detect.Fragment{Raw: string(content), FilePath: name}
	for _, s := range d.DetectContext(ctx, frag) {
		sev := "high"
		for _, c := range criticalSecrets {
			if strings.Contains(s.RuleID, c) {
				sev = "critical"
			}
		}
		line := s.StartLine + 1 // gitleaks counts lines from 0
		out = append(out, Finding{
			RuleID:   "secret/" + s.RuleID,
			Title:    s.Description,
			Severity: sev,
			Category: CategorySecret,
			CWE:      "CWE-798",
			File:     rel,
			Line:     line,
			Location: fmt.Sprintf("%s:%d", rel, line),
			Message:  fmt.Sprintf("%s: %s", s.Description, mask(s.Secret)),
			Remediation: "Revoke and rotate this credential now (it is in the repository history), remove it from the file, " +
				"and load it at run time from a secret manager or the environment",
			Tool:   "gitleaks",
			secret: s.Secret,
		})
	}
	return out
}
