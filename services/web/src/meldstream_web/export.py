"""A whole game as one JSON document (`meldstream replay --format json`, docs/replay-export.md).

Like PGN for chess: enough for any tool to replay, summarise or verify a game without the store. The
text replay, the HTML page, the export and the web replay viewer are all rendered from this one
document, so they cannot disagree. Each event is the logged `GameEvent` in protobuf's JSON mapping
(stable within v1: changes are additive), beside its time, its actor and the state after it; cards the
reader may not see are left out and named in `redacted`.

Two sources, one document: the operator's store (`game_export`, `meldstream replay`, which also has
the records it skipped and the refusals stream) and the engine's API (`history_export`, the web
gateway, from GetHistory: only a finished game's players and operators get it). Either way the events
are folded by the fold the engine acts on (`rummy_contracts.projection`), so the state after each is
the engine's. Replaying a finished game's public record is not deciding moves: the gateway still holds
no rules of play, and imports no engine code.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Final

from google.protobuf import json_format
from google.protobuf.message import Message
from rummy.game.v1 import events_pb2
from rummy.game.v1 import game_service_pb2 as gs
from rummy_contracts import event_format as codec
from rummy_contracts import sight
from rummy_contracts.projection import EngineState, GameProjection
from rummy_contracts.sight import Sight
from rummy_rules.cards import Card
from rummy_store.catch_up import Step

FORMAT: Final = "meldstream.replay/1"


def sight_for(finished: bool, seat: int | None, operator: bool) -> Sight:
    """A player's view of one seat; otherwise everything once the game is over (as GetHistory shows
    it to its players), and while it is open only to an operator, who is told so."""
    if seat is not None:
        return sight.of_seat(seat)
    if finished:
        return sight.EVERYTHING
    if operator:
        return Sight(
            None, True, "OPERATOR VIEW of an unfinished game: every hidden hand and the stock are shown"
        )
    return Sight(
        frozenset(), False, "the game is not over: hands and the stock are hidden (--operator shows them)"
    )


def _cards(cards: Iterable[Card]) -> list[str]:
    return [card.text for card in cards]


def _redact(kind: str, message: events_pb2.GameEvent, body: dict[str, Any], seen: Sight) -> list[str]:
    """Remove from an event's JSON the cards the reader may not see (`rummy_contracts.sight`)."""
    hidden = sight.hidden_fields(kind, getattr(message, kind), seen)
    for name in hidden:
        body.pop(name, None)
    return hidden


def _state(state: EngineState, seen: Sight) -> dict[str, Any]:
    game = state.game
    return {
        "deal": game.deal,
        "dealer": game.dealer,
        "turn": game.turn,
        "phase": game.phase.value,
        "hands": [_cards(hand) if seen.hand(seat) else None for seat, hand in enumerate(game.hands)],
        "hand_sizes": [len(hand) for hand in game.hands],
        "melds": [
            {"owner": owner, "cards": _cards(meld.cards)}
            for meld, owner in zip(game.melds, game.owners, strict=True)
        ],
        "discard": _cards(game.discard),
        "stock": _cards(game.stock[::-1]) if seen.secrets else None,
        "stock_size": len(game.stock),
        "totals": list(game.totals),
        "away": list(state.away),
    }


def event_message(entry: dict[str, Any]) -> events_pb2.GameEvent:
    """An entry of `events[]` as a `GameEvent` (less what was redacted): to word it or verify it. Reads
    the seed in hex (this export's) or base64 (an older export's), a seat's seed in hex."""
    body = dict(entry["event"])
    seed = body.get("seed")
    if entry["type"] == "game_ended" and isinstance(seed, str) and re.fullmatch(r"[0-9a-f]{64}", seed):
        body["seed"] = base64.b64encode(bytes.fromhex(seed)).decode()
    if entry["type"] == "seed_contributed" and isinstance(seed, str):
        body["seed"] = base64.b64encode(bytes.fromhex(seed[: 2 * 64])).decode()
    message = {"seq": entry["seq"], "schema_version": codec.SCHEMA_VERSION, entry["type"]: body}
    return json_format.ParseDict(message, events_pb2.GameEvent())


def _json(message: Message) -> dict[str, Any]:
    """protobuf's JSON mapping with field names as in the .proto and zeros written out (seat 0)."""
    out: dict[str, Any] = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return out


def _time(message: events_pb2.GameEvent) -> str:
    """When the engine accepted the event's command: UTC, RFC 3339 with milliseconds."""
    moment = message.occurred_at.ToDatetime(tzinfo=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _iso_ms(epoch_ms: int) -> str:
    """Epoch milliseconds as `_time` writes times."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _seconds(message: events_pb2.GameEvent) -> float:
    return float(message.occurred_at.ToNanoseconds()) / 1e9


Applied = list[tuple[events_pb2.GameEvent, EngineState]]  # each event and the engine's state after it


def game_export(
    game_id: str, steps: Iterable[Step[EngineState | None]], *, seat: int | None, operator: bool
) -> dict[str, Any] | None:
    """The export of one game from its steps (`reading.game_steps`); None when it has no record."""
    read = list(steps)
    applied: Applied = []
    for step in read:
        if not step.skipped:
            assert step.state is not None  # a record applied: the game has started
            applied.append((codec.message_of(step.record), step.state))
    if not applied:
        return None
    skipped = [
        {
            "seq": step.record.seq,
            "partition": step.record.position.partition,
            "offset": step.record.position.offset,
            "command_id": step.record.command_id,
            "reason": step.skipped,
        }
        for step in read
        if step.skipped
    ]
    return _document(game_id, applied, skipped, seat=seat, operator=operator)


def history_export(game_id: str, history: gs.GetHistoryResponse, *, seat: int | None) -> dict[str, Any]:
    """The export of a finished game from the engine's GetHistory answer (every event, every card:
    only its players and operators get one), as one seat saw it when `seat` is given. The refusals
    stream is not in the API: the document says so, and `meldstream replay` has them."""
    projection = GameProjection()
    state: EngineState | None = None
    applied: Applied = []
    for entry in history.entries:
        event = entry.event
        state = projection.fold(
            state, event.command_id, event.seq, codec.event_from_pb(event), event.command_digest
        )
        applied.append((event, state))
    doc = _document(game_id, applied, [], seat=seat, operator=False)
    doc["shown"] += "; refused commands are on the operator's record only (meldstream replay)"
    return doc


def _document(
    game_id: str, applied: Applied, skipped: list[dict[str, Any]], *, seat: int | None, operator: bool
) -> dict[str, Any]:
    finished = any(message.WhichOneof("event") == "game_ended" for message, _ in applied)
    seen = sight_for(finished, seat, operator)
    entries: list[dict[str, Any]] = []
    for message, state in applied:
        kind = str(message.WhichOneof("event"))
        body = _json(getattr(message, kind))
        if kind == "game_ended":  # the seed in hex, as the summary, `replay` and `verify` print it
            body["seed"] = message.game_ended.seed.hex()
        if kind == "seed_contributed":  # a seat's seed in hex too
            body["seed"] = message.seed_contributed.seed.hex()
        entries.append(
            {
                "seq": message.seq,
                "time": _time(message),
                "type": kind,
                "actor": body.get("seat"),
                "by_engine": state.by_engine(message.command_id),
                "command_id": message.command_id,
                "event": body,
                "redacted": _redact(kind, message, body, seen),
                "state": _state(state, seen),
            }
        )
    return {
        "format": FORMAT,
        "game_id": game_id,
        "shown": seen.note,
        "finished": finished,
        "summary": _summary(applied),
        "skipped": skipped,
        "events": entries,
        "refused": [],
    }


def _summary(applied: Applied) -> dict[str, Any]:
    last = applied[-1][1]
    players = list(last.table.players)
    first_message = applied[0][0]
    started = first_message.game_started
    timeouts: list[dict[str, Any]] = []
    away: list[dict[str, Any]] = []
    open_away: dict[int, dict[str, Any]] = {}
    gone: list[dict[str, Any]] = []  # disconnections (meldstream M3)
    open_gone: dict[int, dict[str, Any]] = {}
    forfeits: list[dict[str, Any]] = []
    winners: list[int] = []
    names: list[str] = []
    ended_at: str | None = None
    seed: str | None = None
    deals = 0
    engine_played = 0
    turn_limit_ms = 0
    in_force = 0
    for message, state in applied:
        kind = message.WhichOneof("event")
        time = _time(message)
        at: dict[str, Any] = {"seq": message.seq, "time": time}
        if state.by_engine(message.command_id) and kind != "turn_timed_out":
            engine_played += 1
        if kind in ("game_started", "deal_started"):
            deals += 1
        elif kind == "table_seated":
            turn_limit_ms = message.table_seated.turn_timeout_ms
            in_force = message.table_seated.turn_limit_in_force_ms
            names = list(message.table_seated.player_names)
        elif kind == "turn_timed_out":
            out = message.turn_timed_out
            timeouts.append(
                {**at, "seat": out.seat, "in_a_row": out.in_a_row, "away": out.away, "limit_ms": out.limit_ms}
            )
        elif kind == "player_away":
            period = {"seat": message.player_away.seat, "from": at, "to": None}
            open_away[message.player_away.seat] = period
            away.append(period)
        elif kind == "player_returned" and message.player_returned.seat in open_away:
            open_away.pop(message.player_returned.seat)["to"] = at
        elif kind == "seat_disconnected":
            left = message.seat_disconnected
            ends = _iso_ms(left.grace_ends_at_ms)
            period = {
                "seat": left.seat,
                "from": at,
                "grace_ms": left.grace_ms,
                "grace_ends_at": ends,
                "to": None,
            }
            open_gone[left.seat] = period
            gone.append(period)
        elif kind == "seat_reconnected" and message.seat_reconnected.seat in open_gone:
            open_gone.pop(message.seat_reconnected.seat)["to"] = at
        elif kind == "seat_forfeited":
            forfeits.append(
                {**at, "seat": message.seat_forfeited.seat, "points": message.seat_forfeited.points}
            )
        elif kind == "game_ended":
            winners = list(message.game_ended.winners)
            ended_at, seed = time, message.game_ended.seed.hex()
    for item in (*timeouts, *away, *gone, *forfeits):
        item["player"] = players[item["seat"]] if item["seat"] < len(players) else None
    return {
        "variant": started.variant,
        "players": players,
        # The names shown at seating (the player's id where none was recorded): a person reads these,
        # while the ids stay what the game was played by.
        "names": [name or player for name, player in zip(names, players, strict=False)]
        + players[len(names) :],
        "options": _json(started).get("options", {}),
        "seed_commitment": started.seed_commitment,
        "seed": seed,
        "winners": [players[seat] for seat in winners if seat < len(players)],
        "totals": list(last.game.totals),
        "deals": deals,
        "events": len(applied),
        "started_at": _time(first_message),
        "ended_at": ended_at,
        "last_event_at": _time(applied[-1][0]),
        "duration_s": round(_seconds(applied[-1][0]) - _seconds(first_message), 3),
        "turn_limit_ms": turn_limit_ms,
        "turn_limit_in_force_ms": in_force or None,
        "engine_played_events": engine_played,
        "timeouts": timeouts,
        "away_periods": away,
        "disconnections": gone,
        "forfeits": forfeits,
    }
