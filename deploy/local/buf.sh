#!/usr/bin/env bash
# buf (protobuf lint and breaking-change checks) from the npm registry, installed into .local/buf on first use,
# then run from protos/ (where buf.yaml lives) with the given arguments: deploy/local/buf.sh lint
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
version=${MELDSTREAM_BUF_VERSION:-1.75.0}
prefix=$root/.local/buf
buf=$prefix/node_modules/.bin/buf

if [[ ! -x $buf ]] || [[ $("$buf" --version) != "$version" ]]; then
  command -v npm >/dev/null || { echo "buf: npm is required to install @bufbuild/buf" >&2; exit 1; }
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "@bufbuild/buf@$version" >&2
fi
cd "$root/protos"
exec "$buf" "$@"
