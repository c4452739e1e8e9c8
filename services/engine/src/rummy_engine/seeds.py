"""Each game's shuffle seed, derived from a server key and the game id instead of being stored.

The seed decides every deal and stock reshuffle, so whoever knows it before the end knows every hand
to come. Deriving it as HMAC-SHA256(key, game id) keeps it out of the log and the snapshots (they hold
only `GameStarted.seed_commitment`) while any engine holding the key can re-derive it after a restart;
`GameEnded` reveals it, and the shuffle is then verified against the commitment. The key must stay the
same while games are open: a game started under another key refuses its next deal (the rules check the
seed against the commitment there).

Before the first deal each seat may add a seed of its own (ContributeSeed, logged as `SeedContributed`);
every shuffle then uses `rummy_rules.secret.mixed_seed` of the server's seed and all the seats'. The
engine waits for them at most its seed window (ENGINE_SEED_WINDOW_MS), so a seat that sends nothing
only makes its table wait that long.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Final

from rummy_service.errors import InvalidArgument

DEV_SEED_KEY: Final = "meldstream-development-seed-key"
"""The embedded default's key: public, so anyone could predict every deal. Production sets ENGINE_SEED_KEY."""


def game_seed(key: str, game_id: str) -> bytes:
    return hmac.new(key.encode(), game_id.encode(), hashlib.sha256).digest()


CONTRIBUTED_MIN: Final = 16
CONTRIBUTED_MAX: Final = 64
"""A seat's own seed is 16 to 64 bytes: enough to be unguessable, too short to carry anything else."""


def check_contributed(seed: bytes) -> None:
    """INVALID_ARGUMENT `bad_seed_length` for a seat's seed of the wrong length (checked first)."""
    if not CONTRIBUTED_MIN <= len(seed) <= CONTRIBUTED_MAX:
        raise InvalidArgument(
            "bad_seed_length", f"a seed is {CONTRIBUTED_MIN}-{CONTRIBUTED_MAX} bytes, not {len(seed)}"
        )
