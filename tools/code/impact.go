package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-enry/go-enry/v2"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/platform-dev/platform/tools"
)

// changes_impact: what changed in the working tree since a git revision, which declarations
// the changed lines fall in, and what depends on them. The repository is read with go-git;
// it must be the workspace root itself.

// ChangedFile is a source file that differs from the revision.
type ChangedFile struct {
	File    string   `json:"file"`
	Status  string   `json:"status"` // added, modified, deleted
	Lines   [][2]int `json:"lines"`  // changed line ranges of the current file
	Symbols []string `json:"symbols"`
}

// Dependent is a unit that imports a changed unit, directly (depth 1) or through others.
type Dependent struct {
	Unit  string `json:"unit"`
	Depth int    `json:"depth"`
	Via   string `json:"via"`
	Test  bool   `json:"test,omitempty"`
}

// ImpactReport is changes_impact's answer.
type ImpactReport struct {
	Root       string         `json:"root"`
	Since      string         `json:"since"`
	Commit     string         `json:"commit"`
	Changed    []ChangedFile  `json:"changed"`
	Dependents []Dependent    `json:"dependents"`
	Tests      []string       `json:"tests"` // test units among the changed and dependent units
	Omitted    map[string]int `json:"omitted,omitempty"`
	Hint       string         `json:"hint,omitempty"`
}

type impactArgs struct {
	Since string `json:"since"`
	Depth count  `json:"depth"`
	Limit count  `json:"limit"`
}

type impactTool struct{ a *Analyzer }

func (impactTool) Spec() tools.Spec {
	return tools.Spec{
		Name:  "changes_impact",
		Title: "Changes and their impact",
		Description: "What changed in the working tree since a git revision (a branch, tag, commit or HEAD~n) in source files " +
			"of the first workspace root: each file added, modified or deleted with its changed line ranges and the declarations " +
			"they fall in; then the units that import the changed ones, to `depth` steps, and the tests among them.",
		InputSchema:  json.RawMessage(impactInputSchema),
		OutputSchema: json.RawMessage(impactOutputSchema),
	}
}

func (t impactTool) Call(ctx context.Context, raw json.RawMessage) (any, error) {
	args := impactArgs{Since: "HEAD", Depth: 2, Limit: defaultLimit}
	if err := decodeArgs(raw, &args); err != nil {
		return nil, err
	}
	if err := checkLimit(int(args.Limit)); err != nil {
		return nil, err
	}
	if args.Depth < 1 || int(args.Depth) > maxTransitive {
		return nil, tools.InvalidArgument("depth", "must be between 1 and %d", maxTransitive)
	}
	root := t.a.ws.Roots()[0]
	tree, commit, err := revisionTree(root, args.Since)
	if err != nil {
		return nil, err
	}
	snap, err := t.a.scan(ctx, root)
	if err != nil {
		return nil, err
	}
	ix := buildIndex(snap)
	rep := &ImpactReport{Root: root, Since: args.Since, Commit: commit, Changed: []ChangedFile{}, Dependents: []Dependent{}, Tests: []string{}}
	units := map[string]bool{}
	for i, fi := range ix.files {
		if i%500 == 0 {
			tools.ReportProgress(ctx, float64(i), float64(len(ix.files)), "comparing with "+args.Since)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cf, changed, err := compareFile(tree, root, fi)
		if err != nil {
			return nil, err
		}
		if changed {
			rep.Changed = append(rep.Changed, cf)
			units[ix.unitOf[fi.Rel]] = true
		}
	}
	// Source files the revision has and the workspace does not.
	err = tree.Files().ForEach(func(f *object.File) error {
		if _, ok := ix.snap.byRel[f.Name]; !ok && parsedByName(f.Name) {
			rep.Changed = append(rep.Changed, ChangedFile{File: f.Name, Status: "deleted", Lines: [][2]int{}, Symbols: []string{}})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", args.Since, err)
	}
	sort.Slice(rep.Changed, func(i, j int) bool { return rep.Changed[i].File < rep.Changed[j].File })
	rep.Dependents = ix.dependents(units, int(args.Depth))
	tests := map[string]bool{}
	for u := range units {
		if strings.HasSuffix(u, goTestUnit) || isTestFile(u) {
			tests[u] = true
		}
		if ix.unitFiles[u+goTestUnit] != nil {
			tests[u+goTestUnit] = true
		}
	}
	for _, d := range rep.Dependents {
		if d.Test {
			tests[d.Unit] = true
		}
	}
	rep.Tests = sortedKeys(tests)
	rep.Omitted = map[string]int{"changed": capList(&rep.Changed, int(args.Limit)), "dependents": capList(&rep.Dependents, int(args.Limit)),
		"tests": capList(&rep.Tests, int(args.Limit))}
	rep.Omitted, rep.Hint = omissions(rep.Omitted, int(args.Limit), "or a smaller depth")
	return rep, nil
}

// parsedByName reports a path whose extension names a language the analyses parse.
func parsedByName(name string) bool {
	lang, _ := enry.GetLanguageByExtension(name)
	switch lang {
	case "Go", "Python", "JavaScript", "TypeScript", "TSX", "Java", "Rust":
		return true
	}
	return false
}

// revisionTree opens the repository at root and returns the tree of the revision.
func revisionTree(root, rev string) (*object.Tree, string, error) {
	repo, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, "", fmt.Errorf("%s is not the top of a git repository", root)
	}
	if err != nil {
		return nil, "", fmt.Errorf("open repository %s: %w", root, err)
	}
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, "", tools.InvalidArgument("since", "unknown revision %q: %v", rev, err)
	}
	c, err := repo.CommitObject(*h)
	if err != nil {
		return nil, "", fmt.Errorf("read commit %s: %w", h, err)
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, "", fmt.Errorf("read tree of %s: %w", h, err)
	}
	return tree, h.String(), nil
}

// compareFile compares a workspace file with its version in tree.
func compareFile(tree *object.Tree, root string, fi *fileInfo) (ChangedFile, bool, error) {
	cf := ChangedFile{File: fi.Rel, Lines: [][2]int{}, Symbols: []string{}}
	src := source(root, fi)
	old, err := tree.File(fi.Rel)
	switch {
	case errors.Is(err, object.ErrFileNotFound):
		cf.Status = "added"
		if n := strings.Count(string(src), "\n"); n > 0 {
			cf.Lines = [][2]int{{1, n}}
		}
	case err != nil:
		return cf, false, fmt.Errorf("read %s at the revision: %w", fi.Rel, err)
	case old.Hash == plumbing.ComputeHash(plumbing.BlobObject, src):
		return cf, false, nil
	default:
		before, err := old.Contents()
		if err != nil {
			return cf, false, fmt.Errorf("read %s at the revision: %w", fi.Rel, err)
		}
		cf.Status = "modified"
		cf.Lines = changedLines(diff.Do(before, string(src)))
	}
	for _, s := range fi.F.Symbols {
		for _, r := range cf.Lines {
			if int(s.Line) <= r[1] && r[0] <= int(s.End) {
				cf.Symbols = append(cf.Symbols, s.qualified())
				break
			}
		}
	}
	return cf, true, nil
}

// changedLines turns a diff into the line ranges of the new text that were inserted, or next
// to which text was deleted.
func changedLines(diffs []diffmatchpatch.Diff) [][2]int {
	out := [][2]int{}
	line := 1
	mark := func(from, to int) {
		if n := len(out); n > 0 && out[n-1][1] >= from-1 {
			out[n-1][1] = max(out[n-1][1], to)
			return
		}
		out = append(out, [2]int{from, to})
	}
	for _, d := range diffs {
		n := strings.Count(d.Text, "\n")
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			line += n
		case diffmatchpatch.DiffInsert:
			end := line + n
			if strings.HasSuffix(d.Text, "\n") {
				end--
			}
			mark(line, max(line, end))
			line += n
		case diffmatchpatch.DiffDelete:
			mark(line, line)
		}
	}
	return out
}

// dependents are the units that import units, to depth steps.
func (ix *index) dependents(units map[string]bool, depth int) []Dependent {
	var out []Dependent
	for _, r := range ix.walk(units, depth, ix.in) {
		out = append(out, Dependent{Unit: r.Unit, Depth: r.Depth, Via: r.Via, Test: strings.HasSuffix(r.Unit, goTestUnit) || isTestFile(r.Unit)})
	}
	return out
}
