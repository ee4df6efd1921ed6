package security

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// isDockerfile reports whether a file name is one docker build reads.
func isDockerfile(rel string) bool {
	name := strings.ToLower(path.Base(rel))
	return name == "dockerfile" || name == "containerfile" || strings.HasPrefix(name, "dockerfile.") ||
		strings.HasSuffix(name, ".dockerfile")
}

var (
	ruleDockerUser = infraRule{"docker/no-user", "medium", "CWE-250", "CIS Docker 4.1",
		"Create an unprivileged user and switch to it before the entrypoint (RUN useradd -r app && ... then USER app)", "Image runs as root"}
	ruleDockerAdd = infraRule{"docker/add-remote-url", "low", "CWE-494", "CIS Docker 4.9",
		"Use COPY for local files and download with RUN curl plus a checksum check for remote ones", "ADD of a remote URL"}
	ruleDockerSecret = infraRule{"docker/secret-in-image", "high", "CWE-798", "CIS Docker 4.10",
		"Pass secrets at build time with RUN --mount=type=secret and at run time from the environment or a secret store, never ENV/ARG values", "Secret baked into the image"}
)

// dockerfileFindings parses a Dockerfile with BuildKit's parser and checks its final stage.
func dockerfileFindings(rel string, content []byte) ([]Finding, error) {
	res, err := parser.Parse(bytes.NewReader(content))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", rel, err)
	}
	mk := func(r infraRule, line int, msg string) Finding {
		return Finding{RuleID: r.id, Severity: r.severity, Category: CategoryInfrastructure, CWE: r.cwe, CIS: r.cis,
			File: rel, Line: line, Location: fmt.Sprintf("%s:%d", rel, line), Message: msg, Remediation: r.remediation, Tool: "platform", Title: r.title}
	}
	var out []Finding
	stages := map[string]bool{}
	lastFrom, user, userLine := 0, "", 0
	for _, n := range res.AST.Children {
		var argv []string
		for a := n.Next; a != nil; a = a.Next {
			argv = append(argv, a.Value)
		}
		switch strings.ToLower(n.Value) {
		case "from":
			lastFrom, user, userLine = n.StartLine, "", 0
			if len(argv) == 0 {
				continue
			}
			img := argv[0]
			if len(argv) >= 3 && strings.EqualFold(argv[1], "as") {
				stages[strings.ToLower(argv[2])] = true
			}
			if !stages[strings.ToLower(img)] && img != "scratch" && imageLatest(img) {
				out = append(out, mk(ruleLatest.withID("docker/image-latest-tag"), n.StartLine, fmt.Sprintf("FROM %s floats: no tag or the latest tag", img)))
			}
		case "user":
			if len(argv) > 0 {
				user, userLine = argv[0], n.StartLine
			}
		case "add":
			for _, a := range argv {
				if strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://") {
					out = append(out, mk(ruleDockerAdd, n.StartLine, fmt.Sprintf("ADD downloads %s without verifying it", a)))
				}
			}
		case "env", "arg":
			// ENV parses to name/value/separator triples; ARG to name[=value] words.
			if strings.ToLower(n.Value) == "env" {
				for i := 0; i+1 < len(argv); i += 3 {
					if literalSecret(argv[i], argv[i+1]) {
						out = append(out, mk(ruleDockerSecret, n.StartLine, fmt.Sprintf("ENV %s bakes a secret into the image: %s", argv[i], mask(argv[i+1]))))
					}
				}
				continue
			}
			for _, a := range argv {
				if k, v, ok := strings.Cut(a, "="); ok && literalSecret(k, v) {
					out = append(out, mk(ruleDockerSecret, n.StartLine, fmt.Sprintf("ARG %s has a secret default: %s", k, mask(v))))
				}
			}
		}
	}
	if lastFrom > 0 {
		u := strings.SplitN(user, ":", 2)[0]
		switch {
		case user == "":
			out = append(out, mk(ruleDockerUser, lastFrom, "the final stage sets no USER, so the container runs as root"))
		case u == "root" || u == "0":
			out = append(out, mk(ruleDockerUser, userLine, "the final stage switches to USER "+user))
		}
	}
	return out, nil
}

func (r infraRule) withID(id string) infraRule {
	r.id = id
	return r
}
