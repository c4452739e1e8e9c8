"""Options shared by the subcommands that reach the platform's stores: embedded files, or Kafka + Redis."""

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
from rummy_service.config import check_store_pair
from rummy_store import EventLog
from rummy_store.embedded_log import EmbeddedEventLog
from rummy_store.kafka_log import KafkaEventLog


def add_store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kafka", help="Kafka bootstrap host:port (default: the embedded store)")
    parser.add_argument("--redis", help="Redis URL, needed with --kafka (e.g. redis://127.0.0.1:6379/0)")
    parser.add_argument("--data-dir", help="directory of the embedded store (default .local/engine)")
    parser.add_argument("--topic", help="the game events topic (default rummy.game.events.v1)")


def config_from(args: argparse.Namespace) -> EngineConfig:
    """The environment's configuration (ENGINE_*), overridden by command-line options."""
    config = engine_config.load()
    changes = {
        name: value
        for name, value in (
            ("kafka", args.kafka),
            ("redis", args.redis),
            ("data_dir", args.data_dir),
            ("topic", args.topic),
        )
        if value
    }
    config = replace(config, **changes)
    check_store_pair(config.kafka, config.redis, "--kafka and --redis (or KAFKA_BOOTSTRAP and REDIS_URL)")
    return config


def open_refusals_readonly(config: EngineConfig) -> EventLog | None:
    """The store's refused actions (rummy_engine.refusals), for reading only; None when it has none."""
    if config.embedded:
        path = Path(config.data_dir) / refusals.EMBEDDED_FILE
        if not path.exists():
            return None
        if not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
            path = _private_copy(path)
        return EmbeddedEventLog(path, config.partitions)
    return refusals.open_refusals(config)


def open_log_readonly(config: EngineConfig) -> EventLog:
    """The event log for reading only (replay and verify never append)."""
    if config.embedded:
        path = Path(config.data_dir) / "events.sqlite"
        if not path.exists():
            raise SystemExit(f"meldstream: no embedded store at {path}; is --data-dir right?")
        if not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
            path = _private_copy(path)
        return EmbeddedEventLog(path, config.partitions)
    return KafkaEventLog(config.kafka, config.topic, config.partitions, replication=config.replication)


def _private_copy(path: Path) -> Path:
    """A copy of a store this process may not write (a mounted backup, a read-only file): sqlite needs
    to write beside a WAL database even to read it, so the store and its WAL are read from a temporary
    copy, removed at exit."""
    copy = Path(tempfile.mkdtemp(prefix="meldstream-readonly-"))  # one per file: names may repeat
    atexit.register(shutil.rmtree, copy, True)
    for name in (path.name, f"{path.name}-wal"):
        if (path.parent / name).exists():
            shutil.copyfile(path.parent / name, copy / name)
    print(f"meldstream: {path.parent} is read-only: reading a private copy of its store", file=sys.stderr)
    return copy / path.name
