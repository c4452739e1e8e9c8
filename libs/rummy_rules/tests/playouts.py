"""Random complete matches of every variant, checked while they are played (issue 4).

`play` plays one whole match from a seed with a table of policies (`table_for`) and checks it as it
goes; `Tally` counts what the matches reached, so a test can require the interesting states (a
property test that never reaches them proves little).

Thousands of matches per variant must fit in a few minutes, and the engine's own `decide` and
`evolve` are most of a decision's cost, so the checks are tiered by cost:

- every decision: the chosen action is one of `legal_actions` and `decide` accepts it; the number
  of cards is the deck's after every event, and the multiset of cards (hands, stock, pile, table)
  is the deck's in every deal's last state (a card changed mid-deal stays changed until then: no
  card leaves a deal) and at sampled positions; a decision that deals or reshuffles raises
  ValueError with a wrong seed; every going out is also sent as one `GoOut` and must give the same
  events.
- one contract buy offer in OFFER_CHECK_EVERY, once the buyers have been asked (and the first
  discard of round 8):
  seats not on turn have no action but buy or pass, and those exactly when `buyers` names them;
  every other seat's buy (the discarder, one at its limit, one after the first request, anyone in
  round 8) is refused.
- sampled positions (one in `PROBE_EVERY` decisions): JSON round trips of the command and the
  events produced; observation hiding (dealing every card the viewer cannot see again changes
  nothing in its view); up to three other legal actions accepted; mutated commands (wrong seat,
  card not held, wrong phase, missing meld, a pick that does not use its card, buys nobody may
  make) refused with `RuleViolation`; and after all that the same decision again (a refusal
  changes nothing, module caches included).
- per match: the whole log replays to the live state, checked at random cut points on the way
  (one pass); every deal's boundary events round-trip through JSON; the result obeys the
  variant's match rule. In one match of `SNAPSHOT_EVERY`, a cut's state restored from JSON and
  caught up with the rest of the log equals the final state (snapshot + catch-up, as the store
  does it), and its views survive JSON.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import random
import traceback
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import reduce
from itertools import chain, repeat
from operator import attrgetter
from typing import Final

import hypothesis
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rummy_rules import contract_state
from rummy_rules.bots import greedy
from rummy_rules.cards import STANDARD_PACK, Card, make_deck
from rummy_rules.commands import (
    BuyDiscard,
    Command,
    Discard,
    DrawFromStock,
    GoOut,
    LayMelds,
    LayOff,
    PassBuy,
    PickFromPile,
    TakeDiscard,
)
from rummy_rules.contract_rules import ROUNDS
from rummy_rules.errors import RuleViolation
from rummy_rules.events import (
    BuyGranted,
    BuyPassed,
    DealEnded,
    Event,
    GameEnded,
    OptionValue,
    StockReshuffled,
)
from rummy_rules.game import buyers, decide, evolve, legal_actions, replay, start
from rummy_rules.seat_view import SeatView
from rummy_rules.serialize import from_dict, to_dict
from rummy_rules.state import GameState, Phase, others_may_act
from rummy_rules.variants import MatchMode, Rules
from rummy_rules.views import observe

MAX_DECISIONS = 30_000  # a guard only: every match must finish (meldstream M1 ends stalled deals)
CUTS = 3  # replay cut points per match
SNAPSHOT_EVERY = 4  # matches per snapshot restored from JSON and caught up, on average
# Decisions between sampled positions on average, per variant: a few positions per match (a
# contract match is ~2,000 decisions, a rummy40 series ~1,400, a kalooki deal ~110), enough for
# thousands over a run.
PROBE_EVERY = {"kalooki": 80, "rummy40": 200, "rummy500": 100, "contract": 300}
# Contract offers per out-of-turn check on average (~250 offers a match): tens of thousands a run.
OFFER_CHECK_EVERY = 3

Options = Mapping[str, OptionValue]
Policy = Callable[[GameState, int, tuple[Command, ...], random.Random], Command]
Tally = Counter[str]


# --- policies ------------------------------------------------------------------------------------


def uniform(state: GameState, seat: int, actions: tuple[Command, ...], rng: random.Random) -> Command:
    """Any legal action, uniformly: the odd paths (a useless pick, a buy nobody sane makes)."""
    return actions[int(rng.random() * len(actions))]


def bot(state: GameState, seat: int, actions: tuple[Command, ...], rng: random.Random) -> Command:
    """The greedy bot: real planning, so contracts get made, hands go out and Kalookis happen."""
    return greedy(SeatView(state, seat), actions, rng)


@dataclass(frozen=True, slots=True)
class Eager:
    """Random over the legal actions but weighted toward progress.

    Uniformly random play rarely melds (a uniform contract match is ~5,000 decisions, mostly
    stalled rounds); taking a meld, layoff or swap whenever one is legal (`build`) and shedding
    unconnected high cards (`shed`) ends deals in a fraction of that while still choosing among
    them at random. `pile`: the chance to draw from the discard pile (rummy500: any usable pick)
    when allowed; `buy`: the chance to ask for a card on offer (contract): 0 never buys, 0.9
    reaches the penalised fourth buy and then is refused a fifth.
    """

    build: float
    shed: float
    pile: float
    buy: float

    def __call__(
        self, state: GameState, seat: int, actions: tuple[Command, ...], rng: random.Random
    ) -> Command:
        if seat != state.turn:  # a card on offer: buy or pass
            kind = BuyDiscard if rng.random() < self.buy else PassBuy
            return next(action for action in actions if isinstance(action, kind))
        if state.phase is Phase.DRAW:
            piles = [action for action in actions if not isinstance(action, DrawFromStock)]
            if piles and (len(piles) == len(actions) or rng.random() < self.pile):
                if rng.random() < 0.3:  # any pick, however deep (rummy500)
                    return piles[int(rng.random() * len(piles))]
                # else the one bringing the fewest cards: a deep pick's cards weigh on the hand
                return max(piles, key=lambda pick: pick.index if isinstance(pick, PickFromPile) else 1 << 16)
            return next(action for action in actions if isinstance(action, DrawFromStock))
        builds = [action for action in actions if not isinstance(action, Discard)]
        if builds and rng.random() < self.build:
            return builds[int(rng.random() * len(builds))]
        discards = [action for action in actions if isinstance(action, Discard)]
        if not discards:
            return actions[int(rng.random() * len(actions))]
        if rng.random() < self.shed:
            if state.rules.variant == "contract":
                return greedy(SeatView(state, seat), discards, rng)  # the planner's discard
            return _shed(state, discards, rng)
        return discards[int(rng.random() * len(discards))]


def _shed(state: GameState, discards: list[Discard], rng: random.Random) -> Discard:
    """The costliest card with no partner (same rank, or same suit within two ranks), else the
    costliest; ties at random. Rank counts and per-suit rank masks: this runs every few decisions."""
    hand = state.hands[state.turn]
    penalty = state.rules.penalty
    ranks = [0] * 14
    suits = [0] * 4
    for card in hand:
        ranks[card.rank] += 1
        if card.code:
            suits[(card.code - 1) // 13] |= 1 << card.rank
    scored = []
    for discard in discards:
        card = discard.card
        code = card.code
        alone = bool(code) and ranks[card.rank] == 1 and not suits[(code - 1) // 13] & _NEAR[card.rank]
        scored.append((alone, penalty[card.rank], rng.random(), discard))
    return max(scored, key=lambda entry: entry[:3])[3]


# Rank bit masks of the ranks within two of each rank, the ace touching the king (index = rank).
_NEAR: Final = tuple(sum(1 << (rank + step - 1) % 13 + 1 for step in (-2, -1, 1, 2)) for rank in range(14))


# How the seats of a table are drawn, per variant: (weight, policy). Bots are few where the meld
# solver makes them ten times as costly per decision as the others (kalooki, rummy40); rummy500
# and contract need them to finish. Contract eager seats buy eagerly, sometimes or never.
_EAGER_BUYERS = (Eager(0.9, 0.7, 0.3, 0.9), Eager(0.9, 0.7, 0.3, 0.3), Eager(0.8, 0.8, 0.2, 0.0))
_SEATS: dict[str, tuple[tuple[float, Policy], ...]] = {
    "kalooki": ((0.12, bot), (0.68, Eager(0.9, 0.7, 0.3, 0.0)), (0.2, uniform)),
    "rummy40": ((0.1, bot), (0.7, Eager(0.9, 0.7, 0.3, 0.0)), (0.2, uniform)),
    "rummy500": ((0.4, bot), (0.4, Eager(0.8, 0.6, 0.5, 0.0)), (0.2, uniform)),
    "contract": ((0.5, bot), *((0.4 / 3, eager) for eager in _EAGER_BUYERS), (0.1, uniform)),
}


def table_for(rules: Rules, rng: random.Random) -> tuple[Policy, ...]:
    """A mix of policies, one per seat, drawn per match so every match explores differently.

    At most one uniform seat: a contract table of them takes ~5,000 decisions a match. A rummy500
    deal of five or six players from one pack leaves a stock of a few cards, so only bots score
    there; with two weak seats everyone's score sinks and nobody ever reaches the target.
    """
    weights, policies = zip(*_SEATS[rules.variant], strict=True)
    table = rng.choices(policies, weights, k=rules.players)
    crowded = rules.variant == "rummy500" and rules.packs == 1 and rules.players >= 5
    weak = [seat for seat, policy in enumerate(table) if policy is not bot]
    keep = weak[:1] if crowded else [seat for seat in weak if table[seat] is not uniform]
    if not crowded and uniform in table:
        keep.append(table.index(uniform))
    return tuple(policy if seat in keep or policy is bot else bot for seat, policy in enumerate(table))


# --- one match -----------------------------------------------------------------------------------


def cards_of(state: GameState) -> Counter[Card]:
    """How many of each card the game holds: hands, stock, discard pile and table melds."""
    return Counter(chain(*state.hands, state.stock, state.discard, *(meld.cards for meld in state.melds)))


def conserved(state: GameState, deck: Counter[Card]) -> bool:
    """The game holds exactly the cards of `deck`; dict's `==` is C, Counter's a Python loop."""
    return dict.__eq__(cards_of(state), deck)


def card_count(state: GameState) -> int:
    held = sum(map(len, state.hands)) + sum(map(len, map(_MELD_CARDS, state.melds)))
    return held + len(state.stock) + len(state.discard)


_MELD_CARDS: Final = attrgetter("cards")


def round_trip(value: object) -> None:
    assert from_dict(json.loads(json.dumps(to_dict(value)))) == value


def play(
    variant: str,
    players: int,
    seed: bytes,
    options: Options,
    *,
    tally: Tally,
    check_result: Callable[[GameState, list[Event]], None],
) -> GameState:
    """Play one match with a random table (drawn from `seed`), checking it as the module says."""
    rng = random.Random(seed)
    first = start(variant, players, seed, **options)
    round_trip(first)
    events: list[Event] = [first]
    state = evolve(None, first)
    table = table_for(state.rules, rng)
    deck = Counter(make_deck(state.rules.packs, state.rules.jokers))
    size = deck.total()
    assert conserved(state, deck)
    buying = state.rules.variant == "contract"
    last_round_checked = False
    cuts: list[tuple[int, GameState]] = []
    asked: set[int] = set()
    decisions = 0
    probe_rate = 1 / PROBE_EVERY[variant]
    while state.phase is not Phase.GAME_OVER:
        assert decisions < MAX_DECISIONS, f"{variant} did not finish in {MAX_DECISIONS} decisions"
        actor = state.turn
        if buying and others_may_act(state):
            may_buy = buyers(state)
            actor = next((seat for seat in may_buy if seat not in asked), state.turn)
            # Once an offer, when every buyer has been asked; one offer in OFFER_CHECK_EVERY.
            if actor == state.turn and rng.random() * OFFER_CHECK_EVERY < 1:
                _check_out_of_turn(state, may_buy, seed, tally)
        elif buying and state.deal == ROUNDS and not last_round_checked and state.discard:
            _check_out_of_turn(state, (), seed, tally)  # no buying in round 8 (src ¶30)
            last_round_checked = True
        if actor == state.turn:
            asked.clear()
        else:
            asked.add(actor)
        actions = legal_actions(state, actor)
        assert actions, f"no legal action for seat {actor} in {state.phase}"
        action = table[actor](state, actor, actions, rng)
        produced = decide(state, action, seed=seed)
        if rng.random() < probe_rate:
            probe(
                state,
                actor,
                action,
                actions=actions,
                produced=produced,
                deck=deck,
                seed=seed,
                rng=rng,
                tally=tally,
            )
            _check_out_of_turn(state, buyers(state), seed, tally)
        before = state
        shuffled = False  # a deal ended or the stock was reshuffled
        for event in produced:
            if isinstance(event, DealEnded | StockReshuffled):
                shuffled = True
                if isinstance(event, DealEnded):  # the deal's last state, before the next is dealt
                    assert conserved(state, deck)  # ... nor changed
            state = evolve(state, event)
            events.append(event)
            assert card_count(state) == size  # cards are never created or lost ...
        decisions += 1
        _count(before, action, produced, tally)
        if shuffled:
            # Deals and reshuffles come from the secret seed, checked against the commitment.
            with pytest.raises(ValueError, match="commitment"):
                decide(before, action, seed=b"not " + seed)
            for event in produced:
                round_trip(event)
            _check_go_out(before, action, produced, seed, tally)  # if the decision went out
        # Reservoir sampling: CUTS uniformly chosen cut points among the decisions.
        if len(cuts) < CUTS:
            cuts.append((len(events), state))
        elif rng.random() * decisions < CUTS:
            cuts[int(rng.random() * CUTS)] = (len(events), state)
    _check_replay(events, cuts, state, rng, tally)
    assert observe(state, None).seed == seed  # revealed at the end
    for seat in range(players):
        refused(tally, state, DrawFromStock(seat), seed)  # nobody acts after the end
    check_result(state, events)
    tally["matches"] += 1
    tally["decisions"] += decisions
    return state


def refused(tally: Tally, state: GameState, command: Command, seed: bytes) -> None:
    """`command` must be refused in `state`; counts the refusal by its code."""
    try:
        decide(state, command, seed=seed)
    except RuleViolation as refusal:
        tally[f"refused {refusal.code}"] += 1
    else:
        raise AssertionError(f"{command} was accepted in {state.phase} (turn {state.turn})")


def _check_out_of_turn(state: GameState, may_buy: tuple[int, ...], seed: bytes, tally: Tally) -> None:
    """Seats not on turn may only buy or pass, exactly when `buyers` names them; any other buy is refused."""
    for seat in range(len(state.hands)):
        if seat == state.turn:
            continue
        others = legal_actions(state, seat)
        assert bool(others) == (seat in may_buy)
        assert all(isinstance(action, BuyDiscard | PassBuy) for action in others)
        if seat in may_buy or state.phase is not Phase.DRAW or state.rules.variant != "contract":
            continue
        # The discarder, a seat at its buy limit, a second request (D12), anyone in round 8 (src ¶30).
        if others_may_act(state) or state.deal == ROUNDS:
            refused(tally, state, BuyDiscard(seat), seed)


def _count(state: GameState, action: Command, produced: list[Event], tally: Tally) -> None:
    """What this decision reached, for the coverage a test requires."""
    tally[type(action).__name__] += 1
    if isinstance(action, PickFromPile) and action.index < len(state.discard) - 1:
        tally["deep pick"] += 1
    for event in produced:
        name = type(event).__name__
        tally[name] += 1
        if isinstance(event, BuyGranted) and event.penalty:
            tally["fourth buy penalised"] += 1
        elif (
            isinstance(event, BuyPassed)
            and event.taken_by_forehand
            and contract_state.buying(state).buy_request is not None
        ):
            tally["forehand overrode a buy request"] += 1
        elif isinstance(event, DealEnded):
            if event.stalemate:
                tally["stalemate"] += 1
            elif event.winner is None:
                tally["deal ended unclosed"] += 1
            else:
                tally["deal closed"] += 1
                if state.rules.variant == "contract" and state.deal == ROUNDS:
                    tally["round 8 closed"] += 1
            if event.kalooki:
                tally["kalooki bonus"] += 1
        elif isinstance(event, GameEnded):
            rules = state.rules
            if rules.match_mode is MatchMode.FIXED_DEALS and rules.deals > 1:
                tally["series ended"] += 1
            if rules.match_mode is MatchMode.ELIMINATION:
                tally["elimination ended"] += 1
            if len(event.winners) > 1:
                tally["shared win"] += 1


def _check_go_out(
    state: GameState, action: Command, produced: list[Event], seed: bytes, tally: Tally
) -> None:
    """A going out sent as one `GoOut` gives the same events as the single command that did it."""
    ended = next((event for event in produced if isinstance(event, DealEnded)), None)
    if ended is None or ended.winner != action.seat or ended.winner != state.turn:
        return
    whole: GoOut | None = None
    if isinstance(action, Discard):
        whole = GoOut(action.seat, discard=action.card)
    elif isinstance(action, LayMelds):
        whole = GoOut(action.seat, melds=action.melds, kinds=action.kinds)
    elif isinstance(action, LayOff):
        whole = GoOut(action.seat, layoffs=(action,))
    if whole is not None:
        assert decide(state, whole, seed=seed) == produced
        tally["go out as one command"] += 1


def _check_replay(
    events: list[Event], cuts: list[tuple[int, GameState]], final: GameState, rng: random.Random, tally: Tally
) -> None:
    """Replay equals the live state at every cut and at the end (one pass). In one match of
    SNAPSHOT_EVERY, a cut restored from JSON and caught up with the rest of the log equals the
    final state (a snapshot and its catch-up), and its views survive JSON too: a state's JSON
    costs as much as a short match."""
    cuts.sort(key=lambda cut: cut[0])
    at, expected = cuts[0]
    replayed = replay(events[:at])
    assert replayed == expected
    for index, expected in cuts[1:]:
        replayed = reduce(evolve, events[at:index], replayed)
        assert replayed == expected
        at = index
    assert reduce(evolve, events[at:], replayed) == final
    tally["replay cuts"] += len(cuts)
    if rng.random() * SNAPSHOT_EVERY >= 1:
        return
    at, snapshot = cuts[int(rng.random() * len(cuts))]
    restored = from_dict(json.loads(json.dumps(to_dict(snapshot))))
    assert reduce(evolve, events[at:], restored) == final
    for viewer in (snapshot.turn, None):
        round_trip(observe(snapshot, viewer))
    tally["snapshots restored"] += 1


# --- one sampled position ------------------------------------------------------------------------


def probe(
    state: GameState,
    actor: int,
    action: Command,
    *,
    actions: tuple[Command, ...],
    produced: list[Event],
    deck: Counter[Card],
    seed: bytes,
    rng: random.Random,
    tally: Tally,
) -> None:
    """The expensive checks of one position, before `action` (which produced `produced`) is applied."""
    tally["probes"] += 1
    assert conserved(state, deck)
    for value in (action, *produced):  # states and views: once a match (`_check_replay`)
        round_trip(value)
    for viewer in (actor, None):
        assert observe(redealt(state, viewer, rng), viewer) == observe(state, viewer)  # hiding
    for other in rng.sample(actions, min(3, len(actions))):
        decide(state, other, seed=seed)  # every legal action is accepted
    for command in mutations(state, actor, actions, rng):
        refused(tally, state, command, seed)
    assert decide(state, action, seed=seed) == produced  # the refusals changed nothing


def redealt(state: GameState, viewer: int | None, rng: random.Random) -> GameState:
    """The same position with every card `viewer` cannot see dealt again: the other hands, the
    stock and, where the pile is squared (all but rummy500, src ¶14), the discards under the top."""
    hidden = [seat for seat in range(len(state.hands)) if seat != viewer]
    squared = state.rules.variant != "rummy500"
    under = state.discard[:-1] if squared else ()
    pool = [card for seat in hidden for card in state.hands[seat]] + list(state.stock) + list(under)
    rng.shuffle(pool)
    hands = list(state.hands)
    for seat in hidden:
        hands[seat], pool = tuple(pool[: len(hands[seat])]), pool[len(hands[seat]) :]
    stock, pool = tuple(pool[: len(state.stock)]), pool[len(state.stock) :]
    discard = (*pool, *state.discard[-1:]) if squared else state.discard
    return state._replace(hands=tuple(hands), stock=stock, discard=discard)


def _not_held(state: GameState, seat: int, rng: random.Random) -> Card:
    held = set(state.hands[seat])
    return rng.choice([card for card in STANDARD_PACK if card not in held])


def mutations(
    state: GameState, actor: int, actions: tuple[Command, ...], rng: random.Random
) -> list[Command]:
    """Commands that must be refused in `state`, most of them legal ones changed in one detail.

    `actions` are the actor's; the seat on turn's are asked for when the actor is a buyer.
    """
    players = len(state.hands)
    turn = state.turn
    hand = state.hands[turn]
    others = [seat for seat in range(players) if seat != turn]
    if actor != turn:
        actions = legal_actions(state, turn)
    commands: list[Command] = []
    in_turn = [action for action in actions if not isinstance(action, BuyDiscard | PassBuy)]
    if in_turn:  # a legal command from the wrong seat
        legal = rng.choice(in_turn)
        commands.append(dataclasses.replace(legal, seat=rng.choice(others)))
    commands.append(BuyDiscard(turn))  # the forehand takes the card instead (or there is no buying)
    if state.rules.variant != "rummy500":
        commands.append(PickFromPile(turn, 0))  # only rummy500 picks below the top
    if state.phase is Phase.DRAW:
        commands += [Discard(turn, hand[0]), LayOff(turn, 0, (hand[0],))]  # draw first
        # A draw not offered is refused (an empty stock that ends the deal is offered).
        commands += [draw for draw in (DrawFromStock(turn), TakeDiscard(turn)) if draw not in actions]
        picks = [action for action in actions if isinstance(action, PickFromPile) and action.then is not None]
        if picks:
            commands.extend(_unused_picks(state, rng.choice(picks)))
        if state.rules.variant == "rummy500" and state.discard:
            bare = PickFromPile(turn, len(state.discard) - 1)
            if not getattr(state.rules.options, "top_discard_free", False):
                commands.append(bare)  # D7: a pick is sent with the meld or layoff that uses it
    elif state.phase is Phase.PLAY:
        commands += [DrawFromStock(turn), TakeDiscard(turn)]  # already drawn
        commands += [Discard(turn, _not_held(state, turn, rng)), LayOff(turn, len(state.melds), (hand[0],))]
        if state.melds:
            commands.append(LayOff(turn, 0, (_not_held(state, turn, rng),)))
        lays = [action for action in actions if isinstance(action, LayMelds)]
        if lays:
            lay = rng.choice(lays)
            first, *rest = lay.melds
            stranger = _not_held(state, turn, rng)
            commands.append(dataclasses.replace(lay, melds=((stranger, *first[1:]), *rest)))
    return commands


def _unused_picks(state: GameState, pick: PickFromPile) -> list[PickFromPile]:
    """`pick` moved to a pile card its meld or layoff does not use: rummy500 D7 refuses it."""
    then = pick.then
    assert then is not None
    used = set(then.cards if isinstance(then, LayOff) else chain(*then.melds))
    return [
        dataclasses.replace(pick, index=index)
        for index, card in enumerate(state.discard)
        if card not in used and index != pick.index
    ][:2]


# --- many matches --------------------------------------------------------------------------------

# RULES_MATCHES_SCALE=10 plays ten times as many matches, from fresh random seeds each run (a deep
# run by hand); by default the seeds are derandomized, so CI plays the same matches every time.
SCALE = float(os.environ.get("RULES_MATCHES_SCALE", "1"))


def _workers() -> int:
    """Matches are independent: one process per core this one may use (RULES_WORKERS overrides).
    The workers are forked, so they inherit the imported test modules; where a platform cannot
    fork, the matches are played in this process."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return int(os.environ.get("RULES_WORKERS", "0")) or cores


WORKERS = _workers()
SEEDS = st.binary(min_size=16, max_size=16)
Example = tuple[bytes, int, Options]
CheckResult = Callable[[GameState, list[Event]], None]


def play_many(
    variant: str,
    matches: int,
    tables: st.SearchStrategy[tuple[int, Options]],
    check_result: CheckResult,
) -> Tally:
    """Play `matches` (times SCALE) complete matches, hypothesis drawing the seed and the table
    (players and house rules); returns what they reached. A failure names its example, which
    replays exactly with the `play` call it prints: everything else derives from the seed."""
    examples = draw_examples(max(1, round(matches * SCALE)), tables)
    if WORKERS < 2 or len(examples) < 2 * WORKERS:
        return _play_chunk(variant, examples, check_result)
    # Chunks small enough to balance long and short matches over the workers.
    chunks = [examples[at : at + 8] for at in range(0, len(examples), 8)]
    tally = Tally()
    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(WORKERS, mp_context=context)
    try:
        for part in pool.map(_play_chunk, repeat(variant), chunks, repeat(check_result)):
            tally.update(part)
    finally:
        pool.shutdown(cancel_futures=True)  # a failure stops the chunks not yet started
    return tally


def draw_examples(count: int, tables: st.SearchStrategy[tuple[int, Options]]) -> list[Example]:
    """`count` (seed, players, options) examples drawn by hypothesis: derandomized unless SCALE
    asks for a deep run, so CI plays the same matches every time."""
    drawn: list[Example] = []

    @settings(
        max_examples=count,
        derandomize=SCALE == 1,
        database=None,
        # Drawing only: the matches are played afterwards, over every core. A failing match is not
        # shrunk: it is thousands of decisions and a seed has no simpler form worth minutes of search.
        phases=(hypothesis.Phase.explicit, hypothesis.Phase.generate),
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(seed=SEEDS, table=tables)
    def draw(seed: bytes, table: tuple[int, Options]) -> None:
        drawn.append((seed, *table))

    draw()
    return drawn


def _play_chunk(variant: str, examples: list[Example], check_result: CheckResult) -> Tally:
    """Play and check `examples`; a failure is raised with the example that replays it."""
    tally = Tally()
    for seed, players, options in examples:
        try:
            play(variant, players, seed, options, tally=tally, check_result=check_result)
        except Exception as failure:
            call = (
                f"play({variant!r}, {players}, bytes.fromhex({seed.hex()!r}), {dict(options)!r}, "
                f"tally=Tally(), check_result={check_result.__qualname__})"
            )
            detail = "".join(traceback.format_exception(failure))
            raise AssertionError(f"{variant} match failed; {call} replays it\n{detail}") from None
        tally[f"{players} players"] += 1
    return tally


def require(tally: Tally, minimums: dict[str, int]) -> None:
    """Fail unless the matches reached every state of interest at least as often as `minimums` says
    (scaled like the match count): a property that was never exercised was not tested."""
    short = {
        key: (tally[key], round(least * SCALE))
        for key, least in minimums.items()
        if tally[key] < least * SCALE
    }
    assert not short, f"coverage short of (reached, required): {short}\nall: {sorted(tally.items())}"
