package expert

import (
	"embed"
	"fmt"
	"io/fs"
	"math"
	"path"
	"sort"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// The knowledge bases: one folder per domain, markdown files split into sections at "## ".
//
//go:embed kb
var kbFS embed.FS

// Section is one retrievable piece of guidance.
type Section struct {
	ID     string `json:"id"` // domain/file#slug
	Domain string `json:"domain"`
	Title  string `json:"title"`
	Source string `json:"source"` // tools/expert/kb/<domain>/<file>
	Text   string `json:"-"`
}

// index is a BM25F index over one domain's sections: a section's title and its text are two
// fields, the title's terms weighing titleWeight times the text's.
type index struct {
	sections []Section
	terms    []map[string]int // term frequencies per section
	lengths  []int
	avgLen   float64
	df       map[string]int
}

// BM25 parameters: the usual defaults from Robertson and Zaragoza.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// titleWeight: a section is about what its heading says.
	titleWeight = 3
)

func loadIndexes() (map[string]*index, error) {
	out := map[string]*index{}
	for _, d := range Domains {
		files, err := fs.Glob(kbFS, "kb/"+d+"/*.md")
		if err != nil {
			return nil, fmt.Errorf("knowledge base %s: %w", d, err)
		}
		var sections []Section
		for _, f := range files {
			b, err := kbFS.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("knowledge base %s: %w", f, err)
			}
			sections = append(sections, split(d, f, string(b))...)
		}
		if len(sections) == 0 {
			return nil, fmt.Errorf("knowledge base %s is empty", d)
		}
		out[d] = newIndex(sections)
	}
	return out, nil
}

// split cuts a markdown file into its "## " sections.
func split(domain, file, text string) []Section {
	var out []Section
	var cur *Section
	var body strings.Builder
	flush := func() {
		if cur != nil {
			cur.Text = strings.TrimSpace(body.String())
			out = append(out, *cur)
		}
		body.Reset()
	}
	for _, line := range strings.Split(text, "\n") {
		if title, ok := strings.CutPrefix(line, "## "); ok {
			flush()
			name := strings.TrimSuffix(path.Base(file), ".md")
			cur = &Section{
				ID:     fmt.Sprintf("%s/%s#%s", domain, name, slug(title)),
				Domain: domain,
				Title:  strings.TrimSpace(title),
				Source: "tools/expert/" + file,
			}
			continue
		}
		if cur != nil {
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	flush()
	return out
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// newIndex indexes sections (a domain's knowledge base, or the findings of one answer).
func newIndex(sections []Section) *index {
	ix := &index{df: map[string]int{}}
	for _, s := range sections {
		ix.add(s)
	}
	if len(ix.sections) > 0 {
		ix.avgLen /= float64(len(ix.sections))
	}
	return ix
}

func (ix *index) add(s Section) {
	tf := map[string]int{}
	title, text := terms(s.Title), terms(s.Text)
	for _, t := range title {
		tf[t] += titleWeight
	}
	for _, t := range text {
		tf[t]++
	}
	for t := range tf {
		ix.df[t]++
	}
	n := titleWeight*len(title) + len(text)
	ix.sections = append(ix.sections, s)
	ix.terms = append(ix.terms, tf)
	ix.lengths = append(ix.lengths, n)
	ix.avgLen += float64(n)
}

// hit is a section and its score for a query.
type hit struct {
	Section
	Score float64 `json:"score"`
}

// search ranks the sections by BM25 for the query and returns the best k with a positive score.
func (ix *index) search(query string, k int) []hit {
	q := map[string]bool{}
	for _, t := range terms(query) {
		q[t] = true
	}
	n := float64(len(ix.sections))
	var hits []hit
	for i, tf := range ix.terms {
		score := 0.0
		for t := range q {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(ix.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			score += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(ix.lengths[i])/ix.avgLen))
		}
		if score > 0 {
			hits = append(hits, hit{Section: ix.sections[i], Score: math.Round(score*1000) / 1000})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// terms lower-cases, splits on anything but letters and digits, drops stop words, writes
// abbreviations out and reduces each word to its Snowball (Porter2) stem, so "indexes",
// "indexing" and "index" meet.
func terms(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) < 2 || english.IsStopWord(w) || question[w] {
			continue
		}
		if a, ok := aliases[w]; ok {
			w = a
		}
		out = append(out, english.Stem(w, true))
	}
	return out
}

// aliases are the abbreviations people write for the words the knowledge base and the rules use.
var aliases = map[string]string{"k8s": "kubernetes", "db": "database", "sqli": "injection", "iac": "infrastructure",
	"postgres": "postgresql", "pg": "postgresql"}

// question holds the words of how questions are asked, which say nothing of their subject.
var question = map[string]bool{"use": true, "using": true, "get": true, "can": true, "make": true, "way": true, "best": true, "good": true}
