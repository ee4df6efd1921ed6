# Reference import edges for TestPythonImportsAgainstImportlib: every import statement of the
# .py files below a Python standard library folder (argument 1), resolved by Python's own
# path finder (importlib.machinery.PathFinder, what importlib.util.find_spec asks for a
# module that is not built in) with that folder as sys.path, printed as
# "file<TAB>line<TAB>target", one line per module file a statement depends on:
#
#   import a.b.c             a/b/c.py (or the longest prefix that is a file: os.path is os.py)
#   from pkg import x, f     pkg/x.py (or pkg/x/__init__.py) for each submodule x,
#                            and pkg/__init__.py (or pkg.py) for any other name f
#   from . import x, ..a     the same, relative to the importing file's package
#
# No module of the folder is imported or run: packages are found by their search locations,
# as the import system does before executing them. The folder need not be the running
# interpreter's own; site-packages and dist-packages are left out.
import ast, importlib.machinery, importlib.util, os, sys

lib = os.path.abspath(sys.argv[1])
found = {}


def path_spec(name, path):
    try:
        return importlib.machinery.PathFinder.find_spec(name, path)
    except KeyError:
        # Python 3.13's finder looks a namespace package's parent up in sys.modules, where
        # nothing analysed is: a folder without __init__.py is that namespace package.
        last = name.rpartition(".")[2]
        dirs = [os.path.join(p, last) for p in path if os.path.isdir(os.path.join(p, last))]
        if not dirs:
            return None
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = dirs
        return spec


def find(name):
    """The spec of module name found below lib, or None."""
    if name not in found:
        parent, _, _ = name.rpartition(".")
        spec = None
        if not parent:
            if name not in sys.builtin_module_names:
                spec = path_spec(name, [lib])
        else:
            p = find(parent)
            if p is not None and p.submodule_search_locations:
                spec = path_spec(name, list(p.submodule_search_locations))
        found[name] = spec
    return found[name]


def source(spec):
    """The file of spec, relative to lib, if it is Python source there."""
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    if not spec.origin.startswith(lib + os.sep):
        return None
    return os.path.relpath(spec.origin, lib)


def longest(name):
    while name:
        if find(name) is not None:
            return find(name)
        name = name.rpartition(".")[0]
    return None


def modname(rel):
    m = rel[:-3].replace(os.sep, ".")
    return m[:-9] if m.endswith(".__init__") else m


for dp, dns, fns in os.walk(lib):
    dns[:] = sorted(d for d in dns if d not in ("site-packages", "dist-packages", "__pycache__"))
    for fn in sorted(fns):
        if not fn.endswith(".py"):
            continue
        p = os.path.join(dp, fn)
        rel = os.path.relpath(p, lib)
        try:
            tree = ast.parse(open(p, "rb").read())
        except (SyntaxError, ValueError):
            continue
        pkg = modname(rel) if fn == "__init__.py" else modname(rel).rpartition(".")[0]
        for n in ast.walk(tree):
            specs = []
            if isinstance(n, ast.Import):
                specs = [longest(a.name) for a in n.names]
            elif isinstance(n, ast.ImportFrom):
                base = n.module or ""
                if n.level:
                    try:
                        base = importlib.util.resolve_name("." * n.level + base, pkg)
                    except (ImportError, ValueError):
                        continue  # beyond the top-level package: fails in Python too
                mod = find(base) if base else None
                attr = False
                for a in n.names:
                    sub = find(base + "." + a.name) if a.name != "*" and mod is not None else None
                    if sub is not None:
                        specs.append(sub)
                    else:
                        attr = True
                if attr:
                    specs.append(mod if mod is not None else longest(base))
            for t in sorted({source(s) for s in specs} - {None, rel}):
                print(f"{rel}\t{n.lineno}\t{t}")
