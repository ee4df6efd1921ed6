package cloud_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/platform-dev/platform/tools/cloud"
	"github.com/platform-dev/platform/tools/workspace"
)

// TestLocalsThatDoubleStayBounded: locals each doubling the one before (16 bytes, then 16 GB
// at the 30th) are evaluated until the module's expansion budget, and the rest is left as
// written; locals of ordinary size, named before or after they are declared, resolve.
// (A module that spent its budget resolves nothing large any more: the budget is the
// module's, so that many small expansions cannot add up either.)
func TestLocalsThatDoubleStayBounded(t *testing.T) {
	src := "locals {\n  l0 = \"xxxxxxxxxxxxxxxx\"\n"
	for i := 1; i <= 30; i++ {
		src += fmt.Sprintf("  l%d = \"${local.l%d}${local.l%d}\"\n", i, i-1, i-1)
	}
	src += `  name = "${local.prefix}-logs"
  prefix = "${var.env}-app"
  tags = {team = "web", env = var.env}
}
variable "env" { default = "prod" }
resource "aws_s3_bucket" "big" {
  bucket = local.l30
  tags = local.tags
}
resource "aws_s3_bucket" "logs" {
  bucket = local.name
  tags = merge(local.tags, {kind = "logs"})
}
`
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c := cloud.NewCollector()
	c.Add(workspace.File{Rel: "main.tf", Content: []byte(src)})
	inv := c.Inventory()
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("the module allocated %d MB", grew>>20)
	}
	got := map[string]map[string]any{}
	for _, r := range inv.Resources {
		got[r.Name] = r.Attrs
	}
	if b := got["big"]; b == nil || b["bucket"] != "${local.l30}" || fmt.Sprint(b["tags"]) != "map[env:prod team:web]" {
		t.Errorf("big: %v", b)
	}
	if l := got["logs"]; l == nil || l["bucket"] != "prod-app-logs" || fmt.Sprint(l["tags"]) != "map[env:prod kind:logs team:web]" {
		t.Errorf("logs: %v", l)
	}
	// The file is named, so that no other evaluator (Trivy's) gets it.
	if len(inv.Errors) != 1 || inv.Errors[0].File != "main.tf" || inv.Errors[0].Bound != "expanded size" {
		t.Errorf("errors %v", inv.Errors)
	}
}

// TestComprehensionsInDefaultsStayBounded: a variable's default that nests for expressions
// over literal lists multiplies their sizes; it is left unevaluated past the budget.
func TestComprehensionsInDefaultsStayBounded(t *testing.T) {
	list := "[" + strings.TrimSuffix(strings.Repeat("1,", 2000), ",") + "]"
	src := `variable "big" {
  default = [for a in ` + list + ` : [for b in ` + list + ` : "` + strings.Repeat("x", 1000) + `"]]
}
variable "env" { default = "prod" }
resource "aws_s3_bucket" "b" {
  bucket = "${var.env}-logs"
  tags = {size = length(var.big)}
}
`
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c := cloud.NewCollector()
	c.Add(workspace.File{Rel: "main.tf", Content: []byte(src)})
	inv := c.Inventory()
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("the module allocated %d MB", grew>>20)
	}
	if len(inv.Resources) != 1 || inv.Resources[0].Attrs["bucket"] != "prod-logs" {
		t.Errorf("resources %v", inv.Resources)
	}
	if len(inv.Errors) != 1 || inv.Errors[0].Line != 2 || inv.Errors[0].Bound != "expanded size" {
		t.Errorf("errors %v", inv.Errors)
	}
}
