package mcpserver

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// addressPattern matches a host:port of an IPv4 or bracketed IPv6 address, as dial errors
// print them.
var addressPattern = regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}:\d{1,5}\b|\[[0-9A-Fa-f:.%]+\]:\d{1,5}`)

// redactor rewrites texts that leave the server: absolute paths below a hidden folder
// become relative to it, and network addresses (of Redis, of an expert backend) are
// masked. Error texts of tools and stores are the ones that carry them.
type redactor struct {
	roots []string // longest first, so that a nested root wins
}

func newRedactor(paths []string) redactor {
	var roots []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		roots = append(roots, filepath.Clean(abs))
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			roots = append(roots, real)
		}
	}
	slices.SortFunc(roots, func(a, b string) int { return len(b) - len(a) })
	return redactor{roots: roots}
}

func (r redactor) text(s string) string {
	for _, root := range r.roots {
		if root == string(filepath.Separator) {
			continue
		}
		s = strings.ReplaceAll(s, root+string(filepath.Separator), "")
		s = strings.ReplaceAll(s, root, ".")
	}
	return addressPattern.ReplaceAllString(s, "(address hidden)")
}
