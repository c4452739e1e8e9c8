#!/usr/bin/env bash
# `make setup`: the OpenID provider the tests sign in with (main.go: zitadel/oidc's example provider on
# the loopback interface), built once from the Go module proxy into .local/bin/oidc-provider (go build;
# github.com/zitadel/oidc/v3 and its dependencies, pinned in go.mod and go.sum), and again only when
# its sources change. The tests start it; they never build it.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
provider=$root/.local/bin/oidc-provider
go_minimum=1.26  # github.com/zitadel/oidc/v3 v3.52.0's go.mod

fail() { echo "oidc-provider: $*" >&2; exit 1; }

if [[ -x $provider ]] && [[ -z $(find "$here" -newer "$provider" \( -name '*.go' -o -name 'go.*' \)) ]]; then
  exit 0  # built, and nothing changed since
fi
command -v go >/dev/null || fail "the tests' OpenID provider is built with Go (>= $go_minimum), which is not on PATH"
have=$(go env GOVERSION)
have=${have#go}
if [[ $(printf '%s\n%s\n' "$go_minimum" "$have" | sort -V | head -n 1) != "$go_minimum" ]]; then
  fail "the tests' OpenID provider needs Go >= $go_minimum; this Go is $have"
fi
echo "oidc-provider: building deploy/local/oidc-provider from the Go module proxy into .local/bin (once)" >&2
mkdir -p "$root/.local/bin"
# GOTOOLCHAIN=local: never fetch another Go toolchain; CGO_ENABLED=0: no C compiler needed.
(cd "$here" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-trimpath go build -o "$provider.new" .) \
  || fail "go build deploy/local/oidc-provider failed (see above)"
mv -f "$provider.new" "$provider"
