package code

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/platform-dev/platform/docparse"
)

// tsConfig is what a tsconfig.json or jsconfig.json says about resolving bare imports.
type tsConfig struct {
	Extends         string `json:"extends"`
	CompilerOptions struct {
		BaseURL string              `json:"baseUrl"`
		Paths   map[string][]string `json:"paths"`
	} `json:"compilerOptions"`
}

// isTSConfig reports the files TypeScript and editors read compiler options from.
func isTSConfig(rel string) bool {
	base := path.Base(rel)
	return base == "jsconfig.json" || (strings.HasPrefix(base, "tsconfig") && strings.HasSuffix(base, ".json"))
}

// parseTSConfig reads a tsconfig, which is JSON with comments and trailing commas (hujson
// reads that dialect, recursing once per level: the depth is checked first).
func parseTSConfig(src []byte) (*tsConfig, error) {
	if err := docparse.CheckJSON(src, docparse.DefaultLimits()); err != nil {
		return nil, fmt.Errorf("parse tsconfig: %w", err)
	}
	std, err := hujson.Standardize(src)
	if err != nil {
		return nil, fmt.Errorf("parse tsconfig: %w", err)
	}
	var c tsConfig
	if err := json.Unmarshal(std, &c); err != nil {
		return nil, fmt.Errorf("parse tsconfig: %w", err)
	}
	return &c, nil
}

// jsExtensions are what a module specifier may leave out, in the order bundlers try them.
var jsExtensions = []string{"", ".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs"}

// probeJS finds the source file a module path (without or with extension) names: a file, or
// a folder by its package.json "main" or its index file.
func (ix *index) probeJS(base string) (string, bool) {
	if f, ok := ix.probeJSFile(base); ok {
		return f, true
	}
	if pj := ix.snap.byRel[path.Join(base, "package.json")]; pj != nil && pj.F != nil && pj.F.Manifest != nil {
		if e := pj.F.Manifest.jsEntries; len(e) > 0 && e[0] != "" {
			if f, ok := ix.probeJSFile(path.Join(base, e[0])); ok {
				return f, true
			}
		}
	}
	return ix.probeJSFile(base + "/index")
}

// probeJSFile finds the source file a module path names with the extensions a resolver tries.
func (ix *index) probeJSFile(base string) (string, bool) {
	// TypeScript sources import "./x.js" meaning "./x.ts".
	stem := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(base, ".js"), ".mjs"), ".cjs")
	for _, b := range []string{base, stem} {
		for _, ext := range jsExtensions {
			if t := ix.snap.byRel[b+ext]; t != nil && t.F != nil && t.F.source() && !t.Vendored {
				return t.Rel, true
			}
		}
	}
	return "", false
}

// tsConfigFor is the nearest tsconfig above rel with the folder it lies in, following
// "extends" to a relative parent for the options it leaves out.
func (ix *index) tsConfigFor(rel string) (cfg tsConfig, dir string, ok bool) {
	for d := path.Dir(rel); ; d = path.Dir(d) {
		for _, name := range []string{"tsconfig.json", "jsconfig.json"} {
			f := ix.snap.byRel[path.Join(d, name)]
			if f == nil || f.F == nil || f.F.TSConfig == nil {
				continue
			}
			cfg, dir = *f.F.TSConfig, d
			// baseUrl and paths are relative to the file that sets them.
			pathsDir, base := d, ""
			if cfg.CompilerOptions.BaseURL != "" {
				base = path.Join(d, cfg.CompilerOptions.BaseURL)
			}
			for ext, from, hops := cfg.Extends, d, 0; strings.HasPrefix(ext, ".") && hops < 8; hops++ {
				pf := path.Join(from, ext)
				if !strings.HasSuffix(pf, ".json") {
					pf += ".json"
				}
				p := ix.snap.byRel[pf]
				if p == nil || p.F == nil || p.F.TSConfig == nil {
					break
				}
				from = path.Dir(pf)
				if base == "" && p.F.TSConfig.CompilerOptions.BaseURL != "" {
					base = path.Join(from, p.F.TSConfig.CompilerOptions.BaseURL)
				}
				if cfg.CompilerOptions.Paths == nil && p.F.TSConfig.CompilerOptions.Paths != nil {
					cfg.CompilerOptions.Paths, pathsDir = p.F.TSConfig.CompilerOptions.Paths, from
				}
				ext = p.F.TSConfig.Extends
			}
			// Paths resolve against baseUrl when set, else against their tsconfig's folder.
			if base == "" {
				base = pathsDir
			}
			cfg.CompilerOptions.BaseURL = base
			return cfg, dir, true
		}
		if d == "." {
			return tsConfig{}, "", false
		}
	}
}

// resolveTSPaths resolves spec through the compilerOptions of rel's tsconfig: "paths"
// patterns (exact, or with one "*"), then baseUrl.
func (ix *index) resolveTSPaths(rel, spec string) (string, bool) {
	cfg, _, ok := ix.tsConfigFor(rel)
	if !ok {
		return "", false
	}
	base := cfg.CompilerOptions.BaseURL
	// The longest prefix wins, as in TypeScript.
	patterns := sortedKeys(cfg.CompilerOptions.Paths)
	sort.SliceStable(patterns, func(i, j int) bool { return len(patterns[i]) > len(patterns[j]) })
	for _, pat := range patterns {
		prefix, suffix, wild := strings.Cut(pat, "*")
		var star string
		switch {
		case !wild && spec == pat:
		case wild && strings.HasPrefix(spec, prefix) && strings.HasSuffix(spec, suffix) && len(spec) >= len(prefix)+len(suffix):
			star = spec[len(prefix) : len(spec)-len(suffix)]
		default:
			continue
		}
		for _, target := range cfg.CompilerOptions.Paths[pat] {
			if f, ok := ix.probeJS(path.Join(base, strings.Replace(target, "*", star, 1))); ok {
				return f, true
			}
		}
	}
	if cfg.CompilerOptions.BaseURL != "" {
		return ix.probeJS(path.Join(base, spec))
	}
	return "", false
}

// resolveWorkspacePackage resolves an import of a package of the workspace (an npm, yarn or
// pnpm workspace member, or any package.json by name) to its source: what its "exports"
// name under the import's conditions, else the subpath below its folder, or its entry (main,
// module, types; else src/index or index). A built file the repository does not hold
// (dist/index.js) stands for its source (src/index.ts).
func (ix *index) resolveWorkspacePackage(fi *fileInfo, ref importRef, name string) (string, bool) {
	sub := strings.TrimPrefix(strings.TrimPrefix(ref.Spec, name), "/")
	for _, m := range ix.manifests {
		if m.Kind != "package.json" || m.Name != name {
			continue
		}
		dir := path.Dir(m.Path)
		if m.jsExports != nil {
			subpath := "."
			if sub != "" {
				subpath = "./" + sub
			}
			if t, ok := m.jsExports.resolve(subpath, jsConditions(fi, ref)); ok {
				if f, ok := ix.probeJS(path.Join(dir, t)); ok {
					return f, true
				}
				if _, rest, ok := strings.Cut(path.Clean(t), "/"); ok {
					if f, ok := ix.probeJS(path.Join(dir, "src", strings.TrimSuffix(rest, path.Ext(rest)))); ok {
						return f, true
					}
				}
			}
		}
		if sub != "" {
			if f, ok := ix.probeJS(path.Join(dir, sub)); ok {
				return f, true
			}
			return ix.probeJS(path.Join(dir, "src", sub))
		}
		for _, e := range append(m.jsEntries, "src/index", "index") {
			if e == "" {
				continue
			}
			if f, ok := ix.probeJS(path.Join(dir, e)); ok {
				return f, true
			}
			if f, ok := ix.probeJS(path.Join(dir, "src", strings.TrimSuffix(path.Base(e), path.Ext(e)))); ok {
				return f, true
			}
		}
	}
	return "", false
}

// jsConditions are the "exports" conditions an import is resolved under: Node's for
// JavaScript ("node", and "require" for a require() call, else "import"), TypeScript's
// bundler resolution for TypeScript, which leaves "node" out.
func jsConditions(fi *fileInfo, ref importRef) []string {
	kind := "import"
	if ref.Require {
		kind = "require"
	}
	if fi.Lang == "JavaScript" {
		return []string{kind, "node"}
	}
	return []string{kind}
}

func (ix *index) resolveJS(fi *fileInfo, r *resolvedImport) {
	spec := r.Ref.Spec
	if strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || spec == "." || spec == ".." {
		target := path.Join(path.Dir(fi.Rel), spec)
		if strings.HasSuffix(fi.Rel, ".mjs") {
			// An .mjs file is an ES module to Node and to bundlers alike, which resolve a
			// relative import only as written: no extension is added, no index file found.
			if t := ix.snap.byRel[target]; t != nil && !t.Vendored {
				r.Targets = []string{target}
			}
			return
		}
		if f, ok := ix.probeJS(target); ok {
			r.Targets = []string{f}
		}
		return
	}
	if strings.HasPrefix(spec, "node:") {
		r.Kind, r.Package = "stdlib", spec
		return
	}
	if f, ok := ix.resolveTSPaths(fi.Rel, spec); ok {
		r.Targets = []string{f}
		return
	}
	name := spec
	if parts := strings.SplitN(spec, "/", 3); strings.HasPrefix(spec, "@") && len(parts) >= 2 {
		name = parts[0] + "/" + parts[1]
	} else {
		name = parts[0]
	}
	if f, ok := ix.resolveWorkspacePackage(fi, r.Ref, name); ok {
		r.Targets, r.Package = []string{f}, name
		return
	}
	r.Kind, r.Package = "external", name
	if d, decl, ok := ix.declared(fi.Rel, name, "package.json"); ok {
		r.Version, r.Decl = d.Version, decl
		return
	}
	if isNodeBuiltin(name) {
		r.Kind = "stdlib"
	}
}
