"""Tokens for engine tests."""

from __future__ import annotations

from rummy_service.auth import DEV_SECRET, OPERATOR, TokenIssuer

TOKENS = TokenIssuer(DEV_SECRET)


def token(player: str, role: str = "player") -> str:
    return TOKENS.issue(player, role)


def operator_token() -> str:
    return TOKENS.issue("ops", OPERATOR)
