"""Private tables: a host's table that the invited join by a link token the platform makes.

The link token is the table id: 128 random bits (`secrets`), so nobody sits down by guessing it. A
short code (six letters and digits to read aloud, about 29 bits) is guessable, so a table that has one
seats nobody without the host's approval, whether they come by the code or by the link. A table lives
in the partition its token hashes to (its records are keyed by it, its games' TableFormed too); its
code is drawn until it hashes to the same partition, so a join by code reaches the same owner. An
invite expires (`invite_ttl_s`) unless its game has started; a started table is kept `keep_s` after
its latest game began (rematch, and leave and return), then dropped like an expired invite.

This module holds the state and its rules; `app.py` writes each change before applying it.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from rummy.matchmaking.v1 import matchmaking_pb2 as mm
from rummy_service.errors import FailedPrecondition, NotFound, PermissionDenied
from rummy_store.partitioning import partition_for

PREFIX: Final = "pt-"
CODE_ALPHABET: Final = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"  # no 0/O, 1/I: easy to read aloud
CODE_LENGTH: Final = 6
TOKEN_BYTES: Final = 16  # 128 bits
TABLE_ID_CHARS: Final = len(PREFIX) + 22  # base64url of 16 bytes
INVITE_TTL_S: Final = 3600.0  # an invite not started within an hour is dropped
KEEP_S: Final = 86400.0  # a started table: a day after its latest game began
GAMES_REMEMBERED: Final = 50_000  # finished private games each instance remembers (oldest go first)
MAX_ASKING: Final = 16  # requests waiting for the host: a flood of guessed codes stops here
MIN_TURN_MS: Final = 5_000
MAX_TURN_MS: Final = 600_000
MIN_BANK_MS: Final = 5_000  # a bank is for a long think: less is no bank, an hour leaves the table waiting
MAX_BANK_MS: Final = 600_000


def new_table_id(partition: int, partitions: int) -> str:
    """A fresh link token whose records land in `partition` (about one draw per partition)."""
    while True:
        candidate = PREFIX + secrets.token_urlsafe(TOKEN_BYTES)
        if partition_for(candidate, partitions) == partition:
            return candidate


def code_key(code: str) -> str:
    """The key a short code is routed by (to its table's partition)."""
    return "private-code\x1f" + code.upper()


def new_code(partition: int, partitions: int, taken: Mapping[str, object]) -> str:
    """A short code not in use whose key hashes to `partition`."""
    while True:
        candidate = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        if candidate not in taken and partition_for(code_key(candidate), partitions) == partition:
            return candidate


def game_id(table_id: str, number: int, partitions: int) -> str:
    """Game `number` of a table: derived from its token (a retried start is the same game) but not
    revealing it (game ids are public), with the first suffix that keeps it in the table's partition."""
    partition = partition_for(table_id, partitions)
    suffix = 0
    while True:
        seed = f"{table_id}#{number}#{suffix}"
        candidate = PREFIX + hashlib.sha256(seed.encode()).hexdigest()[:24]
        if partition_for(candidate, partitions) == partition:
            return candidate
        suffix += 1


@dataclass(slots=True)
class Player:
    player_id: str
    name: str
    bot: bool
    rematch: bool = False


@dataclass(slots=True)
class PrivateTable:
    created: mm.PrivateTableCreated
    seq: int = 1  # the last seq written under its id
    players: list[Player] = field(default_factory=list)  # seat order, the host first
    asking: list[Player] = field(default_factory=list)
    removed: set[str] = field(default_factory=set)  # removed by the host: not back by the link
    games: int = 0
    game_id: str = ""
    expires_at: float = 0.0

    @property
    def table_id(self) -> str:
        return self.created.table_id

    @property
    def host(self) -> str:
        return self.created.host

    @property
    def started(self) -> bool:
        return self.games > 0

    def seat_of(self, player: str) -> int:
        return next((i for i, p in enumerate(self.players) if p.player_id == player), -1)

    def check_join(self, player: str) -> None:
        """FAILED_PRECONDITION when `player` may not take (or ask for) a seat now."""
        if player in self.removed:
            raise FailedPrecondition("removed_by_host", "the host removed you from this table")
        if self.started:
            raise FailedPrecondition("table_started", "this table's game has started")
        if len(self.players) >= self.created.seats:
            raise FailedPrecondition("table_full", "every seat at this table is taken")

    def check_change(self, caller: str, player: str) -> None:
        """Only the host acts on another player, only before the start, never on the host's seat."""
        if caller not in (self.host, player):
            raise PermissionDenied("not_host", "only the table's host may do this")
        if self.started:
            raise FailedPrecondition("table_started", "this table's game has started")
        if player == self.host:
            raise FailedPrecondition("host_seat", "the host's seat stays: let the invite expire instead")
        if self.seat_of(player) < 0 and all(p.player_id != player for p in self.asking):
            raise NotFound("no_such_player", "that player is not at this table")

    def apply(self, change: mm.PrivateTableChanged, keep_s: float) -> bool:
        """Apply a written change; True when it fills the table or completes a rematch (a game)."""
        player = Player(change.player_id, change.player_name, change.bot)
        if change.change == mm.PRIVATE_CHANGE_JOINED:
            self.asking = [p for p in self.asking if p.player_id != player.player_id]
            if self.seat_of(player.player_id) < 0:
                self.players.append(player)
            full = len(self.players) == self.created.seats and not self.started
        elif change.change == mm.PRIVATE_CHANGE_ASKED:
            if all(p.player_id != player.player_id for p in self.asking):
                self.asking.append(player)
            full = False
        elif change.change == mm.PRIVATE_CHANGE_REMOVED:
            self.players = [p for p in self.players if p.player_id != player.player_id]
            self.asking = [p for p in self.asking if p.player_id != player.player_id]
            if change.by_host:
                self.removed.add(player.player_id)
            full = False
        elif change.change == mm.PRIVATE_CHANGE_REMATCH:
            for p in self.players:
                p.rematch = p.rematch or p.player_id == player.player_id
            full = all(p.rematch for p in self.players)
        else:
            return False
        if full:
            self.games += 1
            for p in self.players:
                p.rematch = False
            self.expires_at = change.at + keep_s
        return full
