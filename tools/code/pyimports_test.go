package code_test

import (
	"slices"
	"testing"

	"github.com/platform-dev/platform/internal/testenv"
	"github.com/platform-dev/platform/tools/code"
)

// TestPythonFromImportsReachSubmodules: "from pkg import name" depends on pkg/name.py (or
// pkg/name/__init__.py) when name is a submodule, and on pkg otherwise, in every form Python
// allows, relative or absolute; every submodule a statement names has its importers.
func TestPythonFromImportsReachSubmodules(t *testing.T) {
	root := t.TempDir()
	testenv.WriteTree(t, root, map[string]string{
		"app/__init__.py":              "from .util import helper\n",
		"app/util.py":                  "def helper():\n    return 1\n",
		"app/models/__init__.py":       "LIMIT = 10\n",
		"app/models/user.py":           "class User:\n    pass\n",
		"app/models/order.py":          "class Order:\n    pass\n",
		"app/models/audit/__init__.py": "",
		"app/views.py":                 "from app.models import user, order\nfrom app.models import LIMIT\nfrom . import util\n",
		"app/api/__init__.py":          "",
		"app/api/handlers.py":          "from ..models import (\n    LIMIT,\n    order,\n)\nfrom .. import views\nfrom ..models import audit\n",
		"main.py":                      "from app import views, api\nimport app.models.user\nfrom app.util import helper\n",
	})
	a := newAnalyzer(t, root)
	tests := []struct {
		component string
		importers []string
	}{
		{"app/models/user.py", []string{"app/views.py", "main.py"}},
		{"app/models/order.py", []string{"app/api/handlers.py", "app/views.py"}},
		{"app/models/__init__.py", []string{"app/api/handlers.py", "app/views.py"}},
		{"app/models/audit/__init__.py", []string{"app/api/handlers.py"}},
		{"app/views.py", []string{"app/api/handlers.py", "main.py"}},
		{"app/api/__init__.py", []string{"main.py"}},
		{"app/util.py", []string{"app/__init__.py", "app/views.py", "main.py"}},
	}
	for _, tt := range tests {
		t.Run(tt.component, func(t *testing.T) {
			var rep code.DependencyReport
			mustCall(t, a, "find_dependencies", map[string]any{"component": tt.component, "type": "exports"}, &rep)
			var got []string
			for _, im := range rep.Importers {
				got = append(got, im.Unit)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.importers) {
				t.Errorf("importers %v, want %v", got, tt.importers)
			}
		})
	}
	// The importing side lists each submodule a statement names.
	var rep code.DependencyReport
	mustCall(t, a, "find_dependencies", map[string]any{"component": "app/views.py", "type": "imports"}, &rep)
	var targets []string
	for _, im := range rep.Imports {
		if im.Kind == "workspace" {
			targets = append(targets, im.Import+" -> "+im.Target)
		}
	}
	slices.Sort(targets)
	want := []string{" -> app/util.py", "app.models -> app/models/__init__.py", "app.models -> app/models/order.py", "app.models -> app/models/user.py"}
	if !slices.Equal(targets, want) {
		t.Errorf("imports of app/views.py: %q, want %q", targets, want)
	}
}
