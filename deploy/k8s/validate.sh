#!/usr/bin/env bash
# Render deploy/k8s with kustomize and validate every object offline (`make lint` runs this):
#   deploy/k8s/validate.sh
# Renders deploy/k8s (the base as `kubectl apply -k deploy/k8s` applies it) and each overlays/*/, then
# deploy/k8s/validate.py checks every object against the Kubernetes JSON schemas shipped in the
# kubernetes-validate package (requirements/lock.txt) for each version in KUBERNETES_VERSIONS, plus the
# manifests' own rules (no Secret rendered, only variables the services read, ports that agree).
# kustomize is built once from the Go module proxy into .local/bin (go install; about a minute on a
# fresh machine), and rebuilt only when MELDSTREAM_KUSTOMIZE_VERSION changes.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
version=${MELDSTREAM_KUSTOMIZE_VERSION:-v5.8.2}  # v5.8.2's go.mod asks for go >= 1.26.0
go_minimum=1.26
# The oldest Kubernetes these manifests are for (README.md: PodDisruptionBudget unhealthyPodEvictionPolicy
# is GA in 1.31) and the newest whose schemas kubernetes-validate ships.
versions=${KUBERNETES_VERSIONS:-1.31.0 1.37.0}
python=${PYTHON:-$root/.venv/bin/python}
kustomize=$root/.local/bin/kustomize

fail() { echo "k8s: $*" >&2; exit 1; }

installed_version() { "$kustomize" version 2>/dev/null || true; }

if [[ ! -x $kustomize ]] || [[ $(installed_version) != "$version" ]]; then
  command -v go >/dev/null || fail "kustomize $version is built with Go (>= $go_minimum), which is not on PATH"
  have=$(go env GOVERSION)  # go1.26.8
  have=${have#go}
  if [[ $(printf '%s\n%s\n' "$go_minimum" "$have" | sort -V | head -n 1) != "$go_minimum" ]]; then
    fail "kustomize $version needs Go >= $go_minimum; this Go is $have (or set MELDSTREAM_KUSTOMIZE_VERSION to an older v5)"
  fi
  echo "k8s: building kustomize $version from the Go module proxy into .local/bin (once)" >&2
  mkdir -p "$root/.local/bin"
  build=$(mktemp -d "$root/.local/bin/.kustomize.XXXXXX")
  trap 'rm -rf "$build"' EXIT
  # GOTOOLCHAIN=local: never fetch another Go toolchain; CGO_ENABLED=0: no C compiler needed.
  GOTOOLCHAIN=local CGO_ENABLED=0 GOBIN=$build GOFLAGS=-trimpath \
    go install "sigs.k8s.io/kustomize/kustomize/v5@$version" \
    || fail "go install sigs.k8s.io/kustomize/kustomize/v5@$version failed (see above)"
  mv -f "$build/kustomize" "$kustomize"  # atomic: a concurrent run sees the old binary or the new one
fi

"$python" -c 'import kubernetes_validate' 2>/dev/null \
  || fail "kubernetes-validate is not installed in $python's environment: run \`make setup\` (requirements/lock.txt)"

out=$(mktemp -d)
trap 'rm -rf "$out" ${build:+"$build"}' EXIT
renderings=()
for dir in "$here" "$here"/overlays/*/; do
  [[ -f $dir/kustomization.yaml ]] || continue
  dir=${dir%/}
  name=deploy/k8s${dir#"$here"}
  file=$out/$(echo "$name" | tr / _).yaml
  "$kustomize" build "$dir" >"$file" || fail "kustomize build $name failed (see above)"
  renderings+=("$name=$file")
done

args=()
for v in $versions; do args+=(--kubernetes-version "$v"); done
"$python" "$here/validate.py" "${args[@]}" "${renderings[@]}"
