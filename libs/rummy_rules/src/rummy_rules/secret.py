"""The game's secret seed: the seeds it derives, its check against the commitment, and the probe.

The seed is never in an event before `GameEnded` nor in the state (see `game`). `decide` takes it
and uses it only where a decision deals, reshuffles or reveals; `legal_actions` decides with
`PROBE` instead, since whether a command is accepted never depends on the seed.

The seats may add seeds of their own before the first deal (`Contributed`): every shuffle then uses
`mixed_seed`, so neither the server, bound by its commitment before it sees them, nor a seat, which
never sees the server's seed in time, can choose a deal. Without contributions it is the server's
seed itself, so such games deal exactly as before.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Final

from rummy_rules.cards import seed_commitment
from rummy_rules.state import GameState


def deal_seed(seed: bytes, deal: int) -> bytes:
    """The shuffle seed of deal number `deal` (1-based, redeals included) of a game seeded `seed`."""
    return seed + b"/deal/" + deal.to_bytes(4, "big")


def reshuffle_seed(seed: bytes, count: int) -> bytes:
    """The shuffle seed of the game's `count`-th stock reshuffle (1-based)."""
    return seed + b"/reshuffle/" + count.to_bytes(4, "big")


def mixed_seed(seed: bytes, seats: tuple[bytes, ...]) -> bytes:
    """The seed every shuffle uses: `seed` when no seat contributed, else
    SHA256(seed || u32be(len(s)) || s for each seat's seed s in seat order, b"" for none)."""
    if not any(seats):
        return seed
    framed = b"".join(len(s).to_bytes(4, "big") + s for s in seats)
    return hashlib.sha256(seed + framed).digest()


@dataclass(frozen=True, slots=True)
class Contributed:
    """The server's secret seed with the seats' own seeds (seat order, b"" for a seat that sent none):
    shuffles use their `mixed_seed`; the commitment check and the reveal use `server`."""

    server: bytes
    seats: tuple[bytes, ...]


class Probe:
    """The seed `legal_actions` decides with: it only asks whether a command is accepted, which never
    depends on the seed (the seed orders cards, it does not make moves legal), and drops the events."""


PROBE: Final = Probe()
Seed = bytes | Contributed | Probe


def secret(state: GameState, seed: Seed) -> bytes:
    """The server's seed, once checked against the game's commitment: what `GameEnded` reveals."""
    if isinstance(seed, Probe):
        return b""
    server = seed.server if isinstance(seed, Contributed) else seed
    if type(server) is not bytes or seed_commitment(server) != state.seed_commitment:
        raise ValueError("the seed passed to decide does not match the game's seed commitment")
    return server


def shuffle_secret(state: GameState, seed: Seed) -> bytes:
    """The seed a deal or reshuffle uses: the checked server seed mixed with the seats' (`mixed_seed`)."""
    server = secret(state, seed)
    return mixed_seed(server, seed.seats) if isinstance(seed, Contributed) else server
