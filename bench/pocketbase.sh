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
# usage: bench/pocketbase.sh N [--indexed-only] [--mongo]
#   --indexed-only: project "bench" only (make bench-quick)
#   --mongo: the platform on its mongo backend, over an embedded FerretDB (bench/ferretdb), as
#            where no MongoDB is installed; MONGODB_URI set in the environment is used instead
# env:   PB_KIT (default ../shared/peers/pocketbase from the repository root), BENCH_WORK (default
#        ${TMPDIR:-/tmp}/platform-bench), PLATFORM_BIN (a binary to measure instead of building
#        ./cmd/platform), and compare.sh's own: DURATION (10s), CONNS (8), WRK_THREADS, PB_WORK
set -euo pipefail
usage() { echo "usage: bench/pocketbase.sh N [--indexed-only] [--mongo]" >&2; exit 2; }
[ $# -ge 1 ] || usage
N=$1; shift
ONLY=; MONGO=
for a in "$@"; do
  case $a in --indexed-only) ONLY=1 ;; --mongo) MONGO=1 ;; *) usage ;; esac
done
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "bench/pocketbase.sh: N must be a positive integer" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KIT=${PB_KIT:-$ROOT/../shared/peers/pocketbase}
W=${BENCH_WORK:-${TMPDIR:-/tmp}/platform-bench}
skip() { echo "bench/pocketbase.sh: SKIPPED the PocketBase comparison: $*"; exit 0; }

[ -x "$KIT/compare.sh" ] || skip "no peer kit at $KIT (set PB_KIT to the folder of compare.sh)"
"$KIT/install.sh" || skip "its install.sh could not install PocketBase, curl, jq or wrk (see above)"

mkdir -p "$W"
W=$(cd "$W" && pwd)
TAG=$N${MONGO:+-mongo}
DATA=$W/data-$TAG
BIN=${PLATFORM_BIN:-$W/platform}
if [ -z "${PLATFORM_BIN:-}" ]; then
  echo "building the platform into $W"
  (cd "$ROOT" && go build -o "$BIN" ./cmd/platform)
fi
rm -rf "$DATA"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done; true' EXIT
trap 'exit 130' INT TERM
if [ -n "$MONGO" ] && [ -z "${MONGODB_URI:-}" ]; then
  (cd "$ROOT" && go build -o "$W/ferretdb" ./bench/ferretdb)
  rm -rf "$W/ferretdb-$N"
  "$W/ferretdb" -dir "$W/ferretdb-$N" >"$W/ferretdb-$N.uri" 2>"$W/ferretdb-$N.log" &
  PIDS+=($!)
  for _ in $(seq 1 100); do [ -s "$W/ferretdb-$N.uri" ] && break; sleep 0.2; done
  MONGODB_URI=$(head -n 1 "$W/ferretdb-$N.uri")
  [ -n "$MONGODB_URI" ] || { cat "$W/ferretdb-$N.log" >&2; echo "bench/pocketbase.sh: FerretDB did not start" >&2; exit 1; }
  echo "embedded FerretDB at $MONGODB_URI (files in $W/ferretdb-$N)"
fi
if [ -n "$MONGO" ]; then export MONGODB_URI; else unset MONGODB_URI; fi

# serve on a free port (read back from the log), metrics off, a timeout that fits the slow
# unindexed queries of large N
PLATFORM_ADDR=127.0.0.1:0 PLATFORM_DATA="$DATA" PLATFORM_ADMIN_TOKEN=bench-admin PLATFORM_DEV_ISSUER=on \
  PLATFORM_METRICS_ADDR= PLATFORM_LOG_FORMAT=text PLATFORM_GRAPHQL_TIMEOUT=${PLATFORM_GRAPHQL_TIMEOUT:-60s} \
  MCP_WORKSPACE="$W" "$BIN" serve >"$W/serve-$TAG.log" 2>&1 &
PID=$!
PIDS=("$PID" "${PIDS[@]}")
ADDR=
for _ in $(seq 1 600); do
  ADDR=$(sed -n 's/.*msg="platform serving" addr=\([^ ]*\).*/\1/p' "$W/serve-$TAG.log" | head -n 1)
  [ -n "$ADDR" ] && break
  kill -0 "$PID" 2>/dev/null || { cat "$W/serve-$TAG.log" >&2; echo "bench/pocketbase.sh: platform serve exited" >&2; exit 1; }
  sleep 0.2
done
[ -n "$ADDR" ] || { tail -n 20 "$W/serve-$TAG.log" >&2; echo "bench/pocketbase.sh: platform serve did not start within 120 s" >&2; exit 1; }
URL=http://$ADDR/api/v1/graphql
echo "platform pid $PID serving on $ADDR (backend: $([ -n "$MONGO" ] && echo "mongo" || echo "embedded")), log $W/serve-$TAG.log"

PROJECTS=(bench); [ -n "$ONLY" ] || PROJECTS+=(benchnoidx)
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
if [ -z "$ONLY" ]; then
  echo; echo "== platform, project benchnoidx (no declared index), against PocketBase"
  PLATFORM_PID=$PID QUERIES="b c d" "$KIT/compare.sh" "$N" "$URL" benchnoidx.localhost
fi
