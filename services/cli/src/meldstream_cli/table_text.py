"""A game's view as terminal text (rich markup), for `meldstream play` and `meldstream watch`: cards with
suit symbols (red hearts and diamonds), the table, and the engine's legal actions as a person reads them.

Player ids and messages are text from outside: they enter the markup only through `name` and `plain`,
so `[bold]` in a name is shown, not obeyed (and `[/x]` cannot raise), nor is an ESC or a bidi override.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

from rich.markup import escape
from rummy.game.v1 import events_pb2 as ev
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts import action_labels
from rummy_contracts.catalogue import Words, fill, words
from rummy_rules.variants import rules_for, variant_named
from rummy_service.limits import DISPLAY_NAME
from rummy_service.text import clipped, printable

RANKS = ("JK", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = {ev.SUIT_CLUBS: "♣", ev.SUIT_DIAMONDS: "♦", ev.SUIT_HEARTS: "♥", ev.SUIT_SPADES: "♠"}
PHASES = (gs.PHASE_DRAW, gs.PHASE_PLAY, gs.PHASE_DEAL_OVER, gs.PHASE_GAME_OVER)
ENGLISH = words()
SUIT_ORDER = (ev.SUIT_CLUBS, ev.SUIT_DIAMONDS, ev.SUIT_SPADES, ev.SUIT_HEARTS, ev.SUIT_UNSPECIFIED)


def say(words_: Words, key: str, /, **params: object) -> str:
    """Catalogue message `key` as markup: its own text escaped (a `[` in a translation is shown), the
    values (markup already: cards, names made `plain`) put in as they are."""
    return fill(escape(words_.template(key)), params)


def count(words_: Words, key: str, number: int, /, **params: object) -> str:
    """`say` for a message with plural forms, chosen for `number`."""
    return fill(escape(words_.form(key, number)), {**params, "count": number})


def plain(text: str) -> str:
    """Text from outside (a refusal's message) as markup that shows it as it is, made printable.

    A backslash is markup only before a tag: rich's `escape` doubles a name's trailing one for the tag
    that may follow, and before plain text both show. So a trailing run of backslashes is doubled here
    and closed by an empty tag: each shows once, whatever the markup puts after the name."""
    shown = printable(text)
    body = shown.rstrip("\\")
    trailing = len(shown) - len(body)
    return escape(body) + ("\\" * 2 * trailing + "[none][/none]" if trailing else "")


def name(player: str) -> str:
    """A player id as markup: `plain`, cut at a display name's limit."""
    return plain(clipped(player, DISPLAY_NAME))


def names(view: gs.PlayerView, shown: Mapping[str, str] | None = None) -> list[str]:
    """The seats as markup, seat 0 first: the name `shown` for a player id (the viewer's own account
    name, which the view does not carry), else the id."""
    shown = shown or {}
    return [name(shown.get(seat.player_id, seat.player_id)) for seat in view.seats]


def card(c: ev.Card) -> str:
    if c.rank == 0:
        return "[magenta]JK[/]"
    text = RANKS[c.rank] + SUITS.get(c.suit, "?")
    return f"[red]{text}[/]" if c.suit in (ev.SUIT_HEARTS, ev.SUIT_DIAMONDS) else text


def cards(items: Iterable[ev.Card]) -> str:
    return " ".join(card(c) for c in items)


def sorted_hand(hand: Iterable[ev.Card]) -> list[ev.Card]:
    return sorted(hand, key=lambda c: (SUIT_ORDER.index(c.suit), c.rank or 99))


def voice(w: Words = ENGLISH) -> action_labels.Voice:
    """The action labels' words as markup in `w`'s language: `say`, `count` and coloured cards."""
    return action_labels.Voice(
        say=lambda key, params: say(w, key, **params),
        count=lambda key, number, params: count(w, key, number, **params),
        card=card,
    )


def action(a: gs.Action, view: gs.PlayerView, w: Words = ENGLISH) -> str:
    """How a legal action reads (the menu of `meldstream play`): the labels every client reads
    (`rummy_contracts.action_labels`), so the web table's words."""
    return action_labels.label(a, view, voice(w))


menu_order = action_labels.menu_order  # the order every client lists moves in: one home, the table's


def _option(view: gs.PlayerView, name: str) -> int | None:
    return view.options[name].int_value if name in view.options else None


def rules_note(view: gs.PlayerView, w: Words = ENGLISH) -> str:
    """What a person must know of the rules now that the moves alone do not say: contract rummy's
    round and contract, Rummy 500's pile, an opening minimum not reached yet."""
    variant = variant_named(view.variant)
    contracts = variant.round_contracts
    if contracts:
        first = _option(view, "first_round") or 1
        last = _option(view, "last_round") or len(contracts)
        rnd = first + view.deal - 1
        contract = contracts[rnd - 1] if 0 < rnd <= len(contracts) else "?"
        rounds = say(w, "rules.rounds", first=first, last=last)
        return say(w, "cli.rules_contract", round=rnd, rounds=rounds, contract=contract)
    if variant.spread_pile:
        return say(w, "cli.rules_spread_pile")
    opening = _option(view, "opening_min_points")
    if opening is None:
        opening = rules_for(view.variant, len(view.seats)).opening_min_points
    if opening and view.HasField("seat") and not view.opened[view.seat]:
        return count(w, "cli.rules_not_opened", opening)
    return ""


def table(view: gs.PlayerView, shown: Mapping[str, str] | None = None, w: Words = ENGLISH) -> list[str]:
    """The table: header, seats with scores, piles, the card on offer, melds, what the rules ask now,
    and the viewer's hand when it has one."""
    players = names(view, shown)
    over = view.phase in (gs.PHASE_DEAL_OVER, gs.PHASE_GAME_OVER)
    mover = "" if over else say(w, "table.to_move", who=f"[bold]{players[view.turn]}[/]")
    phase = say(w, f"phase.{gs.Phase.Name(view.phase)}") if view.phase in PHASES else "?"
    lines = [say(w, "table.info", variant=f"[bold]{view.variant}[/]", deal=view.deal, phase=phase) + mover]
    buying = variant_named(view.variant).buys
    for i, seat in enumerate(view.seats):
        away = (say(w, "replay.seat_away") if seat.away else "") + _presence(seat, players[i], over, w)
        buys = say(w, "seat.buys", buys=view.buys[i]) if buying and view.buys else ""
        held = count(w, "seat.cards", view.hand_sizes[i])
        lines.append(f"  {players[i]}: {held} · {say(w, 'seat.score', score=view.totals[i])}{buys}{away}")
    if view.discard_pile:  # Rummy 500's spread pile, numbered from the bottom
        pile = " ".join(f"{i + 1}:{card(c)}" for i, c in enumerate(view.discard_pile))
    else:
        pile = card(view.discard_top) if view.discard_size else "-"
    lines.append("  " + say(w, "cli.piles", stock=view.stock_size, discard=view.discard_size, pile=pile))
    if view.HasField("offer"):
        who = (
            say(w, "cli.offer_from", who=players[view.offer_from])
            if view.HasField("offer_from")
            else say(w, "cli.upcard")
        )
        asked = (
            say(w, "cli.offer_asked", who=players[view.buy_request]) if view.HasField("buy_request") else ""
        )
        until = say(w, "cli.offer_until", who=players[view.turn]) if not over else ""
        title = f"[bold]{say(w, 'cli.buy_window')}[/]"
        lines.append(
            "  "
            + say(w, "cli.offer", title=title, card=card(view.offer), source=who, until=until, asked=asked)
        )
    for m in view.melds:
        lines.append(
            "  " + say(w, "cli.meld", meld=m.index + 1, who=players[m.owner], cards=cards(m.meld.cards))
        )
    if note := rules_note(view, w):
        lines.append(f"  [italic]{note}[/]")
    if view.hand:
        lines.append("  " + say(w, "cli.hand", cards=cards(sorted_hand(view.hand))))
    return lines


def result(view: gs.PlayerView, shown: Mapping[str, str] | None = None, w: Words = ENGLISH) -> list[str]:
    players = names(view, shown)
    separator = say(w, "list.separator")
    if view.phase == gs.PHASE_GAME_OVER:
        winners = separator.join(players[s] for s in view.winners) or say(w, "result.nobody")
        head = say(w, "cli.game_over", title=f"[bold]{say(w, 'cli.game_over_title')}[/]", winners=winners)
    else:
        head = f"[bold]{say(w, 'result.deal_over', deal=view.deal)}[/]"
    totals = separator.join(f"{p} {t}" for p, t in zip(players, view.totals, strict=False))
    return [head, "  " + say(w, "cli.totals", totals=totals)]


def _presence(seat: gs.SeatInfo, name: str, over: bool, w: Words) -> str:
    """A seat's time bank left, and its player gone ("Bo disconnected, 25 s") or forfeited (M3)."""
    out = ""
    if seat.bank_left_ms:
        whole = round(seat.bank_left_ms / 1000)
        out += " · " + say(w, "seat.bank", time=f"{whole // 60}:{whole % 60:02d}")
    if seat.presence == gs.SEAT_PRESENCE_FORFEITED:
        out += " · " + say(w, "seat.forfeited")
    elif seat.presence == gs.SEAT_PRESENCE_DISCONNECTED and not over:
        left = max(0, round(seat.grace_ends_at.ToMicroseconds() / 1e6 - time.time()))
        key = "seat.disconnected" if left else "seat.disconnected_auto"
        out += " · " + say(w, key, who=name, left=left)
    return out
