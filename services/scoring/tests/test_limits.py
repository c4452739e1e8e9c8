"""Every string field of scoring's requests has a length limit, checked before any store is read: a
4 MB game id is refused `too_long` and never echoed (GetMatchResult once answered NOT_FOUND quoting
all of it)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.descriptor import FieldDescriptor
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy.scoring.v1 import scoring_pb2_grpc as sc_grpc
from rummy_scoring.config import ScoringConfig
from rummy_scoring.server import LIMITS
from rummy_scoring.service import start_scoring
from rummy_service.errors import QUOTED_CHARS
from rummy_service.limits import text_fields

SERVICE = sc.DESCRIPTOR.services_by_name["ScoringService"]
HUGE = "x" * ((4 << 20) - 1024)  # just under gRPC's 4 MB message limit


def test_every_string_field_has_a_limit() -> None:
    for method in SERVICE.methods:
        assert text_fields(method.input_type) <= set(LIMITS), method.name


def _oversized(method: Any, field: FieldDescriptor) -> Any:
    """The method's request with `field` over its limit and every other string field at its limit."""
    request = getattr(sc, method.input_type.name)()
    for other in method.input_type.fields:
        if other.type == FieldDescriptor.TYPE_STRING:
            setattr(request, other.name, HUGE if other is field else "a" * LIMITS[other.name])
    return request


async def _answers(tmp_path: Path) -> dict[str, tuple[grpc.StatusCode, str]]:
    config = ScoringConfig(
        address="127.0.0.1:0",
        data_dir=str(tmp_path / "scoring"),
        game_file=str(tmp_path / "engine" / "events.sqlite"),
        tables_file=str(tmp_path / "matchmaking" / "tables.sqlite"),
    )
    scoring = await start_scoring(config)
    answers = {}
    try:
        async with grpc.aio.insecure_channel(scoring.address) as channel:
            stub: Any = sc_grpc.ScoringServiceStub(channel)
            for method in SERVICE.methods:
                for field in method.input_type.fields:
                    if field.type != FieldDescriptor.TYPE_STRING:
                        continue
                    try:
                        await getattr(stub, method.name)(_oversized(method, field))
                    except grpc.aio.AioRpcError as error:
                        answers[f"{method.name}.{field.name}"] = (error.code(), error.details() or "")
                    else:
                        answers[f"{method.name}.{field.name}"] = (grpc.StatusCode.OK, "")
    finally:
        await scoring.stop()
    return answers


def test_an_oversized_field_is_refused_before_any_read_and_never_echoed(tmp_path: Path) -> None:
    answers = asyncio.run(_answers(tmp_path))
    assert len(answers) == 7, answers  # game, tournament, two players, two variants and a period
    for where, (code, details) in answers.items():
        field = where.partition(".")[2]
        assert code is grpc.StatusCode.INVALID_ARGUMENT, (where, code, details[:200])
        assert details == f"too_long: {field} has {len(HUGE)} characters; at most {LIMITS[field]}", where
        assert "x" * QUOTED_CHARS not in details
