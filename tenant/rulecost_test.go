package tenant_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform-dev/platform/tenant"
)

// syncBuffer is a log destination that handlers may write to from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A rule that passes its cost limit answers RULE_FAILED, for a list as for a single record
// and a mutation, and is logged as a warning naming the project, the table and the rule; it
// never answers an empty list as though the rule refused every record.
func TestRuleOverItsCostLimit(t *testing.T) {
	logs := &syncBuffer{}
	s := newServiceWith(t, tenant.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	// Each rule is cheap on small lists and passes the limit on lists of 300.
	const (
		perRecord = `record.tags.all(a, record.tags.all(b, a == b || a != b))`
		perCaller = `auth.groups.all(a, auth.groups.all(b, a == b || a != b))`
	)
	put := func(id, read, update string) {
		t.Helper()
		doc, err := json.Marshal(map[string]any{
			"id":   id,
			"auth": s.issuer.Auth(id, s.jwks),
			"tables": map[string]any{"notes": map[string]any{
				"fields": map[string]any{"name": map[string]any{"type": "String"}, "tags": map[string]any{"type": "[String]"}},
				"access": map[string]any{"read": read, "create": "authenticated", "update": update, "delete": "owner"},
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		p, err := tenant.ParseDocument(doc)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.reg.Put(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	many := make([]string, 300)
	for i := range many {
		many[i] = fmt.Sprintf("t%d", i)
	}
	mint := func(project string, extra map[string]any) string {
		tok, err := s.issuer.Mint(project, "alice", time.Hour, extra)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	const create = `mutation($data: noteInput!) { createNote(data: $data) { uid } }`
	const update = `mutation($uid: ID, $data: noteInput!) { updateNote(uid: $uid, data: $data) { uid } }`

	put("records", perRecord, perRecord)
	alice := mint("records", nil)
	var uid string
	for _, tags := range [][]string{{"a", "b"}, many} {
		a := s.post(t, "records", alice, create, map[string]any{"data": map[string]any{"name": "n", "tags": tags}})
		var rec struct{ UID string }
		if err := json.Unmarshal(a.Data["createNote"], &rec); err != nil || rec.UID == "" {
			t.Fatalf("create: %s %+v", a.Data["createNote"], a.Errors)
		}
		uid = rec.UID
	}
	put("callers", perCaller, "owner")
	small := mint("callers", map[string]any{"groups": []string{"x"}})
	if a := s.post(t, "callers", small, create, map[string]any{"data": map[string]any{"name": "n"}}); len(a.Errors) > 0 {
		t.Fatalf("create: %+v", a.Errors)
	}
	cases := []struct {
		name, project, token, query string
		vars                        map[string]any
	}{
		{"a list, per record", "records", alice, `{ notes { uid } }`, nil},
		{"one record", "records", alice, `query($uid: ID) { notes(uid: $uid) { uid } }`, map[string]any{"uid": uid}},
		{"an update", "records", alice, update, map[string]any{"uid": uid, "data": map[string]any{"name": "m"}}},
		{"a list, per caller", "callers", mint("callers", map[string]any{"groups": many}), `{ notes { uid } }`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := s.post(t, tc.project, tc.token, tc.query, tc.vars)
			if a.code() != tenant.CodeRuleFailed || a.Errors[0].Extensions["reason"] != "rule_cost_limit" {
				t.Fatalf("%d %+v (data %s), want %s", a.status, a.Errors, a.Data, tenant.CodeRuleFailed)
			}
			if msg := a.Errors[0].Message; !strings.Contains(msg, "notes") || !strings.Contains(msg, "cost") {
				t.Errorf("message %q names neither the table nor the cost limit", msg)
			}
		})
	}
	// A caller with few groups passes the rule, which refuses nobody.
	if a := s.post(t, "callers", small, `{ notes { uid } }`, nil); len(a.Errors) > 0 || len(a.uids(t, "notes")) != 1 {
		t.Fatalf("a caller with one group: %s %+v", a.Data["notes"], a.Errors)
	}
	type line struct {
		Level, Msg, Project, Table, Rule string
	}
	found := map[string]bool{}
	for l := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var got line
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if got.Msg == "access rule failed" {
			if got.Level != "WARN" || got.Table != "notes" || (got.Rule != perRecord && got.Rule != perCaller) {
				t.Errorf("log line %s: want a WARN naming the table and the rule", l)
			}
			found[got.Project] = true
		}
	}
	if !found["records"] || !found["callers"] {
		t.Fatalf("rules over their limit logged for %v, want both projects:\n%s", found, logs)
	}
}
