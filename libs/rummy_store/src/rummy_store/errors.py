"""Errors the stores raise; each leaves the log unchanged."""


class StoreError(Exception):
    """Base class: the request was refused and nothing was written."""


class ConcurrencyError(StoreError):
    """The expected sequence number is not the game's last one: someone else appended first."""

    def __init__(self, game_id: str, expected_seq: int, actual_seq: int) -> None:
        super().__init__(f"game {game_id}: expected last seq {expected_seq}, log has {actual_seq}")
        self.game_id = game_id
        self.expected_seq = expected_seq
        self.actual_seq = actual_seq


class NotWriterError(StoreError):
    """This process does not hold (or has lost) the write lease of the game."""
