#!/usr/bin/env bash
# The data-path comparison of docs/performance.md: the platform against PocketBase v0.36.8 over
# the same N records and the same five queries, with the kit of ../shared/peers/pocketbase
# (see its README). Builds the binary, starts `platform serve` on a fresh data folder, applies
# project "bench" with declared indexes on sku and price and project "benchnoidx" with none,
# seeds N records into each, then runs the kit's compare.sh on "bench" (queries a-e) and on
# "benchnoidx" (b c d, the queries an index serves). PocketBase is measured in each comparison
# without and with its own indexes on sku and price, so every ratio comes from one run. Both
# systems are seeded 200 records per request, 2 requests at a time (the platform with 200
# aliased createproduct mutations a document, PocketBase through its batch API). Then it
# times `platform export` and `platform import --replace` of project "bench" through the
# admin API, and prints one table: every ratio, both seeding rates, the transfer rates, RSS.
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
#        ./cmd/platform), SEED_BATCH (200: records per seeding request of the platform), and
#        compare.sh's own: DURATION (10s), CONNS (8), WRK_THREADS, PB_WORK
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

export SEED_BATCH=${SEED_BATCH:-200}
PROJECTS=(bench); [ -n "$ONLY" ] || PROJECTS+=(benchnoidx)
declare -A SEEDED
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
  "$KIT/seed-platform.sh" "$N" "$URL" "$p.localhost" "$TOKEN" | tee "$W/seed-$TAG-$p.log"
  SEEDED[$p]=$(sed -n 's/^SEED .*records_per_s=\([0-9.]*\).*/\1/p' "$W/seed-$TAG-$p.log")
done

STAMP=$(date +%Y%m%d-%H%M%S)
echo; echo "== platform, project bench (indexes on sku and price), against PocketBase"
PLATFORM_PID=$PID OUT="$W/results-$TAG-$STAMP-bench" "$KIT/compare.sh" "$N" "$URL" bench.localhost | tee "$W/compare-$TAG-bench.log"
if [ -z "$ONLY" ]; then
  echo; echo "== platform, project benchnoidx (no declared index), against PocketBase"
  PLATFORM_PID=$PID QUERIES="b c d" OUT="$W/results-$TAG-$STAMP-benchnoidx" "$KIT/compare.sh" "$N" "$URL" benchnoidx.localhost \
    | tee "$W/compare-$TAG-benchnoidx.log"
fi

# export and import of project bench through the admin API, as an operator moves a project
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
t0=$(date +%s.%N)
PLATFORM_ADMIN_TOKEN=bench-admin "$BIN" export --server "http://$ADDR" --project bench -o "$W/bench-$TAG.jsonl" 2>"$W/transfer-$TAG.log" \
  || { cat "$W/transfer-$TAG.log" >&2; exit 1; }
EXPORT_S=$(secs "$t0")
t0=$(date +%s.%N)
PLATFORM_ADMIN_TOKEN=bench-admin "$BIN" import --server "http://$ADDR" --replace -f "$W/bench-$TAG.jsonl" 2>>"$W/transfer-$TAG.log" \
  || { cat "$W/transfer-$TAG.log" >&2; exit 1; }
IMPORT_S=$(secs "$t0")
EXPORT_MB=$(du -m "$W/bench-$TAG.jsonl" | cut -f1)
rm -f "$W/bench-$TAG.jsonl"
echo "export of $N records: $EXPORT_S s ($EXPORT_MB MB); import --replace: $IMPORT_S s"

# the table of docs/performance.md: platform / PocketBase in requests per second at equal
# connections, from the results.csv of each comparison
rps() { # CSV SYS Q CONNS
  awk -F, -v s="$2" -v q="$3" -v c="$4" '$1 == s && $2 == q && $3 == c { print $6 }' "$1"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }
conns() { awk -F, -v q="$2" '$1 == "platform" && $2 == q { print $3 }' "$1"; }
IDX=$W/results-$TAG-$STAMP-bench/results.csv NOIDX=$W/results-$TAG-$STAMP-benchnoidx/results.csv
echo
echo "== summary, N=$N$([ -n "$MONGO" ] && echo ", mongo backend"), load=[$(cut -d' ' -f1-3 /proc/loadavg)]: platform / PocketBase, requests per second"
printf '| %-32s | %-40s | %-32s |\n' query "with indexes (PocketBase with the same)" "no index (PocketBase without)"
printf '|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..34})" "$(printf -- '-%.0s' {1..42})" "$(printf -- '-%.0s' {1..34})"
declare -A WHAT=([a]="a fetch by id" [b]="b equality on sku" [c]="c price >= 500, desc, first 20" [d]="d count price >= 500" [e]="e first 100")
for q in a b c d e; do
  c=$(conns "$IDX" "$q"); p=$(rps "$IDX" platform "$q" "$c"); b=$(rps "$IDX" pocketbase-idx "$q" "$c")
  with="$(ratio "$p" "$b") ($p vs $b, $c conns)"
  without=-
  if [ -z "$ONLY" ] && [[ $q =~ [bcd] ]]; then
    c=$(conns "$NOIDX" "$q"); p=$(rps "$NOIDX" platform "$q" "$c"); b=$(rps "$NOIDX" pocketbase "$q" "$c")
    without="$(ratio "$p" "$b") ($p vs $b, $c conns)"
  fi
  printf '| %-32s | %-40s | %-32s |\n' "${WHAT[$q]}" "$with" "$without"
done
PBSEED=$(sed -n 's/^SEED sys=pb .*records_per_s=\([0-9.]*\).*/\1/p' "$W/compare-$TAG-bench.log" | head -n 1)
printf '| %-32s | %-40s | %-32s |\n' "seeding, $SEED_BATCH per request, rec/s" \
  "$(ratio "${SEEDED[bench]}" "$PBSEED") (${SEEDED[bench]} vs $PBSEED)" \
  "$([ -n "$ONLY" ] && echo - || echo "$(ratio "${SEEDED[benchnoidx]}" "$PBSEED") (${SEEDED[benchnoidx]} vs $PBSEED)")"
printf '| %-32s | %-40s | %-32s |\n' "export, import --replace, rec/s" \
  "$(awk -v n="$N" -v e="$EXPORT_S" -v i="$IMPORT_S" 'BEGIN { printf "%.0f, %.0f (%.1f s, %.1f s)", n / e, n / i, e, i }')" -
grep -h "^RSS" "$W"/compare-"$TAG"-*.log
echo "platform peak RSS over the whole run (seeding, queries, export, import): $(awk '/^VmHWM/ { print $2, $3 }' "/proc/$PID/status")"
