package code

import (
	"fmt"
	"regexp"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// grammars maps a Linguist language name to its tree-sitter grammar. TSX files are
// TypeScript to Linguist; they get the TSX grammar by extension (see parserFor).
func grammars() map[string]*grammar {
	js := func(name string, lang func() *sitter.Language) *grammar {
		return &grammar{
			name:      name,
			language:  lang,
			comments:  []string{"comment"},
			idents:    []string{"identifier", "property_identifier", "type_identifier", "shorthand_property_identifier"},
			decisions: []string{"if_statement", "for_statement", "for_in_statement", "while_statement", "do_statement", "switch_case", "catch_clause", "ternary_expression"},
			logical:   []string{"binary_expression"},
			nesting:   []string{"if_statement", "for_statement", "for_in_statement", "while_statement", "do_statement", "switch_statement", "try_statement"},
			elseIf:    func(_ *sitter.Node, parent string) bool { return parent == "else_clause" },
			top:       jsTop,
			node:      jsNode,
		}
	}
	return map[string]*grammar{
		"Python": {
			name:      "Python",
			language:  python.GetLanguage,
			comments:  []string{"comment"},
			idents:    []string{"identifier"},
			decisions: []string{"if_statement", "elif_clause", "for_statement", "while_statement", "except_clause", "conditional_expression", "boolean_operator", "for_in_clause", "if_clause", "case_clause"},
			nesting:   []string{"if_statement", "for_statement", "while_statement", "try_statement", "with_statement", "match_statement"},
			top:       pyTop,
			node:      pyNode,
		},
		"JavaScript": js("JavaScript", javascript.GetLanguage),
		"TypeScript": js("TypeScript", typescript.GetLanguage),
		"TSX":        js("TypeScript", tsx.GetLanguage),
		"Java": {
			name:      "Java",
			language:  java.GetLanguage,
			comments:  []string{"line_comment", "block_comment"},
			idents:    []string{"identifier", "type_identifier"},
			decisions: []string{"if_statement", "for_statement", "enhanced_for_statement", "while_statement", "do_statement", "catch_clause", "ternary_expression", "switch_label"},
			logical:   []string{"binary_expression"},
			nesting:   []string{"if_statement", "for_statement", "enhanced_for_statement", "while_statement", "do_statement", "switch_expression", "try_statement"},
			elseIf: func(n *sitter.Node, parent string) bool {
				p := n.Parent()
				return parent == "if_statement" && p != nil && p.ChildByFieldName("alternative") != nil && p.ChildByFieldName("alternative").Equal(n)
			},
			top: javaTop,
		},
		"Rust": {
			name:      "Rust",
			language:  rust.GetLanguage,
			comments:  []string{"line_comment", "block_comment"},
			idents:    []string{"identifier", "type_identifier", "field_identifier"},
			decisions: []string{"if_expression", "while_expression", "for_expression", "match_arm"},
			logical:   []string{"binary_expression"},
			nesting:   []string{"if_expression", "while_expression", "for_expression", "loop_expression", "match_expression"},
			elseIf:    func(_ *sitter.Node, parent string) bool { return parent == "else_clause" },
			top:       rustTop,
			node:      rustNode,
		},
	}
}

// ---- Python ----

// pyNode reads import statements wherever they are: inside functions, under
// "if TYPE_CHECKING:", in try/except ImportError fallbacks.
func pyNode(t *tsFile, n *sitter.Node, typ string) {
	switch typ {
	case "import_statement":
		for _, c := range t.children(n, true) {
			name := c
			if t.typ(c) == "aliased_import" {
				name = c.ChildByFieldName("name")
			}
			t.out.Imports = append(t.out.Imports, importRef{Spec: t.text(name), Line: t.line(n)})
		}
	case "import_from_statement", "future_import_statement":
		// "from __future__ import annotations" is a compiler directive, and an import of
		// __future__.py too.
		im := importRef{Line: t.line(n), Spec: "__future__"}
		switch mod := n.ChildByFieldName("module_name"); {
		case typ == "future_import_statement":
		case t.typ(mod) == "relative_import":
			im.Spec = ""
			for _, c := range t.children(mod, false) {
				switch t.typ(c) {
				case "import_prefix":
					im.Relative = len(strings.TrimSpace(t.text(c)))
				case "dotted_name":
					im.Spec = t.text(c)
				}
			}
		default:
			im.Spec = t.text(mod)
		}
		for i := 0; i < int(n.ChildCount()); i++ {
			c := n.Child(i)
			switch {
			case t.typ(c) == "wildcard_import":
				im.Wildcard = true
			case n.FieldNameForChild(i) == "name":
				name := c
				if t.typ(c) == "aliased_import" {
					name = c.ChildByFieldName("name")
				}
				im.Names = append(im.Names, t.text(name))
			}
		}
		t.out.Imports = append(t.out.Imports, im)
	}
}

func pyTop(t *tsFile) {
	for _, n := range t.children(t.root, true) {
		def := n
		if t.typ(n) == "decorated_definition" {
			def = n.ChildByFieldName("definition")
		}
		switch t.typ(def) {
		case "function_definition":
			name := t.field(def, "name")
			t.out.Symbols = append(t.out.Symbols, t.symbol(n, name, "function", "", !strings.HasPrefix(name, "_")))
		case "class_definition":
			pyClass(t, n, def)
		case "expression_statement":
			if a := def.NamedChild(0); a != nil && t.typ(a) == "assignment" {
				left := a.ChildByFieldName("left")
				if t.typ(left) == "identifier" {
					name := t.text(left)
					kind := "var"
					if name == strings.ToUpper(name) {
						kind = "const"
					}
					t.out.Symbols = append(t.out.Symbols, t.symbol(n, name, kind, "", !strings.HasPrefix(name, "_")))
				}
			}
		case "if_statement":
			if cond := t.text(def.ChildByFieldName("condition")); strings.Contains(cond, "__name__") && strings.Contains(cond, "__main__") {
				t.out.Entry = append(t.out.Entry, entryPoint{Line: t.line(def), Kind: "main", Detail: `if __name__ == "__main__"`})
			}
		}
	}
}

func pyClass(t *tsFile, outer, def *sitter.Node) {
	name := t.field(def, "name")
	t.out.Symbols = append(t.out.Symbols, t.symbol(outer, name, "class", "", !strings.HasPrefix(name, "_")))
	if sup := def.ChildByFieldName("superclasses"); sup != nil {
		for _, b := range t.children(sup, true) {
			if base := t.text(b); base != "object" && !strings.Contains(base, "=") {
				t.addHint(def, "implements", name, base)
			}
		}
	}
	instanceField, instanceMethod := false, false
	body := def.ChildByFieldName("body")
	if body == nil {
		return
	}
	var cm classMethods
	for _, m := range t.children(body, true) {
		fn := m
		if t.typ(m) == "decorated_definition" {
			fn = m.ChildByFieldName("definition")
		}
		switch t.typ(fn) {
		case "function_definition":
			mname := t.field(fn, "name")
			if mname != "__init__" && mname != "__new__" {
				cm.method(t, mname, fn.ChildByFieldName("parameters"), fn.ChildByFieldName("body"))
			}
			s := t.symbol(m, mname, "method", name, !strings.HasPrefix(mname, "_"))
			if ret := fn.ChildByFieldName("return_type"); ret != nil {
				s.Returns = strings.Trim(t.text(ret), `"'`)
			}
			t.out.Symbols = append(t.out.Symbols, s)
			if mname == "__new__" || mname == "get_instance" || mname == "instance" || mname == "getInstance" {
				instanceMethod = true
			}
		case "expression_statement":
			if a := fn.NamedChild(0); a != nil && t.typ(a) == "assignment" && isInstanceName(t.field(a, "left")) {
				instanceField = true
			}
		}
	}
	if instanceField && instanceMethod {
		t.addHint(def, "singleton", name, "class "+name+" keeps its one instance in a class attribute")
	}
	cm.report(t, def, name, nil)
}

// classMethods gathers a class's methods (constructors aside) to recognise adapters and
// observer subjects by what their bodies do.
type classMethods struct {
	names  []string
	single []string // the body's one statement, a call or the return of one, or ""
	bodies []string
	params []string
}

var (
	selfFieldCall = regexp.MustCompile(`\b(?:self|this)\.(\w+)\.(\w+)\(`)
	bareFieldCall = regexp.MustCompile(`(?:^|[^.\w])(\w+)\.(\w+)\(`)
	// collectionMethods are what a list, map or set field is called with: a class keeping one
	// holds state rather than wrapping another object.
	collectionMethods = map[string]bool{"append": true, "add": true, "pop": true, "push": true, "remove": true, "insert": true,
		"extend": true, "clear": true, "put": true, "get": true, "set": true, "update": true, "discard": true, "setdefault": true}
	// fieldAppend is self.f.append(p), this.f.push(p), f.add(p) ...
	fieldAppend = regexp.MustCompile(`(?:\b(self|this)\.)?\b(\w+)\.(?:append|add|push|addElement)\(\s*(\w+)\s*\)`)
	// fieldLoops are loops over a field, as (variable, self or this, field) or (self or this,
	// field, variable): Python's for x in self.f, JS/TS for (const x of this.f) and
	// this.f.forEach(x => ...), Java's for (T x : f).
	fieldLoops = []*regexp.Regexp{
		regexp.MustCompile(`\bfor\s+(\w+)\s+in\s+(?:list\(|tuple\()?(self)\.(\w+)`),
		regexp.MustCompile(`\bfor\s*\(\s*(?:const|let|var)\s+(\w+)\s+of\s+(?:\[\.\.\.)?(this)\.(\w+)`),
		regexp.MustCompile(`\bfor\s*\([^:;()]*?\b(\w+)\s*:\s*(?:(this)\.)?(\w+)\s*\)`),
	}
	fieldForEach = regexp.MustCompile(`\b(this)\.(\w+)\.forEach\(\s*\(?\s*(\w+)`)
	// javaCallbacks are the methods of Java's functional interfaces (Runnable, Consumer,
	// Function, Callable, ...): a loop calling one on each element runs callbacks.
	javaCallbacks = regexp.MustCompile(`\.(?:run|accept|apply|call|test)\(`)
)

// method adds a method: its name, parameters and body.
func (cm *classMethods) method(t *tsFile, name string, params, body *sitter.Node) {
	var stmts []*sitter.Node
	for _, c := range t.children(body, true) {
		if typ := t.typ(c); typ != "comment" && !(typ == "expression_statement" && t.typ(c.NamedChild(0)) == "string") {
			stmts = append(stmts, c)
		}
	}
	one := ""
	if len(stmts) == 1 && (t.typ(stmts[0]) == "expression_statement" || t.typ(stmts[0]) == "return_statement") {
		one = t.text(stmts[0])
	}
	cm.names = append(cm.names, name)
	cm.single = append(cm.single, one)
	cm.bodies = append(cm.bodies, t.text(body))
	cm.params = append(cm.params, t.text(params))
}

// report adds the hints of the patterns the methods show; fields are the declared fields a
// method may use without this. (Java), nil where self or this is required.
func (cm *classMethods) report(t *tsFile, n *sitter.Node, class string, fields map[string]bool) {
	if field := cm.adaptee(fields); field != "" {
		t.addHint(n, "adapter", class, fmt.Sprintf("%s adapts its field %s: each of its %d methods calls a method of another name on it",
			class, field, len(cm.names)))
	}
	if reg, notify, field := cm.subject(fields); field != "" {
		t.addHint(n, "observer", class, fmt.Sprintf("%s is an observer subject: %s adds a caller's callback to its field %s and %s calls each of them",
			class, reg, field, notify))
	}
}

// adaptee is the field whose methods every method (two or more) calls, in a body of that one
// statement, under another name than its own. An adapter translates each call to the object
// it wraps; a class named a wrapper that does its own work (textwrap.TextWrapper) does not.
func (cm *classMethods) adaptee(fields map[string]bool) string {
	if len(cm.names) < 2 {
		return ""
	}
	count := map[string]int{} // field -> methods calling it under another name
	for i, body := range cm.single {
		calls := selfFieldCall.FindAllStringSubmatch(body, -1)
		for _, m := range bareFieldCall.FindAllStringSubmatch(body, -1) {
			if fields[m[1]] {
				calls = append(calls, m)
			}
		}
		seen := map[string]bool{}
		for _, m := range calls {
			if m[2] != cm.names[i] && !seen[m[1]] && !collectionMethods[m[2]] {
				seen[m[1]] = true
				count[m[1]]++
			}
		}
	}
	field := ""
	for f, c := range count {
		if c == len(cm.names) && (field == "" || f < field) {
			field = f
		}
	}
	return field
}

// subject finds a field that one method appends a parameter to and another loops over,
// calling each element in a statement of its own: callbacks registered and run. A loop calling a method of each element
// is not enough (a composite calls its children so); in Java, where callbacks are objects,
// the method must be one of a functional interface's.
func (cm *classMethods) subject(fields map[string]bool) (register, notify, field string) {
	added := map[string]string{} // field -> method appending a parameter to it
	for i, body := range cm.bodies {
		for _, m := range fieldAppend.FindAllStringSubmatch(body, -1) {
			if (m[1] != "" || fields[m[2]]) && regexp.MustCompile(`\b`+m[3]+`\b`).MatchString(cm.params[i]) && added[m[2]] == "" {
				added[m[2]] = cm.names[i]
			}
		}
	}
	for i, body := range cm.bodies {
		var loops [][2]string // variable, field
		for _, re := range fieldLoops {
			for _, m := range re.FindAllStringSubmatch(body, -1) {
				if m[2] != "" || fields[m[3]] {
					loops = append(loops, [2]string{m[1], m[3]})
				}
			}
		}
		for _, m := range fieldForEach.FindAllStringSubmatch(body, -1) {
			loops = append(loops, [2]string{m[3], m[2]})
		}
		for _, l := range loops {
			reg := added[l[1]]
			if reg == "" || reg == cm.names[i] {
				continue
			}
			// The call is a statement of its own: a listener is told, and what it returns is
			// not used (filters and validators, whose verdicts are combined, are not listeners).
			call := regexp.QuoteMeta(l[0]) + `\s*\(`
			if fields != nil {
				call = regexp.QuoteMeta(l[0]) + javaCallbacks.String()
			}
			if regexp.MustCompile(`(?m)(?:^\s*|=>\s*|[{;:]\s*)` + call).MatchString(body) {
				return reg, cm.names[i], l[1]
			}
		}
	}
	return "", "", ""
}

// ---- JavaScript and TypeScript ----

// jsNode finds require("x") and import("x") wherever they are, and express-style app.use().
func jsNode(t *tsFile, n *sitter.Node, typ string) {
	if typ != "call_expression" {
		return
	}
	fn := n.ChildByFieldName("function")
	if fn == nil {
		return
	}
	switch ft := t.typ(fn); {
	case ft == "import" || (ft == "identifier" && t.text(fn) == "require"):
		args := n.ChildByFieldName("arguments")
		if args != nil && args.NamedChildCount() == 1 && t.typ(args.NamedChild(0)) == "string" {
			t.out.Imports = append(t.out.Imports, importRef{Spec: unquote(t.text(args.NamedChild(0))), Line: t.line(n), Require: ft != "import"})
		}
	case ft == "member_expression":
		switch t.field(fn, "property") {
		case "use":
			t.addHint(n, "middleware", t.field(fn, "object"), t.text(fn)+"() adds a middleware to a chain")
		case "listen":
			if obj := t.field(fn, "object"); obj == "app" || obj == "server" || obj == "http" {
				t.out.Entry = append(t.out.Entry, entryPoint{Line: t.line(n), Kind: "server", Detail: t.text(fn) + "()"})
			}
		}
	}
}

func jsTop(t *tsFile) {
	for _, n := range t.children(t.root, true) {
		exported := false
		decl := n
		if t.typ(n) == "export_statement" {
			exported = true
			if src := n.ChildByFieldName("source"); src != nil {
				t.out.Imports = append(t.out.Imports, importRef{Spec: unquote(t.text(src)), Line: t.line(n)})
				continue
			}
			if d := n.ChildByFieldName("declaration"); d != nil {
				decl = d
			} else if v := n.ChildByFieldName("value"); v != nil {
				decl = v
			} else {
				for _, c := range t.children(n, true) {
					decl = c
				}
			}
			if t.typ(decl) == "new_expression" {
				subject := t.field(decl, "constructor")
				t.addHint(n, "singleton", subject, "the module exports one shared instance of "+subject)
			}
		}
		jsDecl(t, n, decl, exported)
	}
}

func jsDecl(t *tsFile, outer, decl *sitter.Node, exported bool) {
	switch t.typ(decl) {
	case "import_statement":
		im := importRef{Spec: unquote(t.field(decl, "source")), Line: t.line(decl)}
		if clause := t.find(decl, "named_imports"); clause != nil {
			for _, s := range t.children(clause, true) {
				im.Names = append(im.Names, t.field(s, "name"))
			}
		}
		t.out.Imports = append(t.out.Imports, im)
	case "function_declaration", "generator_function_declaration", "function_signature":
		s := t.symbol(outer, t.field(decl, "name"), "function", "", exported)
		s.Returns = strings.TrimSpace(strings.TrimPrefix(t.field(decl, "return_type"), ":"))
		t.out.Symbols = append(t.out.Symbols, s)
	case "class_declaration", "abstract_class_declaration", "class":
		jsClass(t, outer, decl, exported)
	case "interface_declaration":
		name := t.field(decl, "name")
		t.out.Symbols = append(t.out.Symbols, t.symbol(outer, name, "interface", "", exported))
		var methods []string
		if body := decl.ChildByFieldName("body"); body != nil {
			for _, m := range t.children(body, true) {
				if t.typ(m) == "method_signature" {
					methods = append(methods, t.field(m, "name"))
				}
			}
		}
		t.addHint(decl, "interface", name, strings.Join(methods, ","))
	case "type_alias_declaration":
		t.out.Symbols = append(t.out.Symbols, t.symbol(outer, t.field(decl, "name"), "type", "", exported))
	case "enum_declaration":
		t.out.Symbols = append(t.out.Symbols, t.symbol(outer, t.field(decl, "name"), "enum", "", exported))
	case "lexical_declaration", "variable_declaration":
		for _, v := range t.children(decl, true) {
			if t.typ(v) != "variable_declarator" {
				continue
			}
			name := t.field(v, "name")
			kind := "var"
			// "let x;" has no value: value is nil and its type "".
			value := v.ChildByFieldName("value")
			switch typ := t.typ(value); {
			case jsFunctionTypes[typ]:
				kind = "function"
			case typ == "class":
				jsClass(t, outer, value, exported)
				continue
			case value != nil:
				// const handler = wrap(async (req) => {...}): the functions inside count too.
				jsFunctions(t, value, exported)
			}
			if kind == "var" && t.has(decl, "const") {
				kind = "const"
			}
			s := t.symbol(outer, name, kind, "", exported)
			if kind == "function" {
				cx, depth := t.complexity(value)
				s.Complexity, s.Nesting = clamp16(cx), clamp16(depth)
			}
			t.out.Symbols = append(t.out.Symbols, s)
		}
	default:
		// module.exports = function () {...}, app.get("/", (req, res) => {...}),
		// export default () => {...}: functions that no declaration names.
		jsFunctions(t, decl, exported)
	}
}

// jsFunctionTypes are the expressions that create a function.
var jsFunctionTypes = map[string]bool{"arrow_function": true, "function_expression": true, "function": true,
	"generator_function": true, "method_definition": true}

// jsFunctions adds a function symbol for each outermost function expression below n, named
// after what receives it (the variable, the assigned property, the object key, or the
// function it is passed to); functions nested in them count toward their complexity.
func jsFunctions(t *tsFile, n *sitter.Node, exported bool) {
	switch typ := t.typ(n); {
	case jsFunctionTypes[typ]:
		s := t.symbol(n, jsFunctionName(t, n), "function", "", exported)
		s.Returns = strings.TrimSpace(strings.TrimPrefix(t.field(n, "return_type"), ":"))
		t.out.Symbols = append(t.out.Symbols, s)
		return
	case typ == "class":
		jsClass(t, n, n, exported)
		return
	}
	for i := 0; i < int(n.NamedChildCount()); i++ {
		jsFunctions(t, n.NamedChild(i), exported)
	}
}

// jsFunctionName names an anonymous function by where it goes.
func jsFunctionName(t *tsFile, fn *sitter.Node) string {
	if name := t.field(fn, "name"); name != "" {
		return name
	}
	p := fn.Parent()
	name := "function"
	switch t.typ(p) {
	case "variable_declarator":
		name = t.field(p, "name")
	case "assignment_expression":
		name = t.field(p, "left")
	case "pair":
		name = t.field(p, "key")
	case "export_statement":
		name = "default"
	case "arguments":
		if call := p.Parent(); call != nil {
			name = t.field(call, "function") + " callback"
		}
	}
	name = strings.Join(strings.Fields(name), " ")
	if len(name) > 80 {
		name = name[:77] + "..."
	}
	return name
}

func jsClass(t *tsFile, outer, decl *sitter.Node, exported bool) {
	name := t.field(decl, "name")
	t.out.Symbols = append(t.out.Symbols, t.symbol(outer, name, "class", "", exported))
	if clause := t.find(decl, "implements_clause"); clause != nil {
		for _, i := range t.children(clause, true) {
			t.addHint(decl, "implements", name, t.text(i))
		}
	}
	if her := t.find(decl, "extends_clause"); her != nil {
		t.addHint(decl, "implements", name, t.field(her, "value"))
	} else if her := t.find(decl, "class_heritage"); her != nil && t.typ(her.NamedChild(0)) != "extends_clause" {
		if v := her.NamedChild(0); v != nil && t.typ(v) != "implements_clause" {
			t.addHint(decl, "implements", name, t.text(v))
		}
	}
	body := decl.ChildByFieldName("body")
	if body == nil {
		return
	}
	staticInstance := false
	var cm classMethods
	for _, m := range t.children(body, true) {
		mname := t.field(m, "name")
		static := t.has(m, "static")
		if t.typ(m) == "method_definition" && mname != "constructor" && !static {
			cm.method(t, mname, m.ChildByFieldName("parameters"), m.ChildByFieldName("body"))
		}
		switch t.typ(m) {
		case "method_definition", "abstract_method_signature", "method_signature":
			s := t.symbol(m, mname, "method", name, !t.has(m, "accessibility_modifier") || strings.HasPrefix(t.text(m), "public"))
			s.Returns = strings.TrimSpace(strings.TrimPrefix(t.field(m, "return_type"), ":"))
			t.out.Symbols = append(t.out.Symbols, s)
			if static && (mname == "getInstance" || mname == "instance" || mname == "shared") {
				staticInstance = true
			}
		case "public_field_definition", "field_definition":
			// handleClick = (e) => {...}: a method written as a field.
			if v := m.ChildByFieldName("value"); jsFunctionTypes[t.typ(v)] {
				fname := strings.TrimPrefix(t.field(m, "property")+mname, "#")
				s := t.symbol(v, fname, "method", name, !t.has(m, "accessibility_modifier") || strings.HasPrefix(t.text(m), "public"))
				t.out.Symbols = append(t.out.Symbols, s)
			}
			if static && isInstanceName(strings.TrimPrefix(t.field(m, "property"), "#")+strings.TrimPrefix(mname, "#")) {
				staticInstance = true
			}
		}
	}
	if staticInstance {
		t.addHint(decl, "singleton", name, "class "+name+" hands out one static instance")
	}
	cm.report(t, decl, name, nil)
}

// ---- Java ----

func javaTop(t *tsFile) {
	for _, n := range t.children(t.root, true) {
		switch t.typ(n) {
		case "package_declaration":
			for _, c := range t.children(n, true) {
				if typ := t.typ(c); typ == "scoped_identifier" || typ == "identifier" {
					t.out.Package = t.text(c)
				}
			}
		case "import_declaration":
			im := importRef{Line: t.line(n), Wildcard: t.has(n, "asterisk")}
			for _, c := range t.children(n, true) {
				if typ := t.typ(c); typ == "scoped_identifier" || typ == "identifier" {
					im.Spec = t.text(c)
				}
			}
			if t.has(n, "static") && !im.Wildcard {
				// import static a.b.C.member: the dependency is on class a.b.C.
				if i := strings.LastIndexByte(im.Spec, '.'); i > 0 {
					im.Spec = im.Spec[:i]
				}
			}
			t.out.Imports = append(t.out.Imports, im)
		case "class_declaration", "interface_declaration", "enum_declaration", "record_declaration", "annotation_type_declaration":
			javaType(t, n)
		}
	}
}

func javaModifiers(t *tsFile, n *sitter.Node) string {
	for _, c := range t.children(n, false) {
		if t.typ(c) == "modifiers" {
			return " " + t.text(c) + " "
		}
	}
	return ""
}

func javaType(t *tsFile, n *sitter.Node) {
	kind := strings.TrimSuffix(t.typ(n), "_declaration")
	if kind == "annotation_type" || kind == "record" {
		kind = "class"
	}
	name := t.field(n, "name")
	mods := javaModifiers(t, n)
	t.out.Symbols = append(t.out.Symbols, t.symbol(n, name, kind, "", strings.Contains(mods, " public ")))
	for _, f := range []string{"interfaces", "superclass"} {
		if c := n.ChildByFieldName(f); c != nil {
			for _, id := range collect(t, c, "type_identifier") {
				t.addHint(n, "implements", name, id)
			}
		}
	}
	if kind == "interface" {
		// extends_interfaces is not a field in this grammar.
		if ext := t.find(n, "extends_interfaces"); ext != nil {
			for _, id := range collect(t, ext, "type_identifier") {
				t.addHint(n, "implements", name, id)
			}
		}
	}
	body := n.ChildByFieldName("body")
	if body == nil {
		return
	}
	// A singleton keeps one static instance of its own class (several are constants, as
	// LocalDate.MIN and MAX) and hands it out: its constructors are all private, or a static
	// method without parameters returns the class (one with parameters is a factory method).
	selfFields, privateCtor, openCtor, getter := 0, false, false, false
	var methods []string
	var cm classMethods
	fields := map[string]bool{}
	for _, m := range t.children(body, true) {
		mmods := javaModifiers(t, m)
		switch t.typ(m) {
		case "method_declaration":
			mname := t.field(m, "name")
			methods = append(methods, mname)
			if !strings.Contains(mmods, " static ") && m.ChildByFieldName("body") != nil {
				cm.method(t, mname, m.ChildByFieldName("parameters"), m.ChildByFieldName("body"))
			}
			s := t.symbol(m, mname, "method", name, strings.Contains(mmods, " public ") || kind == "interface")
			s.Returns = t.field(m, "type")
			t.out.Symbols = append(t.out.Symbols, s)
			if strings.Contains(mmods, " static ") && s.Returns == name && t.field(m, "parameters") == "()" {
				getter = true
			}
			if mname == "main" && strings.Contains(mmods, " static ") && strings.Contains(mmods, " public ") {
				t.out.Entry = append(t.out.Entry, entryPoint{Line: t.line(m), Kind: "main", Detail: "public static void main in " + name})
			}
		case "constructor_declaration":
			t.out.Symbols = append(t.out.Symbols, t.symbol(m, name, "method", name, strings.Contains(mmods, " public ")))
			if strings.Contains(mmods, " private ") {
				privateCtor = true
			} else {
				openCtor = true
			}
		case "field_declaration":
			for _, d := range t.children(m, true) {
				if t.typ(d) == "variable_declarator" {
					fields[t.field(d, "name")] = true
					if strings.Contains(mmods, " static ") && t.field(m, "type") == name {
						selfFields++
					}
				}
			}
		case "class_declaration", "interface_declaration", "enum_declaration", "record_declaration":
			// Nested types (Locale.Builder, Map.Entry) are types of their own.
			javaType(t, m)
		}
	}
	if kind == "interface" {
		t.addHint(n, "interface", name, strings.Join(methods, ","))
	}
	if kind == "enum" && len(collectNodes(t, body, "enum_constant")) == 1 {
		t.addHint(n, "singleton", name, "enum "+name+" has a single constant")
	}
	if selfFields == 1 && ((privateCtor && !openCtor) || getter) {
		t.addHint(n, "singleton", name, "class "+name+" keeps one static instance of itself behind private constructors or a static accessor")
	}
	if kind == "class" {
		cm.report(t, n, name, fields)
	}
}

// collect returns the text of every descendant of n of type typ, outside type arguments: a
// class implementing Attribute<ExceptionsAttribute> implements Attribute only.
func collect(t *tsFile, n *sitter.Node, typ string) []string {
	if t.typ(n) == typ {
		return []string{t.text(n)}
	}
	var out []string
	for _, c := range t.children(n, false) {
		if t.typ(c) == "type_arguments" {
			continue
		}
		out = append(out, collect(t, c, typ)...)
	}
	return out
}

// ---- Rust ----

func rustTop(t *tsFile) {
	for _, n := range t.children(t.root, true) {
		exported := t.has(n, "visibility_modifier")
		switch t.typ(n) {
		case "mod_item":
			name := t.field(n, "name")
			if n.ChildByFieldName("body") == nil {
				t.out.Imports = append(t.out.Imports, importRef{Spec: "self::" + name, Line: t.line(n), Module: true})
			}
			t.out.Symbols = append(t.out.Symbols, t.symbol(n, name, "module", "", exported))
		case "function_item":
			name := t.field(n, "name")
			s := t.symbol(n, name, "function", "", exported)
			s.Returns = t.field(n, "return_type")
			t.out.Symbols = append(t.out.Symbols, s)
			if name == "main" {
				t.out.Entry = append(t.out.Entry, entryPoint{Line: t.line(n), Kind: "main", Detail: "fn main"})
			}
		case "struct_item", "enum_item", "trait_item", "type_item", "union_item":
			kind := strings.TrimSuffix(t.typ(n), "_item")
			if kind == "union" {
				kind = "struct"
			}
			name := t.field(n, "name")
			t.out.Symbols = append(t.out.Symbols, t.symbol(n, name, kind, "", exported))
			if kind == "trait" {
				var methods []string
				for _, f := range collectNodes(t, n.ChildByFieldName("body"), "function_signature_item", "function_item") {
					methods = append(methods, t.field(f, "name"))
				}
				t.addHint(n, "interface", name, strings.Join(methods, ","))
			}
		case "const_item", "static_item":
			name := t.field(n, "name")
			kind := "const"
			if t.typ(n) == "static_item" {
				kind = "var"
				if ty := t.field(n, "type"); strings.Contains(ty, "OnceLock") || strings.Contains(ty, "OnceCell") || strings.Contains(ty, "Lazy") {
					t.addHint(n, "singleton", name, "static "+name+" is initialised once ("+ty+")")
				}
			}
			t.out.Symbols = append(t.out.Symbols, t.symbol(n, name, kind, "", exported))
		case "impl_item":
			typ := rustTypeName(t.field(n, "type"))
			if trait := t.field(n, "trait"); trait != "" {
				t.addHint(n, "implements", typ, rustTypeName(trait))
			}
			for _, f := range collectNodes(t, n.ChildByFieldName("body"), "function_item") {
				s := t.symbol(f, t.field(f, "name"), "method", typ, t.has(f, "visibility_modifier") || t.field(n, "trait") != "")
				s.Returns = rustTypeName(t.field(f, "return_type"))
				if s.Returns == "Self" {
					s.Returns = typ
				}
				t.out.Symbols = append(t.out.Symbols, s)
			}
		case "macro_invocation":
			if t.field(n, "macro") == "lazy_static" {
				t.addHint(n, "singleton", "lazy_static", "lazy_static! creates values initialised once")
			}
		}
	}
}

// rustNode reads use declarations wherever they are (in functions, in inline modules such as
// "mod tests"), one import for each path of a use tree: "use a::{b, c::d}" imports a::b and
// a::c::d. Inside inline modules, self:: and super:: are rewritten to be relative to the file.
func rustNode(t *tsFile, n *sitter.Node, typ string) {
	switch typ {
	case "extern_crate_declaration":
		t.out.Imports = append(t.out.Imports, importRef{Spec: t.field(n, "name"), Line: t.line(n)})
	case "use_declaration":
		var inline []string // the inline modules around n, outermost first
		for p := n.Parent(); p != nil; p = p.Parent() {
			if t.typ(p) == "mod_item" {
				inline = append([]string{t.field(p, "name")}, inline...)
			}
		}
		for _, spec := range rustUsePaths(t, n.ChildByFieldName("argument"), "") {
			t.out.Imports = append(t.out.Imports, importRef{Spec: rustInlinePath(spec, inline), Line: t.line(n)})
		}
	}
}

// rustUsePaths expands a use tree below prefix into the paths it imports.
func rustUsePaths(t *tsFile, n *sitter.Node, prefix string) []string {
	join := func(a, b string) string {
		b = strings.TrimPrefix(b, "::")
		switch {
		case a == "":
			return b
		case b == "":
			return a
		}
		return a + "::" + b
	}
	switch t.typ(n) {
	case "":
		return nil
	case "scoped_use_list":
		return rustUsePaths(t, n.ChildByFieldName("list"), join(prefix, t.field(n, "path")))
	case "use_list":
		var out []string
		for _, c := range t.children(n, true) {
			out = append(out, rustUsePaths(t, c, prefix)...)
		}
		return out
	case "use_as_clause":
		return rustUsePaths(t, n.ChildByFieldName("path"), prefix)
	case "use_wildcard":
		return []string{join(prefix, strings.TrimSuffix(strings.TrimSuffix(t.text(n), "*"), "::"))}
	case "self":
		return []string{prefix}
	}
	return []string{join(prefix, t.text(n))}
}

// rustInlinePath makes a path written inside the inline modules inline relative to the file.
func rustInlinePath(spec string, inline []string) string {
	if len(inline) == 0 {
		return spec
	}
	segs := strings.Split(spec, "::")
	switch segs[0] {
	case "self":
		segs = segs[1:]
	case "super":
		for len(segs) > 0 && segs[0] == "super" && len(inline) > 0 {
			segs, inline = segs[1:], inline[:len(inline)-1]
		}
		if len(segs) > 0 && segs[0] == "super" {
			return strings.Join(segs, "::")
		}
	default:
		return spec
	}
	return strings.Join(append([]string{"self"}, append(inline, segs...)...), "::")
}

// collectNodes returns n's direct named children of the given types.
func collectNodes(t *tsFile, n *sitter.Node, types ...string) []*sitter.Node {
	if n == nil {
		return nil
	}
	var out []*sitter.Node
	for _, c := range t.children(n, true) {
		for _, typ := range types {
			if t.typ(c) == typ {
				out = append(out, c)
			}
		}
	}
	return out
}

// rustTypeName strips generics and references: &mut Foo<T> -> Foo.
func rustTypeName(s string) string {
	s = strings.TrimLeft(s, "&")
	s = strings.TrimPrefix(s, "mut ")
	if i := strings.IndexByte(s, '<'); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, "::"); i >= 0 {
		s = s[i+2:]
	}
	return strings.TrimSpace(s)
}
