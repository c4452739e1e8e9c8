"""Private tables: the platform's link token, expiry, a wrong token, the short code's approval, the host
removing a seat, a rematch, and a restarted instance folding it all back (on its embedded journal, and
on real Kafka)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy.scoring.v1 import scoring_pb2 as sc
from rummy_identity.testing import IdentityProcess
from rummy_matchmaking import journal
from rummy_matchmaking.app import MatchmakingApp
from rummy_matchmaking.config import MatchmakingConfig
from rummy_matchmaking.private_tables import CODE_ALPHABET, CODE_LENGTH, MAX_ASKING
from rummy_matchmaking.service import open_journal, start_matchmaking
from rummy_service.auth import PLAY, Principal
from rummy_service.errors import FailedPrecondition, NotFound, PermissionDenied
from rummy_store import EventRecord
from rummy_store.records import LogPosition

HOST = Principal("ann", frozenset({PLAY}), name="Ann")
BO = Principal("bo", frozenset({PLAY}), name="Bo")
CY = Principal("cy", frozenset({PLAY}), name="Cy")


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def config(tmp_path: Path) -> MatchmakingConfig:
    return MatchmakingConfig(data_dir=str(tmp_path), partitions=4)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@asynccontextmanager
async def _app(config: MatchmakingConfig, clock: Clock) -> AsyncIterator[MatchmakingApp]:
    """An app owning every partition of the journal, folded from what is written there so far."""
    log = open_journal(config, writer=True)
    try:
        app = MatchmakingApp(log, clock=clock, invite_ttl_s=60, keep_s=600)
        await app.adopt(range(log.partitions), journal.read_journal(log, range(log.partitions)))
        yield app
    finally:
        log.close()


def _request(seats: int = 2, code: bool = False) -> mm.CreatePrivateTableRequest:
    request = mm.CreatePrivateTableRequest(variant="rummy40", seats=seats, short_code=code)
    request.options["deals_per_match"].int_value = 1
    return request


def _scored(app: MatchmakingApp, game_id: str) -> None:
    event = sc.ScoringEvent(game_id=game_id, match_scored=sc.MatchScored(variant="rummy40"))
    position = LogPosition(0, 0)
    app.on_scoring_record(
        EventRecord(game_id, 1, "c", "match_scored", 1, event.SerializeToString(), position)
    )


def _records(config: MatchmakingConfig) -> int:
    with open_journal(config) as log:
        return sum(log.end_offset(p) for p in range(log.partitions))


def _run(scenario: Any) -> None:
    asyncio.run(scenario())


def test_the_link_seats_the_invited_and_the_full_table_starts_its_game(
    config: MatchmakingConfig, clock: Clock
) -> None:
    async def scenario() -> None:
        async with _app(config, clock) as app:
            table = await app.create_private_table(HOST, _request(3), 1)
            token = table.table_id
            assert token.startswith("pt-") and len(token) == 25  # 128 random bits, base64url
            other = await app.create_private_table(HOST, _request(3), 1)
            assert other.table_id != token
            await app.join_private(BO, token, "")
            await app.join_private(BO, token, "")  # back at the seat: nothing changes
            assert [p.player_id for p in table.players] == ["ann", "bo"] and table.game_id == ""
            with pytest.raises(PermissionDenied, match="not_host"):
                await app.remove_private(BO, token, "ann")
            with pytest.raises(FailedPrecondition, match="host_seat"):
                await app.remove_private(HOST, token, "ann")
            await app.remove_private(HOST, token, "bo")  # the host removes a seat before the start
            with pytest.raises(FailedPrecondition, match="removed_by_host"):
                await app.join_private(BO, token, "")
            await app.join_private(CY, token, "")
            dee = Principal("dee", frozenset({PLAY}), name="Dee")
            fay = Principal("fay", frozenset({PLAY}), name="Fay")
            # Two at once for the last seat: one sits, the other is refused (checked under the lock).
            raced = await asyncio.gather(
                app.join_private(dee, token, ""), app.join_private(fay, token, ""), return_exceptions=True
            )
            assert raced[0] is table and isinstance(raced[1], FailedPrecondition)
            assert str(raced[1]).startswith("table_started")
            assert table.game_id.startswith("pt-") and token[3:] not in table.game_id
            assert [p.player_id for p in table.players] == ["ann", "cy", "dee"]
            with pytest.raises(FailedPrecondition, match="table_started"):
                await app.remove_private(HOST, token, "cy")
            eve = Principal("eve", frozenset({PLAY}), name="Eve")
            with pytest.raises(FailedPrecondition, match="table_started"):
                await app.join_private(eve, token, "")
        async with _app(config, clock) as again:  # another instance folds the table back
            back = again.private_table(token)
            assert back.game_id == table.game_id and back.removed == {"bo"}
            assert [p.player_id for p in back.players] == ["ann", "cy", "dee"]
            with open_journal(config) as log:
                games = [
                    r
                    for p in range(log.partitions)
                    for r in log.read_partition(p)
                    if r.event_type == "table_formed"
                ]
            formed = mm.MatchmakingEvent.FromString(games[0].payload).table_formed
            assert [g.game_id for g in games] == [token]  # written under the table's key
            assert formed.game_id == table.game_id and list(formed.player_ids) == ["ann", "cy", "dee"]
            assert not formed.rated and formed.options["deals_per_match"].int_value == 1

    _run(scenario)


def test_a_wrong_token_and_an_expired_invite_are_not_found(config: MatchmakingConfig, clock: Clock) -> None:
    async def scenario() -> None:
        async with _app(config, clock) as app:
            table = await app.create_private_table(HOST, _request(), 0)
            near = table.table_id[:-1] + ("B" if table.table_id.endswith("A") else "A")
            before = _records(config)
            for wrong in ("pt-friday", near, "pt-"):
                with pytest.raises(NotFound, match="no_such_table"):
                    await app.join_private(BO, wrong, "")
            assert _records(config) == before and len(table.players) == 1  # a guess changes nothing
            clock.now += 61  # past the invite's time
            with pytest.raises(NotFound, match="no_such_table"):
                await app.join_private(BO, table.table_id, "")
            assert app.drop_expired() == 1 and not app.private
        async with _app(config, clock) as again:  # an expired invite is not folded back either
            assert not again.private

    _run(scenario)


def test_a_short_code_asks_the_host_who_approves(config: MatchmakingConfig, clock: Clock) -> None:
    async def scenario() -> None:
        async with _app(config, clock) as app:
            table = await app.create_private_table(HOST, _request(2, code=True), 2)
            code = table.created.short_code
            assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
            with pytest.raises(NotFound, match="no_such_code"):
                await app.join_private(BO, "", "ZZZZZ1")
            await app.join_private(BO, "", code.lower())
            await app.join_private(CY, table.table_id, "")  # the link asks too: the code is guessable
            assert [p.player_id for p in table.players] == ["ann"]
            assert [p.player_id for p in table.asking] == ["bo", "cy"]
            with pytest.raises(PermissionDenied, match="not_host"):
                await app.approve_private(BO, table.table_id, "bo")
            await app.remove_private(HOST, table.table_id, "cy")  # refused
            for n in range(MAX_ASKING - 1):  # guessers' requests wait, up to a bound
                await app.join_private(Principal(f"g{n}", frozenset({PLAY})), "", code)
            with pytest.raises(FailedPrecondition, match="too_many_asking"):
                await app.join_private(Principal("eve", frozenset({PLAY})), "", code)
            for n in range(MAX_ASKING - 1):
                await app.remove_private(HOST, table.table_id, f"g{n}")
            await app.approve_private(HOST, table.table_id, "bo")
            assert [p.player_id for p in table.players] == ["ann", "bo"] and table.game_id
            assert table.asking == []

    _run(scenario)


def test_a_rematch_starts_when_every_player_accepts_after_the_game(
    config: MatchmakingConfig, clock: Clock
) -> None:
    async def scenario() -> None:
        async with _app(config, clock) as app:
            table = await app.create_private_table(HOST, _request(), 3)
            await app.join_private(BO, table.table_id, "")
            first = table.game_id
            with pytest.raises(FailedPrecondition, match="game_not_over"):
                await app.accept_rematch(HOST, table.table_id)
            with pytest.raises(PermissionDenied, match="not_seated"):
                await app.accept_rematch(CY, table.table_id)
            clock.now += 500  # a long game: the table is kept from its start, past the invite's time
            _scored(app, first)
            await app.accept_rematch(HOST, table.table_id)
            assert table.game_id == first and table.players[0].rematch
            await app.accept_rematch(BO, table.table_id)
            assert table.game_id not in ("", first) and table.games == 2
            assert not any(p.rematch for p in table.players)
        async with _app(config, clock) as again:
            assert again.private_table(table.table_id).game_id == table.game_id

    _run(scenario)


@pytest.fixture
def served(tmp_path: Path, identity: IdentityProcess) -> Iterator[MatchmakingConfig]:
    yield MatchmakingConfig(
        address="127.0.0.1:0", data_dir=str(tmp_path), pairing_interval_ms=50, identity=identity.address
    )


async def _code(call: Any) -> tuple[grpc.StatusCode, str]:
    try:
        await call
    except grpc.aio.AioRpcError as error:
        return error.code(), (error.details() or "").split(":")[0]
    raise AssertionError("the call succeeded")


def test_over_grpc_each_sees_the_table_as_theirs_and_bad_tokens_get_reasons(
    served: MatchmakingConfig, identity: IdentityProcess
) -> None:
    async def scenario() -> None:
        running = await start_matchmaking(served)
        try:
            async with grpc.aio.insecure_channel(running.address) as channel:
                stub: Any = mm_grpc.MatchmakingServiceStub(channel)
                ann, bob = identity.player("pt-ann").auth(), identity.player("pt-bob").auth()
                created = (await stub.CreatePrivateTable(_request(2, code=True), metadata=ann)).table
                assert created.short_code and created.your_seat == 0
                join = mm.JoinPrivateTableRequest(short_code=created.short_code)
                asked = (await stub.JoinPrivateTable(join, metadata=bob)).table
                assert asked.your_seat == -1 and asked.short_code == "" and len(asked.asking) == 1
                get = mm.GetPrivateTableRequest(table_id=created.table_id)
                seen = (await stub.GetPrivateTable(get, metadata=ann)).table
                approve = mm.ApprovePrivateSeatRequest(
                    table_id=created.table_id, player_id=seen.asking[0].player_id
                )
                started = (await stub.ApprovePrivateSeat(approve, metadata=ann)).table
                assert started.game_id and [p.name for p in started.players] == ["pt-ann", "pt-bob"]
                assert (await stub.GetPrivateTable(get, metadata=bob)).table.your_seat == 1
                wrong = mm.GetPrivateTableRequest(table_id="pt-friday")
                assert await _code(stub.GetPrivateTable(wrong, metadata=bob)) == (
                    grpc.StatusCode.NOT_FOUND,
                    "no_such_table",
                )
                long = mm.JoinPrivateTableRequest(table_id="pt-" + "x" * 100)
                assert await _code(stub.JoinPrivateTable(long, metadata=bob)) == (
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "too_long",
                )
                assert await _code(stub.CreatePrivateTable(_request(9), metadata=ann)) == (
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "bad_player_count",
                )
        finally:
            await running.stop()

    asyncio.run(scenario())
