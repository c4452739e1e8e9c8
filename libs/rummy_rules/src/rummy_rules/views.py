"""What one seat (or a spectator) may see of a game: the only game data a client ever receives."""

from __future__ import annotations

from dataclasses import dataclass

from rummy_rules.cards import Card
from rummy_rules.contract_state import buying
from rummy_rules.melds import Meld
from rummy_rules.state import GameState, Phase
from rummy_rules.variant import REGISTRY


@dataclass(frozen=True, slots=True)
class TableMeld:
    index: int
    owner: int
    meld: Meld


@dataclass(frozen=True, slots=True)
class PlayerView:
    """One seat's view; `seat` None is a spectator, who sees no hand at all.

    Kalooki, rummy40 and contract keep a squared discard pile, so only its top card and size are
    shown; rummy500 spreads it (src ¶14), so `discard_pile` shows it all, bottom to top. `credits`
    says who is credited with each table card (rummy500 D12). Contract buying is public: `buys`
    per seat, the card on `offer`, its discarder and the seat that asked first. The seed stays
    hidden until the game is over (only its commitment is public before).
    """

    variant: str
    seat: int | None
    hand: tuple[Card, ...] | None
    hand_sizes: tuple[int, ...]
    opened: tuple[bool, ...]
    melds: tuple[TableMeld, ...]
    discard_top: Card | None
    discard_size: int
    discard_pile: tuple[Card, ...]
    stock_size: int
    turn: int
    phase: Phase
    dealer: int
    deal: int
    taken: Card | None
    credits: tuple[tuple[int, ...], ...]
    buys: tuple[int, ...]
    offer: Card | None
    offer_from: int | None
    buy_request: int | None
    active: tuple[bool, ...]
    totals: tuple[int, ...]
    last_penalties: tuple[int, ...]
    winners: tuple[int, ...]
    payouts: tuple[int, ...]
    seed_commitment: str
    seed: bytes | None


def observe(state: GameState, seat: int | None) -> PlayerView:
    """Exactly what `seat` may see: own hand, others' card counts, the table, pile tops, stock size."""
    own = seat is not None and 0 <= seat < len(state.hands)
    over = state.phase is Phase.GAME_OVER
    window = buying(state)
    return PlayerView(
        variant=state.rules.variant,
        seat=seat if own else None,
        hand=state.hands[seat] if own and seat is not None else None,
        hand_sizes=tuple(len(hand) for hand in state.hands),
        opened=state.opened,
        melds=tuple(
            TableMeld(index, owner, meld)
            for index, (meld, owner) in enumerate(zip(state.melds, state.owners, strict=True))
        ),
        discard_top=state.discard[-1] if state.discard else None,
        discard_size=len(state.discard),
        discard_pile=state.discard if REGISTRY[state.rules.variant].spread_pile else (),
        stock_size=len(state.stock),
        turn=state.turn,
        phase=state.phase,
        dealer=state.dealer,
        deal=state.deal,
        # The card taken from the discard pile was face up, so everyone saw it go.
        taken=state.taken,
        credits=state.credits,
        buys=window.buys,
        offer=window.offer,
        offer_from=window.offer_from,
        buy_request=window.buy_request,
        active=state.active,
        totals=state.totals,
        last_penalties=state.penalties,
        winners=state.winners,
        payouts=state.payouts,
        seed_commitment=state.seed_commitment,
        seed=state.revealed_seed if over else None,
    )
