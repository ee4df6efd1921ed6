// Reference import edges for TestJSImportsAgainstResolvers: every import, export-from,
// require() and import() of the JavaScript and TypeScript files (declaration files aside)
// below a folder (argument 2), found by TypeScript's own parser and resolved the way each
// language does: TypeScript files by TypeScript's resolver (moduleResolution "bundler", what
// bundlers and tsc --moduleResolution bundler do), JavaScript files by Node's own resolvers
// (import.meta.resolve for ES modules, require.resolve for CommonJS). Argument 1 is the
// folder of the typescript package. Prints "file<TAB>line<TAB>target" for targets inside the
// folder and outside any node_modules below it (third-party code, which the analysis treats as
// external), and that are code (not JSON). Run with node --experimental-import-meta-resolve (a parent URL for
// import.meta.resolve).
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
const ts = createRequire(import.meta.url)(process.argv[2]);
const root = fs.realpathSync(process.argv[3]);

const tsExt = /\.(ts|tsx|mts|cts)$/;
const jsExt = /\.(js|jsx|mjs|cjs)$/;
const options = {
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  module: ts.ModuleKind.ESNext,
  allowJs: true,
  jsx: ts.JsxEmit.Preserve,
  resolveJsonModule: true,
  // What runs, not its declaration file: the option TypeScript's editor services use for
  // "go to source definition"; it also drops the "types" condition of package exports.
  noDtsResolution: true,
};

// nodeScript reports an executable without extension that node runs (#!/usr/bin/env node).
function nodeScript(p) {
  if (path.extname(p) !== "") return false;
  const head = fs.readFileSync(p, "utf8").slice(0, 64);
  return /^#!.*\bnode\b/.test(head);
}

function walk(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "node_modules" && !e.name.startsWith(".")) walk(p, out);
    } else if (e.isFile() && ((jsExt.test(e.name) || tsExt.test(e.name)) && !/\.d\.[mc]?ts$/.test(e.name) || nodeScript(p))) {
      out.push(p);
    }
  }
  return out;
}

// esm says whether Node loads a JavaScript file as an ES module.
function esm(file) {
  if (file.endsWith(".mjs")) return true;
  if (file.endsWith(".cjs")) return false;
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const pj = path.join(dir, "package.json");
    if (fs.existsSync(pj)) return JSON.parse(fs.readFileSync(pj, "utf8")).type === "module";
    if (dir === path.dirname(dir)) return false;
  }
}

// implementation is the file a declaration file types (x.d.ts types x.js), which is what
// runs; TypeScript's resolver answers with the declaration when both exist.
function implementation(target) {
  const m = /\.d\.([mc]?)ts$/.exec(target);
  if (!m) return target;
  const js = target.slice(0, -m[0].length) + "." + m[1] + "js";
  return fs.existsSync(js) ? js : undefined;
}

function inside(target) {
  const rel = path.relative(root, target);
  return !rel.startsWith("..") && !path.isAbsolute(rel) && !rel.split(path.sep).includes("node_modules");
}

// imports lists the module specifiers of a file with the line their statement or call starts
// on (where the analysis places them): import and export-from declarations, import x =
// require(), and require() and import() calls anywhere, by TypeScript's own parser.
function imports(file, text) {
  const kind = /\.tsx$|\.jsx$/.test(file) ? ts.ScriptKind.TSX : tsExt.test(file) ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const out = [];
  const add = (n, spec, require) => {
    if (spec && ts.isStringLiteralLike(spec)) out.push({ spec: spec.text, require, line: sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1 });
  };
  const visit = (n) => {
    if (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) add(n, n.moduleSpecifier, false);
    else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) add(n, n.moduleReference.expression, true);
    else if (ts.isCallExpression(n) && n.arguments.length === 1 && n.expression.kind === ts.SyntaxKind.ImportKeyword) add(n, n.arguments[0], false);
    else if (ts.isCallExpression(n) && n.arguments.length === 1 && ts.isIdentifier(n.expression) && n.expression.text === "require") add(n, n.arguments[0], true);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

for (const file of walk(root, [])) {
  const text = fs.readFileSync(file, "utf8");
  const req = createRequire(file);
  const isESM = !tsExt.test(file) && esm(file);
  for (const imp of imports(file, text)) {
    let target;
    if (tsExt.test(file)) {
      // An import is resolved under the "import" condition, a require under "require".
      const mode = imp.require ? ts.ModuleKind.CommonJS : ts.ModuleKind.ESNext;
      const r = ts.resolveModuleName(imp.spec, file, options, ts.sys, undefined, undefined, mode);
      target = r.resolvedModule && r.resolvedModule.resolvedFileName;
    } else {
      try {
        target = isESM ? fileURLToPath(import.meta.resolve(imp.spec, pathToFileURL(file))) : req.resolve(imp.spec);
      } catch {
        target = undefined;
      }
    }
    // A Node builtin, or not found (import.meta.resolve names files it does not check).
    if (!target || !path.isAbsolute(target) || !fs.existsSync(target)) continue;
    target = implementation(fs.realpathSync(target));
    // Code only: JSON, WebAssembly and native addons are data to the analysis.
    if (!target || target === file || !inside(target) || !(jsExt.test(target) || tsExt.test(target) || nodeScript(target))) continue;
    console.log(`${path.relative(root, file)}\t${imp.line}\t${path.relative(root, target)}`);
  }
}
