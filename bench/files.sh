#!/usr/bin/env bash
# Upload and download throughput of 1 MB files, the platform against PocketBase v0.36.8's
# file fields on the same machine (docs/performance.md, "Files"): both keep the files on
# local disk; each gets N files of SIZE bytes, C at a time, from bench/files (multipart
# upload, then a GET of each). Where the PocketBase kit is missing or cannot install, the
# comparison is skipped with a note and the script exits 0.
#
# usage: bench/files.sh [N] [C]      (default 200 files, 4 at a time)
# env:   PB_KIT (default ../shared/peers/pocketbase), BENCH_WORK (default ${TMPDIR:-/tmp}/platform-bench),
#        SIZE (default 1048576)
set -euo pipefail
N=${1:-200}; C=${2:-4}; SIZE=${SIZE:-1048576}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KIT=${PB_KIT:-$ROOT/../shared/peers/pocketbase}
W=${BENCH_WORK:-${TMPDIR:-/tmp}/platform-bench}/files
skip() { echo "bench/files.sh: SKIPPED the PocketBase comparison: $*"; exit 0; }
[ -x "$KIT/start.sh" ] || skip "no peer kit at $KIT (set PB_KIT)"
"$KIT/install.sh" >/dev/null || skip "its install.sh could not install PocketBase, curl or jq"
rm -rf "$W"; mkdir -p "$W"
(cd "$ROOT" && go build -o "$W/platform" ./cmd/platform && go build -o "$W/filebench" ./bench/files)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done; "$KIT/stop.sh" "$W/pb" >/dev/null 2>&1; true' EXIT

PLATFORM_ADDR=127.0.0.1:0 PLATFORM_DATA="$W/data" PLATFORM_ADMIN_TOKEN=bench-admin PLATFORM_DEV_ISSUER=on \
  PLATFORM_METRICS_ADDR= PLATFORM_LOG_FORMAT=text "$W/platform" serve >"$W/serve.log" 2>&1 &
PIDS+=($!)
ADDR=
for _ in $(seq 1 300); do
  ADDR=$(sed -n 's/.*msg="platform serving" addr=\([^ ]*\).*/\1/p' "$W/serve.log" | head -n 1)
  [ -n "$ADDR" ] && break
  sleep 0.2
done
[ -n "$ADDR" ] || { tail -n 20 "$W/serve.log" >&2; echo "bench/files.sh: platform serve did not start" >&2; exit 1; }
cat >"$W/files.yaml" <<YAML
id: files
auth: {jwksURL: "http://$ADDR/.well-known/jwks.json", issuer: "urn:platform:dev-issuer", audience: files}
tables:
  docs:
    fields: {file: {type: File, file: {maxSize: 10485760}}}
    access: {read: public, create: authenticated, update: owner, delete: owner}
YAML
PLATFORM_SERVER=http://$ADDR PLATFORM_ADMIN_TOKEN=bench-admin "$W/platform" apply -f "$W/files.yaml" >/dev/null
TOKEN=$("$W/platform" token --data "$W/data" --project files --sub alice --ttl 1h)

PORT=$(( 20000 + RANDOM % 20000 ))
mkdir -p "$W/pb"
"$KIT/start.sh" "$W/pb" "$PORT" >/dev/null
"$KIT/setup.sh" "$W/pb" "$PORT" >/dev/null
curl -sS --fail-with-body -o /dev/null -H "Authorization: $(cat "$W/pb/token")" -H 'Content-Type: application/json' \
  -X POST "http://127.0.0.1:$PORT/api/collections" -d '{"name": "files", "type": "base",
  "fields": [{"name": "file", "type": "file", "maxSelect": 1, "maxSize": 10485760}],
  "listRule": "", "viewRule": "", "createRule": "", "updateRule": null, "deleteRule": null}'

echo "$N files of $SIZE bytes, $C at a time, each system on local disk"
"$W/filebench" -target platform -url "http://$ADDR/p/files/api/v1/graphql" -token "$TOKEN" -n "$N" -c "$C" -size "$SIZE"
"$W/filebench" -target pocketbase -url "http://127.0.0.1:$PORT" -n "$N" -c "$C" -size "$SIZE"
