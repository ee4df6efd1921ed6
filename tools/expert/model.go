package expert

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// model writes answers with an OpenAI-compatible chat-completions endpoint.
type model struct {
	cfg    Config
	client openai.Client
}

func newModel(cfg Config) *model {
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.URL),
		option.WithAPIKey(cfg.APIKey),
		// One attempt: the fallback answer is better than a caller waiting through retries.
		option.WithMaxRetries(0),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &model{cfg: cfg, client: openai.NewClient(opts...)}
}

// personas set each expert's point of view.
var personas = map[string]string{
	"architecture": "a software architect who values simple designs, clear module boundaries and one-way dependencies",
	"devops":       "a DevOps and platform engineer focused on reliable deployments, infrastructure as code and cloud cost",
	"security":     "an application and cloud security engineer who gives concrete, prioritised remediations",
	"performance":  "a performance engineer who measures before optimising and names the bottleneck",
	"database":     "a database engineer experienced in schema design, indexing, migrations and operations",
}

// answer asks the model to answer from the retrieved guidance and the findings only.
func (m *model) answer(ctx context.Context, a *Answer, idx *index) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	system := fmt.Sprintf("You are %s. Answer the user's question using only the guidance sections and workspace "+
		"findings provided. Cite guidance as [section id] and findings as file:line. Be concrete and brief; say so "+
		"when the material does not cover the question.", personas[a.Domain])
	if a.FindingsTotal > 0 {
		system += fmt.Sprintf(" The analyses found %d problems of your domain in %s: start with them, and never say or imply "+
			"that the code or infrastructure is free of problems.", a.FindingsTotal, a.Path)
	}
	var u strings.Builder
	fmt.Fprintf(&u, "Question: %s\n\n## Guidance\n", a.Query)
	for _, g := range a.Guidance {
		text := g.Excerpt
		for _, s := range idx.sections {
			if s.ID == g.ID {
				text = s.Text
			}
		}
		fmt.Fprintf(&u, "[%s] %s\n%s\n\n", g.ID, g.Title, text)
	}
	if a.Path != "" {
		fmt.Fprintf(&u, "## Findings in %s (%s)\n", a.Path, strings.Join(a.Analyses, ", "))
		if a.FindingsTotal == 0 {
			u.WriteString("none\n")
		} else if a.FindingsTotal > len(a.Findings) {
			fmt.Fprintf(&u, "%d findings in total; the most relevant:\n", a.FindingsTotal)
		}
		for _, f := range a.Findings {
			fmt.Fprintf(&u, "- %s %s %s: %s (%s)\n", f.Analysis, f.Severity, f.Location, f.Message, f.ID)
		}
	}
	resp, err := m.client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:       m.cfg.Model,
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage(u.String())},
		Temperature: openai.Float(0.2),
	})
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", fmt.Errorf("no answer within %s", m.cfg.Timeout)
		}
		return "", err
	}
	if len(resp.Choices) == 0 || strings.TrimSpace(resp.Choices[0].Message.Content) == "" {
		return "", errors.New("empty answer")
	}
	return resp.Choices[0].Message.Content, nil
}
