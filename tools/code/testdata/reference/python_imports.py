# Reference import edges for TestPythonImportsAgainstImportlib: every import statement of the
# .py files below a Python standard library folder (argument 1), resolved by Python's own
# import system (importlib.util.find_spec) to a .py file of the same folder, printed as
# "file<TAB>line<TAB>target". Run it with the interpreter that owns the folder, with
# -S -X frozen_modules=off so that site-packages stay out and os is a file.
import ast, importlib.util, os, sys
lib = sys.argv[1]
def modname(rel):
    m = rel[:-3].replace("/", ".")
    return m[:-9] if m.endswith(".__init__") else m
def spec_file(name):
    try:
        s = importlib.util.find_spec(name)
    except Exception:
        return None
    if s is None or not s.origin or not s.origin.startswith(lib + "/"):
        return None
    return os.path.relpath(s.origin, lib)
for dp, dns, fns in os.walk(lib):
    dns[:] = sorted(d for d in dns if d not in ("site-packages", "dist-packages", "__pycache__"))
    for fn in sorted(fns):
        if not fn.endswith(".py"):
            continue
        p = os.path.join(dp, fn); rel = os.path.relpath(p, lib)
        try:
            tree = ast.parse(open(p, "rb").read())
        except SyntaxError:
            continue
        pkg = modname(rel) if fn == "__init__.py" else modname(rel).rpartition(".")[0]
        for n in ast.walk(tree):
            targets = []
            if isinstance(n, ast.Import):
                for a in n.names:
                    targets.append(spec_file(a.name))
            elif isinstance(n, ast.ImportFrom):
                base = n.module or ""
                if n.level:
                    try:
                        base = importlib.util.resolve_name("." * n.level + (n.module or ""), pkg)
                    except Exception:
                        continue
                found = None
                basefile = spec_file(base) if base else None
                # "from pkg import mod" imports the submodule; "from os import path" imports os.
                if base and (basefile is None or basefile.endswith("__init__.py")):
                    for a in n.names:
                        if a.name != "*":
                            found = spec_file(base + "." + a.name)
                            if found:
                                break
                targets.append(found or basefile)
            for t in targets:
                # Source files only: C extensions (lib-dynload) are no files an analysis reads.
                if t and t != rel and t.endswith(".py") and not t.startswith("site-packages/"):
                    print(f"{rel}\t{n.lineno}\t{t}")
