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
// become relative to it in every answer, and network addresses (of Redis, of an expert
// backend) are masked in error texts, which are the ones that carry them.
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

// text rewrites an error text: paths, and network addresses masked.
func (r redactor) text(s string) string {
	return addressPattern.ReplaceAllString(r.paths(s), "(address hidden)")
}

// paths rewrites the absolute paths below a hidden folder in s as relative to it, the folder
// itself as ".". A tool's result goes through it: its addresses (of cloud resources) are the
// answer, but the server's folders are nobody's business.
func (r redactor) paths(s string) string {
	for _, root := range r.roots {
		if root == string(filepath.Separator) || !strings.Contains(s, root) {
			continue
		}
		var b strings.Builder
		for {
			i := strings.Index(s, root)
			if i < 0 {
				break
			}
			b.WriteString(s[:i])
			rest := s[i+len(root):]
			switch {
			case strings.HasPrefix(rest, string(filepath.Separator)):
				rest = rest[1:]
			case rest == "" || !isNameByte(rest[0]):
				b.WriteByte('.')
			default: // a longer name that starts like the folder: another folder
				b.WriteString(root)
			}
			s = rest
		}
		b.WriteString(s)
		s = b.String()
	}
	return s
}

// isNameByte reports whether c can continue a file name (so that "/work/a" is not a prefix
// of "/work/ab").
func isNameByte(c byte) bool {
	return c == '.' || c == '-' || c == '_' || c >= 0x80 ||
		('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}
