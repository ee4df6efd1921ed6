package telemetry_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/telemetry"
)

func TestRedactText(t *testing.T) {
	const jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl"
	cases := []struct{ in, want string }{
		{"/console/login?token=s3cret", "/console/login?token=REDACTED"},
		{"/x?a=1&access_token=s3cret&b=2", "/x?a=1&access_token=REDACTED&b=2"},
		{"/x?API_KEY=s3cret#frag", "/x?API_KEY=REDACTED#frag"},
		{"/x?password=p&client_secret=q&session=r&sig=s", "/x?password=REDACTED&client_secret=REDACTED&session=REDACTED&sig=REDACTED"},
		{`Get "http://idp/jwks?key=s3cret": timeout`, `Get "http://idp/jwks?key=REDACTED": timeout`},
		{"redis://user:s3cret@host:6379/0", "redis://user:REDACTED@host:6379/0"},
		{"token " + jwt + " refused", "token REDACTED refused"},
		{"Authorization: Bearer opaque-s3cret", "Authorization: Bearer REDACTED"},
		{"basic YWxpY2U6czNjcmV0", "basic REDACTED"},
		// Nothing secret: unchanged.
		{"/api/v1/graphql?query={products{uid}}&author=ann", "/api/v1/graphql?query={products{uid}}&author=ann"},
		{"fetch JWKS from http://idp/.well-known/jwks.json", "fetch JWKS from http://idp/.well-known/jwks.json"},
		{"a@b", "a@b"},
	}
	for _, tc := range cases {
		if got := telemetry.RedactText(tc.in); got != tc.want {
			t.Errorf("RedactText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A logger built with RedactAttr shows no secret, whatever attribute holds it.
func TestRedactAttr(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: telemetry.RedactAttr}))
	h := http.Header{"Authorization": {"Bearer s3cret-1"}, "Cookie": {"platform_console=s3cret-2"}, "Accept": {"text/html"}}
	log.Info("request", "uri", "/console/login?token=s3cret-3", "cookie", "s3cret-4", "headers", h,
		"err", errors.New(`Get "http://u:s3cret-5@idp/jwks": refused`), slog.Group("g", "authorization", "Bearer s3cret-6"))
	log.With("admin_token", "s3cret-7").Info("with")
	out := buf.String()
	if strings.Contains(out, "s3cret") {
		t.Fatalf("a secret in the log:\n%s", out)
	}
	if !strings.Contains(out, "text/html") || !strings.Contains(out, "/console/login?token=REDACTED") {
		t.Fatalf("more than secrets redacted:\n%s", out)
	}
	if h.Get("Authorization") != "Bearer s3cret-1" {
		t.Fatal("the logged header was changed")
	}
}

// BenchmarkRequestLine is the cost of the request log line (what serve writes for every
// request at debug, and for a 5xx at any level) with and without RedactAttr.
func BenchmarkRequestLine(b *testing.B) {
	for _, mode := range []struct {
		name    string
		replace func([]string, slog.Attr) slog.Attr
	}{{"plain", nil}, {"redacted", telemetry.RedactAttr}} {
		log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{ReplaceAttr: mode.replace}))
		for _, uri := range []string{"/api/v1/graphql", "/api/v1/graphql?query=%7B+notes+%7B+uid+%7D+%7D&access_token=s3cret"} {
			b.Run(mode.name+"/"+map[bool]string{false: "no query", true: "query"}[strings.Contains(uri, "?")], func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					log.Info("request", "method", "POST", "host", "shop.localhost", "uri", uri, "status", 200, "latency", time.Millisecond)
				}
			})
		}
	}
}
