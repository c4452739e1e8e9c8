"""Forged tokens are refused everywhere: the engine, matchmaking, identity and the web gateway, each a
real service verifying with identity's public keys, which is all any of them holds.

What a service holds (the public JWK Set) cannot make a token: used as an HMAC secret (HS256) it is
refused, and so are `alg` none, a key identity never published, a token whose claims were changed
after signing, and a genuine token used for what its scope does not allow. The claims checks that
need identity's own key to forge (expiry, audience, issuer, token type) are tested against the
verifier in libs/rummy_service/tests.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from joserfc import jwt
from joserfc.jwk import OctKey, OKPKey
from rummy.game.v1 import game_service_pb2 as gs
from rummy.game.v1 import game_service_pb2_grpc as gs_grpc
from rummy.identity.v1 import identity_pb2 as pb
from rummy.identity.v1 import identity_pb2_grpc as pb_grpc
from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from rummy_client.rate_limits import retry_after
from rummy_engine.config import EngineConfig
from rummy_engine.engine import start_engine
from rummy_identity.testing import IdentityProcess
from rummy_matchmaking.config import MatchmakingConfig
from rummy_matchmaking.service import start_matchmaking
from rummy_service.auth import REGISTRY

pytestmark = pytest.mark.integration


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def _parts(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    header, payload, _ = token.split(".")
    return _decoded(header), _decoded(payload)


def _decoded(part: str) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return decoded


def forgeries(genuine: str, jwks: str, operator_id: str) -> dict[str, str]:
    """Tokens claiming to be an operator, made with everything a service (or anyone) has."""
    header, claims = _parts(genuine)
    claims = {**claims, "sub": operator_id, "scope": "operate watch", "kind": "operator"}
    public = json.loads(jwks)["keys"][0]
    stranger = OKPKey.generate_key("Ed25519", parameters={"kid": "not-identitys"})
    body = _b64(claims)
    signature = genuine.rsplit(".", 1)[1]
    return {
        "alg none": f"{_b64({**header, 'alg': 'none'})}.{body}.",
        "HS256 with the public key as its secret": jwt.encode(
            {**header, "alg": "HS256"}, claims, OctKey.import_key(json.dumps(public)), algorithms=["HS256"]
        ),
        "a key identity never published": jwt.encode(
            {**header, "kid": "not-identitys"}, claims, stranger, algorithms=["EdDSA"], registry=REGISTRY
        ),
        "identity's kid on a stranger's key": jwt.encode(
            header, claims, stranger, algorithms=["EdDSA"], registry=REGISTRY
        ),
        "claims changed after signing": f"{genuine.split('.', maxsplit=1)[0]}.{body}.{signature}",
        "garbage": "not.a.token",
    }


async def _refusal(call: Callable[..., Any], metadata: tuple[tuple[str, str], ...]) -> grpc.aio.AioRpcError:
    """The call's refusal, once past a short rate limit: this burst shares the session's identity,
    whose per-address limit the suite's other calls may have nearly spent (a client waits it out)."""
    for _ in range(20):
        try:
            await call(metadata)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                return error
            await asyncio.sleep(min(retry_after(error) or 0.1, 1.0))
        else:
            raise AssertionError("the forged token was accepted")
    raise AssertionError("still rate limited after 20 tries")


def test_no_service_accepts_a_forged_token(identity: IdentityProcess, tmp_path: Path) -> None:
    ann = identity.player("forger")
    ops = identity.operator()
    jwks = identity.call("GetJwks", pb.GetJwksRequest(), "").jwks
    forged = forgeries(ann.token(), jwks, ops.id)

    async def scenario() -> None:
        engine = await start_engine(
            EngineConfig(address="127.0.0.1:0", data_dir=str(tmp_path / "engine"), identity=identity.address)
        )
        matchmaking = await start_matchmaking(
            MatchmakingConfig(address="127.0.0.1:0", data_dir=str(tmp_path / "mm"), identity=identity.address)
        )
        try:
            async with (
                grpc.aio.insecure_channel(engine.address) as games,
                grpc.aio.insecure_channel(matchmaking.address) as queues,
                grpc.aio.insecure_channel(identity.address) as accounts,
            ):
                engine_stub: Any = gs_grpc.GameServiceStub(games)
                mm_stub: Any = mm_grpc.MatchmakingServiceStub(queues)
                id_stub: Any = pb_grpc.IdentityServiceStub(accounts)
                calls: dict[str, Callable[[tuple[tuple[str, str], ...]], Any]] = {
                    "engine CreateGame": lambda md: engine_stub.CreateGame(
                        gs.CreateGameRequest(variant="rummy40", player_ids=["x", "y"]), metadata=md
                    ),
                    "matchmaking CreateTournament": lambda md: mm_stub.CreateTournament(
                        mm.CreateTournamentRequest(variant="kalooki"), metadata=md
                    ),
                    "identity IssueResetLink": lambda md: id_stub.IssueResetLink(
                        pb.IssueResetLinkRequest(name="forger"), metadata=md
                    ),
                }
                for what, token in forged.items():
                    for where, call in calls.items():
                        refused = await _refusal(call, (("authorization", f"Bearer {token}"),))
                        assert refused.code() == grpc.StatusCode.UNAUTHENTICATED, (what, where)
                # A genuine token is refused for what its scope does not allow.
                for where, call in calls.items():
                    with pytest.raises(grpc.aio.AioRpcError) as denied:
                        await call(ann.auth())
                    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED, where
                service = identity.service_token("engine")
                with pytest.raises(grpc.aio.AioRpcError) as spectating:
                    await engine_stub.WatchGame(
                        gs.WatchGameRequest(game_id="any"),
                        metadata=(("authorization", f"Bearer {service()}"),),
                    ).read()
                assert spectating.value.code() == grpc.StatusCode.PERMISSION_DENIED
                assert engine.stores.log.last_seq("x") == 0
        finally:
            await matchmaking.stop()
            await engine.stop()

    asyncio.run(scenario())
