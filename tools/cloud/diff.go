package cloud

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-enry/go-enry/v2"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/platform-dev/platform/tools"
	"github.com/platform-dev/platform/tools/workspace"
)

// CostDiff compares the monthly estimate of two versions of the same folder: a git revision
// (Base) and the working tree or another revision (Head).
type CostDiff struct {
	Base      string         `json:"base"`
	Head      string         `json:"head"` // a revision, or "working tree"
	BaseTotal float64        `json:"baseMonthlyTotal"`
	HeadTotal float64        `json:"headMonthlyTotal"`
	Delta     float64        `json:"monthlyDelta"`
	Changes   []CostChange   `json:"changes"`
	Unpriced  map[string]int `json:"unpriced"` // "base", "head": resources without a price, not in the totals
}

// CostChange is one resource added, removed, repriced or moved to another region between Base
// and Head. Before and After are nil when the resource does not exist on that side or has no
// price there.
type CostChange struct {
	Address  string   `json:"address"`
	Type     string   `json:"type"`
	Change   string   `json:"change"` // added, removed, changed, moved
	Location string   `json:"location"`
	Before   *float64 `json:"before"`
	After    *float64 `json:"after"`
	Delta    float64  `json:"delta"`
	Basis    string   `json:"basis,omitempty"` // the arithmetic of After (of Before for a removal)
	// BasisBefore is the arithmetic of Before for a resource on both sides, so that a move or
	// resize shows both prices' making.
	BasisBefore string `json:"basisBefore,omitempty"`
	// FromRegion and ToRegion are set for a move: a resource whose region changed is the same
	// resource relocated, not an edit of its size, and may keep its price.
	FromRegion string `json:"fromRegion,omitempty"`
	ToRegion   string `json:"toRegion,omitempty"`
}

// declarationExt are the extensions Collector reads; only these blobs are loaded from git.
var declarationExt = map[string]bool{".tf": true, ".tfvars": true, ".json": true, ".yaml": true, ".yml": true, ".template": true}

// scanRevision inventories dir (absolute, below a workspace root) as it is in revision rev of
// the git repository that contains it. The repository's work tree must lie inside a workspace
// root: a repository above the roots may hold other people's folders.
func scanRevision(ctx context.Context, ws *workspace.Workspace, dir, rev string) (*Inventory, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil, tools.InvalidArgument("base_ref", "the folder is not in a git repository (%v)", err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, tools.InvalidArgument("base_ref", "the repository has no work tree (%v)", err)
	}
	top, err := filepath.EvalSymlinks(wt.Filesystem.Root())
	if err != nil {
		return nil, fmt.Errorf("repository root: %w", err)
	}
	if _, _, ok := ws.Root(top); !ok {
		return nil, tools.InvalidArgument("base_ref", "the git repository of this folder starts above the workspace roots")
	}
	sub, err := filepath.Rel(top, dir)
	if err != nil || strings.HasPrefix(sub, "..") {
		return nil, fmt.Errorf("folder %s outside its repository %s", dir, top)
	}
	hash, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, tools.InvalidArgument("base_ref", "unknown revision %q: %v", rev, err)
	}
	commit, err := repo.CommitObject(*hash)
	if err != nil {
		return nil, tools.InvalidArgument("base_ref", "%q is not a commit: %v", rev, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", rev, err)
	}
	_, rootRel, _ := ws.Root(dir) // how the walk names files: relative to the workspace root
	prefix := ""
	if sub = filepath.ToSlash(sub); sub != "." {
		if tree, err = tree.Tree(sub); errors.Is(err, object.ErrDirectoryNotFound) {
			return NewCollector().Inventory(), nil // the folder did not exist then
		} else if err != nil {
			return nil, fmt.Errorf("folder %s in %s: %w", sub, rev, err)
		}
	}
	if rootRel != "." {
		prefix = rootRel
	}
	limits := workspace.DefaultLimits()
	c := NewCollector()
	files := 0
	err = tree.Files().ForEach(func(f *object.File) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := path.Join(prefix, f.Name)
		if !declarationExt[strings.ToLower(path.Ext(f.Name))] || enry.IsVendor(rel) || f.Size > limits.MaxFileSize {
			return nil
		}
		if files++; files > limits.MaxFiles {
			return io.EOF
		}
		r, err := f.Reader()
		if err != nil {
			return fmt.Errorf("read %s at %s: %w", f.Name, rev, err)
		}
		defer r.Close()
		content, err := io.ReadAll(io.LimitReader(r, limits.MaxFileSize))
		if err != nil {
			return fmt.Errorf("read %s at %s: %w", f.Name, rev, err)
		}
		c.Add(workspace.File{Rel: rel, Size: f.Size, Content: content})
		return nil
	})
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	inv := c.Inventory()
	inv.Truncated = errors.Is(err, io.EOF)
	return inv, nil
}

// diffCosts compares two priced reports resource by resource.
func diffCosts(base, head *Report, baseName, headName string) *CostDiff {
	d := &CostDiff{Base: baseName, Head: headName, Changes: []CostChange{}, Unpriced: map[string]int{}}
	if base.Cost != nil {
		d.BaseTotal, d.Unpriced["base"] = base.Cost.MonthlyTotal, base.Cost.Unpriced
	}
	if head.Cost != nil {
		d.HeadTotal, d.Unpriced["head"] = head.Cost.MonthlyTotal, head.Cost.Unpriced
	}
	d.Delta = math.Round((d.HeadTotal-d.BaseTotal)*100) / 100
	before := map[string]ResourceEntry{}
	for _, e := range base.Resources {
		before[e.Source+" "+e.Address] = e
	}
	seen := map[string]bool{}
	for _, e := range head.Resources {
		key := e.Source + " " + e.Address
		seen[key] = true
		b, existed := before[key]
		ch := CostChange{Address: e.Address, Type: e.Type, Change: "added", Location: e.Location, After: monthlyOf(e)}
		if e.Cost != nil {
			ch.Basis = e.Cost.Basis
		}
		if existed {
			ch.Change, ch.Before = "changed", monthlyOf(b)
			if b.Cost != nil {
				ch.BasisBefore = b.Cost.Basis
			}
			if b.Region != e.Region {
				ch.Change, ch.FromRegion, ch.ToRegion = "moved", b.Region, e.Region
			} else if same(ch.Before, ch.After) {
				continue
			}
		}
		ch.Delta = value(ch.After) - value(ch.Before)
		d.Changes = append(d.Changes, ch)
	}
	for _, e := range base.Resources {
		if seen[e.Source+" "+e.Address] {
			continue
		}
		ch := CostChange{Address: e.Address, Type: e.Type, Change: "removed", Location: e.Location, Before: monthlyOf(e)}
		if e.Cost != nil {
			ch.Basis = e.Cost.Basis
		}
		ch.Delta = -value(ch.Before)
		d.Changes = append(d.Changes, ch)
	}
	for i := range d.Changes {
		d.Changes[i].Delta = math.Round(d.Changes[i].Delta*100) / 100
	}
	sort.SliceStable(d.Changes, func(i, j int) bool {
		a, b := math.Abs(d.Changes[i].Delta), math.Abs(d.Changes[j].Delta)
		if a != b {
			return a > b
		}
		return d.Changes[i].Address < d.Changes[j].Address
	})
	return d
}

func monthlyOf(e ResourceEntry) *float64 {
	if e.Cost == nil {
		return nil
	}
	return e.Cost.Monthly
}

func value(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

func same(a, b *float64) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
