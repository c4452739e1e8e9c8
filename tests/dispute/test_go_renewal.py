"""The Go client (clients/go) renews its access tokens: given a personal API token or a session's refresh
token, it plays a game lasting two access tokens' lives or more to the end, on an identity service issuing
10-second tokens (IDENTITY_ACCESS_TTL_S' least), and a real engine. Identity's and the engine's
/metrics count what happened: every token exchange it made, and no call the engine refused. The same
game with one static access token is refused once that token expires."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from rummy.identity.v1 import identity_pb2 as pb
from rummy_contracts.house import house_bots
from rummy_identity.testing import PASSWORD, IdentityProcess
from rummy_infra.local import free_port
from rummy_infra.serving import ServiceProcess

TTL_S = 10  # the access tokens' life here: the least IDENTITY_ACCESS_TTL_S takes
LIFETIMES = 2  # a game outlasts at least this many tokens (renewed about every half of one)
SEATS = 3  # a person and two house bots, whose seats her client plays
PACE = "130ms"  # before each action: the least game below lasts 176 x 130 ms > LIFETIMES x TTL_S
# Fixed game ids, so the same deals and the same game every run (the engine's development seed key, and
# the client's choices are deterministic): kalooki games of 176, 194 and 148 actions, ~23-25 s at PACE.
GAMES = {"api-tokens": "go-renewal-1", "refresh-tokens": "go-renewal-16", "static": "go-renewal-20"}
IDENTITY_SERVICE = "rummy.identity.v1.IdentityService"
GAME_SERVICE = "rummy.game.v1.GameService"


@pytest.fixture(scope="module")
def go_client(go_built: Path) -> Path:
    """The session's build (conftest.go_built), as `make test` builds it."""
    return go_built


class Metered:
    """A service process and its /metrics."""

    def __init__(self, metrics: str) -> None:
        self.metrics = metrics

    def calls(self, service: str, method: str = "", code: str = "OK") -> float:
        """grpc_server_handled_total of `service` (`method`, or every method) answered `code`."""
        with urllib.request.urlopen(f"http://{self.metrics}/metrics", timeout=10) as reply:
            text = reply.read().decode()
        return sum(
            sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
            if sample.name == "grpc_server_handled_total"
            and sample.labels.get("grpc_service") == service
            and (not method or sample.labels.get("grpc_method") == method)
            and sample.labels.get("grpc_code") == code
        )


@pytest.fixture(scope="module")
def short_lived() -> Iterator[tuple[IdentityProcess, Metered]]:
    """An identity of its own (the session's issues 10-minute tokens), issuing 10-second ones."""
    metrics = f"127.0.0.1:{free_port()}"
    identity = IdentityProcess({"IDENTITY_ACCESS_TTL_S": str(TTL_S), "IDENTITY_METRICS_ADDRESS": metrics})
    identity.start()
    yield identity, Metered(metrics)
    identity.stop()


@pytest.fixture(scope="module")
def engine(
    tmp_path_factory: pytest.TempPathFactory, short_lived: tuple[IdentityProcess, Metered]
) -> Iterator[tuple[ServiceProcess, Metered]]:
    identity, _ = short_lived
    data = tmp_path_factory.mktemp("engine")
    address, metrics = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "MELDSTREAM_DEV": "1",
        "ENGINE_ADDRESS": address,
        "ENGINE_DATA_DIR": str(data / "store"),
        "ENGINE_METRICS_ADDRESS": metrics,
        **identity.service_env(),
    }
    process = ServiceProcess("rummy_engine", env, address, data / "engine.log")
    process.start()
    yield process, Metered(metrics)
    process.stop()


def play(
    client: Path,
    engine: ServiceProcess,
    identity: IdentityProcess,
    *,
    game: str,
    player: str,
    credential: str,
) -> list[str]:
    """The command line of a kalooki game of `player` and the house bots, every seat with `credential`
    (a flag=value), at the pace of a person."""
    return [
        str(client),
        f"-address={engine.address}",
        f"-identity={identity.address}",
        "-variant=kalooki",
        f"-game={game}",
        f"-players={','.join([player, *house_bots(SEATS)])}",
        credential,
        f"-pace={PACE}",
        "-timeout=240s",
    ]


def sleep_through(process: subprocess.Popen[str], after_s: float, for_s: float) -> None:
    """Stop `process` after `after_s` for `for_s` (SIGSTOP, SIGCONT): a laptop closed mid-game."""
    time.sleep(after_s)
    if process.poll() is None:
        process.send_signal(signal.SIGSTOP)
        time.sleep(for_s)
        process.send_signal(signal.SIGCONT)


@pytest.mark.slow
def test_the_go_client_renews_its_tokens_through_games_outlasting_them(
    go_client: Path,
    short_lived: tuple[IdentityProcess, Metered],
    engine: tuple[ServiceProcess, Metered],
) -> None:
    """Two games at once, each outlasting two tokens or more: one renewed from a personal API token
    (ExchangeApiToken), one from a session's refresh token (Refresh), asleep for longer than a
    token's life mid-game. Side by side, as the two are paced and so mostly wait."""
    identity, identity_metrics = short_lived
    engine_process, engine_metrics = engine
    ann = identity.player("go-renewing-ann")
    secrets = {  # a personal API token of her own, and a session of hers
        "api-tokens": identity.call(
            "CreateApiToken", pb.CreateApiTokenRequest(account_id=ann.id), ann.token
        ).api_token,
        "refresh-tokens": identity.client.sign_in(ann.name, PASSWORD, device="go-client").refresh_token,
    }
    methods = {"api-tokens": "ExchangeApiToken", "refresh-tokens": "Refresh"}
    exchanges = {kind: identity_metrics.calls(IDENTITY_SERVICE, method) for kind, method in methods.items()}
    refused = engine_metrics.calls(GAME_SERVICE, code="UNAUTHENTICATED")
    began = time.monotonic()
    processes = {
        kind: subprocess.Popen(
            play(
                go_client,
                engine_process,
                identity,
                game=GAMES[kind],
                player=ann.id,
                credential=f"-{kind}={','.join([secret] * SEATS)}",
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for kind, secret in secrets.items()
    }
    sleeper = processes["refresh-tokens"]
    threading.Thread(target=sleep_through, args=(sleeper, 8.0, TTL_S + 3.0), daemon=True).start()

    def finished(process: subprocess.Popen[str]) -> tuple[str, str, float]:
        out, err = process.communicate(timeout=300)
        return out, err, time.monotonic() - began

    with ThreadPoolExecutor(len(processes)) as pool:
        ended = dict(zip(processes, pool.map(finished, processes.values()), strict=True))
    for kind, process in processes.items():
        out, err, took = ended[kind]
        assert process.returncode == 0, kind + out[-3000:] + err
        assert re.search(r"^verified go-renewal-\S+: kalooki, \d+ deals", out, re.M), out[-3000:]
        assert secrets[kind] not in out + err
        assert took > LIFETIMES * TTL_S, (
            f"{kind}: the game lasted {took:.0f} s, not {LIFETIMES} tokens' lives"
        )
        # Identity issued a token at least every lifetime, about every half of one (its metrics), each
        # of them counted by the client (one renewer for the three seats she plays): not one per call.
        issued = identity_metrics.calls(IDENTITY_SERVICE, methods[kind]) - exchanges[kind]
        assert took / TTL_S <= issued <= 3 * took / TTL_S + 2, (kind, issued, took)
        summary = re.search(
            r"^meldstream-go: (\d+) access tokens from identity \(per credential: (\d+)\)$", err, re.M
        )
        assert summary and int(summary.group(1)) == issued, err
    # Renewed ahead of expiry, and after the sleep before the first call: the engine refused no call.
    assert engine_metrics.calls(GAME_SERVICE, code="UNAUTHENTICATED") == refused


@pytest.mark.slow
def test_a_static_access_token_is_refused_once_it_expires(
    go_client: Path, short_lived: tuple[IdentityProcess, Metered], engine: tuple[ServiceProcess, Metered]
) -> None:
    """The same game with one access token (-tokens): refused token_expired within its life, so the
    game above finished because its tokens were renewed."""
    identity, _ = short_lived
    engine_process, _ = engine
    ann = identity.player("go-static-ann")
    issued = identity.call("CreateApiToken", pb.CreateApiTokenRequest(account_id=ann.id), ann.token).api_token
    token = identity.client.exchange(issued).token
    command = play(
        go_client,
        engine_process,
        identity,
        game=GAMES["static"],
        player=ann.id,
        credential=f"-tokens={','.join([token] * SEATS)}",
    )
    began = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr
    assert time.monotonic() - began < TTL_S + 5
    assert re.search(r'UNAUTHENTICATED "token_expired: ', done.stderr), done.stderr


def test_a_credential_identity_refuses_ends_the_client_with_identity_s_answer(
    go_client: Path, short_lived: tuple[IdentityProcess, Metered], engine: tuple[ServiceProcess, Metered]
) -> None:
    identity, _ = short_lived
    engine_process, _ = engine
    secret = "msk_" + "x" * 200  # no API token of this platform: never echoed
    command = play(
        go_client,
        engine_process,
        identity,
        game="go-renewal-refused",
        player="someone",
        credential=f"-api-tokens={secret},{secret},{secret}",
    )
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(
        r"^meldstream-go: renewing seat 0's API token at identity \S+: ExchangeApiToken: UNAUTHENTICATED "
        r'"token_revoked: ',
        done.stderr,
        re.M,
    ), done.stderr
    assert "x" * 40 not in done.stderr
