"""Each game's shuffle seed, derived from a server key and the game id instead of being stored.

The seed decides every deal and stock reshuffle, so whoever knows it before the end knows every hand
to come. Deriving it as HMAC-SHA256(key, game id) keeps it out of the log and the snapshots (they hold
only `GameStarted.seed_commitment`) while any engine holding the key can re-derive it after a restart;
`GameEnded` reveals it, and the shuffle is then verified against the commitment. The key must stay the
same while games are open: a game started under another key refuses its next deal (the rules check the
seed against the commitment there).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Final

DEV_SEED_KEY: Final = "meldstream-development-seed-key"
"""The embedded default's key: public, so anyone could predict every deal. Production sets ENGINE_SEED_KEY."""


def game_seed(key: str, game_id: str) -> bytes:
    return hmac.new(key.encode(), game_id.encode(), hashlib.sha256).digest()
