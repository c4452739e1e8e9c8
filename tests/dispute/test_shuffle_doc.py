"""docs/shuffle.md is the shuffle's specification for other implementations: its worked example and its
reference implementation are checked here against the rules library, so the page cannot drift from
the code that deals."""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rummy_engine.seeds import DEV_SEED_KEY, game_seed
from rummy_rules.cards import format_cards, make_deck, seed_commitment, shuffle
from rummy_rules.deal import first_deal, first_dealer
from rummy_rules.game import Contributed, deal_seed, evolve, mixed_seed, reshuffle_seed, start
from rummy_rules.variants import PLAYABLE_VARIANTS, rules_for

DOC = Path(__file__).resolve().parents[2] / "docs" / "shuffle.md"


def _block(marker: str, language: str) -> str:
    text = DOC.read_text()
    found = re.search(rf"{re.escape(marker)}.*?```{language}\n(.*?)```", text, re.S)
    assert found, f"docs/shuffle.md has no ```{language} block after {marker!r}"
    return found.group(1)


def _example(marker: str = "<!-- worked-example:") -> dict[str, str]:
    lines = _block(marker, "text").splitlines()
    return {line[:18].strip(): line[18:].strip() for line in lines if line.strip()}


def test_the_worked_example_is_what_the_code_deals() -> None:
    example = _example()
    seed = bytes.fromhex(example["seed (hex)"])
    assert base64.b64decode(example["seed (base64)"]) == seed
    assert example["commitment"] == seed_commitment(seed) == start("rummy40", 4, seed).seed_commitment
    key = deal_seed(seed, 1)
    assert example["deal 1 key (hex)"] == key.hex()
    block = hashlib.sha256(key + bytes(8)).digest()
    assert example["block 0 (hex)"] == block.hex()
    word = int.from_bytes(block[:8], "big")
    assert example["first word"] == f"{block[:8].hex()} -> i = 107, bound 108, j = {word % 108}"
    rules = rules_for("rummy40", 4)
    deck = shuffle(make_deck(rules.packs, rules.jokers), key)
    size = f"{rules.packs} packs, {rules.jokers} jokers, {len(deck)} cards"
    assert example["variant"] == f"rummy40, 4 players: {size}"
    assert deck == start("rummy40", 4, seed).deck  # the game's own first deal, not only the function
    assert example["first ten cards"] == format_cards(deck[:10])
    assert example["first dealer"] == str(first_dealer(seed, 4)) == str(start("rummy40", 4, seed).dealer)
    assert example["seat 1's hand"].startswith(f"{format_cards(deck[0:12:4])} ...")


def test_the_worked_example_with_the_seats_seeds_is_what_the_code_deals() -> None:
    example = _example("<!-- worked-example-seeds")
    game_id = example["game"].split(",")[0]
    seed = bytes.fromhex(example["seed (hex)"])
    assert seed == game_seed(DEV_SEED_KEY, game_id)  # that game's own seed on the development key
    assert example["commitment"] == seed_commitment(seed)
    seats = (bytes.fromhex(example["seat 0 seed"]), bytes.fromhex(example["seat 1 seed"]))
    framed = seed + b"".join(len(s).to_bytes(4, "big") + s for s in seats)
    assert len(framed) == 104 and example["hashed"].endswith("(104 bytes)")
    mixed = mixed_seed(seed, seats)
    assert example["shuffle seed S"] == hashlib.sha256(framed).hexdigest() == mixed.hex()
    assert example["deal 1 key (hex)"] == deal_seed(mixed, 1).hex()
    started = start("rummy40", 2, seed, deals_per_match=1)
    waiting = evolve(None, replace(started, deck=()))
    opening = first_deal(waiting, Contributed(seed, seats))  # the engine's own first deal
    rules = rules_for("rummy40", 2)
    assert (
        example["game"]
        == f"{game_id}, rummy40, 2 players: {rules.packs} pack, {rules.jokers} jokers, 54 cards"
    )
    assert example["first dealer"] == str(opening.dealer) == str(first_dealer(mixed, 2))
    assert example["first ten cards"] == format_cards(opening.deck[:10])
    assert _reference()["shuffle_seed"](seed, list(seats)) == mixed


def _reference() -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(_block("## 6. Reference implementation", "python"), namespace)  # the page's own code, as printed
    return namespace


@pytest.mark.parametrize("variant", sorted(PLAYABLE_VARIANTS))
@pytest.mark.parametrize("players", [2, 4, 5])
def test_the_reference_implementation_deals_and_reshuffles_as_the_code(variant: str, players: int) -> None:
    ref = _reference()
    rules = rules_for(variant, players)
    seed = hashlib.sha256(f"{variant}/{players}".encode()).digest()
    for deal in (1, 2, 7):
        expected = shuffle(make_deck(rules.packs, rules.jokers), deal_seed(seed, deal))
        assert ref["shuffle"](ref["deck"](rules.packs, rules.jokers), ref["deal_key"](seed, deal)) == [
            card.text for card in expected
        ]
    pile = make_deck(1, 0)[:23]
    assert ref["shuffle"]([c.text for c in pile], ref["reshuffle_key"](seed, 3)) == [
        card.text for card in shuffle(pile, reshuffle_seed(seed, 3))
    ]
