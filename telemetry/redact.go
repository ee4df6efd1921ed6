package telemetry

import (
	"log/slog"
	"net/http"
	"regexp"
	"strings"
)

// Redacted stands for a secret a log record held.
const Redacted = "REDACTED"

// secretWords are in the names of query parameters, headers and log attributes that carry
// secrets: tokens, keys, passwords, sessions, signatures, cookies. secretQuery below holds
// the same words.
var secretWords = []string{"token", "key", "secret", "passw", "pwd", "session", "signature", "credential", "jwt", "authorization", "cookie"}

// SecretParam reports whether a query parameter (or header, or log attribute) of this name
// carries a secret, which an address must not hold and a log line must not show.
func SecretParam(name string) bool {
	// Without a regular expression: the logger asks this of every attribute it writes.
	lower := strings.ToLower(name)
	if lower == "sig" {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// SecretParamIn returns the name of the first query parameter of r whose name says it
// carries a secret (SecretParam), "" when there is none.
func SecretParamIn(r *http.Request) string {
	if r.URL.RawQuery == "" {
		return ""
	}
	for name := range r.URL.Query() {
		if SecretParam(name) {
			return name
		}
	}
	return ""
}

var (
	// secretQuery is a query parameter whose name says it carries a secret, in an address
	// anywhere in a text ("/console/login?token=...", "GET http://idp/jwks?key=...").
	secretQuery = regexp.MustCompile(`(?i)([?&;](?:sig|[^=&\s"'#?]*(?:token|key|secret|passw|pwd|session|signature|credential|jwt|authorization|cookie)[^=&\s"'#?]*)=)[^&\s"'#]+`)
	// userinfo is the password of an address (scheme://user:password@host).
	userinfo = regexp.MustCompile(`(://[^/\s:@]*:)[^@/\s]+@`)
	// jws is a compact JWS or JWT: its header always starts with {" (eyJ in base64url).
	jws = regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`)
	// bearer is the credential of an Authorization value.
	bearer = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[^\s"',;]+`)
)

// RedactText returns s with the secrets it seems to hold replaced: the values of secret
// query parameters, the password of an address, JWTs and bearer credentials.
func RedactText(s string) string {
	// Each expression runs only on a text that may hold what it finds: the logger asks this
	// of every string it writes.
	if strings.Contains(s, "=") {
		s = secretQuery.ReplaceAllString(s, "${1}"+Redacted)
	}
	if strings.Contains(s, "@") {
		s = userinfo.ReplaceAllString(s, "${1}"+Redacted+"@")
	}
	if strings.Contains(s, "eyJ") {
		s = jws.ReplaceAllString(s, Redacted)
	}
	if lower := strings.ToLower(s); strings.Contains(lower, "bearer") || strings.Contains(lower, "basic") {
		s = bearer.ReplaceAllString(s, "${1}${2}"+Redacted)
	}
	return s
}

// RedactAttr is a slog.HandlerOptions.ReplaceAttr that keeps secrets out of log records,
// whatever logs them: the value of an attribute whose name says it is secret (authorization,
// cookie, token, ...) is dropped, and strings and errors lose the secrets RedactText finds
// (a request's address with ?token=, a JWT inside a message). Headers lose their secret
// fields.
func RedactAttr(_ []string, a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	if SecretParam(a.Key) && v.Kind() != slog.KindGroup {
		return slog.String(a.Key, Redacted)
	}
	switch v.Kind() {
	case slog.KindString:
		if s, r := v.String(), RedactText(v.String()); r != s {
			return slog.String(a.Key, r)
		}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			// Written as its message, which is what a handler writes of an error.
			if s, r := x.Error(), RedactText(x.Error()); r != s {
				return slog.String(a.Key, r)
			}
		case http.Header:
			h := x.Clone()
			for name := range h {
				if SecretParam(name) {
					h[name] = []string{Redacted}
				}
			}
			return slog.Any(a.Key, h)
		}
	}
	return a
}
