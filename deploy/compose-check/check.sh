#!/usr/bin/env bash
# `make lint`: deploy/compose.yaml loaded by compose-go, the loader Docker Compose itself uses (schema,
# interpolation, profiles), since no Docker engine runs here. Two checks:
#   1. with both secrets and the `services` profile: it loads, and every service has a healthcheck and a
#      restart policy (main.go);
#   2. without the secrets: it is refused, naming each of them.
# The checker is built once from the Go module proxy into .local/bin (go build; compose-go's module and
# its dependencies, pinned in go.mod and go.sum), and again only when its sources change.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
checker=$root/.local/bin/compose-check
file=$root/deploy/compose.yaml
go_minimum=1.24  # compose-go v2.16.2's go.mod

fail() { echo "compose: $*" >&2; exit 1; }

if [[ ! -x $checker ]] || [[ -n $(find "$here" -newer "$checker" -name '*.go' -o -newer "$checker" -name 'go.*') ]]; then
  command -v go >/dev/null || fail "the compose checker is built with Go (>= $go_minimum), which is not on PATH"
  have=$(go env GOVERSION)
  have=${have#go}
  if [[ $(printf '%s\n%s\n' "$go_minimum" "$have" | sort -V | head -n 1) != "$go_minimum" ]]; then
    fail "the compose checker needs Go >= $go_minimum; this Go is $have"
  fi
  echo "compose: building deploy/compose-check from the Go module proxy into .local/bin (once)" >&2
  mkdir -p "$root/.local/bin"
  # GOTOOLCHAIN=local: never fetch another Go toolchain; CGO_ENABLED=0: no C compiler needed.
  (cd "$here" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-trimpath go build -o "$checker.new" .) \
    || fail "go build deploy/compose-check failed (see above)"
  mv -f "$checker.new" "$checker"
fi

names=(ENGINE_SEED_KEY IDENTITY_KEY_SECRET IDENTITY_SERVICE_CREDENTIALS ENGINE_SERVICE_CREDENTIAL)
secrets=()
for name in "${names[@]}"; do secrets+=(-env "$name=lint-only-$name"); done
"$checker" -profile services "${secrets[@]}" "$file"
for name in "${names[@]}"; do
  without=()
  for other in "${names[@]}"; do [[ $other == "$name" ]] || without+=(-env "$other=lint-only-$other"); done
  if refused=$("$checker" -profile services "${without[@]}" "$file" 2>&1); then
    fail "deploy/compose.yaml loads without $name: it must be required"
  fi
  grep -q "required variable $name is missing a value" <<<"$refused" \
    || fail "without $name, the refusal does not name it: $refused"
done
echo "compose: deploy/compose.yaml refuses to load without any of ${names[*]}"
