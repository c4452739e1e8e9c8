#!/usr/bin/env bash
# buf breaking: today's protos against the newest release in protos/releases.txt (its commit's protos/,
# read from this checkout's git history), so a change that would break a client built against it fails
# make lint. Needs the release's commit: in a shallow clone, `git fetch --unshallow` first.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
read -r version commit _ < <(grep -v '^#' "$root/protos/releases.txt" | grep . | tail -n 1)
if ! git -C "$root" cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "buf breaking: commit $commit of protos $version is not in this clone's history (shallow?): run git fetch --unshallow" >&2
  exit 1
fi
git_dir=$(git -C "$root" rev-parse --absolute-git-dir)
"$root/deploy/local/buf.sh" breaking --against "$git_dir#ref=$commit,subdir=protos"
echo "buf breaking: protos/ is compatible with release $version (${commit:0:12})"
