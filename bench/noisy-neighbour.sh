#!/usr/bin/env bash
# Issue 27's noisy-neighbour figures with the shared script, as docs/performance.md ("Fair
# share") reports them: builds the binary and runs ../shared/peers/noisy-neighbour.sh on it
# RUNS times (wrk: 4 connections fetching project "quiet" by uid, alone and while 32 flood
# project "big"'s N records with an unindexed equality query), then prints each run's quiet
# req/s kept and p99 beside / alone, and how many runs met the targets (at least 0.70 kept, a
# p99 at most 2x alone). Where the script or the tools it uses (wrk, jq, curl; apt-installed
# when root) are missing, it says SKIPPED and exits 0, so the rest of `make bench` still runs.
#
# usage: bench/noisy-neighbour.sh [N]   env: RUNS (3), PLATFORM_BIN (a binary to measure instead
#        of building ./cmd/platform), NOISY_SCRIPT (default ../shared/peers/noisy-neighbour.sh
#        from the repository root), and the script's own: FLOOD_CONNS (32), DURATION (10s)
set -euo pipefail
N=${1:-100000}
RUNS=${RUNS:-3}
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "bench/noisy-neighbour.sh: N must be a positive integer" >&2; exit 2; }
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "bench/noisy-neighbour.sh: RUNS must be a positive integer" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRIPT=${NOISY_SCRIPT:-$ROOT/../shared/peers/noisy-neighbour.sh}
skip() { echo "bench/noisy-neighbour.sh: SKIPPED the noisy-neighbour script: $*"; exit 0; }

[ -x "$SCRIPT" ] || skip "no script at $SCRIPT (set NOISY_SCRIPT)"
for t in curl jq wrk; do
  command -v "$t" >/dev/null && continue
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y "$t" >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y "$t" >/dev/null 2>&1; } || true
  fi
  command -v "$t" >/dev/null || skip "$t is missing (Debian package $t)"
done

BIN=${PLATFORM_BIN:-}
if [ -z "$BIN" ]; then
  W=$(mktemp -d "${TMPDIR:-/tmp}/noisy-bench.XXXX")
  trap 'rm -rf "$W"' EXIT
  BIN=$W/platform
  echo "building the platform into $W"
  (cd "$ROOT" && go build -o "$BIN" ./cmd/platform)
fi

met=0
for i in $(seq 1 "$RUNS"); do
  out=$("$SCRIPT" "$BIN" "$N")
  line=$(echo "$out" | grep '^quiet req/s kept')
  echo "run $i/$RUNS: $line"
  echo "$line" | awk '{ kept = $4; p99 = $9; sub(/x$/, "", p99); exit !(kept >= 0.70 && p99 <= 2) }' && met=$((met + 1))
done
echo "noisy neighbour, $N records: $met of $RUNS runs kept at least 0.70 of quiet's req/s with a p99 at most 2x alone"
