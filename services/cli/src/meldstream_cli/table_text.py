"""A game's view as terminal text (rich markup), for `meldstream play` and `meldstream watch`: cards with
suit symbols (red hearts and diamonds), the table, and the engine's legal actions as a person reads them."""

from __future__ import annotations

from collections.abc import Iterable

from rummy.game.v1 import events_pb2 as ev
from rummy.game.v1 import game_service_pb2 as gs

RANKS = ("JK", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = {ev.SUIT_CLUBS: "♣", ev.SUIT_DIAMONDS: "♦", ev.SUIT_HEARTS: "♥", ev.SUIT_SPADES: "♠"}
PHASES = {
    gs.PHASE_DRAW: "draw",
    gs.PHASE_PLAY: "play",
    gs.PHASE_DEAL_OVER: "deal over",
    gs.PHASE_GAME_OVER: "game over",
}
SUIT_ORDER = (ev.SUIT_CLUBS, ev.SUIT_DIAMONDS, ev.SUIT_SPADES, ev.SUIT_HEARTS, ev.SUIT_UNSPECIFIED)


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
        return f"Swap {cards(a.swap_joker.cards)} for the joker in meld {a.swap_joker.meld + 1}"
    if kind == "pick_from_pile":
        return f"Pick up the pile from position {a.pick_from_pile.index + 1}"
    if kind == "buy_discard":
        return f"Buy {card(view.offer)}"
    if kind == "pass_buy":
        return "Pass (don't buy)"
    return str(kind)


def table(view: gs.PlayerView) -> list[str]:
    """The table: header, seats with scores, piles, melds, and the viewer's hand when it has one."""
    players = [s.player_id for s in view.seats]
    over = view.phase in (gs.PHASE_DEAL_OVER, gs.PHASE_GAME_OVER)
    mover = "" if over else f" · [bold]{players[view.turn]}[/] to move"
    lines = [f"[bold]{view.variant}[/] · deal {view.deal} · {PHASES.get(view.phase, '?')}{mover}"]
    for i, seat in enumerate(view.seats):
        away = " · away" if seat.away else ""
        lines.append(f"  {seat.player_id}: {view.hand_sizes[i]} cards · score {view.totals[i]}{away}")
    top = card(view.discard_top) if view.discard_size else "-"
    pile = cards(view.discard_pile) if view.discard_pile else top
    lines.append(f"  stock {view.stock_size} · discard ({view.discard_size}): {pile}")
    if view.HasField("offer"):
        lines.append(f"  buy window: {card(view.offer)} is on offer")
    for m in view.melds:
        lines.append(f"  meld {m.index + 1} ({players[m.owner]}): {cards(m.meld.cards)}")
    if view.hand:
        lines.append(f"  your hand: {cards(sorted_hand(view.hand))}")
    return lines


def result(view: gs.PlayerView) -> list[str]:
    players = [s.player_id for s in view.seats]
    if view.phase == gs.PHASE_GAME_OVER:
        winners = ", ".join(players[s] for s in view.winners) or "nobody"
        head = f"[bold]Game over[/] — winner: {winners}"
    else:
        head = f"[bold]Deal {view.deal} over[/]"
    totals = ", ".join(f"{p} {t}" for p, t in zip(players, view.totals, strict=False))
    return [head, f"  totals: {totals}"]
