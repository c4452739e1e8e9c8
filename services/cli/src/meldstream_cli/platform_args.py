"""Options shared by the subcommands that reach the platform's stores: embedded files, or Kafka + Redis.

`--store URL` names the store as MELDSTREAM_STORE does (`rummy_store.locations`); `--kafka`, `--redis`
and `--data-dir` are the separate settings it stands for, and override the environment's one by one.
The embedded default is development mode (MELDSTREAM_DEV=1 unless the environment says otherwise):
`meldstream run` with no servers takes the public development seed key and identity key secret. On
Kafka the secrets are required, as they are by every service process.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from rummy_engine import config as engine_config
from rummy_engine import refusals
from rummy_engine.config import EngineConfig
from rummy_engine.seeds import DEV_SEED_KEY
from rummy_engine.stores import EVENTS_FILE
from rummy_identity.config import DEV_KEY_SECRET
from rummy_matchmaking.config import DEV_FORWARD_SECRET, FORWARD_SECRET_VARIABLE
from rummy_service import preflight
from rummy_service.config import (
    DEV_VARIABLE,
    STORE_VARIABLE,
    ConfigError,
    WrongForm,
    check_redis_url,
    check_store_pair,
    dev_mode,
)
from rummy_service.config import secrets as checked_secrets
from rummy_store import EventLog
from rummy_store.locations import FORMS, LocationError, StoreLocation, is_kafka_url


def add_store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store", metavar="URL", help=f"the store: {FORMS} (default MELDSTREAM_STORE, or the options below)"
    )
    parser.add_argument("--kafka", help="Kafka bootstrap host:port (default: the embedded store)")
    parser.add_argument("--redis", help="Redis URL, needed with --kafka (e.g. redis://127.0.0.1:6379/0)")
    parser.add_argument("--data-dir", help="directory of the embedded store (default .local/engine)")
    parser.add_argument("--topic", help="the game events topic (default rummy.game.events.v1)")


def on_kafka(store: str = "", kafka: str = "") -> bool:
    """Whether the options (`store`, `kafka`), or else the environment, choose Kafka; asked before
    either is checked, to know the mode to check them in."""
    if store:
        return is_kafka_url(store)
    return (
        bool(kafka)
        or is_kafka_url(os.environ.get(STORE_VARIABLE, ""))
        or bool(os.environ.get("KAFKA_BOOTSTRAP"))
    )


def embedded_is_development(kafka: bool) -> None:
    """No Kafka (the embedded default): development mode, unless MELDSTREAM_DEV is set either way.

    Set in this process's environment, so the matchmaking, scoring and web settings `meldstream run`
    reads, and any process it starts, agree."""
    if not kafka and DEV_VARIABLE not in os.environ:
        os.environ[DEV_VARIABLE] = "1"


def config_from(args: argparse.Namespace, *, secrets: bool = True) -> EngineConfig:
    """The environment's configuration (ENGINE_*), overridden by command-line options: `--store` in
    place of the environment's store, or `--kafka`, `--redis`, `--data-dir` each in place of its own.

    `secrets=False` for the commands that only read the log (replay, verify): they need no secret.
    Otherwise the platform's secrets (the engine's and identity's) are checked together, so a start
    missing several names them all."""
    embedded_is_development(on_kafka(args.store, args.kafka))
    config = engine_config.load(secrets=False)
    if args.topic:
        config = replace(config, topic=args.topic)
    if args.store:
        if args.kafka or args.redis or args.data_dir:
            raise ConfigError("--store names the whole store: leave out --kafka, --redis and --data-dir")
        try:
            store = StoreLocation.parse(args.store, "--store")
        except LocationError as exc:
            raise WrongForm(str(exc)) from None
        config = replace(
            config,
            kafka=store.kafka,
            kafka_client=store.client,
            redis=store.redis,
            data_dir=store.directory or config.data_dir,
            store_setting=store.setting,
        )
        return _with_secrets(config) if secrets else config
    if args.redis:
        check_redis_url(args.redis, "--redis")
    changes = {
        name: value
        for name, value in (("kafka", args.kafka), ("redis", args.redis), ("data_dir", args.data_dir))
        if value
    }
    if changes:
        config = replace(config, **changes, store_setting="")
    check_store_pair(config.kafka, config.redis, "--kafka and --redis (or KAFKA_BOOTSTRAP and REDIS_URL)")
    return _with_secrets(config) if secrets else config


def _with_secrets(config: EngineConfig) -> EngineConfig:
    """`config` with the engine's seed key, once it, identity's key secret and matchmaking's forward
    secret are all found good (one error names every one missing)."""
    wanted = {
        "ENGINE_SEED_KEY": DEV_SEED_KEY,
        "IDENTITY_KEY_SECRET": DEV_KEY_SECRET,
        FORWARD_SECRET_VARIABLE: DEV_FORWARD_SECRET,
    }
    found = checked_secrets(wanted, dev=dev_mode())
    return replace(config, seed_key=found["ENGINE_SEED_KEY"])


def wait_for_stores(config: EngineConfig, *data_dirs: str, write: bool = True) -> None:
    """Kafka and Redis answer, and (`write`) the embedded store's directories take a write, before
    going on: one line saying what to fix otherwise (`rummy_service.preflight`). `data_dirs` are more
    directories the same setting names, beside the engine's."""
    setting = config.store_setting
    needs = replace(
        config.needs(),
        kafka_setting=setting or "--kafka (or KAFKA_BOOTSTRAP)",
        redis_setting=setting or "--redis (or REDIS_URL)",
        data_dirs=tuple((setting or "--data-dir", d) for d in (config.data_dir, *data_dirs))
        if write and config.embedded
        else (),
    )
    preflight.check(needs, lambda line: print(f"meldstream: {line}", file=sys.stderr, flush=True))


def open_refusals_readonly(config: EngineConfig) -> EventLog | None:
    """The store's refused actions (rummy_engine.refusals), for reading only; None when it has none."""
    if config.embedded:
        readable = _readable(config, refusals.EMBEDDED_FILE)
        if readable is None:
            return None
        config = readable
    return refusals.open_refusals(config)


def open_log_readonly(config: EngineConfig) -> EventLog:
    """The event log for reading only (replay and verify never append)."""
    if config.embedded:
        readable = _readable(config, EVENTS_FILE)
        if readable is None:
            path = Path(config.data_dir) / EVENTS_FILE
            raise SystemExit(
                f"meldstream: no embedded store at {path}; is {config.store_setting or '--data-dir'} right?"
            )
        config = readable
    store = config.store.open()
    return store.log(config.topic, EVENTS_FILE, config.partitions, replication=config.replication)


def _readable(config: EngineConfig, name: str) -> EngineConfig | None:
    """`config`, or the same on a private copy of its store file `name` when this process may not
    write beside it; None when the store has no such file."""
    path = Path(config.data_dir) / name
    if not path.exists():
        return None
    if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK):
        return config
    return replace(config, data_dir=str(_private_copy(path)))


def _private_copy(path: Path) -> Path:
    """The directory of a copy of a store file this process may not write (a mounted backup, a
    read-only file): sqlite needs to write beside a WAL database even to read it, so the file and its
    WAL are read from a temporary copy, removed at exit."""
    copy = Path(tempfile.mkdtemp(prefix="meldstream-readonly-"))  # one per file: names may repeat
    atexit.register(shutil.rmtree, copy, True)
    for name in (path.name, f"{path.name}-wal"):
        if (path.parent / name).exists():
            shutil.copyfile(path.parent / name, copy / name)
    print(f"meldstream: {path.parent} is read-only: reading a private copy of its store", file=sys.stderr)
    return copy
