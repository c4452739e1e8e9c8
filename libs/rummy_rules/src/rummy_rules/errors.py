"""The one error type of the rules engine: a refused action, with a code machines can switch on."""

from __future__ import annotations


class RuleViolation(Exception):
    """An action or input the rules refuse; raising it never changes any state.

    `code` is a stable snake_case identifier (`not_your_turn`, `opening_below_minimum`), `message`
    is written for the player, and `rule` cites the spec passage it rests on (`kalooki §3.6 D7`),
    so clients, services and support staff can all act on the same refusal.
    """

    def __init__(self, code: str, message: str, rule: str = "") -> None:
        super().__init__(f"{code}: {message}" + (f" ({rule})" if rule else ""))
        self.code = code
        self.message = message
        self.rule = rule

    def __reduce__(self) -> tuple[type[RuleViolation], tuple[str, str, str]]:
        return (RuleViolation, (self.code, self.message, self.rule))
