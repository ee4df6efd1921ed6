#!/usr/bin/env bash
# The data-path comparison of docs/performance.md: the platform against PocketBase v0.36.8 over
# the same N records and the same five queries, with the kit of ../shared/peers/pocketbase
# (see its README). Builds the binary, starts `platform serve` on a fresh data folder, applies
# project "bench" with declared indexes on sku and price and project "benchnoidx" with none,
# seeds N records into each, then runs the kit's compare.sh on "bench" (queries a-e) and on
# "benchnoidx" (b c d, the queries an index serves). PocketBase is measured in each comparison
# without and with its own indexes on sku and price, so every ratio comes from one run.
#
# Where the kit is missing, or cannot install PocketBase or wrk (no Go toolchain, no network,
# not root for apt-get), the comparison is skipped with a note and the script exits 0, so the
# rest of `make bench` still runs.
#
# usage: bench/pocketbase.sh N [--indexed-only]
# env:   PB_KIT (default ../shared/peers/pocketbase from the repository root), BENCH_WORK (default
#        ${TMPDIR:-/tmp}/platform-bench), PLATFORM_BIN (a binary to measure instead of building
#        ./cmd/platform), MONGODB_URI (measure the mongo backend there instead of the embedded
#        one), and compare.sh's own: DURATION (10s), CONNS (8), WRK_THREADS, PB_WORK
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] && { [ $# -eq 1 ] || [ "$2" = --indexed-only ]; } ||
  { echo "usage: bench/pocketbase.sh N [--indexed-only]" >&2; exit 2; }
N=$1; ONLY=${2:-}
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "bench/pocketbase.sh: N must be a positive integer" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KIT=${PB_KIT:-$ROOT/../shared/peers/pocketbase}
W=${BENCH_WORK:-${TMPDIR:-/tmp}/platform-bench}
skip() { echo "bench/pocketbase.sh: SKIPPED the PocketBase comparison: $*"; exit 0; }

[ -x "$KIT/compare.sh" ] || skip "no peer kit at $KIT (set PB_KIT to the folder of compare.sh)"
"$KIT/install.sh" || skip "its install.sh could not install PocketBase, curl, jq or wrk (see above)"

mkdir -p "$W"
W=$(cd "$W" && pwd)
DATA=$W/data-$N
BIN=${PLATFORM_BIN:-$W/platform}
if [ -z "${PLATFORM_BIN:-}" ]; then
  echo "building the platform into $W"
  (cd "$ROOT" && go build -o "$BIN" ./cmd/platform)
fi
rm -rf "$DATA"

# serve on a free port (read back from the log), metrics off, a timeout that fits the slow
# unindexed queries of large N
PLATFORM_ADDR=127.0.0.1:0 PLATFORM_DATA="$DATA" PLATFORM_ADMIN_TOKEN=bench-admin PLATFORM_DEV_ISSUER=on \
  PLATFORM_METRICS_ADDR= PLATFORM_LOG_FORMAT=text PLATFORM_GRAPHQL_TIMEOUT=${PLATFORM_GRAPHQL_TIMEOUT:-60s} \
  MCP_WORKSPACE="$W" "$BIN" serve >"$W/serve-$N.log" 2>&1 &
PID=$!
trap 'kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM
ADDR=
for _ in $(seq 1 600); do
  ADDR=$(sed -n 's/.*msg="platform serving" addr=\([^ ]*\).*/\1/p' "$W/serve-$N.log" | head -n 1)
  [ -n "$ADDR" ] && break
  kill -0 "$PID" 2>/dev/null || { cat "$W/serve-$N.log" >&2; echo "bench/pocketbase.sh: platform serve exited" >&2; exit 1; }
  sleep 0.2
done
[ -n "$ADDR" ] || { tail -n 20 "$W/serve-$N.log" >&2; echo "bench/pocketbase.sh: platform serve did not start within 120 s" >&2; exit 1; }
URL=http://$ADDR/api/v1/graphql
echo "platform pid $PID serving on $ADDR, log $W/serve-$N.log"

PROJECTS=(bench); [ "$ONLY" = --indexed-only ] || PROJECTS+=(benchnoidx)
for p in "${PROJECTS[@]}"; do
  indexes=""; [ "$p" = bench ] && indexes='    indexes: [{fields: [sku]}, {fields: [price]}]'
  cat >"$W/$p.yaml" <<YAML
id: $p
auth: {jwksURL: "http://$ADDR/.well-known/jwks.json", issuer: "urn:platform:dev-issuer", audience: $p}
tables:
  products:
    fields: {name: {type: String, required: true}, price: {type: Float, required: true}, author: {type: String}, sku: {type: String}}
    access: {read: public, create: authenticated, update: owner, delete: owner}
$indexes
YAML
  PLATFORM_SERVER=http://$ADDR PLATFORM_ADMIN_TOKEN=bench-admin "$BIN" apply -f "$W/$p.yaml"
  TOKEN=$("$BIN" token --data "$DATA" --project "$p" --sub alice --ttl 4h)
  "$KIT/seed-platform.sh" "$N" "$URL" "$p.localhost" "$TOKEN"
done

echo; echo "== platform, project bench (indexes on sku and price), against PocketBase"
PLATFORM_PID=$PID "$KIT/compare.sh" "$N" "$URL" bench.localhost
if [ "$ONLY" != --indexed-only ]; then
  echo; echo "== platform, project benchnoidx (no declared index), against PocketBase"
  PLATFORM_PID=$PID QUERIES="b c d" "$KIT/compare.sh" "$N" "$URL" benchnoidx.localhost
fi
