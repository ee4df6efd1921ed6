#!/usr/bin/env bash
# Writes this fixture with a platform binary of the FerretDB-based embedded store (built from
# commit 49199de): a shop project, records created by alice and bob, what the API answered
# (expected.json) and the data folder's ferretdb/ files.
# usage: make.sh PLATFORM_BINARY_OF_49199de
set -euo pipefail
BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; rm -rf "$W"' EXIT
"$BIN" serve --addr 127.0.0.1:0 --data "$W/data" --metrics-addr= --workspace "$W" >"$W/log" 2>&1 &
PID=$!
until ADDR=$(sed -n 's/.*msg="platform serving" addr=\([^ ]*\).*/\1/p' "$W/log") && [ -n "$ADDR" ]; do sleep 0.3; done
ADMIN=$(cat "$W/data/admin-token")
doc=$(jq -nc --arg j "http://$ADDR/.well-known/jwks.json" '{id: "shop", auth: {jwksURL: $j, issuer: "urn:platform:dev-issuer", audience: "shop"},
  tables: {
    products: {fields: {name: {type: "String", required: true}, price: {type: "Float", required: true}, author: {type: "String"},
      stock: {type: "Int"}, sale: {type: "Boolean"}, since: {type: "DateTime"}, tags: {type: "[String]"}, extra: {type: "JSON"}},
      access: {read: "public", create: "authenticated", update: "owner", delete: "owner"}},
    orders: {fields: {total: {type: "Float"}}, access: {read: "public", create: "authenticated", update: "owner", delete: "owner"}}}}')
curl -sf -X PUT "http://$ADDR/admin/v1/projects/shop" -H "Host: localhost" -H "Authorization: Bearer $ADMIN" -d "$doc" >/dev/null
gql() { # TOKEN QUERY VARS
  curl -sf "http://$ADDR/api/v1/graphql" -H "Host: shop.localhost" -H "Content-Type: application/json" ${1:+-H "Authorization: Bearer $1"} \
    -d "$(jq -nc --arg q "$2" --argjson v "$3" '{query: $q, variables: $v}')"
}
owners='{}'
i=0
for who in alice bob; do
  tok=$("$BIN" token --data "$W/data" --project shop --sub "$who")
  for d in "$(jq -nc --arg n "Ünïcode ✓ $who" --argjson p "$(echo "10.5 + $i" | bc)" \
      '{name: $n, price: $p, stock: 3, sale: true, since: "2026-11-22T10:04:05.123Z", tags: ["a","b"], extra: {k: [1,"x",null]}}')" \
    "$(jq -nc --arg n "plain $who" --argjson p $((20 + i)) '{name: $n, price: $p}')"; do
    uid=$(gql "$tok" 'mutation($d: productInput!) { createProduct(data: $d) { uid } }' "{\"d\": $d}" | jq -er .data.createProduct.uid)
    owners=$(jq -c --arg u "$uid" --arg w "$who" '. + {($u): $w}' <<<"$owners")
  done
  uid=$(gql "$tok" 'mutation { createOrder(data: {total: 99.25}) { uid } }' '{}' | jq -er .data.createOrder.uid)
  owners=$(jq -c --arg u "$uid" --arg w "$who" '. + {($u): $w}' <<<"$owners")
  i=$((i + 1))
done
answer=$(gql "" '{ products(orderBy: [{field: price, direction: ASC}]) { uid name price author stock sale since tags extra createdAt updatedAt }
  orders { uid total createdAt updatedAt } }' '{}' | jq -ec .data)
kill "$PID"; wait "$PID" || true
jq -n --argjson a "$answer" --argjson o "$owners" '{answer: $a, owners: $o}' >"$HERE/expected.json"
rm -rf "$HERE/data"; mkdir -p "$HERE/data"
cp -r "$W/data/ferretdb" "$HERE/data/"
ls -la "$HERE/data/ferretdb"
