#!/usr/bin/env bash
# `make lint`: deploy/compose.yaml loaded by compose-go, the loader Docker Compose itself uses (schema,
# interpolation, profiles), since no Docker engine runs here. Two checks:
#   1. with both secrets and the `services` profile: it loads, and every service has a healthcheck and a
#      restart policy (main.go);
#   2. without the secrets: it is refused, naming MELDSTREAM_TOKEN_SECRET and ENGINE_SEED_KEY.
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

secrets=(-env MELDSTREAM_TOKEN_SECRET=lint-only-token-secret -env ENGINE_SEED_KEY=lint-only-seed-key)
"$checker" -profile services "${secrets[@]}" "$file"
if refused=$("$checker" -profile services "$file" 2>&1); then
  fail "deploy/compose.yaml loads without MELDSTREAM_TOKEN_SECRET and ENGINE_SEED_KEY: both must be required"
fi
for name in MELDSTREAM_TOKEN_SECRET ENGINE_SEED_KEY; do
  grep -q "required variable $name is missing a value" <<<"$refused" \
    || fail "without the secrets, the refusal does not name $name: $refused"
done
echo "compose: deploy/compose.yaml refuses to load without MELDSTREAM_TOKEN_SECRET and ENGINE_SEED_KEY"
