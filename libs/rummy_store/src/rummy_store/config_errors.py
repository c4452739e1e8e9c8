"""The errors a program reports in one line instead of starting: a setting it cannot use, a store of
another format. They live below every library that raises them (`rummy_contracts` checks the event
format of a game's records) so none of those imports the service layer; `rummy_service.config`
re-exports them, and every service's start (`rummy_service.process`) and `meldstream` catch
`ConfigError`."""

from __future__ import annotations


class ConfigError(ValueError):
    """A setting the service cannot use: a bad environment variable, or a store it cannot read."""


class OtherFormat(ConfigError):
    """A store written in another format than this build reads: it is refused, never upcast.

    Each service words `what` it stores, what would be `lost` by reading on, and the `remedy`.
    """

    def __init__(self, where: str, version: int, *, what: str, current: int, lost: str, remedy: str) -> None:
        age = "an older" if version < current else "a newer"
        super().__init__(
            f"{where} was written by {age} meldstream ({what} {version}; this one reads format {current}), "
            f"whose {lost} it cannot continue. Start from a new store: {remedy}"
        )
        self.version = version
