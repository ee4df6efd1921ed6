package expert_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools/expert"
)

// busyTree is a workspace with many code findings in app/ and, sorted after them, the
// Kubernetes findings a Kubernetes question is about, and SQL injection in db/.
func busyTree(t *testing.T) string {
	t.Helper()
	var py strings.Builder
	py.WriteString("import os\n\ndef run(cmds):\n")
	for i := range 15 {
		fmt.Fprintf(&py, "    os.system(cmds[%d])\n", i)
	}
	files := map[string]string{
		"app/jobs.py": py.String(),
		"k8s/pod.yaml": `apiVersion: v1
kind: Pod
metadata:
  name: agent
spec:
  containers:
    - name: agent
      image: agent:1.0
      securityContext:
        privileged: true
        runAsNonRoot: true
`,
		"db/orders.py": "def find(cursor, uid):\n    return cursor.execute(\"SELECT * FROM orders WHERE id = \" + uid)\n",
	}
	return testenv.TempTree(t, files)
}

func ask(t *testing.T, e *expert.Expert, domain, query, path string) *expert.Answer {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"domain": domain, "query": query, "context": map[string]any{"path": path}})
	out, err := e.Call(context.Background(), args)
	if err != nil {
		t.Fatal(err)
	}
	return out.(*expert.Answer)
}

// The findings an answer cites are those relevant to the question, not the first ones found:
// a Kubernetes question gets the privileged container even behind 15 command injections.
func TestFindingsAreRetrievedForTheQuestion(t *testing.T) {
	e := newExpertOn(t, busyTree(t), expert.Config{})
	a := ask(t, e, "security", "Do our Kubernetes pods run privileged containers?", ".")
	cited := false
	for _, f := range a.Findings {
		cited = cited || (f.ID == "iac/privileged-container" && f.Location == "k8s/pod.yaml:10")
	}
	if !cited {
		t.Errorf("privileged container not cited; findings %+v", a.Findings)
	}
	// 15 command injections, the SQL injection, the privileged container and the pod no
	// NetworkPolicy selects.
	if a.FindingsTotal != 18 || len(a.Findings) > 12 {
		t.Errorf("total %d, shown %d", a.FindingsTotal, len(a.Findings))
	}
}

// When the analyses of its domain report problems, the expert says so first, whatever the
// question, and tells the model it may not say otherwise.
func TestNeverReassuresWhenDomainFindingsExist(t *testing.T) {
	cs := &chatServer{}
	srv := httptest.NewServer(cs)
	defer srv.Close()
	for _, cfg := range []expert.Config{{}, {URL: srv.URL + "/v1", Model: "m", Timeout: 10 * time.Second}} {
		e := newExpertOn(t, busyTree(t), cfg)
		a := ask(t, e, "database", "Which index should the orders table have?", "db")
		if a.FindingsTotal != 1 || len(a.Findings) != 1 || a.Findings[0].ID != "code/sql-injection" {
			t.Fatalf("findings %+v", a.Findings)
		}
		if cfg.URL == "" {
			if !strings.HasPrefix(a.Answer, "**database expert**") || !strings.Contains(a.Answer, "1 finding of this domain") ||
				strings.Contains(a.Answer, "No finding") {
				t.Errorf("answer does not lead with the finding:\n%s", a.Answer)
			}
			continue
		}
		cs.mu.Lock()
		req := cs.requests[len(cs.requests)-1]
		cs.mu.Unlock()
		if !strings.Contains(req.Messages[0].Content, "never say or imply") || !strings.Contains(req.Messages[1].Content, "db/orders.py:2") {
			t.Errorf("prompt does not carry the finding or the rule:\n%s\n%s", req.Messages[0].Content, req.Messages[1].Content)
		}
	}
}

// An answer grounded in a folder cites only files inside it.
func TestCitesOnlyFilesInsideThePath(t *testing.T) {
	e := newExpert(t, expert.Config{})
	for _, c := range domainCases {
		if c.path == "." {
			continue
		}
		a := consult(t, e, c)
		for _, f := range a.Findings {
			if f.Location != "" && !strings.HasPrefix(f.Location, c.path+"/") {
				t.Errorf("%s on %s cites %s", c.domain, c.path, f.Location)
			}
		}
	}
	a := ask(t, newExpertOn(t, busyTree(t), expert.Config{}), "devops", "Is the cluster configuration safe?", "k8s")
	for _, f := range a.Findings {
		if !strings.HasPrefix(f.Location, "k8s/") {
			t.Errorf("devops on k8s cites %s", f.Location)
		}
	}
}
