package code

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"golang.org/x/mod/modfile"

	"github.com/platform-dev/platform/docparse"
)

// Manifest is a package manifest and what it declares.
type Manifest struct {
	Path         string       `json:"path"`
	Kind         string       `json:"kind"` // go.mod, package.json, pyproject.toml, requirements.txt, pom.xml, build.gradle, Cargo.toml
	Name         string       `json:"name,omitempty"`
	Version      string       `json:"version,omitempty"`
	Dependencies []Dependency `json:"dependencies"`
	// Entry points the manifest names (package.json main/bin/scripts.start, pyproject scripts,
	// Cargo [[bin]]).
	Entries []string `json:"entries,omitempty"`
	// Members are the member globs of a Cargo or npm workspace.
	Members []string `json:"members,omitempty"`
	// Parent is a Maven module's parent, groupId:artifactId; props and managed are the pom's
	// properties and managed versions, which its modules inherit.
	Parent  string `json:"parent,omitempty"`
	props   map[string]string
	managed map[string]string
	// lib and bins are a Cargo.toml's [lib] and [[bin]] tables, whose paths place crate
	// roots outside their defaults.
	lib  cargoTarget
	bins []cargoTarget
	// jsEntries are a package.json's entry files besides "exports" (main, module, types),
	// which imports of the package by name reach; jsExports is its "exports".
	jsEntries []string
	jsExports *jsExports
	Error     string `json:"error,omitempty"`
}

// Dependency is one declared dependency.
type Dependency struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Scope   string `json:"scope,omitempty"` // dev, test, build, indirect, optional ...
}

// manifestKind names the manifest a file is, or "" when it is none.
func manifestKind(name string) string {
	base := path.Base(name)
	switch {
	case base == "go.mod", base == "package.json", base == "pyproject.toml", base == "pom.xml", base == "Cargo.toml":
		return base
	case base == "build.gradle" || base == "build.gradle.kts":
		return "build.gradle"
	case strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt"):
		return "requirements.txt"
	}
	return ""
}

// parseManifest reads one manifest with the format's own parser. A malformed manifest is
// reported with Error rather than failing the analysis.
func parseManifest(rel, kind string, src []byte) *Manifest {
	m := &Manifest{Path: rel, Kind: kind}
	var err error
	switch kind {
	case "go.mod":
		err = parseGoMod(m, src)
	case "package.json":
		err = parsePackageJSON(m, src)
	case "pyproject.toml":
		err = parsePyproject(m, src)
	case "requirements.txt":
		parseRequirements(m, src)
	case "pom.xml":
		err = parsePom(m, src)
	case "build.gradle":
		parseGradle(m, src)
	case "Cargo.toml":
		err = parseCargo(m, src)
	}
	if err != nil {
		m.Error = err.Error()
	}
	sort.SliceStable(m.Dependencies, func(i, j int) bool {
		if m.Dependencies[i].Scope != m.Dependencies[j].Scope {
			return m.Dependencies[i].Scope < m.Dependencies[j].Scope
		}
		return m.Dependencies[i].Name < m.Dependencies[j].Name
	})
	return m
}

func parseGoMod(m *Manifest, src []byte) error {
	f, err := modfile.ParseLax(m.Path, src, nil)
	if err != nil {
		return fmt.Errorf("parse go.mod: %w", err)
	}
	if f.Module != nil {
		m.Name = f.Module.Mod.Path
	}
	if f.Go != nil {
		m.Version = "go " + f.Go.Version
	}
	for _, r := range f.Require {
		d := Dependency{Name: r.Mod.Path, Version: r.Mod.Version}
		if r.Indirect {
			d.Scope = "indirect"
		}
		m.Dependencies = append(m.Dependencies, d)
	}
	return nil
}

func parsePackageJSON(m *Manifest, src []byte) error {
	var p struct {
		Name                 string            `json:"name"`
		Version              string            `json:"version"`
		Main                 string            `json:"main"`
		Module               string            `json:"module"`
		Bin                  json.RawMessage   `json:"bin"`
		Scripts              map[string]string `json:"scripts"`
		Dependencies         map[string]string `json:"dependencies"`
		DevDependencies      map[string]string `json:"devDependencies"`
		PeerDependencies     map[string]string `json:"peerDependencies"`
		OptionalDependencies map[string]string `json:"optionalDependencies"`
		Workspaces           json.RawMessage   `json:"workspaces"`
		Types                string            `json:"types"`
		Exports              json.RawMessage   `json:"exports"`
	}
	if err := docparse.CheckJSON(src, docparse.DefaultLimits()); err != nil {
		return fmt.Errorf("parse package.json: %w", err)
	}
	if err := json.Unmarshal(src, &p); err != nil {
		return fmt.Errorf("parse package.json: %w", err)
	}
	m.Name, m.Version = p.Name, p.Version
	m.jsEntries = []string{p.Main, p.Module, p.Types}
	exports, err := parseJSExports(p.Exports)
	if err != nil {
		return fmt.Errorf("parse package.json: %w", err)
	}
	m.jsExports = exports
	for scope, deps := range map[string]map[string]string{"": p.Dependencies, "dev": p.DevDependencies,
		"peer": p.PeerDependencies, "optional": p.OptionalDependencies} {
		for n, v := range deps {
			m.Dependencies = append(m.Dependencies, Dependency{Name: n, Version: v, Scope: scope})
		}
	}
	for _, e := range []string{p.Main, p.Module} {
		if e != "" {
			m.Entries = append(m.Entries, e)
		}
	}
	var bin map[string]string
	var one string
	if json.Unmarshal(p.Bin, &bin) == nil {
		for _, b := range bin {
			m.Entries = append(m.Entries, b)
		}
	} else if json.Unmarshal(p.Bin, &one) == nil && one != "" {
		m.Entries = append(m.Entries, one)
	}
	if s := p.Scripts["start"]; s != "" {
		m.Entries = append(m.Entries, "npm start: "+s)
	}
	sort.Strings(m.Entries)
	var ws struct {
		Packages []string `json:"packages"`
	}
	if json.Unmarshal(p.Workspaces, &m.Members) != nil && json.Unmarshal(p.Workspaces, &ws) == nil {
		m.Members = ws.Packages
	}
	return nil
}

func parsePyproject(m *Manifest, src []byte) error {
	var p struct {
		Project struct {
			Name                 string              `toml:"name"`
			Version              string              `toml:"version"`
			Dependencies         []string            `toml:"dependencies"`
			OptionalDependencies map[string][]string `toml:"optional-dependencies"`
			Scripts              map[string]string   `toml:"scripts"`
		} `toml:"project"`
		// PEP 735: named groups of requirements, an entry being a requirement or
		// {include-group = "other"}.
		DependencyGroups map[string][]any `toml:"dependency-groups"`
		Tool             struct {
			Poetry struct {
				Name            string         `toml:"name"`
				Version         string         `toml:"version"`
				Dependencies    map[string]any `toml:"dependencies"`
				DevDependencies map[string]any `toml:"dev-dependencies"`
				Group           map[string]struct {
					Dependencies map[string]any `toml:"dependencies"`
				} `toml:"group"`
				Scripts map[string]any `toml:"scripts"`
			} `toml:"poetry"`
		} `toml:"tool"`
	}
	if err := docparse.CheckTOML(src, docparse.DefaultLimits()); err != nil {
		return fmt.Errorf("parse pyproject.toml: %w", err)
	}
	if err := toml.Unmarshal(src, &p); err != nil {
		return fmt.Errorf("parse pyproject.toml: %w", err)
	}
	m.Name, m.Version = p.Project.Name, p.Project.Version
	if m.Name == "" {
		m.Name, m.Version = p.Tool.Poetry.Name, p.Tool.Poetry.Version
	}
	for _, req := range p.Project.Dependencies {
		m.Dependencies = append(m.Dependencies, pep508(req, ""))
	}
	for group, reqs := range p.Project.OptionalDependencies {
		for _, req := range reqs {
			m.Dependencies = append(m.Dependencies, pep508(req, "optional:"+group))
		}
	}
	for group, reqs := range p.DependencyGroups {
		for _, req := range reqs {
			if req, ok := req.(string); ok {
				m.Dependencies = append(m.Dependencies, pep508(req, "group:"+group))
			}
		}
	}
	poetry := map[string]map[string]any{"": p.Tool.Poetry.Dependencies, "dev": p.Tool.Poetry.DevDependencies}
	for group, g := range p.Tool.Poetry.Group {
		poetry["group:"+group] = g.Dependencies
	}
	for scope, deps := range poetry {
		for n, v := range deps {
			if n == "python" {
				continue
			}
			m.Dependencies = append(m.Dependencies, Dependency{Name: n, Version: tomlVersion(v), Scope: scope})
		}
	}
	for n, target := range p.Project.Scripts {
		m.Entries = append(m.Entries, n+" = "+target)
	}
	for n, target := range p.Tool.Poetry.Scripts {
		m.Entries = append(m.Entries, fmt.Sprintf("%s = %v", n, target))
	}
	sort.Strings(m.Entries)
	return nil
}

// tomlVersion reads a dependency's version whether written as "1.2" or {version = "1.2"}.
func tomlVersion(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		if s, ok := v["version"].(string); ok {
			return s
		}
		if s, ok := v["path"].(string); ok {
			return "path:" + s
		}
		if s, ok := v["git"].(string); ok {
			return "git:" + s
		}
	}
	return ""
}

// pep508Name is the distribution name at the start of a PEP 508 requirement.
var pep508Name = regexp.MustCompile(`^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$`)

// pep508 splits a requirement such as "requests[socks]>=2.31; python_version>'3.8'".
func pep508(req, scope string) Dependency {
	req, _, _ = strings.Cut(req, ";")
	m := pep508Name.FindStringSubmatch(req)
	if m == nil {
		return Dependency{Name: strings.TrimSpace(req), Scope: scope}
	}
	return Dependency{Name: m[1], Version: strings.TrimSpace(m[3]), Scope: scope}
}

// parseRequirements reads pip's requirements format: one PEP 508 requirement a line, with
// comments and options (-r, -e, --index-url) that declare no package by name.
func parseRequirements(m *Manifest, src []byte) {
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), " #")
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "-") || strings.Contains(line, "://") {
			continue
		}
		m.Dependencies = append(m.Dependencies, pep508(line, ""))
	}
}

func parsePom(m *Manifest, src []byte) error {
	type dep struct {
		GroupID    string `xml:"groupId"`
		ArtifactID string `xml:"artifactId"`
		Version    string `xml:"version"`
		Scope      string `xml:"scope"`
	}
	var p struct {
		GroupID    string `xml:"groupId"`
		ArtifactID string `xml:"artifactId"`
		Version    string `xml:"version"`
		Parent     dep    `xml:"parent"`
		Properties struct {
			Entries []struct {
				XMLName xml.Name
				Value   string `xml:",chardata"`
			} `xml:",any"`
		} `xml:"properties"`
		Dependencies []dep `xml:"dependencies>dependency"`
		Managed      []dep `xml:"dependencyManagement>dependencies>dependency"`
	}
	if err := docparse.CheckXML(src, docparse.DefaultLimits()); err != nil {
		return fmt.Errorf("parse pom.xml: %w", err)
	}
	if err := xml.Unmarshal(src, &p); err != nil {
		return fmt.Errorf("parse pom.xml: %w", err)
	}
	// A module inherits its group and version from its parent when it does not set them.
	if p.Version == "" {
		p.Version = p.Parent.Version
	}
	group := p.GroupID
	if group == "" {
		group = p.Parent.GroupID
	}
	props := map[string]string{"project.version": p.Version, "version": p.Version, "pom.version": p.Version,
		"project.groupId": group, "project.parent.version": p.Parent.Version, "parent.version": p.Parent.Version}
	for _, e := range p.Properties.Entries {
		props[e.XMLName.Local] = strings.TrimSpace(e.Value)
	}
	expand := func(s string) string {
		if strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") {
			if v, ok := props[s[2:len(s)-1]]; ok {
				return v
			}
		}
		return s
	}
	m.Name = group + ":" + p.ArtifactID
	m.Version = p.Version
	if p.Parent.ArtifactID != "" {
		m.Parent = p.Parent.GroupID + ":" + p.Parent.ArtifactID
	}
	managed := map[string]string{}
	for _, d := range p.Managed {
		managed[d.GroupID+":"+d.ArtifactID] = expand(d.Version)
	}
	m.props, m.managed = props, managed
	for _, d := range p.Dependencies {
		name := d.GroupID + ":" + d.ArtifactID
		v := expand(d.Version)
		if v == "" {
			v = managed[name]
		}
		m.Dependencies = append(m.Dependencies, Dependency{Name: name, Version: v, Scope: d.Scope})
	}
	return nil
}

// gradleDep matches a dependency declared with a string coordinate in a Groovy or Kotlin
// build script, e.g. implementation 'g:a:1.0' or testImplementation("g:a:1.0"). Gradle
// scripts are programs with no Go parser; the coordinate form is regular enough to read.
var gradleDep = regexp.MustCompile(`^\s*(implementation|api|compileOnly|runtimeOnly|testImplementation|testRuntimeOnly|annotationProcessor|kapt|compile|testCompile)\s*\(?\s*["']([^"':]+):([^"':]+)(?::([^"']+))?["']`)

func parseGradle(m *Manifest, src []byte) {
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		g := gradleDep.FindStringSubmatch(sc.Text())
		if g == nil {
			continue
		}
		scope := ""
		if strings.HasPrefix(g[1], "test") {
			scope = "test"
		} else if g[1] == "compileOnly" || g[1] == "annotationProcessor" || g[1] == "kapt" {
			scope = "build"
		}
		m.Dependencies = append(m.Dependencies, Dependency{Name: g[2] + ":" + g[3], Version: g[4], Scope: scope})
	}
}

// cargoTarget is a [lib] or [[bin]] table: where a crate root lies when not at its default.
type cargoTarget struct {
	Name string `toml:"name"`
	Path string `toml:"path"`
}

// cargoDeps are the dependency tables of a Cargo.toml, at the top or below
// [target.'cfg(...)'].
type cargoDeps struct {
	Dependencies      map[string]any `toml:"dependencies"`
	DevDependencies   map[string]any `toml:"dev-dependencies"`
	BuildDependencies map[string]any `toml:"build-dependencies"`
}

func parseCargo(m *Manifest, src []byte) error {
	var c struct {
		Package struct {
			Name    string `toml:"name"`
			Version any    `toml:"version"`
		} `toml:"package"`
		cargoDeps
		Target    map[string]cargoDeps `toml:"target"`
		Lib       *cargoTarget         `toml:"lib"`
		Bin       []cargoTarget        `toml:"bin"`
		Workspace struct {
			Members      []string       `toml:"members"`
			Dependencies map[string]any `toml:"dependencies"`
		} `toml:"workspace"`
	}
	if err := docparse.CheckTOML(src, docparse.DefaultLimits()); err != nil {
		return fmt.Errorf("parse Cargo.toml: %w", err)
	}
	if err := toml.Unmarshal(src, &c); err != nil {
		return fmt.Errorf("parse Cargo.toml: %w", err)
	}
	m.Name = c.Package.Name
	if v, ok := c.Package.Version.(string); ok {
		m.Version = v
	}
	add := func(prefix string, d cargoDeps) {
		for scope, deps := range map[string]map[string]any{"": d.Dependencies, "dev": d.DevDependencies, "build": d.BuildDependencies} {
			if prefix != "" {
				scope = strings.TrimSuffix(prefix+":"+scope, ":")
			}
			for n, v := range deps {
				m.Dependencies = append(m.Dependencies, cargoDependency(n, v, scope, c.Workspace.Dependencies))
			}
		}
	}
	add("", c.cargoDeps)
	for cfg, d := range c.Target {
		add("target "+cfg, d)
	}
	// What the workspace declares, its members inherit (see inheritVersions).
	for n, v := range c.Workspace.Dependencies {
		m.Dependencies = append(m.Dependencies, cargoDependency(n, v, cargoWorkspace, nil))
	}
	if c.Lib != nil {
		m.lib = *c.Lib
	}
	m.bins = c.Bin
	for _, b := range c.Bin {
		m.Entries = append(m.Entries, b.Name+" = "+b.Path)
	}
	m.Members = c.Workspace.Members
	return nil
}

// cargoWorkspace is the scope of a [workspace.dependencies] entry, and the version of a
// member's entry that inherits it ({workspace = true}) until inheritVersions finds it.
const cargoWorkspace = "workspace"

// cargoDependency reads one entry of a dependency table, under the name the code uses.
func cargoDependency(name string, v any, scope string, workspace map[string]any) Dependency {
	d := Dependency{Name: name, Version: tomlVersion(v), Scope: scope}
	if t, ok := v.(map[string]any); ok {
		if inherit, _ := t["workspace"].(bool); inherit {
			d.Version = cargoWorkspace
			if v, ok := workspace[name]; ok {
				d.Version = tomlVersion(v)
			}
		}
	}
	return d
}

// inheritVersions fills the versions manifests leave to others. A Maven module's dependency
// without a version takes the nearest ancestor pom's managed version, and a ${property} the
// nearest ancestor's property; parents are found by coordinates among the workspace's poms.
// A Cargo member's {workspace = true} takes the version of the [workspace.dependencies] of
// the nearest Cargo.toml above it. The manifests are the caller's copies; their dependency
// lists are replaced, not changed.
func inheritVersions(ms []*Manifest) {
	byName := map[string]*Manifest{}
	for _, m := range ms {
		if m.Kind == "pom.xml" {
			byName[m.Name] = m
		}
	}
	for _, m := range ms {
		if m.Kind == "Cargo.toml" {
			inheritCargo(m, ms)
		}
		if m.Kind != "pom.xml" || m.Parent == "" {
			continue
		}
		var chain []*Manifest // the module and its ancestors, nearest first
		for p := m; p != nil && len(chain) < 16 && !slices.Contains(chain, p); p = byName[p.Parent] {
			chain = append(chain, p)
		}
		deps := slices.Clone(m.Dependencies)
		for i, d := range deps {
			for _, p := range chain {
				if d.Version == "" {
					d.Version = p.managed[d.Name]
				}
				if strings.HasPrefix(d.Version, "${") && strings.HasSuffix(d.Version, "}") {
					if v, ok := p.props[d.Version[2:len(d.Version)-1]]; ok && v != "" {
						d.Version = v
					}
				}
			}
			deps[i] = d
		}
		m.Dependencies = deps
	}
}

func inheritCargo(m *Manifest, ms []*Manifest) {
	deps := slices.Clone(m.Dependencies)
	for i, d := range deps {
		if d.Version != cargoWorkspace || d.Scope == cargoWorkspace {
			continue
		}
		best := ""
		for _, w := range ms {
			dir := path.Dir(w.Path)
			if w.Kind != "Cargo.toml" || !strings.HasPrefix(m.Path, strings.TrimPrefix(dir+"/", "./")) || len(dir) <= len(best) && best != "" {
				continue
			}
			for _, wd := range w.Dependencies {
				if wd.Scope == cargoWorkspace && wd.Name == d.Name {
					best, deps[i].Version = dir, wd.Version
				}
			}
		}
	}
	m.Dependencies = deps
}
