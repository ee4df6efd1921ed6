package security

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/platform-dev/platform/tools"
)

// maxHistoryCommits bounds how far back a history scan reads, newest first.
const maxHistoryCommits = 500

// historySecrets scans the lines each commit of the git repository holding dir added below dir
// (up to maxHistoryCommits from HEAD) for secrets that are no longer in the working tree: a
// secret removed by a later commit is still in every clone. The repository's work tree must
// lie inside a workspace root.
func (a *Assessor) historySecrets(ctx context.Context, dir string) ([]Finding, []string, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil, nil, tools.InvalidArgument("history", "the folder is not in a git repository (%v)", err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, nil, tools.InvalidArgument("history", "the repository has no work tree (%v)", err)
	}
	top, err := filepath.EvalSymlinks(wt.Filesystem.Root())
	if err != nil {
		return nil, nil, fmt.Errorf("repository root: %w", err)
	}
	root, topRel, ok := a.ws.Root(top)
	if !ok {
		return nil, nil, tools.InvalidArgument("history", "the git repository of this folder starts above the workspace roots")
	}
	sub, err := filepath.Rel(top, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("folder %s outside its repository: %w", dir, err)
	}
	sub = filepath.ToSlash(sub)
	head, err := repo.Head()
	if err != nil {
		return nil, []string{"the repository has no commit: no history to scan"}, nil
	}
	commits, err := repo.Log(&git.LogOptions{From: head.Hash()})
	if err != nil {
		return nil, nil, fmt.Errorf("git log: %w", err)
	}
	var out []Finding
	var notes []string
	seen := map[string]bool{} // file + secret: reported once, at its newest addition
	n := 0
	err = commits.ForEach(func(c *object.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if n++; n > maxHistoryCommits {
			notes = append(notes, fmt.Sprintf("history scanned back to the %d newest commits", maxHistoryCommits))
			return storer.ErrStop
		}
		patch, err := commitPatch(ctx, c)
		if err != nil {
			return err
		}
		for _, fp := range patch.FilePatches() {
			_, to := fp.Files()
			if to == nil || fp.IsBinary() || (sub != "." && !strings.HasPrefix(to.Path(), sub+"/")) {
				continue
			}
			rel := path.Join(topRel, to.Path())
			current, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
			line := 1
			for _, ch := range fp.Chunks() {
				text := ch.Content()
				switch ch.Type() {
				case diff.Add:
					for _, f := range secrets(ctx, a.secrets, rel, false, []byte(text)) {
						secret := f.secret
						if secret == "" || bytes.Contains(current, []byte(secret)) || seen[rel+"\x00"+secret] {
							continue // still in the file: the working-tree scan reports it
						}
						seen[rel+"\x00"+secret] = true
						f.Line += line - 1
						f.Location = fmt.Sprintf("%s:%d", rel, f.Line)
						f.Message += fmt.Sprintf(" (added in commit %s of %s, no longer in the file: still in every clone)",
							c.Hash.String()[:10], c.Author.When.UTC().Format("2006-01-02"))
						f.secret = ""
						out = append(out, f)
					}
					line += strings.Count(text, "\n")
				case diff.Equal:
					line += strings.Count(text, "\n")
				}
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return out, notes, err
	}
	return out, notes, nil
}

// commitPatch is what c changed against its first parent; a root commit adds its whole tree.
func commitPatch(ctx context.Context, c *object.Commit) (*object.Patch, error) {
	if c.NumParents() == 0 {
		tree, err := c.Tree()
		if err != nil {
			return nil, fmt.Errorf("tree of %s: %w", c.Hash, err)
		}
		return (&object.Tree{}).PatchContext(ctx, tree)
	}
	parent, err := c.Parent(0)
	if err != nil {
		return nil, fmt.Errorf("parent of %s: %w", c.Hash, err)
	}
	p, err := parent.PatchContext(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("diff of %s: %w", c.Hash, err)
	}
	return p, nil
}
