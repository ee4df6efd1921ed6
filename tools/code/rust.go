package code

import (
	"path"
	"strings"
)

// rustCrate is a Cargo package of the workspace.
type rustCrate struct {
	dir   string
	m     *Manifest
	lib   string   // the library's root file, "" when the package has none
	roots []string // every crate root: library, binaries, tests, examples, benches, build script
}

// name is how other crates' code names the library: [lib] name, else the package name with
// "-" as "_".
func (c *rustCrate) name() string {
	if c.m.lib.Name != "" {
		return c.m.lib.Name
	}
	return strings.ReplaceAll(c.m.Name, "-", "_")
}

// rustMod places a file in a crate: the crate root file it is reached from, and its module path.
type rustMod struct{ root, path string }

// rustModuleTrees finds each crate's roots (the [lib] and [[bin]] paths of Cargo.toml, or
// Cargo's defaults) and follows "mod x;" from them, as rustc does: a module declared in a
// crate root or a mod.rs lives beside it, one declared in a.rs lives in a/.
func (ix *index) rustModuleTrees() {
	isRust := func(rel string) bool {
		fi := ix.snap.byRel[rel]
		return fi != nil && fi.Lang == "Rust" && fi.F != nil && fi.F.source() && !fi.Vendored
	}
	for _, c := range ix.rustCrates {
		lib := c.m.lib.Path
		if lib == "" {
			lib = "src/lib.rs"
		}
		if lib = path.Join(c.dir, lib); isRust(lib) {
			c.lib = lib
			c.roots = append(c.roots, lib)
		}
		for _, b := range c.m.bins {
			if b.Path != "" && isRust(path.Join(c.dir, b.Path)) {
				c.roots = append(c.roots, path.Join(c.dir, b.Path))
			}
		}
		for _, fi := range ix.files {
			rel, ok := strings.CutPrefix(fi.Rel, c.dir+"/")
			if c.dir == "." {
				rel, ok = fi.Rel, true
			}
			if !ok || fi.Lang != "Rust" || fi.Rel == c.lib || ix.crateOf(fi.Rel) != c {
				continue
			}
			dir, base := path.Split(rel)
			switch {
			case rel == "src/main.rs", rel == "build.rs",
				dir == "src/bin/" || dir == "tests/" || dir == "examples/" || dir == "benches/",
				base == "main.rs" && path.Dir(path.Dir(rel)) == "src/bin":
				c.roots = append(c.roots, fi.Rel)
			}
		}
	}
	for _, c := range ix.rustCrates {
		for _, root := range c.roots {
			ix.rustModuleTree(root)
		}
	}
}

// rustModuleTree places root and the modules reached from it.
func (ix *index) rustModuleTree(root string) {
	queue := []string{root}
	ix.rustMods[root+"|crate"] = root
	if _, ok := ix.rustModOf[root]; !ok {
		ix.rustModOf[root] = rustMod{root: root, path: "crate"}
	}
	for len(queue) > 0 {
		file := queue[0]
		queue = queue[1:]
		mod := ix.rustModOf[file]
		if mod.root != root {
			continue // reached first from another crate root
		}
		dir := path.Dir(file)
		if file != root && path.Base(file) != "mod.rs" {
			dir = strings.TrimSuffix(file, ".rs")
		}
		for _, ref := range ix.snap.byRel[file].F.Imports {
			if !ref.Module {
				continue
			}
			name := strings.TrimPrefix(ref.Spec, "self::")
			for _, cand := range []string{path.Join(dir, name+".rs"), path.Join(dir, name, "mod.rs")} {
				fi := ix.snap.byRel[cand]
				if fi == nil || fi.F == nil || !fi.F.source() {
					continue
				}
				child := rustMod{root: root, path: mod.path + "::" + name}
				ix.rustMods[root+"|"+child.path] = cand
				if _, seen := ix.rustModOf[cand]; !seen {
					ix.rustModOf[cand] = child
					queue = append(queue, cand)
				}
				break
			}
		}
	}
}

// crateOf is the package whose folder holds rel most closely.
func (ix *index) crateOf(rel string) *rustCrate {
	for _, c := range ix.rustCrates {
		if under(rel, c.dir) {
			return c
		}
	}
	return nil
}

// rustCrateNamed is the workspace package whose library code names name.
func (ix *index) rustCrateNamed(name string) *rustCrate {
	for _, c := range ix.rustCrates {
		if c.lib != "" && c.name() == name {
			return c
		}
	}
	return nil
}

// rustLookup finds the file of the item at path abs in root's tree: the file of the longest
// prefix of abs that is a module (an item of a module is in the module's file), unless that
// module does not define the item but imports it ("pub use crate::error::Result" in lib.rs):
// then the file the import reaches, as rustc resolves re-exports, up to a few hops.
func (ix *index) rustLookup(root, abs string, hops int) (string, bool) {
	for m := abs; m != ""; {
		f, ok := ix.rustMods[root+"|"+m]
		if !ok {
			i := strings.LastIndex(m, "::")
			if i < 0 {
				break
			}
			m = m[:i]
			continue
		}
		if m == abs || hops >= 4 {
			return f, true
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(abs, m+"::"), "::")
		fi := ix.snap.byRel[f]
		if fi == nil || fi.F == nil {
			return f, true
		}
		for _, s := range fi.F.Symbols {
			if s.Name == name {
				return f, true
			}
		}
		for _, ref := range fi.F.Imports {
			if ref.Module || (ref.Spec != name && !strings.HasSuffix(ref.Spec, "::"+name)) {
				continue
			}
			r := resolvedImport{From: fi, Ref: ref}
			if ix.resolveRustHops(fi, &r, hops+1); len(r.Targets) > 0 {
				return r.Targets[0], true
			}
		}
		return f, true
	}
	return "", false
}

func (ix *index) resolveRust(fi *fileInfo, r *resolvedImport) { ix.resolveRustHops(fi, r, 0) }

// resolveRustHops resolves a use, hops re-exports away from the file that wrote it.
func (ix *index) resolveRustHops(fi *fileInfo, r *resolvedImport, hops int) {
	spec := r.Ref.Spec
	first, rest, _ := strings.Cut(spec, "::")
	if mod, ok := ix.rustModOf[fi.Rel]; ok {
		abs := ""
		switch first {
		case "crate":
			abs = spec
		case "self":
			abs = strings.TrimSuffix(mod.path+"::"+rest, "::")
		case "super":
			abs = mod.path
			segs := strings.Split(spec, "::")
			for len(segs) > 0 && segs[0] == "super" {
				if i := strings.LastIndex(abs, "::"); i >= 0 {
					abs = abs[:i]
				}
				segs = segs[1:]
			}
			abs = strings.TrimSuffix(abs+"::"+strings.Join(segs, "::"), "::")
		default:
			// Since Rust 2018 a path may start with a module declared in the current one.
			if _, ok := ix.rustMods[mod.root+"|"+mod.path+"::"+first]; ok {
				abs = mod.path + "::" + spec
			}
		}
		if abs != "" {
			if f, ok := ix.rustLookup(mod.root, abs, hops); ok {
				r.Targets = []string{f}
			}
			return
		}
	}
	// Another package of the workspace (a member, or a binary's own library).
	if c := ix.rustCrateNamed(first); c != nil {
		f, ok := ix.rustLookup(c.lib, strings.TrimSuffix("crate::"+rest, "::"), hops)
		if !ok {
			f = c.lib
		}
		r.Targets, r.Package = []string{f}, c.m.Name
		return
	}
	switch first {
	case "std", "core", "alloc", "proc_macro":
		r.Kind, r.Package = "stdlib", first
		return
	}
	r.Kind, r.Package = "external", first
	// Cargo.toml may spell the package with "-" where code writes "_".
	if d, decl, ok := ix.declared(fi.Rel, first, "Cargo.toml"); ok {
		r.Package, r.Version, r.Decl = d.Name, d.Version, decl
	}
}
