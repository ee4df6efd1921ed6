package cloud

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/platform-dev/platform/docparse"
)

// tfFile is one parsed .tf or .tfvars file.
type tfFile struct {
	rel  string
	src  []byte
	body *hclsyntax.Body
}

// tfModule is the .tf files of one folder, which Terraform reads as one module.
type tfModule struct {
	dir    string
	files  []*tfFile
	tfvars []*tfFile
}

func (m *tfModule) add(rel string, src []byte) *FileError {
	if err := docparse.CheckHCL(src, docparse.DefaultLimits()); err != nil {
		return refused(rel, err)
	}
	f, diags := hclsyntax.ParseConfig(src, rel, hcl.InitialPos)
	var ferr *FileError
	if diags.HasErrors() {
		ferr = &FileError{File: rel, Message: diags.Error()}
		if d := diags[0]; d.Subject != nil {
			ferr.Line = d.Subject.Start.Line
		}
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok || body == nil {
		return ferr
	}
	tf := &tfFile{rel: rel, src: src, body: body}
	name := path.Base(rel)
	switch {
	case name == "terraform.tfvars" || strings.HasSuffix(name, ".auto.tfvars"):
		m.tfvars = append(m.tfvars, tf)
	case strings.HasSuffix(name, ".tfvars"):
		// Other .tfvars files are chosen per run with -var-file: which one applies is unknown.
	default:
		m.files = append(m.files, tf)
	}
	return ferr
}

// functions are the Terraform functions whose result is known without a provider; the others
// leave their expression unresolved.
func functions() map[string]function.Function {
	return map[string]function.Function{
		"jsonencode": stdlib.JSONEncodeFunc,
		"lower":      stdlib.LowerFunc,
		"upper":      stdlib.UpperFunc,
		"format":     stdlib.FormatFunc,
		"join":       stdlib.JoinFunc,
		"concat":     stdlib.ConcatFunc,
		"merge":      stdlib.MergeFunc,
		"lookup":     stdlib.LookupFunc,
		"coalesce":   stdlib.CoalesceFunc,
		"max":        stdlib.MaxFunc,
		"min":        stdlib.MinFunc,
	}
}

// evalContext resolves the module's literal variables (defaults, then terraform.tfvars and
// *.auto.tfvars in Terraform's precedence) and the locals that depend only on them, each
// local after those it refers to, within the module's expansion budget, which it returns
// for the attributes to share.
func (m *tfModule) evalContext() (*hcl.EvalContext, *evalBudget) {
	budget := newEvalBudget()
	vars := map[string]cty.Value{}
	for _, f := range m.files {
		for _, b := range f.body.Blocks {
			if b.Type != "variable" || len(b.Labels) != 1 {
				continue
			}
			if a, ok := b.Body.Attributes["default"]; ok && budget.allow(a.Expr) {
				if v, diags := a.Expr.Value(nil); !diags.HasErrors() && v.IsWhollyKnown() {
					vars[b.Labels[0]] = v
				}
			}
		}
	}
	sort.Slice(m.tfvars, func(i, j int) bool {
		// terraform.tfvars first, then *.auto.tfvars in lexical order, later ones winning.
		ti, tj := path.Base(m.tfvars[i].rel) == "terraform.tfvars", path.Base(m.tfvars[j].rel) == "terraform.tfvars"
		if ti != tj {
			return ti
		}
		return m.tfvars[i].rel < m.tfvars[j].rel
	})
	for _, f := range m.tfvars {
		for name, a := range f.body.Attributes {
			if !budget.allow(a.Expr) {
				continue
			}
			if v, diags := a.Expr.Value(nil); !diags.HasErrors() && v.IsWhollyKnown() {
				vars[name] = v
			}
		}
	}
	for name, v := range vars {
		budget.record("var", name, v)
	}
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(vars)}, Functions: functions()}
	locals := map[string]cty.Value{}
	pending := map[string]hclsyntax.Expression{}
	for _, f := range m.files {
		for _, b := range f.body.Blocks {
			if b.Type == "locals" {
				for name, a := range b.Body.Attributes {
					pending[name] = a.Expr
				}
			}
		}
	}
	// Locals may refer to each other in any order: each is evaluated after those it names,
	// with only those in its context (the object of every local would be rebuilt for each).
	var resolve func(name string, depth int)
	resolve = func(name string, depth int) {
		e, ok := pending[name]
		if !ok || depth > maxLocalChain {
			return
		}
		delete(pending, name) // also ends a cycle
		named := map[string]cty.Value{}
		for _, t := range e.Variables() {
			if a, ok := localName(t); ok {
				resolve(a, depth+1)
				if v, ok := locals[a]; ok {
					named[a] = v
				}
			}
		}
		if !budget.allow(e) {
			return
		}
		child := ctx.NewChild()
		child.Variables = map[string]cty.Value{"local": cty.ObjectVal(named)}
		if v, diags := e.Value(child); !diags.HasErrors() && v.IsWhollyKnown() {
			locals[name] = v
			budget.record("local", name, v)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(pending)) {
		resolve(name, 0)
	}
	ctx.Variables["local"] = cty.ObjectVal(locals)
	return ctx, budget
}

// maxLocalChain bounds a chain of locals each naming the next, which resolve follows by
// recursion; a local further down the chain is left unresolved.
const maxLocalChain = 1000

// localName is the local a traversal names (local.x...).
func localName(t hcl.Traversal) (string, bool) {
	if t.RootName() != "local" || len(t) < 2 {
		return "", false
	}
	a, ok := t[1].(hcl.TraverseAttr)
	return a.Name, ok
}

// resources returns the module's resources and data sources.
func (m *tfModule) resources() ([]*Resource, []FileError) {
	ctx, budget := m.evalContext()
	regions := map[string]string{} // provider name or name.alias -> region
	for _, f := range m.files {
		for _, b := range f.body.Blocks {
			if b.Type != "provider" || len(b.Labels) != 1 {
				continue
			}
			c := converter{ctx: ctx, budget: budget, src: f.src, lines: map[string]int{}}
			attrs := c.body(b.Body, nil)
			key := b.Labels[0]
			if alias := scalarString(attrs["alias"]); alias != "" {
				key += "." + alias
			}
			if r := scalarString(attrs["region"]); r != "" && !Unresolved(r) {
				regions[key] = r
			}
		}
	}
	var out []*Resource
	for _, f := range m.files {
		for _, b := range f.body.Blocks {
			if (b.Type != "resource" && b.Type != "data") || len(b.Labels) != 2 {
				continue
			}
			c := converter{ctx: ctx, budget: budget, src: f.src, lines: map[string]int{}}
			r := &Resource{
				Type:   b.Labels[0],
				Name:   b.Labels[1],
				Source: SourceTerraform,
				File:   f.rel,
				Line:   b.TypeRange.Start.Line,
				Count:  1,
				Attrs:  c.body(b.Body, nil),
				lines:  c.lines,
				Refs:   references(b.Body),
			}
			r.Address = r.Type + "." + r.Name
			if b.Type == "data" {
				r.Address = "data." + r.Address
				r.Data = true
			}
			r.Provider, r.Service = serviceOf(r.Type)
			if n, ok := r.Number("count"); ok {
				r.Count = int(n)
			}
			r.Region = terraformRegion(r, regions)
			out = append(out, r)
		}
	}
	inheritRegions(out)
	return out, budget.errors()
}

// terraformRegion is the resource's own region (GCP resources may name one, or a zone), else
// its provider configuration's.
func terraformRegion(r *Resource, regions map[string]string) string {
	if reg := r.String("region"); reg != "" && !Unresolved(reg) {
		return reg
	}
	if z := r.String("zone"); z != "" && !Unresolved(z) {
		if i := strings.LastIndexByte(z, '-'); i > 0 {
			return z[:i]
		}
	}
	// Azure resources name their region in location, as "East US" or "eastus"; the price list
	// and the CLI use the second form.
	if l := r.String("location"); r.Provider == "azurerm" && l != "" && !Unresolved(l) {
		return strings.ToLower(strings.ReplaceAll(l, " ", ""))
	}
	key := strings.SplitN(r.Type, "_", 2)[0]
	if p := r.String("provider"); Unresolved(p) {
		key = strings.TrimSuffix(strings.TrimPrefix(p, "${"), "}")
	}
	return regions[key]
}

// references lists the resources a block refers to, as "type.name".
func references(body *hclsyntax.Body) []string {
	seen := map[string]bool{}
	var out []string
	hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
		e, ok := n.(*hclsyntax.ScopeTraversalExpr)
		if !ok || len(e.Traversal) < 2 {
			return nil
		}
		root := e.Traversal.RootName()
		attr, ok := e.Traversal[1].(hcl.TraverseAttr)
		if !ok || !strings.Contains(root, "_") {
			return nil // var.x, local.x, each.key, count.index, module.x, data.x are not resources
		}
		ref := root + "." + attr.Name
		if !seen[ref] {
			seen[ref] = true
			out = append(out, ref)
		}
		return nil
	})
	return out
}

// converter turns HCL bodies into the normalised attribute tree, recording lines by path.
type converter struct {
	ctx    *hcl.EvalContext
	budget *evalBudget
	src    []byte
	lines  map[string]int
}

func (c *converter) body(b *hclsyntax.Body, prefix []any) map[string]any {
	out := map[string]any{}
	for name, a := range b.Attributes {
		p := append(prefix, name) // shares prefix's array, as toGo's paths do
		setLine(c.lines, p, a.SrcRange.Start.Line)
		out[name] = c.expr(a.Expr, p)
	}
	for _, blk := range b.Blocks {
		typ, body := blk.Type, blk.Body
		if typ == "dynamic" && len(blk.Labels) == 1 {
			// dynamic "ingress" { content { ... } } declares ingress blocks.
			typ = blk.Labels[0]
			for _, inner := range blk.Body.Blocks {
				if inner.Type == "content" {
					body = inner.Body
				}
			}
		}
		list, _ := out[typ].([]any)
		p := append(prefix, typ, len(list))
		setLine(c.lines, p, blk.TypeRange.Start.Line)
		if k, ok := pathKey(p[:len(p)-1]); ok {
			if _, seen := c.lines[k]; !seen {
				c.lines[k] = blk.TypeRange.Start.Line
			}
		}
		out[typ] = append(list, c.body(body, p))
	}
	return out
}

// expr evaluates e when it is known statically; object and tuple constructors are converted
// item by item so that one unknown item (a reference to another resource) does not hide the
// literal ones, and jsonencode(x) keeps x as a tree.
func (c *converter) expr(e hclsyntax.Expression, p []any) any {
	// Past the module's expansion budget an expression is left as written, or converted
	// item by item below.
	if c.budget.allow(e) {
		if v, diags := e.Value(c.ctx); !diags.HasErrors() && v.IsWhollyKnown() {
			if fc, ok := e.(*hclsyntax.FunctionCallExpr); ok && fc.Name == "jsonencode" && len(fc.Args) == 1 {
				return c.expr(fc.Args[0], p)
			}
			return ctyToGo(v)
		}
	}
	switch x := e.(type) {
	case *hclsyntax.ObjectConsExpr:
		m := map[string]any{}
		for _, item := range x.Items {
			kv, diags := item.KeyExpr.Value(c.ctx)
			if diags.HasErrors() || !kv.IsKnown() || kv.IsNull() || kv.Type() != cty.String {
				continue
			}
			key := kv.AsString()
			ip := append(p, key)
			setLine(c.lines, ip, item.KeyExpr.Range().Start.Line)
			m[key] = c.expr(item.ValueExpr, ip)
		}
		return m
	case *hclsyntax.TupleConsExpr:
		l := make([]any, len(x.Exprs))
		for i, ie := range x.Exprs {
			ip := append(p, i)
			setLine(c.lines, ip, ie.Range().Start.Line)
			l[i] = c.expr(ie, ip)
		}
		return l
	case *hclsyntax.FunctionCallExpr:
		if x.Name == "jsonencode" && len(x.Args) == 1 {
			return c.expr(x.Args[0], p)
		}
	}
	return "${" + strings.TrimSpace(string(e.Range().SliceBytes(c.src))) + "}"
}

// ctyToGo converts a known value to JSON-like Go values.
func ctyToGo(v cty.Value) any {
	if v.IsNull() {
		return nil
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return fmt.Sprintf("${%s}", v.GoString())
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil
	}
	return out
}
