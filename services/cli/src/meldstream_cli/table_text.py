"""A game's view as terminal text (rich markup), for `meldstream play` and `meldstream watch`: cards with
suit symbols (red hearts and diamonds), the table, and the engine's legal actions as a person reads them.

Player ids and messages are text from outside: they enter the markup only through `name` and `plain`,
so `[bold]` in a name is shown, not obeyed (and `[/x]` cannot raise), nor is an ESC or a bidi override.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.markup import escape
from rummy.game.v1 import events_pb2 as ev
from rummy.game.v1 import game_service_pb2 as gs
from rummy_rules.variants import rules_for, variant_named
from rummy_service.limits import DISPLAY_NAME
from rummy_service.text import clipped, printable

RANKS = ("JK", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = {ev.SUIT_CLUBS: "♣", ev.SUIT_DIAMONDS: "♦", ev.SUIT_HEARTS: "♥", ev.SUIT_SPADES: "♠"}
PHASES = {
    gs.PHASE_DRAW: "draw",
    gs.PHASE_PLAY: "play",
    gs.PHASE_DEAL_OVER: "deal over",
    gs.PHASE_GAME_OVER: "game over",
}
SUIT_ORDER = (ev.SUIT_CLUBS, ev.SUIT_DIAMONDS, ev.SUIT_SPADES, ev.SUIT_HEARTS, ev.SUIT_UNSPECIFIED)


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


def _melds(melds: Iterable[gs.MeldCards]) -> str:
    return " | ".join(cards(m.cards) for m in melds)


def _lay_off(lay: gs.LayOff) -> str:
    end = {gs.RUN_END_LOW: " (low end)", gs.RUN_END_HIGH: " (high end)"}.get(lay.at, "")
    return f"lay off {cards(lay.cards)} on meld {lay.meld + 1}{end}"


def _then(use: gs.PickFromPile | gs.SwapJoker) -> str:
    """The meld or layoff a pick (or a freed joker) is used in at once."""
    if use.HasField("lay_melds"):
        return f", then meld {_melds(use.lay_melds.melds)}"
    if use.HasField("lay_off"):
        return f", then {_lay_off(use.lay_off)}"
    return ""


def action(a: gs.Action, view: gs.PlayerView) -> str:
    """How a legal action reads (the menu of `meldstream play`)."""
    kind = a.WhichOneof("kind")
    if kind == "draw_from_stock":
        return "Draw from stock"
    if kind == "take_discard":
        return f"Take discard {card(view.discard_top)}"
    if kind == "lay_melds":
        return f"Meld {_melds(a.lay_melds.melds)}"
    if kind == "lay_off":
        return _lay_off(a.lay_off).capitalize()
    if kind == "discard":
        return f"Discard {card(a.discard.card)}"
    if kind == "go_out":
        parts = [f"meld {_melds(a.go_out.melds)}"] if a.go_out.melds else []
        parts += [_lay_off(lay) for lay in a.go_out.layoffs]
        if a.go_out.HasField("discard"):
            parts.append(f"discard {card(a.go_out.discard)}")
        return "Go out: " + ", ".join(parts)
    if kind == "swap_joker":
        swap = a.swap_joker
        return f"Swap {cards(swap.cards)} for the joker in meld {swap.meld + 1}{_then(swap)}"
    if kind == "pick_from_pile":
        pick = a.pick_from_pile
        above = len(view.discard_pile) - pick.index - 1
        more = f" and the {above} card{'s' if above > 1 else ''} above it" if above else ""
        picked = card(view.discard_pile[pick.index]) if pick.index < len(view.discard_pile) else "?"
        return f"Pick {picked} (pile position {pick.index + 1}){more}{_then(pick)}"
    if kind == "buy_discard":
        return f"Buy {card(view.offer)} (with a penalty card from the stock)"
    if kind == "pass_buy":
        return f"Pass: don't buy {card(view.offer)}"
    return str(kind)


# The order the menu lists moves in: answering a card on offer first (a bot waits for it), then the turn's.
ORDER = (
    "buy_discard",
    "pass_buy",
    "go_out",
    "lay_melds",
    "lay_off",
    "swap_joker",
    "pick_from_pile",
    "draw_from_stock",
    "take_discard",
    "discard",
)


def menu_order(actions: Iterable[gs.Action]) -> list[gs.Action]:
    return sorted(actions, key=lambda a: ORDER.index(str(a.WhichOneof("kind"))))


def _option(view: gs.PlayerView, name: str) -> int | None:
    return view.options[name].int_value if name in view.options else None


def rules_note(view: gs.PlayerView) -> str:
    """What a person must know of the rules now that the moves alone do not say: contract rummy's
    round and contract, Rummy 500's pile, an opening minimum not reached yet."""
    variant = variant_named(view.variant)
    contracts = variant.round_contracts
    if contracts:
        first = _option(view, "first_round") or 1
        last = _option(view, "last_round") or len(contracts)
        rnd = first + view.deal - 1
        contract = contracts[rnd - 1] if 0 < rnd <= len(contracts) else "?"
        rounds = f"rounds {first}-{last}"
        return f"round {rnd} ({rounds}): contract {contract}; lay it down exactly, then only lay off"
    if variant.spread_pile:
        return "any pile card may be picked, with every card above it, if it is melded or laid off at once"
    opening = _option(view, "opening_min_points")
    if opening is None:
        opening = rules_for(view.variant, len(view.seats)).opening_min_points
    if opening and view.HasField("seat") and not view.opened[view.seat]:
        return f"you have not opened: your first melds must total at least {opening} points"
    return ""


def table(view: gs.PlayerView, shown: Mapping[str, str] | None = None) -> list[str]:
    """The table: header, seats with scores, piles, the card on offer, melds, what the rules ask now,
    and the viewer's hand when it has one."""
    players = names(view, shown)
    over = view.phase in (gs.PHASE_DEAL_OVER, gs.PHASE_GAME_OVER)
    mover = "" if over else f" · [bold]{players[view.turn]}[/] to move"
    lines = [f"[bold]{view.variant}[/] · deal {view.deal} · {PHASES.get(view.phase, '?')}{mover}"]
    buying = variant_named(view.variant).buys
    for i, seat in enumerate(view.seats):
        away = " · away" if seat.away else ""
        buys = f" · buys {view.buys[i]}" if buying and view.buys else ""
        lines.append(f"  {players[i]}: {view.hand_sizes[i]} cards · score {view.totals[i]}{buys}{away}")
    if view.discard_pile:  # Rummy 500's spread pile, numbered as the menu's picks say
        pile = " ".join(f"{i + 1}:{card(c)}" for i, c in enumerate(view.discard_pile))
    else:
        pile = card(view.discard_top) if view.discard_size else "-"
    lines.append(f"  stock {view.stock_size} · discard ({view.discard_size}): {pile}")
    if view.HasField("offer"):
        who = f"discarded by {players[view.offer_from]}" if view.HasField("offer_from") else "the upcard"
        asked = f"; {players[view.buy_request]} asked to buy it" if view.HasField("buy_request") else ""
        until = f" until {players[view.turn]} draws" if not over else ""
        lines.append(f"  [bold]buy window[/]: {card(view.offer)} ({who}) is on offer{until}{asked}")
    for m in view.melds:
        lines.append(f"  meld {m.index + 1} ({players[m.owner]}): {cards(m.meld.cards)}")
    if note := rules_note(view):
        lines.append(f"  [italic]{note}[/]")
    if view.hand:
        lines.append(f"  your hand: {cards(sorted_hand(view.hand))}")
    return lines


def result(view: gs.PlayerView, shown: Mapping[str, str] | None = None) -> list[str]:
    players = names(view, shown)
    if view.phase == gs.PHASE_GAME_OVER:
        winners = ", ".join(players[s] for s in view.winners) or "nobody"
        head = f"[bold]Game over[/] — winner: {winners}"
    else:
        head = f"[bold]Deal {view.deal} over[/]"
    totals = ", ".join(f"{p} {t}" for p, t in zip(players, view.totals, strict=False))
    return [head, f"  totals: {totals}"]
