"""The health proto shipped for client writers (protos/third_party) is the schema every service
serves: the one grpcio-health-checking generated our services' code from, field by field."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2

ROOT = Path(__file__).resolve().parents[2]
THIRD_PARTY = ROOT / "protos" / "third_party"


def _without_json_names(messages: Iterable[descriptor_pb2.DescriptorProto]) -> None:
    """protoc's descriptor sets name each field's JSON form; a generated module's descriptor does not."""
    for message in messages:
        for field in message.field:
            field.ClearField("json_name")
        _without_json_names(message.nested_type)


def test_the_shipped_health_proto_is_grpcs_schema(tmp_path: Path) -> None:
    out = tmp_path / "health.desc"
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-I", str(THIRD_PARTY), f"--descriptor_set_out={out}",
         "grpc/health/v1/health.proto"],
        check=True,
    )  # fmt: skip
    shipped = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]
    served = descriptor_pb2.FileDescriptorProto()
    health_pb2.DESCRIPTOR.CopyToProto(served)
    assert shipped.name == "grpc/health/v1/health.proto"  # its upstream path (grpcio's copy moved it)
    shipped.ClearField("name")
    served.ClearField("name")
    _without_json_names(shipped.message_type)
    assert shipped == served
