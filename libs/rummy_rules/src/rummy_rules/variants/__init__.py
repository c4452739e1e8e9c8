"""The variants, one module each, behind the `rummy_rules.variant.Variant` protocol.

`VARIANTS` lists their ids; `variant_named(id)` returns the module's variant object. Adding a
variant: docs/adding-a-variant.md. The names re-exported below are the rules data most callers
want with them (`Rules`, `rules_for`, the enums and option classes).
"""

from __future__ import annotations

from typing import Final

from rummy_rules.options import (
    ContractOptions,
    KalookiOptions,
    Rummy40Options,
    Rummy500Options,
    VariantOptions,
)
from rummy_rules.rules import GoingOut, JokerSwap, MatchMode, Reshuffle, Rules
from rummy_rules.variant import Variant, register, registered, rules_for, variant_named
from rummy_rules.variants.contract import CONTRACT
from rummy_rules.variants.kalooki import KALOOKI
from rummy_rules.variants.rummy40 import RUMMY40, default_rummy40_deals
from rummy_rules.variants.rummy500 import RUMMY500

for _variant in (KALOOKI, RUMMY40, RUMMY500, CONTRACT):
    register(_variant)

VARIANTS: Final = registered()
PLAYABLE_VARIANTS: Final = VARIANTS

__all__ = [
    "PLAYABLE_VARIANTS",
    "VARIANTS",
    "ContractOptions",
    "GoingOut",
    "JokerSwap",
    "KalookiOptions",
    "MatchMode",
    "Reshuffle",
    "Rules",
    "Rummy40Options",
    "Rummy500Options",
    "Variant",
    "VariantOptions",
    "default_rummy40_deals",
    "rules_for",
    "variant_named",
]
