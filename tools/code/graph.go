package code

import (
	"path"
	"sort"
	"strings"
)

// An import resolved against the workspace.
type resolvedImport struct {
	From    *fileInfo
	Ref     importRef
	Kind    string   // workspace, external, stdlib, unresolved
	Targets []string // workspace files the import reaches
	Unit    string   // the unit (Go package folder, or file) it reaches
	Package string   // external package or module name
	Version string   // version its manifest declares
	Decl    string   // manifest that declares it
}

// edge is one unit importing another, with the import statements that make it.
type edge struct {
	From, To string
	At       []Location
}

// Location is a line in a file.
type Location struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// index is the import graph of one root. Units are what imports name: a Go package (its
// folder) or a file in the other languages.
type index struct {
	snap      *snapshot
	files     []*fileInfo // parsed, not vendored: the code the graph is about
	unitOf    map[string]string
	unitFiles map[string][]string
	imports   map[string][]resolvedImport // by importing file
	out       map[string]map[string]*edge
	in        map[string]map[string]*edge
	cycles    [][]string // strongly connected components of more than one unit, or self-loops
	manifests []*Manifest

	goMods     []goModule
	pyModules  map[string]string // dotted module -> file
	javaTypes  map[string]string // fully qualified class -> file
	javaPkgs   map[string][]string
	rustMods   map[string]string  // crate root file + "|" + module path ("crate::a::b") -> file
	rustModOf  map[string]rustMod // file -> its crate root and module path
	rustCrates []*rustCrate       // deepest folder first
}

// goTestUnit ends the unit name of a Go package's test files.
const goTestUnit = " [test]"

type goModule struct {
	dir, path string
	m         *Manifest
}

func buildIndex(snap *snapshot) *index {
	ix := &index{snap: snap, unitOf: map[string]string{}, unitFiles: map[string][]string{},
		imports: map[string][]resolvedImport{}, out: map[string]map[string]*edge{}, in: map[string]map[string]*edge{},
		pyModules: map[string]string{}, javaTypes: map[string]string{}, javaPkgs: map[string][]string{}, rustMods: map[string]string{}, rustModOf: map[string]rustMod{}}
	pyRoots := map[string]bool{".": true}
	for _, fi := range snap.files {
		if fi.F == nil || fi.Vendored {
			continue
		}
		if m := fi.F.Manifest; m != nil {
			mc := *m
			mc.Path = fi.Rel
			ix.manifests = append(ix.manifests, &mc)
			dir := path.Dir(fi.Rel)
			switch m.Kind {
			case "go.mod":
				ix.goMods = append(ix.goMods, goModule{dir: dir, path: m.Name, m: &mc})
			case "Cargo.toml":
				if m.Name != "" { // a virtual workspace manifest is no crate
					ix.rustCrates = append(ix.rustCrates, &rustCrate{dir: dir, m: &mc})
				}
			case "pyproject.toml", "requirements.txt":
				pyRoots[dir] = true
				pyRoots[path.Join(dir, "src")] = true
			}
			continue
		}
		if !fi.F.source() || fi.Binary {
			continue
		}
		ix.files = append(ix.files, fi)
	}
	inheritVersions(ix.manifests)
	// The folder above a top-level package (one with __init__.py below a folder without) is on
	// sys.path when the package is used, as in tests/ next to app/.
	for _, fi := range ix.files {
		if fi.Lang == "Python" && path.Base(fi.Rel) == "__init__.py" {
			pkg := path.Dir(fi.Rel)
			if above := path.Dir(pkg); pkg != "." && ix.snap.byRel[path.Join(above, "__init__.py")] == nil {
				pyRoots[above] = true
			}
		}
	}
	// The most specific root names a module first; ties are broken by name, so that the
	// answer never depends on map order.
	pyRootList := sortedKeys(pyRoots)
	sort.SliceStable(pyRootList, func(i, j int) bool { return len(pyRootList[i]) > len(pyRootList[j]) })
	// Deeper modules first, so that the nearest one wins.
	sort.Slice(ix.goMods, func(i, j int) bool { return len(ix.goMods[i].dir) > len(ix.goMods[j].dir) })
	sort.Slice(ix.rustCrates, func(i, j int) bool { return len(ix.rustCrates[i].dir) > len(ix.rustCrates[j].dir) })

	for _, fi := range ix.files {
		unit := fi.Rel
		switch fi.Lang {
		case "Go":
			// Test files form their own unit: they may import what imports their package
			// without a cycle, as the go tool builds them apart.
			unit = path.Dir(fi.Rel)
			if strings.HasSuffix(fi.Rel, "_test.go") {
				unit += goTestUnit
			}
		case "Python":
			mod := strings.TrimSuffix(fi.Rel, path.Ext(fi.Rel))
			mod = strings.TrimSuffix(mod, "/__init__")
			for _, d := range pyRootList {
				if d == "." || strings.HasPrefix(mod, d+"/") {
					name := strings.ReplaceAll(strings.TrimPrefix(mod, d+"/"), "/", ".")
					if d == "." {
						name = strings.ReplaceAll(mod, "/", ".")
					}
					if _, dup := ix.pyModules[name]; !dup {
						ix.pyModules[name] = fi.Rel
					}
				}
			}
		case "Java":
			cls := strings.TrimSuffix(path.Base(fi.Rel), ".java")
			fq := cls
			if fi.F.Package != "" {
				fq = fi.F.Package + "." + cls
			}
			ix.javaTypes[fq] = fi.Rel
			ix.javaPkgs[fi.F.Package] = append(ix.javaPkgs[fi.F.Package], fi.Rel)
		}
		ix.unitOf[fi.Rel] = unit
		ix.unitFiles[unit] = append(ix.unitFiles[unit], fi.Rel)
	}

	ix.rustModuleTrees()
	for _, fi := range ix.files {
		for _, ref := range fi.F.Imports {
			r := ix.resolve(fi, ref)
			ix.imports[fi.Rel] = append(ix.imports[fi.Rel], r)
			if r.Kind != "workspace" {
				continue
			}
			from := ix.unitOf[fi.Rel]
			for _, to := range ix.targetUnits(r) {
				if to == from {
					continue // a unit naming itself (Rust's "use self::X", Go's test files) is no dependency
				}
				ix.addEdge(from, to, Location{File: fi.Rel, Line: ref.Line})
			}
		}
	}
	ix.cycles = stronglyConnected(ix.out)
	return ix
}

func (ix *index) targetUnits(r resolvedImport) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range r.Targets {
		if u := ix.unitOf[t]; !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}

func (ix *index) addEdge(from, to string, at Location) {
	if ix.out[from] == nil {
		ix.out[from] = map[string]*edge{}
	}
	e := ix.out[from][to]
	if e == nil {
		e = &edge{From: from, To: to}
		ix.out[from][to] = e
		if ix.in[to] == nil {
			ix.in[to] = map[string]*edge{}
		}
		ix.in[to][from] = e
	}
	e.At = append(e.At, at)
}

// resolve names what one import reaches.
func (ix *index) resolve(fi *fileInfo, ref importRef) resolvedImport {
	r := resolvedImport{From: fi, Ref: ref, Kind: "unresolved"}
	switch fi.Lang {
	case "Go":
		ix.resolveGo(fi, &r)
	case "Python":
		ix.resolvePython(fi, &r)
	case "JavaScript", "TypeScript", "TSX":
		ix.resolveJS(fi, &r)
	case "Java":
		ix.resolveJava(&r)
	case "Rust":
		ix.resolveRust(fi, &r)
	}
	if len(r.Targets) > 0 {
		r.Kind = "workspace"
		r.Unit = ix.unitOf[r.Targets[0]]
	}
	return r
}

// declared looks a package up in the manifests that apply to rel, the nearest first.
func (ix *index) declared(rel, name string, kinds ...string) (dep Dependency, decl string, ok bool) {
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(s)) }
	var cands []*Manifest
	for _, m := range ix.manifests {
		if under(rel, path.Dir(m.Path)) {
			for _, k := range kinds {
				if m.Kind == k {
					cands = append(cands, m)
				}
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return len(cands[i].Path) > len(cands[j].Path) })
	for _, m := range cands {
		for _, d := range m.Dependencies {
			if d.Name == name || norm(d.Name) == norm(name) {
				return d, m.Path, true
			}
		}
	}
	return Dependency{}, "", false
}

func (ix *index) filesIn(dir, lang string) []string {
	var out []string
	for _, f := range ix.unitFiles[dir] {
		if fi := ix.snap.byRel[f]; fi != nil && fi.Lang == lang {
			out = append(out, f)
		}
	}
	return out
}

func (ix *index) resolveGo(fi *fileInfo, r *resolvedImport) {
	p := r.Ref.Spec
	first, _, _ := strings.Cut(p, "/")
	for _, m := range ix.goMods {
		// Go's own source tree: the standard library is the module "std", whose import
		// paths are its folders ("fmt", not "std/fmt").
		std := m.path == "std" && !strings.Contains(first, ".")
		if std || p == m.path || strings.HasPrefix(p, m.path+"/") {
			dir := path.Join(m.dir, p)
			if !std {
				dir = path.Join(m.dir, strings.TrimPrefix(strings.TrimPrefix(p, m.path), "/"))
			}
			r.Targets = ix.filesIn(dir, "Go")
			r.Package = p
			if len(r.Targets) > 0 {
				return
			}
		}
	}
	if !strings.Contains(first, ".") {
		r.Kind, r.Package = "stdlib", p
		return
	}
	r.Kind, r.Package = "external", p
	var mod *Manifest
	for _, m := range ix.goMods {
		if under(fi.Rel, m.dir) {
			mod = m.m
			break
		}
	}
	if mod == nil {
		return
	}
	best := ""
	for _, d := range mod.Dependencies {
		if (p == d.Name || strings.HasPrefix(p, d.Name+"/")) && len(d.Name) > len(best) {
			best, r.Version, r.Decl = d.Name, d.Version, mod.Path
		}
	}
	if best != "" {
		r.Package = best
	}
}

func (ix *index) resolvePython(fi *fileInfo, r *resolvedImport) {
	spec := r.Ref.Spec
	if r.Ref.Relative > 0 {
		pkg := strings.ReplaceAll(path.Dir(fi.Rel), "/", ".")
		for i := 1; i < r.Ref.Relative; i++ {
			if j := strings.LastIndexByte(pkg, '.'); j >= 0 {
				pkg = pkg[:j]
			} else {
				pkg = "."
			}
		}
		base := pkg
		if spec != "" {
			base = pkg + "." + spec
		}
		base = strings.TrimPrefix(base, "..")
		base = strings.TrimPrefix(base, ".")
		ix.pyFromTargets(r, base)
		return
	}
	top, _, _ := strings.Cut(spec, ".")
	dep, decl, declared := ix.declared(fi.Rel, top, "pyproject.toml", "requirements.txt")
	// Python finds the standard library and installed packages before a same-named file of
	// the project ("import typing" next to a typing.py is still the standard one), unless
	// the importing file is part of that very package (the workspace is the package).
	if !(declared || isPythonStdlib(top)) || ix.inPyPackage(fi.Rel, top) {
		if ix.pyFromTargets(r, spec); len(r.Targets) > 0 {
			return
		}
		// "import a.b.c" is a/b/c.py; "import os.path" is os.py, which makes os.path.
		for m := spec; m != ""; {
			if f, ok := ix.pyModules[m]; ok {
				r.Targets = []string{f}
				return
			}
			i := strings.LastIndexByte(m, '.')
			if i < 0 {
				break
			}
			m = m[:i]
		}
		// A script's own folder is on sys.path: "import helper" next to helper.py.
		if dir := path.Dir(fi.Rel); dir != "." {
			if f, ok := ix.pyModules[strings.ReplaceAll(dir, "/", ".")+"."+spec]; ok {
				r.Targets = []string{f}
				return
			}
		}
	}
	r.Package = top
	switch {
	case declared:
		r.Kind, r.Version, r.Decl = "external", dep.Version, decl
	case isPythonStdlib(top):
		r.Kind = "stdlib"
	default:
		r.Kind = "external"
	}
}

// pyFromTargets resolves "from mod import a, b" as Python does: each name that is a
// submodule of mod is its own file, and any other name (a function, a class, "*") is an
// attribute of mod itself. mod is a dotted name of the workspace, "" for its root folder.
func (ix *index) pyFromTargets(r *resolvedImport, mod string) {
	seen := map[string]bool{}
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			r.Targets = append(r.Targets, f)
		}
	}
	if len(r.Ref.Names) == 0 && !r.Ref.Wildcard {
		return // "import mod"
	}
	self := r.Ref.Wildcard
	for _, n := range r.Ref.Names {
		if f, ok := ix.pyModules[strings.TrimPrefix(mod+"."+n, ".")]; ok {
			add(f)
		} else {
			self = true
		}
	}
	if f, ok := ix.pyModules[mod]; ok && self {
		add(f)
	}
}

// inPyPackage reports whether the file rel belongs to the top-level package or module top of
// the workspace, or the workspace holds the standard library itself (CPython's Lib/, where
// "import os" is os.py).
func (ix *index) inPyPackage(rel, top string) bool {
	f, ok := ix.pyModules[top]
	if !ok {
		return false
	}
	pkg := path.Base(f) == "__init__.py"
	if isPythonStdlib(top) {
		// A folder with os.py, typing.py and collections/ is a standard library.
		dir := path.Dir(f)
		if pkg {
			dir = path.Dir(dir)
		}
		lib := ix.snap.byRel[path.Join(dir, "os.py")] != nil && ix.snap.byRel[path.Join(dir, "typing.py")] != nil &&
			ix.snap.byRel[path.Join(dir, "collections", "__init__.py")] != nil
		if lib && under(rel, dir) {
			return true
		}
	}
	if pkg {
		return under(rel, path.Dir(f))
	}
	return rel == f
}

func (ix *index) resolveJava(r *resolvedImport) {
	spec := r.Ref.Spec
	if fs := ix.javaPkgs[spec]; r.Ref.Wildcard && len(fs) > 0 {
		r.Targets = fs
		return
	}
	// a.b.Outer.Inner -> try a.b.Outer.Inner, then a.b.Outer. A wildcard that names no
	// package names a type: "import static a.b.C.*" or "import a.b.C.*" (its member types).
	for s := spec; s != ""; {
		if f, ok := ix.javaTypes[s]; ok {
			r.Targets = []string{f}
			return
		}
		i := strings.LastIndexByte(s, '.')
		if i < 0 {
			break
		}
		s = s[:i]
	}
	r.Package = spec
	if strings.HasPrefix(spec, "java.") || strings.HasPrefix(spec, "javax.") || strings.HasPrefix(spec, "jdk.") {
		r.Kind = "stdlib"
		return
	}
	r.Kind = "external"
	// Maven coordinates do not name packages. The declared artifact whose group id shares the
	// most leading segments with the import (at least two, or the whole group) is the best
	// evidence of which artifact provides it: com.google.common.* -> com.google.guava:guava.
	best := 0
	for _, m := range ix.manifests {
		if m.Kind != "pom.xml" && m.Kind != "build.gradle" {
			continue
		}
		for _, d := range m.Dependencies {
			group, _, _ := strings.Cut(d.Name, ":")
			n, whole := commonSegments(spec, group)
			if whole {
				n += 100
			}
			if (n >= 2 || whole) && n > best {
				best, r.Package, r.Version, r.Decl = n, d.Name, d.Version, m.Path
			}
		}
	}
}

// commonSegments counts the leading dot-separated segments a and b share, and reports whether
// all of b's are shared.
func commonSegments(a, b string) (int, bool) {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	n := 0
	for n < len(as) && n < len(bs) && as[n] == bs[n] {
		n++
	}
	return n, n == len(bs) && b != ""
}

// stronglyConnected returns the import cycles: Tarjan's strongly connected components with
// more than one unit, and units that import themselves, each sorted, largest first.
func stronglyConnected(out map[string]map[string]*edge) [][]string {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var comps [][]string
	next := 0
	var strong func(v string)
	strong = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range sortedKeys(out[v]) {
			if _, seen := index[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 || out[v][v] != nil {
				sort.Strings(comp)
				comps = append(comps, comp)
			}
		}
	}
	for _, v := range sortedKeys(out) {
		if _, seen := index[v]; !seen {
			strong(v)
		}
	}
	sort.SliceStable(comps, func(i, j int) bool { return len(comps[i]) > len(comps[j]) })
	return comps
}

// cyclePath returns one shortest cycle through start within its component, as units.
func (ix *index) cyclePath(start string, comp []string) []string {
	in := map[string]bool{}
	for _, c := range comp {
		in[c] = true
	}
	prev := map[string]string{}
	queue := []string{start}
	seen := map[string]bool{}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range sortedKeys(ix.out[v]) {
			if !in[w] {
				continue
			}
			if w == start {
				p := []string{start}
				for u := v; u != start; u = prev[u] {
					p = append(p, u)
				}
				// p is start, v, ..., reversed after start
				for i, j := 1, len(p)-1; i < j; i, j = i+1, j-1 {
					p[i], p[j] = p[j], p[i]
				}
				return append(p, start)
			}
			if !seen[w] {
				seen[w] = true
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return nil
}

// isPythonStdlib reports the modules of Python's standard library (sys.stdlib_module_names).
func isPythonStdlib(name string) bool {
	switch name {
	case
		"__future__", "abc", "aifc", "antigravity", "argparse", "array", "ast", "asynchat", "asyncio", "asyncore",
		"atexit", "audioop", "base64", "bdb", "binascii", "bisect", "builtins", "bz2", "cProfile",
		"calendar", "cgi", "cgitb", "chunk", "cmath", "cmd", "code", "codecs", "codeop", "collections",
		"colorsys", "compileall", "concurrent", "configparser", "contextlib", "contextvars", "copy",
		"copyreg", "crypt", "csv", "ctypes", "curses", "dataclasses", "datetime", "dbm", "decimal",
		"difflib", "dis", "distutils", "doctest", "email", "encodings", "ensurepip", "enum", "errno",
		"faulthandler", "fcntl", "filecmp", "fileinput", "fnmatch", "fractions", "ftplib", "functools",
		"gc", "genericpath", "getopt", "getpass", "gettext", "glob", "graphlib", "grp", "gzip",
		"hashlib", "heapq", "hmac", "html", "http", "idlelib", "imaplib", "imghdr", "imp", "importlib",
		"inspect", "io", "ipaddress", "itertools", "json", "keyword", "lib2to3", "linecache", "locale",
		"logging", "lzma", "mailbox", "mailcap", "marshal", "math", "mimetypes", "mmap", "modulefinder",
		"msilib", "msvcrt", "multiprocessing", "netrc", "nis", "nntplib", "nt", "ntpath", "nturl2path",
		"numbers", "opcode", "operator", "optparse", "os", "ossaudiodev", "pathlib", "pdb", "pickle",
		"pickletools", "pipes", "pkgutil", "platform", "plistlib", "poplib", "posix", "posixpath",
		"pprint", "profile", "pstats", "pty", "pwd", "py_compile", "pyclbr", "pydoc", "pydoc_data",
		"pyexpat", "queue", "quopri", "random", "re", "readline", "reprlib", "resource", "rlcompleter",
		"runpy", "sched", "secrets", "select", "selectors", "shelve", "shlex", "shutil", "signal",
		"site", "smtpd", "smtplib", "sndhdr", "socket", "socketserver", "spwd", "sqlite3", "sre_compile",
		"sre_constants", "sre_parse", "ssl", "stat", "statistics", "string", "stringprep", "struct",
		"subprocess", "sunau", "symtable", "sys", "sysconfig", "syslog", "tabnanny", "tarfile",
		"telnetlib", "tempfile", "termios", "textwrap", "this", "threading", "time", "timeit", "tkinter",
		"token", "tokenize", "tomllib", "trace", "traceback", "tracemalloc", "tty", "turtle",
		"turtledemo", "types", "typing", "unicodedata", "unittest", "urllib", "uu", "uuid", "venv",
		"warnings", "wave", "weakref", "webbrowser", "winreg", "winsound", "wsgiref", "xdrlib", "xml",
		"xmlrpc", "zipapp", "zipfile", "zipimport", "zlib", "zoneinfo":
		return true
	}
	return false
}

// isNodeBuiltin reports Node.js's built-in modules, which may be imported without "node:".
func isNodeBuiltin(name string) bool {
	switch name {
	case
		"assert", "buffer", "child_process", "cluster", "console", "constants", "crypto", "dgram", "dns",
		"domain", "events", "fs", "http", "http2", "https", "inspector", "module", "net", "os", "path",
		"perf_hooks", "process", "punycode", "querystring", "readline", "repl", "stream",
		"string_decoder", "sys", "timers", "tls", "trace_events", "tty", "url", "util", "v8", "vm",
		"wasi", "worker_threads", "zlib":
		return true
	}
	return false
}
