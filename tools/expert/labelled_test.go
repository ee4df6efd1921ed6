package expert_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/platform-dev/platform/tools/expert"
)

// labelledQuestion is one question of testdata/questions.json: the entries that answer it
// (relevant), and those of the same topic that may be cited beside them (related).
type labelledQuestion struct {
	Domain   string   `json:"domain"`
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
	Related  []string `json:"related"`
}

func labelledQuestions(t *testing.T) []labelledQuestion {
	t.Helper()
	b, err := os.ReadFile("testdata/questions.json")
	if err != nil {
		t.Fatal(err)
	}
	var set struct{ Questions []labelledQuestion }
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	perDomain := map[string]int{}
	for _, q := range set.Questions {
		perDomain[q.Domain]++
	}
	for _, d := range expert.Domains {
		if perDomain[d] < 10 {
			t.Fatalf("%d labelled questions for %s, want at least 10", perDomain[d], d)
		}
	}
	return set.Questions
}

func citedIDs(a *expert.Answer) []string {
	var ids []string
	for _, g := range a.Guidance {
		ids = append(ids, g.ID)
	}
	return ids
}

// TestLabelledQuestions: without a model, for at least 90% of the labelled questions one of
// the first three entries cited answers it, and no answer cites an entry off its question's
// topic: every citation is one the labels name for that question.
func TestLabelledQuestions(t *testing.T) {
	e := newExpert(t, expert.Config{})
	qs := labelledQuestions(t)
	hits := 0
	for _, q := range qs {
		a := consult(t, e, domainCase{domain: q.Domain, query: q.Query})
		cited := citedIDs(a)
		if slices.ContainsFunc(cited[:min(3, len(cited))], func(id string) bool { return slices.Contains(q.Relevant, id) }) {
			hits++
		} else {
			t.Logf("miss: %s %q cited %v, want one of %v", q.Domain, q.Query, cited, q.Relevant)
		}
		for _, id := range cited {
			if !slices.Contains(q.Relevant, id) && !slices.Contains(q.Related, id) {
				t.Errorf("%s %q cites %s, off its topic (cited %v)", q.Domain, q.Query, id, cited)
			}
			if !strings.HasPrefix(id, q.Domain+"/") {
				t.Errorf("%s %q cites %s of another domain", q.Domain, q.Query, id)
			}
		}
	}
	rate := float64(hits) / float64(len(qs))
	t.Logf("%d of %d questions (%.1f%%) have an answering entry in the first three cited", hits, len(qs), 100*rate)
	if rate < 0.9 {
		t.Errorf("answering entry in the first three for %.1f%% of the questions, want at least 90%%", 100*rate)
	}
}

// TestJWTKeyRotationOnTopic: asked about JWT key rotation, the security expert answered from
// unrelated sections (secrets in images, hashes and ciphers); it cites the one on rotating the
// keys that sign tokens first, and nothing but guidance on tokens.
func TestJWTKeyRotationOnTopic(t *testing.T) {
	a := consult(t, newExpert(t, expert.Config{}), domainCase{domain: "security", query: "JWT key rotation"})
	if len(a.Guidance) == 0 || a.Guidance[0].ID != "security/auth#jwt-signing-key-rotation" {
		t.Fatalf("guidance %+v, want security/auth#jwt-signing-key-rotation first", a.Guidance)
	}
	for _, g := range a.Guidance {
		if !strings.HasPrefix(g.ID, "security/auth#") {
			t.Errorf("cites %s, which is not about tokens", g.ID)
		}
	}
}

// TestLabelledQuestionsWithAModel: with a model configured, each labelled question is one
// chat-completions request to the endpoint (a local stub of its protocol), whose user message
// carries the question and exactly the sections the answer cites, the same ones the answer
// cites without a model. What the model writes is not checked.
func TestLabelledQuestionsWithAModel(t *testing.T) {
	cs := &chatServer{}
	srv := httptest.NewServer(cs)
	defer srv.Close()
	withModel := newExpert(t, expert.Config{URL: srv.URL + "/v1", Model: "expert-test", APIKey: "test-key", Timeout: 10 * time.Second})
	without := newExpert(t, expert.Config{})
	sectionRef := regexp.MustCompile(`\[([a-z]+/[a-z0-9-]+#[a-z0-9-]+)\]`)
	for i, q := range labelledQuestions(t) {
		c := domainCase{domain: q.Domain, query: q.Query}
		a, kb := consult(t, withModel, c), consult(t, without, c)
		if a.AnswerBy != expert.ByModel {
			t.Fatalf("%q answered by %s: %v", q.Query, a.AnswerBy, a.Notes)
		}
		cited, kbCited := citedIDs(a), citedIDs(kb)
		if !slices.Equal(cited, kbCited) {
			t.Errorf("%q cites %v with a model, %v without", q.Query, cited, kbCited)
		}
		user := cs.request(t, i, q.Query).Messages[1].Content
		if !strings.Contains(user, q.Query) {
			t.Errorf("the request for %q lacks the question", q.Query)
		}
		var sent []string
		for _, m := range sectionRef.FindAllStringSubmatch(user, -1) {
			sent = append(sent, m[1])
		}
		if !slices.Equal(sent, cited) {
			t.Errorf("%q: the request carries sections %v, the answer cites %v", q.Query, sent, cited)
		}
	}
}
