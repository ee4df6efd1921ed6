package workspace

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/go-enry/go-enry/v2"
	"github.com/go-enry/go-enry/v2/data"
)

const (
	// maxClassEntries bounds the classification cache; past it, the cache starts again.
	maxClassEntries = 200_000
	// classifyBytes is how much of a file language detection reads.
	classifyBytes = 16 << 10
)

// classCache remembers what Linguist said of a file's content at a path. Linguist's
// classifier (a naive Bayes over regular-expression tokens, for extensions several languages
// share, such as .h or .s) costs more than reading the file, and a repository's files rarely
// change between two walks.
type classCache struct {
	mu     sync.Mutex
	m      map[classKey]classOf
	vendor map[string]bool // Linguist's vendor verdict by path: dozens of regular expressions a file
}

type classKey struct {
	rel  string
	hash uint64 // of the content; 0 for files not read
	size int64
}

type classOf struct {
	language          string
	binary, generated bool
}

// vendored is enry.IsVendor(rel), remembered: the verdict depends on the path alone, and
// matching it cost 0.14 s of every warm walk of GOROOT's 11,478 files.
func (c *classCache) vendored(rel string) bool {
	c.mu.Lock()
	v, ok := c.vendor[rel]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = enry.IsVendor(rel)
	c.mu.Lock()
	if len(c.vendor) >= maxClassEntries {
		clear(c.vendor)
	}
	c.vendor[rel] = v
	c.mu.Unlock()
	return v
}

// classify sets f's Hash, Language, Binary and Generated from its name and content.
func (c *classCache) classify(f *File) {
	if f.Content != nil {
		f.Hash = xxhash.Sum64(f.Content)
	}
	k := classKey{rel: f.Rel, hash: f.Hash, size: f.Size}
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	if !ok {
		v.binary = f.Content != nil && enry.IsBinary(f.Content)
		if !v.binary {
			// The start of a file decides its language; Linguist's classifier tokenises what it
			// is given with regular expressions, so a long file costs in proportion.
			v.language = language(filepath.Base(f.Rel), f.Content[:min(len(f.Content), classifyBytes)])
		}
		// Linguist counts Go vendor folders as generated too; one reason to leave a file out is enough.
		v.generated = !f.Vendored && !v.binary && generated(f.Rel, f.Content)
		c.mu.Lock()
		if len(c.m) >= maxClassEntries {
			clear(c.m)
		}
		c.m[k] = v
		c.mu.Unlock()
	}
	f.Language, f.Binary, f.Generated = v.language, v.binary, v.generated
}

// generatedNameWords are what Linguist's rules for generated files by path need, one of them
// at least, in the path lowered: ".idea/", "Pods/", "Carthage/Build/", ".designer.cs",
// ".feature.cs", "node_modules/", Go's "vendor/", the lock files, ".pnp.", "Godeps/", ".zep.",
// "Cargo.toml.orig", "__generated__/", "_tlb.pas", "htmlcov/" and ".sqlx/" (enry's
// data.GeneratedCodeNameMatchers; TestGeneratedAsLinguist holds one path a rule).
var generatedNameWords = [...]string{".idea/", "pods/", "carthage/build/", ".designer.", ".feature.cs",
	"node_modules/", "vendor/", "lock", "npm-shrinkwrap.json", ".pnp.", "godeps/", ".zep.", ".orig",
	"__generated__/", "_tlb.pas", "htmlcov/", ".sqlx/"}

// generated is enry.IsGenerated(rel, content), except that Linguist's rules on the path, a
// dozen regular expressions each run over the whole path, are run only when the path holds a
// word one of them needs: they were 0.12 s of the CPU of a cold walk of GOROOT, where none
// does. The rest is enry's own order: extensions, then the rules on the content.
func generated(rel string, content []byte) bool {
	lower := strings.ToLower(rel)
	for _, w := range generatedNameWords {
		if strings.Contains(lower, w) {
			return enry.IsGenerated(rel, content)
		}
	}
	ext := strings.ToLower(filepath.Ext(rel))
	if _, ok := data.GeneratedCodeExtensions[ext]; ok {
		return true
	}
	for _, m := range data.GeneratedCodeMatchers {
		if m(lower, ext, content) {
			return true
		}
	}
	return false
}

// language is enry.GetLanguage(name, content) for content that is not binary: Linguist's
// strategies in enry's order, each narrowing the candidates of the one before, except that
// the modeline strategy is not run where no modeline can match (its regular expressions were
// a sixth of the language detection of a cold walk of GOROOT, where no file has a modeline),
// and that candidates of one family are not told apart (see family).
func language(name string, content []byte) string {
	modeline := func(name string, content []byte, candidates []string) []string {
		if !mayHaveModeline(content) {
			return nil
		}
		return enry.GetLanguagesByModeline(name, content, candidates)
	}
	var languages []string
	for _, strategy := range [...]enry.Strategy{
		modeline,
		enry.GetLanguagesByFilename,
		enry.GetLanguagesByShebang,
		enry.GetLanguagesByExtension,
		enry.GetLanguagesByXML,
		enry.GetLanguagesByManpage,
		enry.GetLanguagesByContent,
		enry.GetLanguagesByClassifier,
	} {
		candidates := strategy(name, content, languages)
		switch len(candidates) {
		case 0:
			continue
		case 1:
			return candidates[0]
		}
		if f := family(candidates); f != "" {
			return f
		}
		languages = candidates
	}
	for _, l := range languages {
		if l != "" {
			return l
		}
	}
	return enry.OtherLanguage
}

// mayHaveModeline reports whether an Emacs or a Vim modeline can match in what enry reads for
// one: the first five lines and the last five, joined (the whole content when it has fewer
// than ten newlines). An Emacs modeline needs "-*-"; a Vim one needs "vi" or "ex", a colon,
// and an equals sign in its "ft=" or "syntax=".
func mayHaveModeline(content []byte) bool {
	scope := content
	if bytes.Count(content, []byte{'\n'}) >= 10 {
		head := 0
		for range 5 {
			head += bytes.IndexByte(content[head:], '\n') + 1
		}
		foot := len(content)
		for range 5 {
			foot = bytes.LastIndexByte(content[:foot], '\n')
		}
		scope = slices.Concat(content[:head-1], content[foot+1:])
	}
	has := func(s string) bool { return bytes.Contains(scope, []byte(s)) }
	return has("-*-") || (has(":") && has("=") && (has("vi") || has("ex")))
}

// family is the language every candidate is a dialect of (Linguist's group) or is itself, ""
// when they are of several: "Assembly" for a .s file, whose candidates are Assembly, Unix
// Assembly and Motorola 68K Assembly. Linguist's heuristics and classifier tell dialects
// apart by matching and tokenising the content with regular expressions, which was a fifth of
// the CPU of a cold analysis of GOROOT, and took Go's assembly for Motorola 68K in 170 of its
// 382 .s files.
func family(candidates []string) string {
	root := func(l string) string {
		if g := enry.GetLanguageGroup(l); g != "" {
			return g
		}
		return l
	}
	if len(candidates) == 0 {
		return ""
	}
	f := root(candidates[0])
	for _, c := range candidates[1:] {
		if root(c) != f {
			return ""
		}
	}
	return f
}
