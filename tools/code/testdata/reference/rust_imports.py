# Reference module edges for TestRustImportsAgainstRustc: rustc's own name resolution of a
# crate (argument 2, a folder with Cargo.toml and a library root), read from the compiler's
# HIR dump (-Zunpretty=hir-tree, nightly rustc given as argument 1), built with --test and
# every feature so that test modules and feature-gated code count. Prints "file<TAB>target"
# for every use item (in a module or a function body) whose path resolves to an item of the
# crate, the target being the file that defines the item, and for every out-of-line module
# (the parent module's file to the module's file, read from the module's inner span). rustc
# places a grouped use's items at their own paths, so edges are compared by file, not line.
# Before the edges it prints the files rustc compiled, one a line: modules that a cfg leaves
# out of this configuration are compared in none.
import re, subprocess, sys, tomllib, os

rustc, crate = sys.argv[1], sys.argv[2]
with open(os.path.join(crate, "Cargo.toml"), "rb") as f:
    cargo = tomllib.load(f)
pkg = cargo["package"]
lib = cargo.get("lib", {})
root = lib.get("path", "src/lib.rs")
name = lib.get("name", pkg["name"].replace("-", "_"))
args = [rustc, "--edition", str(pkg.get("edition", "2015")), "--crate-name", name, "--crate-type", "lib",
        "--test", "-Zunpretty=hir-tree", root]
for feat in cargo.get("features", {}):
    args += ["--cfg", f'feature="{feat}"']
dump = subprocess.run(args, cwd=crate, capture_output=True, text=True, check=True).stdout

defid = re.compile(r"DefId\(0:(\d+) ~ [^\]]+\]((?:::[^)\s]+)*)\)")
span = re.compile(r"span: ([^:\s]+\.rs):(\d+):")
# An owner's own node sits at a fixed depth of the dump; deeper owner_ids are references
# (a module's or a trait's list of items).
owner = re.compile(r"^( {16})owner_id: DefId\(0:(\d+) ~ [^\]]+\]((?:::[^)\s]+)*)\),")
file_of, path_file, uses, mods = {}, {}, [], []
# One owner block per item: its owner_id and its own span sit at the same indentation.
cur = None
for line in dump.splitlines():
    m = owner.match(line)
    if m:
        cur = {"indent": m.group(1), "id": m.group(2), "path": m.group(3), "kind": None, "res": set(), "file": None}
        continue
    if cur is None:
        continue
    s = line.strip()
    if cur["kind"] is None and line.startswith(cur["indent"] + "kind: ") and not line.startswith(cur["indent"] + " "):
        cur["kind"] = s[len("kind: "):].split("(")[0]
    elif cur["kind"] == "Use" and not cur.get("segments"):
        # What the whole path resolves to (per namespace) comes before its segments, whose
        # resolutions (the modules along the path) are not what the use imports.
        if s.startswith("segments:"):
            cur["segments"] = True
        for d in defid.finditer(line):
            cur["res"].add(d.group(1))
    elif cur["kind"] == "Mod" and s.startswith("inner_span: "):
        sm = span.search(line)
        if sm:
            path_file[cur["path"]] = sm.group(1)
            file_of[cur["id"]] = sm.group(1)
        cur = None
        continue
    if line.startswith(cur["indent"] + "span: ") and not line.startswith(cur["indent"] + " "):
        sm = span.search(line)
        if sm:
            cur["file"] = sm.group(1)
            file_of[cur["id"]] = sm.group(1)
            if cur["kind"] == "Use":
                uses.append(cur)
        cur = None

path_file[""] = root
edges = set()
for u in uses:
    for t in u["res"]:
        if t in file_of and file_of[t] != u["file"] and t != u["id"]:
            edges.add((u["file"], file_of[t]))
for p, f in path_file.items():
    if p:
        parent = path_file.get(p.rsplit("::", 1)[0])
        if parent and parent != f:
            edges.add((parent, f))
# The files rustc compiled in this configuration, one a line, then the edges.
for f in sorted(set(path_file.values())):
    print(f)
for a, b in sorted(edges):
    print(f"{a}\t{b}")
