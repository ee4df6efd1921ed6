package code

// JSON Schemas (draft 2020-12) of the tools' arguments and results. The server validates
// arguments against the input schemas before a call; the results are the structured content.

const analyzeInputSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "maxLength": 4096,
      "description": "File or folder to analyse: relative to the first workspace root, or absolute below a root. Default: the first root."},
    "language": {"type": "string", "maxLength": 64,
      "description": "Only this language: a Linguist name or alias (Go, Python, JavaScript, TypeScript, Java, Rust, ...)."},
    "depth": {"type": "integer", "minimum": 0, "maximum": 20, "default": 3,
      "description": "Folder levels below path shown in the tree, and the deepest level whose files list their symbols."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50,
      "description": "Most items in each list (files, hotspots, entry points, manifests, folder children); omitted counts the rest."}
  },
  "additionalProperties": false
}`

const depsInputSchema = `{
  "type": "object",
  "properties": {
    "component": {"type": "string", "minLength": 1, "maxLength": 1024,
      "description": "A file or folder (relative to the first workspace root), a module or package name (Go import path, npm, Cargo or Python package, Java class or package), or a symbol (Name or Type.Method)."},
    "type": {"type": "string", "enum": ["imports", "exports", "both"], "default": "both",
      "description": "imports: what the component imports; exports: its exported symbols, where they are used, and who imports it; both."},
    "depth": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1,
      "description": "How many import steps to follow: 1 lists direct dependencies only; more adds transitive ones."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50,
      "description": "Most items in each list; omitted counts the rest."}
  },
  "required": ["component"],
  "additionalProperties": false
}`

const patternsInputSchema = `{
  "type": "object",
  "properties": {
    "scope": {"type": "string", "enum": ["file", "directory", "project"], "default": "project",
      "description": "project: the whole workspace root; directory or file: only findings with evidence in path."},
    "path": {"type": "string", "maxLength": 4096,
      "description": "The file (scope file) or folder (scope directory), relative to the first workspace root. The analysis always covers the whole root, so cycles through the path are found."},
    "pattern_type": {"type": "string",
      "enum": ["architectural", "design", "anti-pattern",
        "layered", "mvc", "hexagonal", "repository", "middleware-chain", "plugin-registry", "event-driven", "monorepo",
        "singleton", "factory", "builder", "observer", "adapter", "strategy",
        "import-cycle", "god-file", "god-class", "long-function", "deep-nesting", "high-complexity", "duplicated-code",
        "unused-export", "layer-violation"],
      "description": "Only this kind of finding, or only this pattern. Default: all."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50,
      "description": "Most findings returned, most important first; omitted counts the rest."}
  },
  "additionalProperties": false
}`

const linesSchema = `{"type": "object", "properties": {"code": {"type": "integer"}, "comment": {"type": "integer"}, "blank": {"type": "integer"}}, "required": ["code", "comment", "blank"]}`

const locationSchema = `{"type": "object", "properties": {"file": {"type": "string"}, "line": {"type": "integer"}}, "required": ["file", "line"]}`

const analyzeOutputSchema = `{
  "type": "object",
  "$defs": {
    "folder": {"type": "object", "properties": {
      "path": {"type": "string"}, "files": {"type": "integer"}, "bytes": {"type": "integer"}, "code": {"type": "integer"},
      "children": {"type": "array", "items": {"$ref": "#/$defs/folder"}}, "omittedChildren": {"type": "integer"}},
      "required": ["path", "files", "bytes", "code"]},
    "function": {"type": "object", "properties": {
      "file": {"type": "string"}, "symbol": {"type": "string"}, "line": {"type": "integer"}, "end": {"type": "integer"},
      "lines": {"type": "integer"}, "complexity": {"type": "integer"}, "nesting": {"type": "integer"}},
      "required": ["file", "symbol", "line", "end", "lines", "complexity", "nesting"]}
  },
  "properties": {
    "root": {"type": "string"},
    "path": {"type": "string"},
    "language": {"type": "string"},
    "depth": {"type": "integer"},
    "summary": {"type": "object", "properties": {
      "files": {"type": "integer"}, "countedFiles": {"type": "integer"}, "vendoredFiles": {"type": "integer"},
      "generatedFiles": {"type": "integer"}, "binaryFiles": {"type": "integer"}, "oversizeFiles": {"type": "integer"},
      "parseErrors": {"type": "integer"}, "lines": ` + linesSchema + `, "truncated": {"type": "boolean"},
      "skipped": {"type": "object", "additionalProperties": {"type": "integer"}, "description": "Files not analysed whole, counted by reason (vendored, generated, minified, too large, binary)."},
      "partial": {"type": "string", "description": "Set when the listing stopped early to answer within the request's time limit: how far it got."}},
      "required": ["files", "countedFiles", "lines"]},
    "languages": {"type": "array", "items": {"type": "object", "properties": {
      "name": {"type": "string"}, "type": {"type": "string"}, "files": {"type": "integer"}, "parsed": {"type": "boolean"},
      "code": {"type": "integer"}, "comment": {"type": "integer"}, "blank": {"type": "integer"}},
      "required": ["name", "files", "code", "comment", "blank"]}},
    "tree": {"$ref": "#/$defs/folder"},
    "manifests": {"type": "array", "items": {"type": "object", "properties": {
      "path": {"type": "string"}, "kind": {"type": "string"}, "name": {"type": "string"}, "version": {"type": "string"},
      "dependencies": {"type": ["array", "null"], "items": {"type": "object", "properties": {
        "name": {"type": "string"}, "version": {"type": "string"}, "scope": {"type": "string"}}, "required": ["name"]}},
      "entries": {"type": "array", "items": {"type": "string"}}, "error": {"type": "string"}},
      "required": ["path", "kind"]}},
    "entryPoints": {"type": "array", "items": {"type": "object", "properties": {
      "file": {"type": "string"}, "line": {"type": "integer"}, "kind": {"type": "string"}, "detail": {"type": "string"}},
      "required": ["file", "kind"]}},
    "hotspots": {"type": "array", "items": {"$ref": "#/$defs/function"}, "description": "Most complex functions first."},
    "largest": {"type": "array", "items": {"$ref": "#/$defs/function"}, "description": "Longest functions first."},
    "files": {"type": "array", "items": {"type": "object", "properties": {
      "path": {"type": "string"}, "language": {"type": "string"}, "code": {"type": "integer"},
      "symbols": {"type": "array", "items": {"type": "object", "properties": {
        "name": {"type": "string"}, "kind": {"type": "string"}, "line": {"type": "integer"}, "exported": {"type": "boolean"}},
        "required": ["name", "kind", "line"]}},
      "omittedSymbols": {"type": "integer"}},
      "required": ["path", "symbols"]}},
    "projects": {"type": "array", "description": "Module roots below the path (folders of outermost manifests; files outside them form the project of the path itself), largest first.",
      "items": {"type": "object", "properties": {"path": {"type": "string"}, "name": {"type": "string"},
        "manifests": {"type": "array", "items": {"type": "string"}}, "files": {"type": "integer"}, "code": {"type": "integer"}},
        "required": ["path", "manifests", "files", "code"]}},
    "parseErrors": {"type": "array", "description": "Files with syntax errors, analysed as far as they parse: the first error's line and what the parser met there.",
      "items": {"type": "object", "properties": {"file": {"type": "string"}, "line": {"type": "integer"}, "message": {"type": "string"}},
        "required": ["file", "message"]}},
    "skipped": {"type": "array", "description": "Files not analysed whole, largest first, at most 20 a reason (summary.skipped counts them all): vendored (third-party or built code by Linguist's rules: vendor/, node_modules/, dist/, minified bundles; not read), binary (not read), too large (over the read limit: not read; or over the parse budget: counted by lines, not parsed), generated (left out of code figures), minified (counted by lines, not parsed). Files of parsed languages that were read stay nodes of the import graph.",
      "items": {"type": "object", "properties": {"file": {"type": "string"}, "reason": {"type": "string", "enum": ["vendored", "generated", "minified", "too large", "binary"]}, "bytes": {"type": "integer"}}, "required": ["file", "reason", "bytes"]}},
    "omitted": {"type": "object", "additionalProperties": {"type": "integer"}},
    "hint": {"type": "string"}
  },
  "required": ["root", "path", "summary", "languages", "tree", "manifests", "entryPoints", "hotspots", "largest", "files", "projects", "parseErrors", "skipped"]
}`

const depsOutputSchema = `{
  "type": "object",
  "$defs": {
    "location": ` + locationSchema + `,
    "reach": {"type": "object", "properties": {"unit": {"type": "string"}, "depth": {"type": "integer"}, "via": {"type": "string"}}, "required": ["unit", "depth"]}
  },
  "properties": {
    "component": {"type": "string"},
    "resolved": {"type": "object", "properties": {
      "kind": {"type": "string", "enum": ["file", "folder", "package", "module", "symbol"]},
      "name": {"type": "string"}, "root": {"type": "string"}, "units": {"type": "array", "items": {"type": "string"}},
      "files": {"type": "integer"}, "language": {"type": "string"},
      "project": {"type": "string", "description": "The project (module root) whose import graph answered: a component is looked up in its own project, so that no answer mixes repositories."}},
      "required": ["kind", "name", "units", "files"]},
    "type": {"type": "string"},
    "depth": {"type": "integer"},
    "partial": {"type": "string", "description": "Set when the listing stopped early to answer within the request's time limit: how far it got."},
    "imports": {"type": "array", "items": {"type": "object", "properties": {
      "import": {"type": "string"}, "kind": {"type": "string", "enum": ["workspace", "external", "stdlib", "unresolved"]},
      "target": {"type": "string"}, "package": {"type": "string"}, "version": {"type": "string"}, "declaredIn": {"type": "string"},
      "count": {"type": "integer"}, "locations": {"type": "array", "items": {"$ref": "#/$defs/location"}}},
      "required": ["import", "kind", "count", "locations"]}},
    "transitive": {"type": "array", "items": {"$ref": "#/$defs/reach"}},
    "exports": {"type": "array", "items": {"type": "object", "properties": {
      "symbol": {"type": "string"}, "kind": {"type": "string"}, "file": {"type": "string"}, "line": {"type": "integer"},
      "uses": {"type": "integer"}, "usedBy": {"type": "array", "items": {"$ref": "#/$defs/location"}}},
      "required": ["symbol", "kind", "file", "line", "uses", "usedBy"]}},
    "importers": {"type": "array", "items": {"type": "object", "properties": {
      "unit": {"type": "string"}, "locations": {"type": "array", "items": {"$ref": "#/$defs/location"}}},
      "required": ["unit", "locations"]}},
    "transitiveImporters": {"type": "array", "items": {"$ref": "#/$defs/reach"}},
    "cycles": {"type": "array", "items": {"type": "object", "properties": {
      "units": {"type": "array", "items": {"type": "string"}}, "path": {"type": "array", "items": {"type": "string"}},
      "evidence": {"type": "array", "items": {"$ref": "#/$defs/location"}}},
      "required": ["units", "path", "evidence"]}},
    "omitted": {"type": "object", "additionalProperties": {"type": "integer"}},
    "hint": {"type": "string"}
  },
  "required": ["component", "resolved", "type", "depth", "cycles"]
}`

const patternsOutputSchema = `{
  "type": "object",
  "properties": {
    "root": {"type": "string"},
    "scope": {"type": "string"},
    "path": {"type": "string"},
    "patternType": {"type": "string"},
    "partial": {"type": "string", "description": "Set when the listing stopped early to answer within the request's time limit: how far it got."},
    "summary": {"type": "object", "additionalProperties": {"type": "integer"},
      "description": "Findings by kind within scope and filter, before the limit."},
    "findings": {"type": "array", "items": {"type": "object", "properties": {
      "name": {"type": "string"},
      "kind": {"type": "string", "enum": ["architectural", "design", "anti-pattern"]},
      "severity": {"type": "string", "enum": ["low", "medium", "high"]},
      "confidence": {"type": "number", "minimum": 0, "maximum": 1},
      "summary": {"type": "string"},
      "evidence": {"type": "array", "items": {"type": "object", "properties": {
        "file": {"type": "string"}, "line": {"type": "integer"}, "end": {"type": "integer"}, "note": {"type": "string"}},
        "required": ["file"]}},
      "omittedEvidence": {"type": "integer", "description": "Evidence not shown: past the first 8 places, or left out by limit."},
      "why": {"type": "string"},
      "action": {"type": "string"},
      "project": {"type": "string", "description": "The project (folder of an outermost manifest, or the root) the finding lies in; projects are analysed apart."}},
      "required": ["name", "kind", "confidence", "summary", "evidence", "why", "action", "project"]}},
    "omitted": {"type": "integer"},
    "hint": {"type": "string"}
  },
  "required": ["root", "scope", "path", "summary", "findings"]
}`

const symbolInputSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 512,
      "description": "The symbol: Name, or Type.Method for a method."},
    "kind": {"type": "string", "enum": ["function", "method", "type", "struct", "interface", "class", "enum", "trait", "const", "var", "module"],
      "description": "Only definitions of this kind."},
    "path": {"type": "string", "maxLength": 4096,
      "description": "Only definitions in this file or folder (relative to the first workspace root). Default: the whole first root."},
    "include_body": {"type": "boolean", "default": false, "description": "Add each definition's source (at most 400 lines)."},
    "include_callees": {"type": "boolean", "default": false,
      "description": "For functions and methods, add what they call and where the workspace defines it."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50, "description": "Most definitions returned."}
  },
  "required": ["name"],
  "additionalProperties": false
}`

const definitionSchema = `{"type": "object", "properties": {
  "symbol": {"type": "string"}, "kind": {"type": "string"}, "file": {"type": "string"}, "line": {"type": "integer"},
  "end": {"type": "integer"}, "exported": {"type": "boolean"}, "language": {"type": "string"}, "signature": {"type": "string"},
  "complexity": {"type": "integer"}, "body": {"type": "string"}, "truncated": {"type": "boolean"}},
  "required": ["symbol", "kind", "file", "line", "end", "exported", "language", "signature"]}`

const symbolOutputSchema = `{
  "type": "object",
  "$defs": {"definition": ` + definitionSchema + `, "location": ` + locationSchema + `},
  "properties": {
    "name": {"type": "string"},
    "root": {"type": "string"},
    "definitions": {"type": "array", "items": {"$ref": "#/$defs/definition"}},
    "callees": {"type": "array", "items": {"type": "object", "properties": {
      "name": {"type": "string"}, "line": {"type": "integer"}, "calls": {"type": "integer"},
      "definitions": {"type": "array", "items": {"$ref": "#/$defs/location"}}},
      "required": ["name", "line", "calls", "definitions"]},
      "description": "What the functions call, in order of first call; no definitions means outside the workspace (standard library, dependencies, built-ins)."},
    "omitted": {"type": "integer"},
    "hint": {"type": "string"}
  },
  "required": ["name", "root", "definitions"]
}`

const referencesInputSchema = `{
  "type": "object",
  "properties": {
    "symbol": {"type": "string", "minLength": 1, "maxLength": 512,
      "description": "The symbol: Name, or Type.Method for a method."},
    "file": {"type": "string", "maxLength": 4096,
      "description": "The file (or folder) that defines the symbol, when the name is defined in several places."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50, "description": "Most references and callers returned."}
  },
  "required": ["symbol"],
  "additionalProperties": false
}`

const referencesOutputSchema = `{
  "type": "object",
  "$defs": {"definition": ` + definitionSchema + `},
  "properties": {
    "symbol": {"type": "string"},
    "root": {"type": "string"},
    "definitions": {"type": "array", "items": {"$ref": "#/$defs/definition"}},
    "summary": {"type": "object", "properties": {
      "references": {"type": "integer"}, "files": {"type": "integer"}, "callers": {"type": "integer"}, "tests": {"type": "integer"}},
      "required": ["references", "files", "callers", "tests"]},
    "references": {"type": "array", "items": {"type": "object", "properties": {
      "file": {"type": "string"}, "line": {"type": "integer"}, "column": {"type": "integer"},
      "kind": {"type": "string", "enum": ["call", "reference"]}, "caller": {"type": "string"}, "test": {"type": "boolean"},
      "text": {"type": "string"}},
      "required": ["file", "line", "column", "kind", "text"]}},
    "callers": {"type": "array", "items": {"type": "object", "properties": {
      "symbol": {"type": "string"}, "file": {"type": "string"}, "line": {"type": "integer"}, "uses": {"type": "integer"},
      "test": {"type": "boolean"}},
      "required": ["symbol", "file", "line", "uses"]}},
    "omitted": {"type": "object", "additionalProperties": {"type": "integer"}},
    "hint": {"type": "string"}
  },
  "required": ["symbol", "root", "definitions", "summary", "references", "callers"]
}`

const outlineInputSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "maxLength": 4096,
      "description": "The source file, relative to the first workspace root or absolute below a root."},
    "include_body": {"type": "boolean", "default": false, "description": "Add each declaration's source (at most 400 lines each)."}
  },
  "required": ["path"],
  "additionalProperties": false
}`

const outlineOutputSchema = `{
  "type": "object",
  "$defs": {"definition": ` + definitionSchema + `},
  "properties": {
    "file": {"type": "string"},
    "language": {"type": "string"},
    "lines": ` + linesSchema + `,
    "imports": {"type": "array", "items": {"type": "object", "properties": {"import": {"type": "string"}, "line": {"type": "integer"}}, "required": ["import", "line"]}},
    "symbols": {"type": "array", "items": {"$ref": "#/$defs/definition"}},
    "skipped": {"type": "string", "description": "Why the file was not parsed (generated, minified, too large: over the parse budget); it then has no symbols."}
  },
  "required": ["file", "language", "lines", "imports", "symbols"]
}`

const impactInputSchema = `{
  "type": "object",
  "properties": {
    "since": {"type": "string", "minLength": 1, "maxLength": 256, "default": "HEAD",
      "description": "The git revision to compare the working tree with: a branch, tag, commit hash, HEAD, HEAD~3, ..."},
    "depth": {"type": "integer", "minimum": 1, "maximum": 10, "default": 2,
      "description": "How many import steps of dependents to follow."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50, "description": "Most items in each list."}
  },
  "additionalProperties": false
}`

const impactOutputSchema = `{
  "type": "object",
  "properties": {
    "root": {"type": "string"},
    "since": {"type": "string"},
    "commit": {"type": "string", "description": "The commit the revision resolved to."},
    "changed": {"type": "array", "items": {"type": "object", "properties": {
      "file": {"type": "string"}, "status": {"type": "string", "enum": ["added", "modified", "deleted"]},
      "lines": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
        "description": "Changed line ranges of the current file (a deletion marks the line it happened before)."},
      "symbols": {"type": "array", "items": {"type": "string"}, "description": "Declarations the changed lines fall in."}},
      "required": ["file", "status", "lines", "symbols"]}},
    "dependents": {"type": "array", "items": {"type": "object", "properties": {
      "unit": {"type": "string"}, "depth": {"type": "integer"}, "via": {"type": "string"}, "test": {"type": "boolean"}},
      "required": ["unit", "depth", "via"]}},
    "tests": {"type": "array", "items": {"type": "string"}, "description": "Test units among the changed units and their dependents: what to run."},
    "omitted": {"type": "object", "additionalProperties": {"type": "integer"}},
    "hint": {"type": "string"}
  },
  "required": ["root", "since", "commit", "changed", "dependents", "tests"]
}`
