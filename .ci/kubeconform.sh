#!/usr/bin/env bash
# Renders every kustomize overlay under deploy/k8s/overlays and validates the result with
# kubeconform, strictly (unknown fields are errors), against the Kubernetes JSON schemas kept
# in deploy/schemas: CI reaches no network but the package registries. Tools are pinned and
# installed with `go install` (through the Go module proxy) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

KUSTOMIZE_VERSION=v5.8.1
KUBECONFORM_VERSION=v0.8.0
# The Kubernetes release whose schemas deploy/schemas holds (deploy/schemas/README.md).
KUBERNETES_VERSION=1.35.4

gobin="$(go env GOPATH)/bin"
install() { # name module package version
  # The module version recorded in the binary; `kubeconform -v` says "development" when
  # built with go install.
  if ! go version -m "$gobin/$1" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]]+$2[[:space:]]+$4([[:space:]]|$)"; then
    echo "kubeconform.sh: installing $1 $4"
    go install "$3@$4"
  fi
}
install kustomize sigs.k8s.io/kustomize/kustomize/v5 sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION"
install kubeconform github.com/yannh/kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"

schemas="deploy/schemas/v${KUBERNETES_VERSION}-standalone-strict"
[ -d "$schemas" ] || { echo "kubeconform.sh: $schemas is missing" >&2; exit 1; }

overlays=(deploy/k8s/overlays/*/)
if [ ! -d "${overlays[0]}" ]; then # the glob matched nothing
  echo "kubeconform.sh: no overlays under deploy/k8s/overlays" >&2
  exit 1
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for overlay in "${overlays[@]}"; do
  name="$(basename "$overlay")"
  "$gobin/kustomize" build "$overlay" >"$out/$name.yaml"
  echo "kubeconform.sh: overlay $name"
  # -strict: unknown fields fail; no -ignore-missing-schemas: a kind without a vendored
  # schema fails; the local schema location means no network is used.
  "$gobin/kubeconform" -strict -summary -output text \
    -kubernetes-version "$KUBERNETES_VERSION" \
    -schema-location deploy/schemas \
    "$out/$name.yaml"
done
