package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/platform-dev/platform/internal/testenv"
)

// TestKeyRevocationReachesEveryReplica: two replicas on one FerretDB and one redis-server; a
// key created through one opens the other, and once revoked through one it is refused by
// both within a second, and the audit log both share records the revocation.
func TestKeyRevocationReachesEveryReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two replicas and two stores; not in -short")
	}
	bin := scaleBuild(t)
	redisAddr, _ := testenv.RedisServer(t)
	env := []string{
		"MONGODB_URI=" + scaleFerretDB(t),
		"REDIS_URL=redis://" + redisAddr + "/0",
		"PLATFORM_ADMIN_TOKEN=" + scaleAdminToken,
	}
	a := startScaleReplica(t, bin, "A", env)
	b := startScaleReplica(t, bin, "B", env)

	status, body := a.do(t, http.MethodPost, "localhost", "/admin/v1/keys", scaleAdminToken, map[string]string{"name": "support", "scope": "operator:read"})
	var k struct{ Key string }
	if status != http.StatusCreated || json.Unmarshal(body, &k) != nil || k.Key == "" {
		t.Fatalf("create a key through A: %d %s", status, body)
	}
	for _, r := range []*scaleReplica{a, b} {
		if status, body := r.do(t, http.MethodGet, "localhost", "/admin/v1/projects", k.Key, nil); status != http.StatusOK {
			t.Fatalf("the new key on %s: %d %s", r.name, status, body)
		}
		if status, body := r.do(t, http.MethodDelete, "localhost", "/admin/v1/keys/support", k.Key, nil); status != http.StatusForbidden {
			t.Fatalf("an operator:read key revoking itself on %s: %d %s, want 403", r.name, status, body)
		}
	}

	if status, body := a.do(t, http.MethodDelete, "localhost", "/admin/v1/keys/support", scaleAdminToken, nil); status != http.StatusOK {
		t.Fatalf("revoke through A: %d %s", status, body)
	}
	revoked := time.Now()
	refused := map[string]time.Duration{}
	for len(refused) < 2 {
		for _, r := range []*scaleReplica{a, b} {
			if _, done := refused[r.name]; done {
				continue
			}
			status, body := r.do(t, http.MethodGet, "localhost", "/admin/v1/projects", k.Key, nil)
			switch {
			case status == http.StatusUnauthorized:
				refused[r.name] = time.Since(revoked)
			case status != http.StatusOK:
				t.Fatalf("the revoked key on %s: %d %s", r.name, status, body)
			}
		}
		if time.Since(revoked) > time.Second {
			t.Fatalf("the revoked key still opens a replica a second later (refused by %v)", refused)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("revoked key refused after %v", refused)

	status, body = b.do(t, http.MethodGet, "localhost", "/admin/v1/audit", scaleAdminToken, nil)
	var last struct{ Action, Target, Outcome, Key string }
	lines := bytes.Split(bytes.TrimSpace(body), []byte("\n"))
	if status != http.StatusOK || len(lines) == 0 || json.Unmarshal(lines[len(lines)-1], &last) != nil ||
		last.Action != "key.revoke" || last.Target != "support" || last.Outcome != "ok" || last.Key != "bootstrap" {
		t.Errorf("the audit log read through B ends with %+v (%d %s), want the revocation made through A", last, status, body)
	}
}
