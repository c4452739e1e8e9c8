#!/usr/bin/env bash
# Builds the Go client into .local/bin/meldstream-go: protoc-gen-go and protoc-gen-go-grpc installed
# once from the Go module proxy into .local/bin, Go code generated from protos/ (the game and identity
# APIs) into clients/go/gen (never committed) with the protoc that grpcio-tools bundles (make venv),
# then go build.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=$root/.local/bin
protobuf_version=v1.36.12   # protoc-gen-go; the same module the client links (go.mod)
grpc_plugin_version=v1.6.2  # protoc-gen-go-grpc
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-trimpath

command -v go >/dev/null || { echo "clients/go: Go is required (https://go.dev/dl, or apt-get install golang)" >&2; exit 1; }
[[ -x $root/.venv/bin/python ]] || { echo "clients/go: run make venv first (protoc comes from grpcio-tools)" >&2; exit 1; }
mkdir -p "$bin"
if [[ ! -x $bin/protoc-gen-go ]] || [[ $("$bin/protoc-gen-go" --version) != "protoc-gen-go $protobuf_version" ]]; then
  GOBIN=$bin go install "google.golang.org/protobuf/cmd/protoc-gen-go@$protobuf_version"
fi
if [[ ! -x $bin/protoc-gen-go-grpc ]] || [[ $("$bin/protoc-gen-go-grpc" --version) != "protoc-gen-go-grpc ${grpc_plugin_version#v}" ]]; then
  GOBIN=$bin go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$grpc_plugin_version"
fi

# protos/ declares no go_package: each file is mapped to the client's gen package here instead, one
# package per proto package (rummy.game.v1 -> gen/gamev1, rummy.identity.v1 -> gen/identityv1).
module=github.com/meldstream/meldstream/clients/go
maps=() protos=()
for dir in game identity; do
  for proto in "$root"/protos/rummy/$dir/v1/*.proto; do
    proto=${proto#"$root/protos/"}
    protos+=("$proto")
    maps+=("M$proto=$module/gen/${dir}v1")
  done
done
opts=$(IFS=,; echo "${maps[*]}")
rm -rf "$here/gen"
"$root/.venv/bin/python" -m grpc_tools.protoc -I "$root/protos" \
  --plugin=protoc-gen-go="$bin/protoc-gen-go" --plugin=protoc-gen-go-grpc="$bin/protoc-gen-go-grpc" \
  --go_out="$here" --go_opt="module=$module,$opts" --go-grpc_out="$here" --go-grpc_opt="module=$module,$opts" \
  "${protos[@]}"
cd "$here"
go build -o "$bin/meldstream-go" .
