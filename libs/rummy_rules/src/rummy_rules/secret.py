"""The game's secret seed: the seeds it derives, its check against the commitment, and the probe.

The seed is never in an event before `GameEnded` nor in the state (see `game`). `decide` takes it
and uses it only where a decision deals, reshuffles or reveals; `legal_actions` decides with
`PROBE` instead, since whether a command is accepted never depends on the seed.
"""

from __future__ import annotations

from typing import Final

from rummy_rules.cards import seed_commitment
from rummy_rules.state import GameState


def deal_seed(seed: bytes, deal: int) -> bytes:
    """The shuffle seed of deal number `deal` (1-based, redeals included) of a game seeded `seed`."""
    return seed + b"/deal/" + deal.to_bytes(4, "big")


def reshuffle_seed(seed: bytes, count: int) -> bytes:
    """The shuffle seed of the game's `count`-th stock reshuffle (1-based)."""
    return seed + b"/reshuffle/" + count.to_bytes(4, "big")


class Probe:
    """The seed `legal_actions` decides with: it only asks whether a command is accepted, which never
    depends on the seed (the seed orders cards, it does not make moves legal), and drops the events."""


PROBE: Final = Probe()
Seed = bytes | Probe


def secret(state: GameState, seed: Seed) -> bytes:
    """The seed, once checked against the game's commitment: called only where a decision uses it."""
    if isinstance(seed, Probe):
        return b""
    if type(seed) is not bytes or seed_commitment(seed) != state.seed_commitment:
        raise ValueError("the seed passed to decide does not match the game's seed commitment")
    return seed
