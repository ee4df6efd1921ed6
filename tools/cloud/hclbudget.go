package cloud

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/platform-dev/platform/docparse"
)

// expansionBudget bounds, per module, the bytes that evaluating its expressions may build
// beyond what its files wrote. Terraform's locals are HCL's anchors: a local that doubles
// the one before it ("${local.l1}${local.l1}") doubles with every line, and 850 bytes of
// them reach gigabytes. Literals cost nothing against it; a reference to a value costs the
// value's size wherever it is copied out (tags = local.common_tags in 500 resources costs
// 500 times the tags). An expression that would pass the budget is left unresolved, as its
// source text, like one that refers to another resource.
const expansionBudget = 4 << 20

// evalBudget is what is left of a module's expansionBudget, with the sizes of the values
// its expressions may refer to.
type evalBudget struct {
	left    int
	sizes   map[string]int // "var.x", "local.x", and "var", "local" for the whole objects
	refused map[string]int // file -> line of the first expression left unevaluated
}

func newEvalBudget() *evalBudget {
	return &evalBudget{left: expansionBudget, sizes: map[string]int{}, refused: map[string]int{}}
}

// errors names the files whose expressions the budget left unevaluated: they are where a
// module expands, and go to no other evaluator (Trivy's would expand them whole).
func (b *evalBudget) errors() []FileError {
	var out []FileError
	for file, line := range b.refused {
		out = append(out, FileError{File: file, Line: line, Bound: docparse.BoundExpandedBytes,
			Message: fmt.Sprintf("Terraform expressions expand past %d bytes (line %d): the expressions past it are left as written", expansionBudget, line)})
	}
	return out
}

// record notes the size of a variable's or local's value (root "var" or "local").
func (b *evalBudget) record(root, name string, v cty.Value) {
	n := valueSize(v, expansionBudget+1)
	b.sizes[root+"."+name] = n
	b.sizes[root] = addSat(b.sizes[root], n)
}

// allow reports whether e may be evaluated within what is left, and charges it.
func (b *evalBudget) allow(e hclsyntax.Expression) bool {
	built, result := b.measure(e, nil)
	written := e.Range().End.Byte - e.Range().Start.Byte
	cost := addSat(built, result) - written
	if cost > b.left {
		r := e.Range()
		if _, ok := b.refused[r.Filename]; !ok {
			b.refused[r.Filename] = r.Start.Line
		}
		return false
	}
	b.left -= max(cost, 0)
	return true
}

// measure bounds what evaluating e builds and the size of its value, from its syntax and the
// sizes of the values it refers to; scope holds the sizes of a for expression's variables.
// Functions are those of functions(); math.MaxInt stands for no bound.
func (b *evalBudget) measure(e hclsyntax.Expression, scope map[string]int) (built, result int) {
	sum := func(es ...hclsyntax.Expression) (built, result int) {
		for _, x := range es {
			if x == nil {
				continue
			}
			bx, rx := b.measure(x, scope)
			built, result = addSat(built, bx), addSat(result, rx)
		}
		return built, result
	}
	switch x := e.(type) {
	case *hclsyntax.LiteralValueExpr:
		return 0, valueSize(x.Val, expansionBudget+1)
	case *hclsyntax.TemplateExpr:
		built, result = sum(x.Parts...)
		return addSat(built, result), result
	case *hclsyntax.TemplateWrapExpr:
		return b.measure(x.Wrapped, scope)
	case *hclsyntax.TemplateJoinExpr:
		built, result = b.measure(x.Tuple, scope)
		return addSat(built, result), result
	case *hclsyntax.ScopeTraversalExpr:
		root := x.Traversal.RootName()
		if n, ok := scope[root]; ok {
			return 0, n
		}
		if len(x.Traversal) > 1 {
			if a, ok := x.Traversal[1].(hcl.TraverseAttr); ok {
				return 0, b.sizes[root+"."+a.Name]
			}
		}
		return 0, b.sizes[root]
	case *hclsyntax.RelativeTraversalExpr:
		return b.measure(x.Source, scope)
	case *hclsyntax.IndexExpr:
		built, _ = sum(x.Key)
		bc, rc := b.measure(x.Collection, scope)
		return addSat(built, bc), rc
	case *hclsyntax.SplatExpr:
		built, result = b.measure(x.Source, scope)
		return addSat(built, result), result
	case *hclsyntax.AnonSymbolExpr:
		return 0, 0
	case *hclsyntax.TupleConsExpr:
		built, result = sum(x.Exprs...)
		result = addSat(result, len(x.Exprs))
		return addSat(built, result), result
	case *hclsyntax.ObjectConsExpr:
		for _, item := range x.Items {
			bi, ri := sum(item.KeyExpr, item.ValueExpr)
			built, result = addSat(built, bi), addSat(result, addSat(ri, 1))
		}
		return addSat(built, result), result
	case *hclsyntax.ObjectConsKeyExpr:
		return b.measure(x.Wrapped, scope)
	case *hclsyntax.ParenthesesExpr:
		return b.measure(x.Expression, scope)
	case *hclsyntax.ConditionalExpr:
		built, _ = sum(x.Condition)
		bt, rt := b.measure(x.TrueResult, scope)
		bf, rf := b.measure(x.FalseResult, scope)
		return addSat(built, addSat(bt, bf)), max(rt, rf)
	case *hclsyntax.BinaryOpExpr:
		built, _ = sum(x.LHS, x.RHS)
		return built, 16
	case *hclsyntax.UnaryOpExpr:
		built, _ = sum(x.Val)
		return built, 16
	case *hclsyntax.ForExpr:
		bc, n := b.measure(x.CollExpr, scope) // at most one element per unit of size
		inner := map[string]int{}
		for k, v := range scope {
			inner[k] = v
		}
		for _, name := range []string{x.KeyVar, x.ValVar} {
			if name != "" {
				inner[name] = n
			}
		}
		each, one := 0, 0
		for _, ex := range []hclsyntax.Expression{x.KeyExpr, x.ValExpr, x.CondExpr} {
			if ex != nil {
				bx, rx := b.measure(ex, inner)
				each, one = addSat(each, bx), addSat(one, rx)
			}
		}
		result = mulSat(n, addSat(one, 2))
		return addSat(bc, addSat(mulSat(n, each), result)), result
	case *hclsyntax.FunctionCallExpr:
		built, result = sum(x.Args...)
		switch x.Name {
		case "jsonencode": // escapes: \u0000 for one byte
			result = addSat(mulSat(result, 8), 16)
		case "join": // the separator between every two elements
			if len(x.Args) > 0 {
				_, sep := b.measure(x.Args[0], scope)
				result = addSat(result, mulSat(sep, result))
			}
		case "format":
			result = formatSize(x, result)
		default:
			result = addSat(result, 16)
		}
		return addSat(built, result), result
	}
	return math.MaxInt, math.MaxInt
}

// widthOrPrecision finds the numbers of a format string's verbs (%-10s, %.5f, %[2]*d ...).
var widthOrPrecision = regexp.MustCompile(`\d+`)

// formatSize bounds format(f, args...): each verb may print any argument (%[1]s repeats
// one), padded to its width.
func formatSize(call *hclsyntax.FunctionCallExpr, args int) int {
	if len(call.Args) == 0 {
		return 16
	}
	f, diags := call.Args[0].Value(nil)
	if diags.HasErrors() || !f.IsWhollyKnown() || f.IsNull() || f.Type() != cty.String {
		return math.MaxInt
	}
	s := f.AsString()
	width := 0
	for _, m := range widthOrPrecision.FindAllString(s, -1) {
		n, err := strconv.Atoi(m)
		if err != nil {
			return math.MaxInt
		}
		width = max(width, n)
	}
	verbs := 0
	for i := range len(s) {
		if s[i] == '%' {
			verbs++
		}
	}
	return addSat(len(s), mulSat(verbs, addSat(width, args)))
}

// valueSize measures v, up to limit (past it the answer is limit): the bytes of its strings
// and keys, 16 for another primitive and 1 more for each element.
func valueSize(v cty.Value, limit int) int {
	if !v.IsKnown() || v.IsNull() {
		return 16
	}
	switch t := v.Type(); {
	case t == cty.String:
		return min(len(v.AsString()), limit)
	case t.IsPrimitiveType():
		return 16
	case v.CanIterateElements():
		n := 1
		for it := v.ElementIterator(); it.Next() && n < limit; {
			k, e := it.Element()
			if t.IsMapType() || t.IsObjectType() {
				n = addSat(n, valueSize(k, limit))
			}
			n = addSat(n, addSat(1, valueSize(e, limit-n)))
		}
		return min(n, limit)
	}
	return 16
}

func addSat(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

func mulSat(a, b int) int {
	if a != 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}
