#!/usr/bin/env bash
# `make lint`: deploy/compose.yaml loaded by compose-go, the loader Docker Compose itself uses (schema,
# interpolation, profiles), since no Docker engine runs here. Three checks:
#   1. with the secrets and the `services` profile: it loads, every service has a healthcheck and a
#      restart policy, the web gateway runs at least 2 replicas behind web-proxy (its one published port,
#      8080), and each secret (the gateway's OpenID client secret among them) is held by one service
#      alone (main.go);
#   2. without each required secret: it is refused, naming it;
#   3. with deploy/compose.tls.yaml over it: it loads with MELDSTREAM_SITE (web-proxy then publishes 443)
#      and is refused without it.
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

names=(ENGINE_SEED_KEY IDENTITY_KEY_SECRET MATCHMAKING_FORWARD_SECRET IDENTITY_SERVICE_CREDENTIALS ENGINE_SERVICE_CREDENTIAL WEB_SERVICE_CREDENTIAL)
optional=(WEB_OIDC_CLIENT_SECRET)  # empty by default (a public client); given here to check who holds it
secrets=()
for name in "${names[@]}" "${optional[@]}"; do secrets+=(-env "$name=lint-only-$name" -secret "$name"); done
"$checker" -profile services "${secrets[@]}" -publishes web-proxy=8080 "$file"
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

tls=$root/deploy/compose.tls.yaml
"$checker" -profile services "${secrets[@]}" -env MELDSTREAM_SITE=games.example.com \
  -publishes web-proxy=443 -publishes web-proxy=80 "$file" "$tls"
if refused=$("$checker" -profile services "${secrets[@]}" "$file" "$tls" 2>&1); then
  fail "deploy/compose.tls.yaml loads without MELDSTREAM_SITE: it must be required"
fi
grep -q "required variable MELDSTREAM_SITE is missing a value" <<<"$refused" \
  || fail "without MELDSTREAM_SITE, the refusal of deploy/compose.tls.yaml does not name it: $refused"
echo "compose: deploy/compose.tls.yaml serves MELDSTREAM_SITE on 443 and refuses to load without it"
