"""Contract rummy (spec: rules/contract): 2-7 players, eight rounds, each with its contract, and buying.

What differs from the standard play (`base.StandardVariant`):

* a player's first melds are exactly the round's contract, once per round (§3.8 D7 D11), and the
  only new melds of the round (`contract_rules` checks them and lists the laydowns a hand can make);
* buying (§3.7, rounds 1-7): the upcard and each discard are offered; seats from the forehand's
  left may ask to buy it out of turn (BuyDiscard) or pass, which is final for that card (PassBuy,
  D27), until the forehand draws; the first request is granted then (the card and a stock card)
  unless the forehand takes the card (D12);
* a deal scores the cards left in every hand plus a penalty for a fourth buy (§3.13 D17), and the
  match ends after the last round, lowest total winning (§3.13.3 D18).

Options and defaults: `options.ContractOptions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from rummy_rules.cards import CARD_BY_CODE, Card
from rummy_rules.checks import check_rest, take
from rummy_rules.commands import BuyDiscard, Command, LayMelds, PassBuy
from rummy_rules.contract_bot import contract_greedy
from rummy_rules.contract_rules import (
    CONTRACTS,
    ROUNDS,
    BuyRole,
    buy_limit,
    buy_penalty,
    check_contract,
    laydowns,
    round_penalty,
)
from rummy_rules.contract_state import buying, dealt
from rummy_rules.deal import next_seat
from rummy_rules.errors import RuleViolation
from rummy_rules.events import (
    BuyGranted,
    BuyOffered,
    BuyPassed,
    BuyRequested,
    BuyWaived,
    DealEnded,
    Event,
    GameEnded,
    StockReshuffled,
)
from rummy_rules.evolve import evolved, without
from rummy_rules.handlers import Entry, handles
from rummy_rules.melds import Meld, hand_penalty
from rummy_rules.memo import remember
from rummy_rules.options import CONTRACT_CHOICES, ContractOptions
from rummy_rules.rules import GoingOut, JokerSwap, MatchMode, Reshuffle, Rules, check_players, parse_options
from rummy_rules.scoring import match_winners
from rummy_rules.seat_view import Bot
from rummy_rules.secret import Seed, secret
from rummy_rules.state import DRAW, MAX_SEATS, SEATS, GameState, VariantState, playing
from rummy_rules.stock import refill
from rummy_rules.variants.base import StandardVariant

CITATIONS: Final[Mapping[str, str]] = {
    "set": "§3.5.2 D4",
    "run": "§3.5.1 src ¶15-¶16",
    "joker": "§3.5.3 D5",
    "ambiguous": "§3.5.3 vectors/FORMAT.md",
    "players": "§3.1 D1",
    "forfeit": "D28",  # meldstream M3
    "penalty": "§3.2 src ¶45-¶49",
    "contract": "§3.8 D7",
    "open_first": "§3.9.1 src ¶20",
    "layoff": "§3.9.2 src ¶20",
    "layoff_set": "§3.9.2 D4",
    "layoff_run": "§3.9.2 src ¶16",
    "owner": "§3.9.2 D8",
    "swap": "§3.9.3 src ¶20",
    "swap_use": "§3.9.3 D9",
    "closed": "§3.9.3 src ¶20",
    "keep_card": "§3.6.3 D10",
    "go_out": "§3.10 D10",
    "taken": "§3.6.3",
    "turn": "§3.6 §3.15",
    "draw": "§3.6.1 D23",
    "discard": "§3.6.3",
    "hand": "§3.15",
    "buy": "§3.7 src ¶21-¶26 D12",
    "round8": "§3.11 src ¶30-¶32 D11",
    "reshuffle": "§3.12 D16",
    "over": "§3.10.1",
    "match": "§3.13.3 src ¶44 D18",
}


_BUY_ACTIONS: Final = tuple((BuyDiscard(seat), PassBuy(seat)) for seat in SEATS)


def _buy_actions(state: GameState, seat: int) -> tuple[Command, ...]:
    """A seat's moves out of turn: buy or pass while it may still ask for the card on offer."""
    if buying(state).offer is not None and seat in buyers(state):
        return _BUY_ACTIONS[seat]
    return ()


def _offer_discard(state: GameState, seat: int, card: Card) -> Event | None:
    """BuyOffered for a discard (§3.7.1: the next player has first right to it), or None."""
    if state.deal >= ROUNDS or buying(state).buy_request is not None:
        return None
    forehand = next_seat(state.active, seat)
    if not _eligible_buyers(state, forehand, seat):
        return None
    return _buy_offered_event(card, forehand, seat)


_BUY_PASSED: Final = tuple(tuple(BuyPassed(card, taken) for card in CARD_BY_CODE) for taken in (False, True))


def _close_offer(state: GameState, seed: Seed, taken_by_forehand: bool) -> list[Event]:
    """Close the contract buy window: the first request is granted unless the forehand takes the card."""
    window = buying(state)
    card = window.offer
    assert card is not None
    buyer = window.buy_request
    if taken_by_forehand or buyer is None:
        return [_BUY_PASSED[taken_by_forehand][card.code]]
    events: list[Event] = []
    if not state.stock:
        # D16: the buyer's stock card comes from a reshuffle of every discard under the bought one.
        more = refill(state, seed)
        events.extend(more)
        state = evolved(state, more)
        if not isinstance(more[-1], StockReshuffled):
            return events  # the deal ended (D16, meldstream M1)
    buys = buying(state).buys[buyer] + 1
    penalty = buy_penalty(state.deal, buys - 1, BuyRole.OTHER, state.rules)
    events.append(BuyGranted(buyer, card, state.stock[-1], buys, penalty))
    return events


def _buy_role(state: GameState, seat: int) -> BuyRole:
    if seat == state.turn:
        return BuyRole.FOREHAND
    return BuyRole.DISCARDER if seat == buying(state).offer_from else BuyRole.OTHER


def _check_buyer(state: GameState, seat: int) -> Card:
    """The card `seat` may buy now, or RuleViolation (contract §3.7, §3.15)."""
    window = buying(state)
    if seat in buyers(state):  # memoised per state; a seat it names passes every check below
        card = window.offer
        assert card is not None
        return card
    rules = state.rules
    if window.offer is None and state.deal != ROUNDS:
        raise RuleViolation(
            "nothing_to_buy",
            "no card is on offer: only the top discard, before the forehand draws, can be bought",
            "contract §3.7.3 D23",
        )
    buy_penalty(state.deal, window.buys[seat], _buy_role(state, seat), rules)
    card = window.offer
    assert card is not None
    if window.buy_request is not None:
        raise RuleViolation(
            "buy_already_requested",
            f"seat {window.buy_request} asked to buy {card.text} first",
            "contract §3.7.2 src ¶26 D12",
        )
    if seat in window.waived:
        raise RuleViolation("buy_waived", f"you passed on buying {card.text}", "contract §3.7.3 D27")
    return card


def _buy(state: GameState, command: BuyDiscard, seed: Seed) -> list[Event]:
    return [BuyRequested(command.seat, _check_buyer(state, command.seat))]


def _pass_buy(state: GameState, command: PassBuy, seed: Seed) -> list[Event]:
    return [BuyWaived(command.seat, _check_buyer(state, command.seat))]


def buyers(state: GameState) -> tuple[int, ...]:
    """Seats that may still ask to buy the card on offer, in order from the forehand's left (§3.7.3).

    Kept for the last state asked about: a buy window asks it of one state once per seat, and states
    are immutable, so identity is an exact key.
    """
    last = _LAST_BUYERS[0]
    if last is not None and last[0] is state:
        return last[1]
    window = buying(state)
    if window.offer is None or window.buy_request is not None or state.phase is not DRAW:
        seats: tuple[int, ...] = ()
    else:
        seats = _eligible_buyers(state, state.turn, window.offer_from)
        if window.waived:  # D27: a pass is final for the card on offer
            seats = tuple(seat for seat in seats if seat not in window.waived)
    _LAST_BUYERS[0] = (state, seats)
    return seats


_LAST_BUYERS: list[tuple[GameState, tuple[int, ...]] | None] = [None]


def _eligible_buyers(state: GameState, forehand: int, discarder: int | None) -> tuple[int, ...]:
    """Seats other than `forehand` and `discarder` that may still buy this round, from the forehand's left."""
    rules = state.rules
    limit = _LAST_BUY_LIMIT[0]
    if limit is None or limit[0] is not rules:
        limit = _LAST_BUY_LIMIT[0] = (rules, buy_limit(rules))
    most = limit[1]
    active = state.active
    buys = buying(state).buys
    return tuple(
        [
            seat
            for seat in _SEATS_AFTER[len(active)][forehand]
            if seat != discarder and active[seat] and buys[seat] < most
        ]
    )


_LAST_BUY_LIMIT: list[tuple[Rules, int] | None] = [None]
# _SEATS_AFTER[players][seat]: the other seats from `seat`'s left, in order.
_SEATS_AFTER: Final = tuple(
    tuple(tuple((seat + step) % players for step in range(1, players)) for seat in range(players))
    for players in range(MAX_SEATS + 1)
)


def _contract_melds(state: GameState, command: LayMelds) -> tuple[Meld, ...]:
    """A contract laydown: exactly the round's contract, once per round (contract §3.8, D7, D11)."""
    rules = state.rules
    seat = command.seat
    if state.opened[seat]:
        raise RuleViolation(
            "already_laid_down",
            "you have laid down this round; now you can only lay off and take jokers",
            rules.cite("contract"),
        )
    if not command.melds or not all(isinstance(card, Card) for cards in command.melds for card in cards):
        raise RuleViolation("bad_card", "name the melds of the contract as cards", rules.cite("contract"))
    hand = state.hands[seat] if state.deal == ROUNDS else None
    return check_contract(command.melds, state.deal, rules, command.kinds, hand)


def _laydown_actions(state: GameState, seat: int, hand: tuple[Card, ...]) -> list[Command]:
    """Contract laydowns the hand can make now (a bounded set, contract §3.8)."""
    rules = state.rules
    found: list[Command] = []
    for melds in laydowns(hand, state.deal, rules):
        if len(hand) - sum(len(meld.cards) for meld in melds) <= 1:  # only then may the rest be unfinishable
            try:
                # §3.6.3: not the card taken from the pile as the last card; D10 with option
                # closing_by_discard false: a last card must fit a meld on the table.
                rest = without(hand, [card for meld in melds for card in meld.cards])
                check_rest(state, seat, rest, state.melds + melds)
            except RuleViolation:
                continue
        found.append(LayMelds(seat, tuple(meld.cards for meld in melds), tuple(meld.kind for meld in melds)))
    return found


_BUY_OFFERS: Final[dict[tuple[Card, int, int], BuyOffered]] = {}


def _buy_offered_event(card: Card, forehand: int, discarder: int) -> BuyOffered:
    """BuyOffered, built once per card and seats: a frozen dataclass is slow to build, few thousand exist."""
    key = (card, forehand, discarder)
    event = _BUY_OFFERS.get(key)
    if event is None:
        event = remember(_BUY_OFFERS, key, BuyOffered(card, forehand, discarder))
    return event


class Contract(StandardVariant):
    id = "contract"
    players = range(2, 8)  # one table: 2-7 (§3.1)
    citations = CITATIONS
    table_rotation = True  # §3.14 D19
    melds_after_opening = False  # after the laydown, only layoffs and swaps (§3.9)
    buys = True  # §3.7
    round_contracts = CONTRACTS  # §3.4

    def rules(self, players: int, options: Mapping[str, Any]) -> Rules:
        o: ContractOptions = parse_options(self.id, ContractOptions, CONTRACT_CHOICES, options)
        check_players(self.id, self.players, players)
        packs = 2 if players <= 4 else (o.packs_for_5_players if players == 5 else 3)  # D1
        if packs not in (2, 3):
            raise RuleViolation("bad_option_value", "packs_for_5_players must be 2 or 3", "contract D1")
        if o.max_buys_per_round > 4 or o.min_natural_cards_per_meld < 1:
            raise RuleViolation(
                "bad_option_value",
                "max_buys_per_round is at most 4; melds need a natural card",
                "contract §5 D5 D13",
            )
        if not 1 <= o.first_round <= o.last_round <= ROUNDS:
            raise RuleViolation(
                "bad_option_value",
                f"first_round and last_round must satisfy 1 <= first_round <= last_round <= 8, "
                f"got {o.first_round} and {o.last_round}",
                "contract §3.4",
            )
        if o.first_dealer is not None and not o.first_dealer < players:
            raise RuleViolation(
                "bad_option_value",
                f"first_dealer is a seat from 0 to {players - 1}, got {o.first_dealer}",
                "contract §3.14.4 D2",
            )
        return Rules(
            variant="contract",
            players=players,
            packs=packs,
            jokers=2 * packs,  # src ¶12
            hand_size=13,
            upcard=True,
            set_min=3,
            set_max=0,  # threes have no maximum (D4)
            natural_set_distinct_suits=False,
            joker_set_distinct_suits=False,
            run_min=4,  # src ¶15
            ace_low_in_runs=True,
            ace_low_value=0,  # contract melds carry no value
            ace_high_value=0,
            ace_set_value=0,
            penalty=(20, 15, 5, 5, 5, 5, 5, 5, 5, 10, 10, 10, 10, 10),  # src ¶45-¶49
            opening_min_points=0,
            opening_single_meld=False,
            open_before_layoff=True,  # src ¶20: lay down the contract first
            layoff_on_others=True,  # D8
            joker_swap=JokerSwap.RUNS_ONLY,
            freed_joker_must_be_used=False,
            going_out=GoingOut.EITHER if o.closing_by_discard else GoingOut.MELD_ALL,
            reshuffle=Reshuffle.ALL_BUT_TOP,
            kalooki_surcharge=0,
            kalooki_exempt_from_opening=False,
            discard_draw_must_open=False,
            match_mode=MatchMode.CONTRACT_ROUNDS,
            deals=o.last_round,  # src ¶1: eight rounds, unless the game plays fewer
            elimination_limit=0,
            prize_pool=0,
            options=o,
            stalemate_reshuffles=o.stalemate_reshuffles,
            first_deal=o.first_round,
            first_dealer=o.first_dealer,
        )

    def own_greedy(self) -> Bot | None:
        return contract_greedy  # the meld solver is too slow for hands grown by buying (19 cards)

    def extra_handlers(self) -> Mapping[type[Command], Entry]:
        entries = (handles(BuyDiscard, _buy, None), handles(PassBuy, _pass_buy, None))  # out of turn
        return dict(entries)

    # The buy window's hooks run on most decisions at a contract table: called without a wrapper.
    out_of_turn_actions = staticmethod(_buy_actions)
    buyers = staticmethod(buyers)
    close_offer = staticmethod(_close_offer)
    offer_discard = staticmethod(_offer_discard)

    def unopened_actions(self, state: GameState, seat: int) -> Sequence[Command] | None:
        return _laydown_actions(state, seat, state.hands[seat])

    def lay_melds(self, state: GameState, command: LayMelds) -> tuple[tuple[Meld, ...], tuple[Card, ...]]:
        melds = _contract_melds(state, command)
        return melds, take(state, command.seat, [card for meld in melds for card in meld.cards])

    def dealt_state(self, rules: Rules, deal: int, players: int, upcard: Card | None) -> VariantState | None:
        # src ¶25, D15: the turned upcard may be bought, except in round 8 (src ¶21, ¶30: no buying).
        return dealt(players, upcard if deal < ROUNDS else None)

    def deal_points(self, state: GameState, winner: int | None, bonus: bool) -> tuple[int, ...]:
        # §3.13 D17: hand values, plus 200 for a fourth buy (the closer too).
        rules = state.rules
        return tuple(
            round_penalty(hand_penalty(hand, rules), buys, rules) if alive else 0  # M3: charged at forfeit
            for hand, buys, alive in zip(state.hands, buying(state).buys, state.active, strict=True)
        )

    def match_over(
        self, before: GameState, after: GameState, ended: DealEnded, seed: Seed
    ) -> list[Event] | None:
        # The deal number is the round (contract has no void deals); `deals` the last round (M2).
        if after.deal < after.rules.deals:
            return None
        # §3.13.3 src ¶44, D18: lowest total after 8 rounds; equal lowest share.
        totals = dict(enumerate(after.totals))
        winners = match_winners(totals, playing(after))  # meldstream M3: never a forfeited seat
        return [GameEnded(tuple(winners), after.totals, (), secret(before, seed))]


CONTRACT: Final = Contract()
