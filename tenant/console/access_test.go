package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/store"
	"github.com/platform-dev/platform/tenant/console"
)

// TestConsoleFollowsTheKeyScope: a project's key sees its project alone, is refused what its
// scope does not allow, and every change it makes or tries is in the audit log; revoking the
// key ends its session.
func TestConsoleFollowsTheKeyScope(t *testing.T) {
	f := start(t, console.Config{})
	ctx := context.Background()
	for _, id := range []string{"shop", "blog"} {
		f.apply(t, `{"id":"`+id+`","tables":{"items":{"fields":{"name":{"type":"String","required":true},"note":{"type":"String"}}}}}`)
	}
	k, err := f.reg.CreateKey(ctx, "shop-admin", "project:shop:admin", 0)
	if err != nil {
		t.Fatal(err)
	}
	b := f.browser(t)
	b.signInWith(k.Key)

	home := b.do(http.MethodGet, "/console/", nil, false)
	if home.status != http.StatusOK || !strings.Contains(home.body, `href="/console/projects/shop"`) || strings.Contains(home.body, `href="/console/projects/blog"`) ||
		!strings.Contains(home.body, "shop-admin · <code>project:shop:admin</code>") || strings.Contains(home.body, `href="/console/keys"`) {
		t.Fatalf("home of a shop key: %d %s", home.status, home.body)
	}
	for _, c := range []struct {
		method, path string
		form         url.Values
		status       int
	}{
		{http.MethodGet, "/console/projects/blog", nil, http.StatusForbidden},
		{http.MethodGet, "/console/keys", nil, http.StatusForbidden},
		{http.MethodGet, "/console/health", nil, http.StatusForbidden},
		{http.MethodGet, "/console/audit", nil, http.StatusForbidden},
		{http.MethodDelete, "/console/projects/shop", nil, http.StatusForbidden},
		{http.MethodPost, "/console/projects/blog/tables/items/records", url.Values{"field.name": {"x"}}, http.StatusForbidden},
		{http.MethodPost, "/console/projects/shop/tables/items/records", url.Values{"field.name": {"Blue mug"}, "field.note": {""}}, http.StatusNoContent},
		{http.MethodPost, "/console/projects/shop/tables/items/records", url.Values{"field.name": {""}}, http.StatusUnprocessableEntity},
		{http.MethodGet, "/console/projects/shop", nil, http.StatusOK},
	} {
		if a := b.do(c.method, c.path, c.form, true); a.status != c.status {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, a.status, c.status, a.body)
		}
	}

	page := b.do(http.MethodGet, "/console/audit?project=shop", nil, false)
	if page.status != http.StatusOK {
		t.Fatalf("audit page: %d %s", page.status, page.body)
	}
	lines, err := f.reg.AuditQuery(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ action, project, outcome, diff string }{
		{"project.delete", "shop", "failed 403: your key's scope (project:shop:admin) does not allow this", ""},
		{"record.create", "blog", "failed 403", ""},
		{"record.create", "shop", "ok", `~ name = "Blue mug"` + "\n- note"},
		{"record.create", "shop", "failed 422", ""},
	}
	if len(lines) != len(want) {
		t.Fatalf("audit log: %+v, want %d entries", lines, len(want))
	}
	for i, w := range want {
		l := lines[i]
		if l.Key != "shop-admin" || l.Scope != "project:shop:admin" || l.Client != "console from 127.0.0.1" || l.Action != w.action ||
			l.Project != w.project || !strings.HasPrefix(l.Outcome, w.outcome) || strings.Join(l.Diff, "\n") != w.diff {
			t.Errorf("audit entry %d = %+v, want %+v", i, l, w)
		}
		if w.project == "shop" && !strings.Contains(page.body, "<td>"+w.action+"</td>") {
			t.Errorf("the audit page lacks %s: %s", w.action, page.body)
		}
	}

	if _, err := f.reg.RevokeKey(ctx, "shop-admin"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond) // a replica trusts a verified key for half a second
	if a := b.do(http.MethodGet, "/console/projects/shop", nil, false); a.status != http.StatusSeeOther {
		t.Errorf("a page after the key was revoked: %d, want the sign-in form", a.status)
	}
}
