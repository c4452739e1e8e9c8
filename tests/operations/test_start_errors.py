"""Every common configuration mistake, made as an operator would make it, against the real entry points
(`python -m rummy_<service>`, `python -m meldstream_web`, `meldstream`): one line on stderr that says
what to fix, a non-zero exit, never a traceback.

The mistakes run as processes, four at a time (each pays its imports; together they take seconds,
not a minute). Log lines may come before the last line (a warning, "waiting for Kafka"); the last line is the
refusal, prefixed by the program that refused.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from meldstream_cli.main import parser
from rummy_infra.local import free_port

GOOD = "0123456789abcdef0123456789abcdef"
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (INFO|WARNING) |^meldstream: waiting for ")
CLI = ("-m", "meldstream_cli.main")
WORKERS = 4  # processes at once: each spends about a second of CPU on its imports


@dataclass(frozen=True)
class Mistake:
    command: tuple[str, ...]  # after `python`
    env: dict[str, str]
    says: str  # a regex the last line of stderr matches
    code: int = 1
    as_user: bool = False  # run without root's override of file permissions (read-only directories)


@dataclass
class Outcome:
    code: int
    stderr: list[str] = field(default_factory=list)
    ended: float = 0.0  # Unix time


@dataclass(frozen=True)
class Places:
    busy: int  # a port something listens on
    closed: int  # a port nothing listens on
    readonly: Path
    tmp: Path


def mistakes(at: Places) -> dict[str, Mistake]:
    engine, mm = ("-m", "rummy_engine"), ("-m", "rummy_matchmaking")
    scoring, web = ("-m", "rummy_scoring"), ("-m", "meldstream_web")
    identity = ("-m", "rummy_identity")
    data = {"ENGINE_DATA_DIR": str(at.tmp / "engine"), "ENGINE_ADDRESS": "127.0.0.1:0"}
    accounts = {"IDENTITY_DATA_DIR": str(at.tmp / "identity"), "IDENTITY_ADDRESS": "127.0.0.1:0"}
    unreachable = {
        "KAFKA_BOOTSTRAP": f"127.0.0.1:{at.closed}",
        "REDIS_URL": f"redis://127.0.0.1:{at.closed}/0",
        "MELDSTREAM_CONNECT_WAIT_S": "1",
    }
    production = {"MELDSTREAM_DEV": "0", "ENGINE_SEED_KEY": GOOD, "IDENTITY_KEY_SECRET": GOOD}
    busy = f"127.0.0.1:{at.busy}"
    return {
        "engine: port in use": Mistake(
            engine,
            {**data, "ENGINE_ADDRESS": busy},
            rf"^rummy_engine: cannot listen on '{busy}': port \d+ is in use",
        ),
        "engine: port out of range": Mistake(
            engine,
            {**data, "ENGINE_ADDRESS": "127.0.0.1:99999"},
            r"^rummy_engine: ENGINE_ADDRESS='127.0.0.1:99999' is not HOST:PORT with a port 0-65535",
        ),
        "engine: no port": Mistake(
            engine,
            {**data, "ENGINE_ADDRESS": "localhost"},
            r"^rummy_engine: ENGINE_ADDRESS='localhost' is not HOST:PORT",
        ),
        "engine: host that does not resolve": Mistake(
            engine,
            {**data, "ENGINE_ADDRESS": "no-such-host.invalid:50051"},
            r"^rummy_engine: cannot listen on .*: host 'no-such-host.invalid' does not resolve",
        ),
        "engine: read-only data directory": Mistake(
            engine,
            {**data, "ENGINE_DATA_DIR": str(at.readonly / "engine")},
            r"^rummy_engine: ENGINE_DATA_DIR=.* is not a directory this process can write "
            r"\(Permission denied\)",
            as_user=True,
        ),
        "engine: Kafka unreachable": Mistake(
            engine,
            {**data, **unreachable},
            rf"^rummy_engine: Kafka at 127.0.0.1:{at.closed} did not answer within 1 s "
            r"\(connection refused\): check KAFKA_BOOTSTRAP",
        ),
        "engine: empty seed key": Mistake(
            engine,
            {**data, **production, "ENGINE_SEED_KEY": ""},
            r"^rummy_engine: ENGINE_SEED_KEY is empty: set it to a random secret",
        ),
        "engine: development secrets without development mode": Mistake(
            engine,
            {**data, "MELDSTREAM_DEV": "0"},
            r"^rummy_engine: ENGINE_SEED_KEY is not set: .* or MELDSTREAM_DEV=1 for local development",
        ),
        "engine: short seed key": Mistake(
            engine,
            {**data, **production, "ENGINE_SEED_KEY": "short"},
            r"^rummy_engine: ENGINE_SEED_KEY is 5 bytes, too short",
        ),
        "engine: certificate without its key": Mistake(
            engine,
            {**data, "TLS_CERT_FILE": str(at.tmp / "cert.pem")},
            r"^rummy_engine: set both TLS_CERT_FILE and TLS_KEY_FILE",
        ),
        "engine: store location of an unknown kind": Mistake(
            engine,
            {"ENGINE_ADDRESS": "127.0.0.1:0", "MELDSTREAM_STORE": "postgres://db/meldstream"},
            r"^rummy_engine: MELDSTREAM_STORE='postgres://db/meldstream' is not a store location \(unknown "
            r"scheme 'postgres'\): write sqlite:///DIR or kafka://",
        ),
        "engine: store location in a read-only directory": Mistake(
            engine,
            {"ENGINE_ADDRESS": "127.0.0.1:0", "MELDSTREAM_STORE": f"sqlite:///{at.readonly / 'store'}"},
            r"^rummy_engine: MELDSTREAM_STORE=.* is not a directory this process can write "
            r"\(Permission denied\)",
            as_user=True,
        ),
        "scoring: store location beside the variable it stands for": Mistake(
            scoring,
            {
                "SCORING_ADDRESS": "127.0.0.1:0",
                "MELDSTREAM_STORE": "sqlite:///x",
                "KAFKA_BOOTSTRAP": "kafka:9092",
            },
            r"^rummy_scoring: MELDSTREAM_STORE and KAFKA_BOOTSTRAP are both set: .* so unset KAFKA_BOOTSTRAP",
        ),
        "matchmaking: port out of range": Mistake(
            mm,
            {"MATCHMAKING_ADDRESS": "0.0.0.0:70000"},
            r"^rummy_matchmaking: MATCHMAKING_ADDRESS='0.0.0.0:70000' is not HOST:PORT",
        ),
        "scoring: Redis address that is not a URL": Mistake(
            scoring,
            {
                "SCORING_ADDRESS": "127.0.0.1:0",
                "KAFKA_BOOTSTRAP": "127.0.0.1:1",
                "REDIS_URL": "127.0.0.1:6379",
            },
            r"^rummy_scoring: REDIS_URL='127.0.0.1:6379' is not a Redis URL",
        ),
        "identity: development key secret without development mode": Mistake(
            identity,
            {**accounts, "MELDSTREAM_DEV": "0"},
            r"^rummy_identity: IDENTITY_KEY_SECRET is not set: .* or MELDSTREAM_DEV=1 for local development",
        ),
        "identity: short key secret": Mistake(
            identity,
            {**accounts, **production, "IDENTITY_KEY_SECRET": "short"},
            r"^rummy_identity: IDENTITY_KEY_SECRET is 5 bytes, too short",
        ),
        "web: identity address without a port": Mistake(
            web,
            {"IDENTITY_ADDRESS": "identity"},
            r"^meldstream_web: IDENTITY_ADDRESS='identity' is not HOST:PORT",
        ),
        "web: port in use": Mistake(
            web, {"WEB_ADDRESS": busy}, r"^meldstream_web: cannot listen on .* is in use"
        ),
        "meldstream run: port out of range": Mistake(
            (*CLI, "run", "--address", "127.0.0.1:99999", "--data-dir", str(at.tmp / "run")),
            {},
            r"^meldstream run: --address='127.0.0.1:99999' is not HOST:PORT",
        ),
        "meldstream run: Kafka without Redis": Mistake(
            (*CLI, "run", "--kafka", f"127.0.0.1:{at.closed}"),
            {"MELDSTREAM_DEV": "1"},
            r"^meldstream run: set both --kafka and --redis",
        ),
        "meldstream run: store location of Kafka without Redis": Mistake(
            (*CLI, "run", "--store", f"kafka://127.0.0.1:{at.closed}"),
            {"MELDSTREAM_DEV": "1"},
            rf"^meldstream run: --store='kafka://127.0.0.1:{at.closed}' names no Redis: Kafka needs one "
            "beside it",
            code=2,
        ),
        "meldstream run: Redis as host:port": Mistake(
            (*CLI, "run", "--kafka", f"127.0.0.1:{at.closed}", "--redis", "127.0.0.1:6379"),
            {"MELDSTREAM_DEV": "1"},
            r"^meldstream run: --redis='127.0.0.1:6379' is not a Redis URL: write redis://HOST:PORT/0",
            code=2,
        ),
        "meldstream replay: REDIS_URL as host:port": Mistake(
            (*CLI, "replay", "g"),
            {"KAFKA_BOOTSTRAP": f"127.0.0.1:{at.closed}", "REDIS_URL": "127.0.0.1:6379"},
            r"^meldstream replay: REDIS_URL='127.0.0.1:6379' is not a Redis URL: write redis://HOST:PORT/0",
            code=2,
        ),
        "meldstream run: every secret missing": Mistake(
            (*CLI, "run", "--store", f"kafka://127.0.0.1:{at.closed}?redis=redis://127.0.0.1:{at.closed}/0"),
            {"MELDSTREAM_DEV": "0"},
            r"^meldstream run: ENGINE_SEED_KEY is not set; IDENTITY_KEY_SECRET is not set; "
            r"MATCHMAKING_FORWARD_SECRET is not set: set each to a random secret .* or MELDSTREAM_DEV=1",
        ),
        "meldstream run: port in use": Mistake(
            (*CLI, "run", "--address", busy, "--data-dir", str(at.tmp / "run-busy" / "engine")),
            {"IDENTITY_ADDRESS": "127.0.0.1:0"},
            rf"^meldstream run: cannot listen on '{busy}': port \d+ is in use",
        ),
        "meldstream run: Kafka unreachable": Mistake(
            (*CLI, "run", "--kafka", f"127.0.0.1:{at.closed}", "--redis", f"redis://127.0.0.1:{at.closed}/0"),
            {"MELDSTREAM_DEV": "1", "MELDSTREAM_CONNECT_WAIT_S": "1", "IDENTITY_ADDRESS": "127.0.0.1:0"},
            r"^meldstream run: Kafka at .* did not answer within 1 s .*: check --kafka",
        ),
        "meldstream run: read-only data directory": Mistake(
            (*CLI, "run", "--data-dir", str(at.readonly / "engine")),
            {},
            r"^meldstream run: --data-dir=.* is not a directory this process can write",
            as_user=True,
        ),
        "meldstream token: no account named": Mistake(
            (*CLI, "token"),
            {},
            r"^meldstream: name the account to sign in as \(--name NAME\)",
        ),
        "meldstream token: identity unreachable": Mistake(
            (*CLI, "token", "--name", "ann", "--identity", f"127.0.0.1:{at.closed}"),
            {"MELDSTREAM_PASSWORD": "tests-password-1"},
            rf"^meldstream: identity at 127.0.0.1:{at.closed} refused: ",
        ),
    }


def as_user(command: list[str]) -> list[str]:
    """`command` without the capabilities that let root write where permissions say no."""
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("running as root, and setpriv (util-linux) is missing to drop root's file override")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--", *command]


def attempt(mistake: Mistake, cwd: Path) -> Outcome:
    command = [sys.executable, *mistake.command]
    env = {**os.environ, "LOG_LEVEL": "INFO", **mistake.env}
    for name in (
        "MELDSTREAM_STORE",
        "KAFKA_BOOTSTRAP",
        "REDIS_URL",
        "TLS_CERT_FILE",
        "TLS_KEY_FILE",
        "TLS_CA_FILE",
        "ENGINE_SEED_KEY",
        "IDENTITY_KEY_SECRET",
        "MATCHMAKING_FORWARD_SECRET",
    ):
        if name not in mistake.env:
            env.pop(name, None)
    done = subprocess.run(
        as_user(command) if mistake.as_user else command,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    return Outcome(done.returncode, done.stderr.splitlines(), time.time())


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Mistake, Outcome]]]:
    """Every mistake made at once, each in its own process; by name, what was made and what came of it."""
    tmp = tmp_path_factory.mktemp("mistakes")
    readonly = tmp / "readonly"
    readonly.mkdir()
    readonly.chmod(0o555)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        places = Places(held.getsockname()[1], free_port(), readonly, tmp)
        cases = mistakes(places)
        with ThreadPoolExecutor(WORKERS) as pool:
            futures = {name: pool.submit(attempt, mistake, tmp) for name, mistake in cases.items()}
            yield {name: (cases[name], future.result()) for name, future in futures.items()}
    readonly.chmod(0o755)


@pytest.mark.parametrize("name", list(mistakes(Places(0, 0, Path(), Path()))))
def test_a_mistake_ends_in_one_line_that_says_what_to_fix(
    name: str, outcomes: dict[str, tuple[Mistake, Outcome]]
) -> None:
    mistake, outcome = outcomes[name]
    text = "\n".join(outcome.stderr)
    assert "Traceback" not in text, text
    assert outcome.code == mistake.code, text
    *before, last = outcome.stderr or [""]
    assert re.search(mistake.says, last), text
    assert all(LOG_LINE.match(line) for line in before), text  # nothing but log lines before it


def test_an_unreachable_kafka_is_waited_for_visibly_and_for_a_bounded_time(
    outcomes: dict[str, tuple[Mistake, Outcome]],
) -> None:
    _, outcome = outcomes["engine: Kafka unreachable"]
    waiting = [line for line in outcome.stderr if "waiting for Kafka at 127.0.0.1:" in line]
    assert waiting, outcome.stderr
    # From the first word of waiting to the exit: MELDSTREAM_CONNECT_WAIT_S=1 and a little, about 1.1 s on
    # a quiet machine (it was 30 s of silence and a traceback). Timed from the log line, so slow imports
    # do not count; the margin is for a machine busy with other work.
    said = dt.datetime.strptime(waiting[0][:23], "%Y-%m-%d %H:%M:%S,%f").astimezone().timestamp()
    assert outcome.ended - said < 15


@pytest.mark.integration
def test_an_unreachable_redis_is_named_once_kafka_answers(kafka_bootstrap: str, tmp_path: Path) -> None:
    closed = free_port()
    mistake = Mistake(
        ("-m", "rummy_matchmaking"),
        {
            "MATCHMAKING_ADDRESS": "127.0.0.1:0",
            "KAFKA_BOOTSTRAP": kafka_bootstrap,
            "REDIS_URL": f"redis://127.0.0.1:{closed}/0",
            "MELDSTREAM_CONNECT_WAIT_S": "1",
        },
        "",
    )
    outcome = attempt(mistake, tmp_path)
    assert outcome.code == 1, outcome.stderr
    assert re.match(
        rf"^rummy_matchmaking: Redis at redis://127.0.0.1:{closed}/0 did not answer within 1 s "
        r"\(connection refused\): check REDIS_URL",
        outcome.stderr[-1],
    ), outcome.stderr


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (("-m", "rummy_engine"), "rummy_engine: interrupted while starting"),
        ((*CLI, "run", "--kafka", "KAFKA", "--redis", "REDIS"), "meldstream run: interrupted"),
    ],
)
def test_ctrl_c_while_waiting_for_kafka_stops_at_once_with_one_line(
    command: tuple[str, ...], said: str, tmp_path: Path
) -> None:
    kafka, redis = f"127.0.0.1:{free_port()}", f"redis://127.0.0.1:{free_port()}/0"
    env = {
        **os.environ,
        "ENGINE_ADDRESS": "127.0.0.1:0",
        "KAFKA_BOOTSTRAP": kafka,
        "REDIS_URL": redis,
        "MELDSTREAM_CONNECT_WAIT_S": "60",
    }
    argv = [sys.executable, *(kafka if a == "KAFKA" else redis if a == "REDIS" else a for a in command)]
    with subprocess.Popen(argv, env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert "waiting for Kafka" in first, first
        interrupted = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        code = proc.wait(30)
    assert time.monotonic() - interrupted < 5
    assert code == 130
    assert rest.splitlines()[-1] == said
    assert "Traceback" not in rest


def test_version_and_every_subcommands_help_say_what_it_does(capsys: pytest.CaptureFixture[str]) -> None:
    top = parser()
    with pytest.raises(SystemExit) as shown:
        top.parse_args(["--version"])
    assert shown.value.code == 0
    assert re.fullmatch(r"meldstream \d+\.\d+\.\d+\S*\n", capsys.readouterr().out)
    commands = next(a for a in top._actions if a.dest == "command").choices
    assert commands is not None and {"run", "token", "health", "replay", "verify"} <= set(commands)
    for name in commands:
        with pytest.raises(SystemExit) as shown:
            top.parse_args([name, "--help"])
        assert shown.value.code == 0
        text = capsys.readouterr().out
        description = text.split("\n\n")[1]  # argparse: usage, then the description, then arguments
        assert not description.startswith(("options:", "positional arguments:")), f"{name}: no description"
        assert len(description.split()) >= 8, f"{name}: {description!r}"
