// Package expert answers domain questions (consult_expert) from curated knowledge bases shipped
// in the repository, ranked with BM25 and grounded in the workspace: when the context names a
// path, the expert runs the analyses of its domain there and cites both the guidance and the
// findings. With an OpenAI-compatible endpoint configured, a model writes the answer from that
// material; the knowledge-base answer is the fallback whenever the model fails or is too slow.
package expert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/cloud"
	"github.com/platform-dev/platform/tools/code"
	"github.com/platform-dev/platform/tools/security"
	"github.com/platform-dev/platform/tools/workspace"
)

// Domains are the experts, in the seed's order.
var Domains = []string{"architecture", "devops", "security", "performance", "database"}

// Config selects the model. An empty URL or Model means no model: answers come from the
// knowledge base. The lead reads EXPERT_LLM_URL, EXPERT_LLM_MODEL and EXPERT_LLM_API_KEY.
type Config struct {
	URL     string        // base URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1
	Model   string        // model name
	APIKey  string        // bearer key, may be empty for local servers
	Timeout time.Duration // per model call; 0 means 20 s
	// HTTPClient is used for model calls when set (tests, proxies).
	HTTPClient *http.Client
}

// Sources are the analyses the experts ground their answers in. Nil members are skipped.
type Sources struct {
	Security *security.Assessor
	Cloud    *cloud.Analyzer
	// Code answers detect_patterns and analyze_codebase, called through its Go API.
	Code *code.Analyzer
}

// Expert is the consult_expert tool. It is safe for concurrent use.
type Expert struct {
	cfg     Config
	ws      *workspace.Workspace
	src     Sources
	log     *slog.Logger
	indexes map[string]*index
	model   *model
}

// New loads the knowledge bases and returns the tool.
func New(cfg Config, ws *workspace.Workspace, src Sources, logger *slog.Logger) (*Expert, error) {
	idx, err := loadIndexes()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 20 * time.Second
	}
	e := &Expert{cfg: cfg, ws: ws, src: src, log: logger, indexes: idx}
	if cfg.URL != "" && cfg.Model != "" {
		e.model = newModel(cfg)
	}
	return e, nil
}

// Citation is a knowledge-base section the answer relies on.
type Citation struct {
	ID      string  `json:"id"`
	Title   string  `json:"title"`
	Source  string  `json:"source"`
	Score   float64 `json:"score"`
	Excerpt string  `json:"excerpt"`
}

// Evidence is a finding of an analysis run for the answer.
type Evidence struct {
	Analysis string `json:"analysis"` // security_assessment, analyze_cloud_resources, detect_patterns, analyze_codebase
	ID       string `json:"id"`
	Severity string `json:"severity,omitempty"`
	Location string `json:"location,omitempty"`
	Message  string `json:"message"`
	// about is what retrieval reads besides the id, message and location: the rule's title,
	// its CIS benchmark, the resource type.
	about string
}

// Answer is the result of consult_expert.
type Answer struct {
	Domain   string     `json:"domain"`
	Query    string     `json:"query"`
	Answer   string     `json:"answer"` // markdown
	AnswerBy string     `json:"answeredBy"`
	Model    string     `json:"model,omitempty"`
	Path     string     `json:"path,omitempty"` // the workspace path the answer is grounded in
	Guidance []Citation `json:"guidance"`
	Findings []Evidence `json:"findings,omitempty"`
	// FindingsTotal counts every finding of the domain's analyses below Path; Findings holds
	// the most relevant to the question (at most 12).
	FindingsTotal int      `json:"findingsTotal,omitempty"`
	Analyses      []string `json:"analyses,omitempty"`
	Notes         []string `json:"notes,omitempty"`
}

// Answer origins.
const (
	ByKnowledgeBase = "knowledge-base"
	ByModel         = "model"
)

const (
	maxGuidance = 4
	maxFindings = 12
	maxQuery    = 4000
	// citeRatio is how close to the best section's score another must come to be cited: on
	// the labelled questions (testdata/questions.json) the off-topic sections that ranked
	// second to fourth scored at most 0.68 of the best, the answering ones beside it 0.7 and
	// more.
	citeRatio = 0.7
)

// Consult answers query in domain. ctxArgs is the caller's context object: "path" (or "file",
// "directory") names a workspace path to ground the answer in; other string values refine the
// retrieval.
func (e *Expert) Consult(ctx context.Context, domain, query string, ctxArgs map[string]any) (*Answer, error) {
	idx, ok := e.indexes[domain]
	if !ok {
		return nil, tools.InvalidArgument("domain", "unknown domain %q: must be one of %s", domain, strings.Join(Domains, ", "))
	}
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, tools.InvalidArgument("query", "must not be empty")
	}
	if len(query) > maxQuery {
		return nil, tools.InvalidArgument("query", "longer than %d bytes", maxQuery)
	}
	ans := &Answer{Domain: domain, Query: query, AnswerBy: ByKnowledgeBase, Guidance: []Citation{}}
	question := strings.Join(append([]string{query}, contextStrings(ctxArgs)...), " ")
	if p := contextPath(ctxArgs); p != "" {
		abs, err := e.ws.Resolve("context.path", p)
		if err != nil {
			return nil, err
		}
		ans.Path = p
		_, rel, _ := e.ws.Root(abs)
		e.ground(ctx, ans, domain, p)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ans.Findings = inside(ans.Findings, rel)
		ans.FindingsTotal = len(ans.Findings)
		ans.Findings = relevant(ans.Findings, question, maxFindings)
		if n := ans.FindingsTotal - len(ans.Findings); n > 0 {
			ans.Notes = append(ans.Notes, fmt.Sprintf("%d more findings not shown (the %d most severe and most relevant to the question are): run the analyses themselves for all", n, len(ans.Findings)))
		}
	}
	for _, h := range guidance(idx, query+" "+question, ans.Findings) {
		ans.Guidance = append(ans.Guidance, Citation{ID: h.ID, Title: h.Title, Source: h.Source, Score: h.Score, Excerpt: excerpt(h.Text, 600)})
	}
	ans.Answer = knowledgeAnswer(ans)
	if e.model != nil {
		text, err := e.model.answer(ctx, ans, idx)
		switch {
		case err == nil:
			ans.Answer, ans.AnswerBy, ans.Model = text, ByModel, e.cfg.Model
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			e.log.Warn("consult_expert: model failed, answering from the knowledge base", "err", err)
			ans.Notes = append(ans.Notes, "model unavailable ("+modelFailure(err)+"): answered from the knowledge base")
		}
	}
	return ans, nil
}

// guidance picks the sections an answer cites, best first: the best match of the question
// (which counts twice, then the context's words and the findings' ids, so that guidance about
// what the workspace shows ranks up), the others that come close to it (citeRatio), and for
// each finding the section that best explains it, which is on topic because the answer shows
// the finding: "cut our bill and make deployments resilient" cites the cost guidance and,
// for a Deployment without a PodDisruptionBudget, the Kubernetes baseline.
func guidance(idx *index, question string, findings []Evidence) []hit {
	words := strings.NewReplacer("/", " ", "-", " ", "_", " ")
	q := question
	for _, f := range findings {
		q += " " + words.Replace(f.ID)
	}
	ranked := idx.search(q, len(idx.sections))
	var out []hit
	cited := map[string]bool{}
	for _, h := range ranked {
		if len(out) == maxGuidance || (len(out) > 0 && h.Score < citeRatio*out[0].Score) {
			break
		}
		out = append(out, h)
		cited[h.ID] = true
	}
	for _, f := range findings {
		best := idx.search(words.Replace(f.ID)+" "+f.about, 1)
		if len(out) == maxGuidance || len(best) == 0 || cited[best[0].ID] {
			continue
		}
		for _, h := range ranked {
			if h.ID == best[0].ID {
				out = append(out, h)
				cited[h.ID] = true
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// modelFailure says why the model failed without the endpoint's address, which the client
// need not know (the log has the whole error).
func modelFailure(err error) string {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return fmt.Sprintf("HTTP %d from the model endpoint", apiErr.StatusCode)
	}
	if strings.HasPrefix(err.Error(), "no answer within") || err.Error() == "empty answer" {
		return err.Error()
	}
	return "the model endpoint could not be reached"
}

// contextPath returns the workspace path the context names.
func contextPath(c map[string]any) string {
	for _, k := range []string{"path", "file", "directory", "dir"} {
		if s, ok := c[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// contextStrings lists the string values of the context other than paths, bounded.
func contextStrings(c map[string]any) []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	total := 0
	for _, k := range keys {
		if slices.Contains([]string{"path", "file", "directory", "dir"}, k) {
			continue
		}
		var s string
		switch v := c[k].(type) {
		case string:
			s = v
		case []any:
			for _, x := range v {
				if xs, ok := x.(string); ok {
					s += " " + xs
				}
			}
		}
		if total+len(s) > maxQuery {
			break
		}
		total += len(s)
		if s != "" {
			out = append(out, k+" "+s)
		}
	}
	return out
}

// ground runs the analyses of the domain on path and records their findings. A failing
// analysis is a note, not a failure: the guidance still answers.
func (e *Expert) ground(ctx context.Context, ans *Answer, domain, path string) {
	note := func(analysis string, err error) {
		if ctx.Err() == nil {
			ans.Notes = append(ans.Notes, fmt.Sprintf("%s on %s failed: %v", analysis, path, err))
		}
	}
	secFindings := func(scope, minimum string, keep func(security.Finding) bool) {
		if e.src.Security == nil {
			return
		}
		ans.Analyses = append(ans.Analyses, "security_assessment")
		rep, err := e.src.Security.Assess(ctx, security.Options{Path: path, Scope: scope, Severity: minimum, Limit: 500})
		if err != nil {
			note("security_assessment", err)
			return
		}
		for _, f := range rep.Findings {
			if keep == nil || keep(f) {
				ans.Findings = append(ans.Findings, Evidence{Analysis: "security_assessment", ID: f.RuleID, Severity: f.Severity,
					Location: f.Location, Message: f.Message, about: f.Title + " " + f.CIS + " " + f.Category})
			}
		}
	}
	cloudRecs := func(keep func(*cloud.Report, cloud.Recommendation) bool) {
		if e.src.Cloud == nil {
			return
		}
		ans.Analyses = append(ans.Analyses, "analyze_cloud_resources")
		rep, err := e.src.Cloud.Analyze(ctx, cloud.Options{Path: path, CostAnalysis: true})
		if err != nil {
			note("analyze_cloud_resources", err)
			return
		}
		for _, r := range rep.Recommendations {
			if keep == nil || keep(rep, r) {
				msg := r.Detail
				if r.MonthlySaving != nil && *r.MonthlySaving > 0 {
					msg += fmt.Sprintf(" (saves about %.2f USD a month)", *r.MonthlySaving)
				}
				ans.Findings = append(ans.Findings, Evidence{Analysis: "analyze_cloud_resources", ID: r.ID, Location: r.Evidence,
					Message: msg, about: r.Title + " " + r.Resource + " " + r.Action})
			}
		}
		if rep.Cost != nil && rep.Cost.MonthlyTotal > 0 && domain == "devops" {
			ans.Notes = append(ans.Notes, fmt.Sprintf("declared resources cost about %.2f %s a month on demand (%d resources unpriced)",
				rep.Cost.MonthlyTotal, rep.Cost.Currency, rep.Cost.Unpriced))
		}
	}
	switch domain {
	case "security":
		secFindings(security.ScopeBoth, "medium", nil)
	case "devops":
		cloudRecs(nil)
		secFindings(security.ScopeInfrastructure, "high", nil)
	case "database":
		cloudRecs(func(rep *cloud.Report, r cloud.Recommendation) bool { return databaseResource(r.Resource) })
		secFindings(security.ScopeCode, "low", func(f security.Finding) bool {
			return f.RuleID == "code/sql-injection" || f.RuleID == "gosec/G201" || f.RuleID == "gosec/G202"
		})
	case "architecture":
		e.codePatterns(ctx, ans, path)
	case "performance":
		e.codeHotspots(ctx, ans, path)
		cloudRecs(func(_ *cloud.Report, r cloud.Recommendation) bool {
			return r.ID == cloud.RecNoAutoscaling || r.ID == cloud.RecNoResources
		})
	}
}

// inside keeps the evidence that lies in the folder or file rel (workspace-relative), or names
// no file: an answer about a folder cites nothing outside it.
func inside(fs []Evidence, rel string) []Evidence {
	if rel == "." || rel == "" {
		return fs
	}
	var out []Evidence
	for _, f := range fs {
		file, _, _ := strings.Cut(f.Location, ":")
		if file == "" || file == rel || strings.HasPrefix(file, rel+"/") {
			out = append(out, f)
		}
	}
	return out
}

// mustShow is how many of the most severe findings an answer shows whatever the question: a
// question about indexes must not hide an injection.
const mustShow = 4

// relevant picks at most k findings: the mustShow most severe, then the rest ranked by BM25
// against the question over their id, message, location and rule title, then by severity.
func relevant(fs []Evidence, question string, k int) []Evidence {
	if len(fs) <= k {
		return fs
	}
	docs := make([]Section, len(fs))
	for i, f := range fs {
		docs[i] = Section{ID: strconv.Itoa(i), Title: f.ID, Text: f.Message + " " + f.Location + " " + f.about}
	}
	score := map[int]float64{}
	for _, h := range newIndex(docs).search(question, len(docs)) {
		i, _ := strconv.Atoi(h.ID)
		score[i] = h.Score
	}
	order := make([]int, len(fs))
	for i := range order {
		order[i] = i
	}
	bySeverity := func(a, b int) bool { return severityRank(fs[a].Severity) > severityRank(fs[b].Severity) }
	sort.SliceStable(order, func(a, b int) bool { return bySeverity(order[a], order[b]) })
	picked := map[int]bool{}
	for _, i := range order[:mustShow] {
		if severityRank(fs[i].Severity) >= severityRank("high") {
			picked[i] = true
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		if sa, sb := score[order[a]], score[order[b]]; sa != sb {
			return sa > sb
		}
		return bySeverity(order[a], order[b])
	})
	for _, i := range order {
		if len(picked) >= k {
			break
		}
		picked[i] = true
	}
	var out []Evidence
	for i, f := range fs { // in the analyses' own order: most severe first
		if picked[i] {
			out = append(out, f)
		}
	}
	return out
}

func severityRank(s string) int {
	return map[string]int{"low": 1, "medium": 2, "high": 3, "critical": 4}[s]
}

func databaseResource(addr string) bool {
	for _, p := range []string{"aws_db_", "aws_rds_", "aws_dynamodb_", "google_sql_", "AWS::RDS", "AWS::DynamoDB"} {
		if strings.HasPrefix(addr, p) {
			return true
		}
	}
	return false
}

// codePatterns keeps the patterns detect_patterns finds with evidence below path.
func (e *Expert) codePatterns(ctx context.Context, ans *Answer, path string) {
	if !e.codeAvailable(ans, "detect_patterns") {
		return
	}
	rep, err := e.src.Code.Patterns(ctx, code.PatternOptions{Scope: "directory", Path: path})
	if err != nil {
		e.codeFailed(ctx, ans, "detect_patterns", err)
		return
	}
	for _, f := range rep.Findings[:min(len(rep.Findings), maxFindings)] {
		loc := ""
		if len(f.Evidence) > 0 {
			loc = fmt.Sprintf("%s:%d", f.Evidence[0].File, f.Evidence[0].Line)
		}
		msg := fmt.Sprintf("kind: %s; confidence: %g", f.Kind, f.Confidence)
		if f.Why != "" {
			msg += "; why: " + f.Why
		}
		ans.Findings = append(ans.Findings, Evidence{Analysis: "detect_patterns", ID: f.Name, Severity: f.Severity, Location: loc, Message: msg})
	}
}

// codeHotspots keeps the most complex functions analyze_codebase finds below path.
func (e *Expert) codeHotspots(ctx context.Context, ans *Answer, path string) {
	if !e.codeAvailable(ans, "analyze_codebase") {
		return
	}
	rep, err := e.src.Code.Codebase(ctx, code.CodebaseOptions{Path: path})
	if err != nil {
		e.codeFailed(ctx, ans, "analyze_codebase", err)
		return
	}
	for _, h := range rep.Hotspots[:min(len(rep.Hotspots), maxFindings)] {
		ans.Findings = append(ans.Findings, Evidence{Analysis: "analyze_codebase", ID: h.Symbol, Location: fmt.Sprintf("%s:%d", h.File, h.Line),
			Message: fmt.Sprintf("complexity: %d; lines: %d", h.Complexity, h.Lines)})
	}
}

// codeAvailable says whether the code analyses can answer, noting it when they cannot, and
// names the analysis among those the answer used.
func (e *Expert) codeAvailable(ans *Answer, name string) bool {
	if e.src.Code == nil {
		ans.Notes = append(ans.Notes, name+" is not available on this server: answered from guidance only")
		return false
	}
	ans.Analyses = append(ans.Analyses, name)
	return true
}

func (e *Expert) codeFailed(ctx context.Context, ans *Answer, name string, err error) {
	if ctx.Err() == nil {
		ans.Notes = append(ans.Notes, fmt.Sprintf("%s failed: %v", name, err))
	}
}

// excerpt cuts text at a sentence end near n bytes.
func excerpt(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) <= n {
		return text
	}
	cut := text[:n]
	if i := strings.LastIndex(cut, ". "); i > n/2 {
		return cut[:i+1]
	}
	return cut + "..."
}

// knowledgeAnswer writes the answer from the guidance and findings alone.
func knowledgeAnswer(a *Answer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s expert** on: %s\n\n", a.Domain, a.Query)
	if a.FindingsTotal > 0 {
		fmt.Fprintf(&b, "**%s has %s of this domain**; whatever the answer below, address %s first (listed at the end).\n\n",
			a.Path, plural(a.FindingsTotal, "finding"), map[bool]string{true: "it", false: "them"}[a.FindingsTotal == 1])
	}
	if len(a.Guidance) == 0 {
		b.WriteString("The knowledge base has no guidance matching this question; rephrase it with the technology or problem named.\n")
	}
	for _, g := range a.Guidance {
		fmt.Fprintf(&b, "### %s [%s]\n%s\n\n", g.Title, g.ID, g.Excerpt)
	}
	if a.Path != "" {
		fmt.Fprintf(&b, "### What %s shows (%s)\n", a.Path, strings.Join(a.Analyses, ", "))
		if a.FindingsTotal == 0 {
			b.WriteString("No finding of these analyses applies.\n")
		}
		for _, f := range a.Findings {
			sev := ""
			if f.Severity != "" {
				sev = "[" + f.Severity + "] "
			}
			fmt.Fprintf(&b, "- %s%s: %s (%s)\n", sev, f.Location, f.Message, f.ID)
		}
	}
	return strings.TrimSpace(b.String())
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Spec describes consult_expert.
func (e *Expert) Spec() tools.Spec {
	return tools.Spec{
		Name:  "consult_expert",
		Title: "Consult an expert",
		Description: "Asks a domain expert (architecture, devops, security, performance, database). The expert retrieves " +
			"curated guidance from its knowledge base and, when context.path names a workspace path, runs its domain's " +
			"analyses there; the answer cites both. With a model configured the model writes the answer from that material.",
		InputSchema:  json.RawMessage(inputSchema),
		OutputSchema: json.RawMessage(outputSchema),
	}
}

const inputSchema = `{
  "type": "object",
  "properties": {
    "domain": {"type": "string", "enum": ["architecture", "devops", "security", "performance", "database"]},
    "query": {"type": "string", "minLength": 1, "maxLength": 4000},
    "context": {"type": "object", "description": "Optional: path (a workspace file or folder to ground the answer in) and any facts (stack, constraints) as strings."}
  },
  "required": ["domain", "query"],
  "additionalProperties": false
}`

const outputSchema = `{
  "type": "object",
  "required": ["domain", "query", "answer", "answeredBy", "guidance"],
  "properties": {
    "domain": {"type": "string"},
    "query": {"type": "string"},
    "answer": {"type": "string"},
    "answeredBy": {"type": "string", "enum": ["knowledge-base", "model"]},
    "model": {"type": "string"},
    "path": {"type": "string"},
    "guidance": {"type": "array", "items": {"type": "object", "required": ["id", "title", "source"]}},
    "findings": {"type": "array", "items": {"type": "object", "required": ["analysis", "id", "message"]}},
    "analyses": {"type": "array", "items": {"type": "string"}},
    "notes": {"type": "array", "items": {"type": "string"}}
  }
}`

type callArgs struct {
	Domain  string         `json:"domain"`
	Query   string         `json:"query"`
	Context map[string]any `json:"context"`
}

// Call runs consult_expert.
func (e *Expert) Call(ctx context.Context, raw json.RawMessage) (any, error) {
	var args callArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, tools.InvalidArgument(te.Field, "wrong type: %s", te.Value)
		}
		return nil, tools.InvalidArgument("arguments", "%v", err)
	}
	return e.Consult(ctx, args.Domain, args.Query, args.Context)
}
