#!/usr/bin/env bash
# Step of `make bench`: tools/code's import graphs against each language's own resolver
# (docs/performance.md, "Dependency graphs against each language's own resolver"). Fetches what
# the references need once into $CODE_REF_DIR (pinned npm packages, the JDK's java.base
# sources, Debian's regex-syntax crate) and runs the tests of tools/code/reference_test.go; a
# language whose resolver this machine lacks is skipped with a note.
set -euo pipefail
GO=${GO:-go}
dir=${CODE_REF_DIR:-${TMPDIR:-/tmp}/platform-code-ref}
mkdir -p "$dir"
run() { echo "-- $1"; shift; env "$@" "$GO" test -count=1 -timeout 30m -run "$TEST" -v ./tools/code | grep -E 'reference edges|^(---|ok|FAIL)'; }

TEST=TestGoImportsAgainstGoList run "Go against go list" CODE_REFERENCE_GO="$GO"

if command -v python3 >/dev/null; then
	TEST=TestPythonImportsAgainstImportlib run "Python against importlib"
else
	echo "-- Python: skipped, no python3"
fi

if command -v node >/dev/null && command -v npm >/dev/null; then
	[ -d "$dir/js/node_modules/typescript" ] ||
		npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$dir/js" typescript@5.9.3 @tanstack/react-query@5.108.0 zod@4.6.7
	[ -d "$dir/aria/node_modules/react-aria-components" ] ||
		npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$dir/aria" react-aria-components@1.13.0
	trees="$dir/js/node_modules/@tanstack:$dir/js/node_modules/zod:$dir/aria/node_modules"
	[ -d /usr/lib/node_modules/npm/node_modules ] && trees="/usr/lib/node_modules/npm/node_modules:$trees"
	TEST=TestJSImportsAgainstResolvers run "JavaScript, TypeScript, TSX against Node and TypeScript" \
		CODE_REFERENCE_TYPESCRIPT="$dir/js/node_modules/typescript" CODE_REFERENCE_JS="$trees"
else
	echo "-- JavaScript/TypeScript: skipped, no node and npm"
fi

# The JDK whose sources the reference reads must be the one that runs it.
jdk=""
for d in /usr/lib/jvm/*; do
	if [ -f "$d/lib/src.zip" ] && [ -x "$d/bin/java" ]; then jdk=$d; fi
done
if [ -n "$jdk" ]; then
	[ -d "$dir/jdk/java.base" ] || unzip -q -o "$jdk/lib/src.zip" 'java.base/*' -d "$dir/jdk"
	TEST=TestJavaImportsAgainstJavac run "Java against javac ($jdk)" \
		CODE_REFERENCE_JAVA="$jdk/bin/java" CODE_REFERENCE_JAVA_SRC="$dir/jdk/java.base"
else
	echo "-- Java: skipped, no JDK with lib/src.zip below /usr/lib/jvm"
fi

crate=$(ls -d /usr/share/cargo/registry/regex-syntax-0.6.* 2>/dev/null | head -1 || true)
if [ -z "$crate" ] && command -v apt-get >/dev/null; then
	apt-get install -y -q librust-regex-syntax-dev >/dev/null && crate=$(ls -d /usr/share/cargo/registry/regex-syntax-0.6.* | head -1)
fi
rustc=$(rustup +nightly which rustc 2>/dev/null || true)
if [ -n "$crate" ] && [ -n "$rustc" ] && command -v python3 >/dev/null; then
	TEST=TestRustImportsAgainstRustc run "Rust against rustc ($crate)" CODE_REFERENCE_RUSTC="$rustc" CODE_REFERENCE_RUST_CRATE="$crate"
else
	echo "-- Rust: skipped, needs a nightly rustc (rustup), python3 and Debian's librust-regex-syntax-dev"
fi
