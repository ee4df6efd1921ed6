package expert_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/cloud"
	"github.com/platform-dev/platform/tools/code"
	"github.com/platform-dev/platform/tools/expert"
	"github.com/platform-dev/platform/tools/security"
	"github.com/platform-dev/platform/tools/workspace"
)

func newExpert(t *testing.T, cfg expert.Config) *expert.Expert {
	t.Helper()
	return newExpertOn(t, "testdata/ws", cfg)
}

func newExpertOn(t *testing.T, root string, cfg expert.Config) *expert.Expert {
	t.Helper()
	ws, err := workspace.New(root)
	if err != nil {
		t.Fatal(err)
	}
	hub := &tools.Hub{}
	sec, err := security.New(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := cloud.New(t.Context(), ws, hub, nil)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := code.New(t.Context(), ws, hub, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := expert.New(cfg, ws, expert.Sources{Security: sec, Cloud: cl, Code: ca}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

type domainCase struct {
	domain, query, path string
	topGuidance         string
	alsoCited           []string // other guidance the answer must cite
	findings            []string // id@location that must be cited
	analyses            []string
	persona             string // a word of the domain's system prompt
}

var domainCases = []domainCase{
	{"security", "How do I stop SQL injection in the order lookup?", "app",
		"security/injection#sql-injection", nil,
		[]string{"code/sql-injection@app/orders.py:9"}, []string{"security_assessment"}, "security engineer"},
	{"devops", "How can we cut our AWS bill and make deployments resilient?", ".",
		"devops/deploy#cost-optimisation", []string{"devops/deploy#kubernetes-workload-baseline"},
		[]string{"previous-generation@infra/main.tf:7", "gp2-volume@infra/main.tf:9", "single-replica-without-pdb@k8s/deploy.yaml:6",
			"missing-requests-limits@k8s/deploy.yaml:18", "iac/ingress-open-admin-port@infra/main.tf:14"},
		[]string{"analyze_cloud_resources", "security_assessment"}, "DevOps"},
	{"database", "Which storage and instance class should the orders database use?", ".",
		"database/design#connections-and-scaling", nil,
		[]string{"previous-generation@infra/main.tf:7", "gp2-volume@infra/main.tf:9", "code/sql-injection@app/orders.py:9"},
		[]string{"analyze_cloud_resources", "security_assessment"}, "database engineer"},
	{"architecture", "Should we split the monolith into microservices?", "app",
		"architecture/patterns#modular-monolith-before-microservices", nil,
		[]string{"repository@app/orders.py:4"}, []string{"detect_patterns"}, "architect"},
	{"performance", "Our order list endpoint is slow with many queries per request", ".",
		"performance/performance#database-access-from-code", nil,
		[]string{"OrderRepository.find@app/orders.py:8", "missing-autoscaling@k8s/deploy.yaml:1"},
		[]string{"analyze_codebase", "analyze_cloud_resources"}, "performance engineer"},
}

func consult(t *testing.T, e *expert.Expert, c domainCase) *expert.Answer {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"domain": c.domain, "query": c.query, "context": map[string]any{"path": c.path}})
	out, err := e.Call(context.Background(), args)
	if err != nil {
		t.Fatalf("%s: %v", c.domain, err)
	}
	return out.(*expert.Answer)
}

func checkGrounding(t *testing.T, c domainCase, a *expert.Answer) {
	t.Helper()
	if len(a.Guidance) == 0 || a.Guidance[0].ID != c.topGuidance {
		t.Errorf("%s: top guidance %+v, want %s", c.domain, a.Guidance, c.topGuidance)
	}
	for _, id := range c.alsoCited {
		if !slices.ContainsFunc(a.Guidance, func(g expert.Citation) bool { return g.ID == id }) {
			t.Errorf("%s: guidance %s not cited; got %+v", c.domain, id, a.Guidance)
		}
	}
	cited := map[string]bool{}
	for _, f := range a.Findings {
		cited[f.ID+"@"+f.Location] = true
	}
	for _, w := range c.findings {
		if !cited[w] {
			t.Errorf("%s: finding %s not cited; got %v", c.domain, w, cited)
		}
	}
	if strings.Join(a.Analyses, ",") != strings.Join(c.analyses, ",") {
		t.Errorf("%s: analyses %v, want %v", c.domain, a.Analyses, c.analyses)
	}
}

func TestEachDomainFromTheKnowledgeBase(t *testing.T) {
	e := newExpert(t, expert.Config{})
	for _, c := range domainCases {
		a := consult(t, e, c)
		checkGrounding(t, c, a)
		if a.AnswerBy != expert.ByKnowledgeBase || a.Model != "" {
			t.Errorf("%s: answered by %q", c.domain, a.AnswerBy)
		}
		// The answer cites the guidance it quotes and every finding's location.
		if !strings.Contains(a.Answer, "["+c.topGuidance+"]") {
			t.Errorf("%s: answer does not cite %s:\n%s", c.domain, c.topGuidance, a.Answer)
		}
		for _, f := range a.Findings {
			if !strings.Contains(a.Answer, f.Location) {
				t.Errorf("%s: answer does not cite %s", c.domain, f.Location)
			}
		}
	}
}

// chatServer speaks the OpenAI chat-completions wire format and records what it was sent.
type chatServer struct {
	mu       sync.Mutex
	requests []chatRequest
	auth     []string
	status   int
	delay    time.Duration
}

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	status, delay := s.status, s.delay
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if status != 0 {
		http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": "model answer for " + req.Model}}},
	})
}

// request returns the i-th request the server was sent, checked to be a chat completion by
// the model expert-test with the key test-key: one system message, then one user message.
func (s *chatServer) request(t *testing.T, i int, what string) chatRequest {
	t.Helper()
	s.mu.Lock()
	req, auth := s.requests[i], s.auth[i]
	s.mu.Unlock()
	if auth != "Bearer test-key" || req.Model != "expert-test" || len(req.Messages) != 2 ||
		req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
		t.Fatalf("%s: request %+v auth %q", what, req, auth)
	}
	return req
}

func TestEachDomainWithAModel(t *testing.T) {
	cs := &chatServer{}
	srv := httptest.NewServer(cs)
	defer srv.Close()
	e := newExpert(t, expert.Config{URL: srv.URL + "/v1", Model: "expert-test", APIKey: "test-key", Timeout: 10 * time.Second})
	for i, c := range domainCases {
		a := consult(t, e, c)
		checkGrounding(t, c, a)
		if a.AnswerBy != expert.ByModel || a.Model != "expert-test" || a.Answer != "model answer for expert-test" {
			t.Errorf("%s: answer %q by %q", c.domain, a.Answer, a.AnswerBy)
		}
		req := cs.request(t, i, c.domain)
		if !strings.Contains(req.Messages[0].Content, c.persona) {
			t.Errorf("%s: system prompt %q lacks %q", c.domain, req.Messages[0].Content, c.persona)
		}
		user := req.Messages[1].Content
		if !strings.Contains(user, c.query) || !strings.Contains(user, "["+c.topGuidance+"]") {
			t.Errorf("%s: user message lacks the question or the guidance:\n%s", c.domain, user)
		}
		for _, f := range a.Findings {
			if !strings.Contains(user, f.Location) {
				t.Errorf("%s: user message lacks finding %s", c.domain, f.Location)
			}
		}
	}
}

func TestModelFailureFallsBackToTheKnowledgeBase(t *testing.T) {
	for name, cs := range map[string]*chatServer{
		"error":   {status: http.StatusServiceUnavailable},
		"timeout": {delay: 5 * time.Second},
	} {
		want := map[string]string{"error": "HTTP 503 from the model endpoint", "timeout": "no answer within 300ms"}[name]
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(cs)
			defer srv.Close()
			e := newExpert(t, expert.Config{URL: srv.URL + "/v1", Model: "m", Timeout: 300 * time.Millisecond})
			a := consult(t, e, domainCases[0])
			if a.AnswerBy != expert.ByKnowledgeBase || !strings.Contains(a.Answer, "[security/injection#sql-injection]") {
				t.Errorf("answer by %s: %s", a.AnswerBy, a.Answer)
			}
			if len(a.Notes) == 0 || !strings.Contains(a.Notes[len(a.Notes)-1], "model unavailable") ||
				strings.Contains(strings.Join(a.Notes, " "), srv.URL) || !strings.Contains(strings.Join(a.Notes, " "), want) {
				t.Errorf("notes %v", a.Notes)
			}
			cs.mu.Lock()
			n := len(cs.requests)
			cs.mu.Unlock()
			if n != 1 {
				t.Errorf("%d model requests, want exactly 1 (no retries)", n)
			}
		})
	}
}

func TestWithoutContextNothingIsAnalysed(t *testing.T) {
	e := newExpert(t, expert.Config{})
	out, err := e.Call(context.Background(), json.RawMessage(`{"domain":"devops","query":"convert gp2 volumes and add lifecycle rules to buckets"}`))
	if err != nil {
		t.Fatal(err)
	}
	a := out.(*expert.Answer)
	if len(a.Analyses) != 0 || len(a.Findings) != 0 || a.Guidance[0].ID != "devops/deploy#cost-optimisation" {
		t.Errorf("answer %+v", a)
	}
}

func TestArgumentErrors(t *testing.T) {
	e := newExpert(t, expert.Config{})
	cases := map[string]string{
		`{"domain":"legal","query":"may we?"}`:                                  "architecture, devops, security, performance, database",
		`{"domain":"security","query":"   "}`:                                   "empty",
		`{"domain":"security","query":"x","context":{"path":"../../.."}}`:       "..",
		`{"domain":"security","query":"x","context":{"path":"/etc"}}`:           "outside",
		`{"domain":"security","query":"x","context":{"path":"app/missing.py"}}`: "does not exist",
	}
	for args, want := range cases {
		_, err := e.Call(context.Background(), json.RawMessage(args))
		ae, ok := tools.IsArgumentError(err)
		if !ok || !strings.Contains(ae.Error(), want) {
			t.Errorf("%s: %v, want an argument error mentioning %q", args, err, want)
		}
	}
}
