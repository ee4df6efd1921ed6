package code

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/tailscale/hujson"
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
// reads that dialect).
func parseTSConfig(src []byte) (*tsConfig, error) {
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
var jsExtensions = []string{"", ".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs",
	"/index.ts", "/index.tsx", "/index.d.ts", "/index.js", "/index.jsx", "/index.mjs"}

// probeJS finds the source file a module path (without or with extension) names.
func (ix *index) probeJS(base string) (string, bool) {
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
// pnpm workspace member, or any package.json by name) to its source: the subpath below its
// folder, or its entry (main, module, types; else src/index or index).
func (ix *index) resolveWorkspacePackage(name, spec string) (string, bool) {
	for _, m := range ix.manifests {
		if m.Kind != "package.json" || m.Name != name {
			continue
		}
		dir := path.Dir(m.Path)
		if sub := strings.TrimPrefix(strings.TrimPrefix(spec, name), "/"); sub != "" {
			if f, ok := ix.probeJS(path.Join(dir, sub)); ok {
				return f, true
			}
			return ix.probeJS(path.Join(dir, "src", sub))
		}
		for _, e := range append(m.jsEntries, "src/index", "index") {
			if f, ok := ix.probeJS(path.Join(dir, e)); ok {
				return f, true
			}
			// A built entry (dist/index.js) stands for its source (src/index.ts).
			if f, ok := ix.probeJS(path.Join(dir, "src", strings.TrimSuffix(path.Base(e), path.Ext(e)))); ok {
				return f, true
			}
		}
	}
	return "", false
}

func (ix *index) resolveJS(fi *fileInfo, r *resolvedImport) {
	spec := r.Ref.Spec
	if strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || spec == "." || spec == ".." {
		if f, ok := ix.probeJS(path.Join(path.Dir(fi.Rel), spec)); ok {
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
	if f, ok := ix.resolveWorkspacePackage(name, spec); ok {
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
