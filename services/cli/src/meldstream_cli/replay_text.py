"""The text replay: a summary an operator reads first, then each event with its time, in words, and the
table after it.

The lines read player ids from the document as they are: `for_people` first gives a document whose
ids are as the output must show them (printable and cut in a terminal, isolated on a page).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf import json_format
from meldstream_web.export import event_message
from rummy.game.v1 import events_pb2
from rummy_contracts.catalogue import Words, words
from rummy_contracts.sentences import Narrator, card_words, notation_words

_FACTS = (
    "turn_timed_out",
    "player_away",
    "player_returned",
    "seed_contributed",
    "seat_disconnected",
    "seat_reconnected",
    "time_bank_used",
    "refused",
)
ENGLISH = words()


def _clock(time: str) -> str:
    """`2026-12-01T19:51:08.110Z` -> `19:51:08.110`: the day is in the summary."""
    return time.partition("T")[2].rstrip("Z") or time


def for_people(doc: dict[str, Any], name: Callable[[str], str]) -> dict[str, Any]:
    """The document with each player id the lines show (seats, winners, refusals' senders) as `name`
    gives the name shown at seating (the summary's `names`; the id in an export without them)."""
    summary = doc["summary"]
    seated = dict(zip(summary["players"], summary.get("names", summary["players"]), strict=False))

    def shown(player: str) -> str:
        return name(seated.get(player, player))

    players = [shown(player) for player in summary["players"]]
    winners = [shown(player) for player in summary["winners"]]
    refused = [{**refusal, "player": shown(refusal["player"])} for refusal in doc.get("refused", [])]
    return {**doc, "summary": {**summary, "players": players, "winners": winners}, "refused": refused}


def _who(players: list[str], seat: Any) -> str:
    return (
        f"seat {seat} ({players[seat]})" if isinstance(seat, int) and seat < len(players) else f"seat {seat}"
    )


def summary_lines(doc: dict[str, Any]) -> list[str]:
    s = doc["summary"]
    players = s["players"]
    lines = [
        f"game {doc['game_id']}: {s['variant']}, {len(players)} players: "
        + ", ".join(f"{seat} {name}" for seat, name in enumerate(players)),
        f"shown: {doc['shown']}",
        f"started {s['started_at']}; "
        + (f"ended {s['ended_at']}" if s["ended_at"] else f"NOT OVER (last event {s['last_event_at']})")
        + f"; {s['duration_s']:.1f} s, {s['events']} events, {s['deals']} deal(s)",
        "winner: "
        + (", ".join(s["winners"]) if s["winners"] else "none yet")
        + "; totals: "
        + ", ".join(f"{name} {total}" for name, total in zip(players, s["totals"], strict=False)),
        f"seed commitment: {s['seed_commitment']}; seed (hex): {s['seed'] or 'secret until the end'}",
        "turn limit: " + _limit(s),
        f"timeouts: {len(s['timeouts'])}",
    ]
    lines += [_timeout(players, t) for t in s["timeouts"]]
    lines.append(f"away periods: {len(s['away_periods'])}")
    for period in s["away_periods"]:
        end = period["to"]
        until = f"back at seq {end['seq']} at {end['time']}" if end else "still away"
        lines.append(
            f"  {_who(players, period['seat'])}: away from seq {period['from']['seq']}"
            f" at {period['from']['time']}, {until}"
        )
    gone = s.get("disconnections", [])  # exports from before presence have none
    lines.append(f"disconnections: {len(gone)}")
    for period in gone:
        end = period["to"]
        until = f"back at seq {end['seq']} at {end['time']}" if end else "not back"
        lines.append(
            f"  {_who(players, period['seat'])}: disconnected at seq {period['from']['seq']}"
            f" at {period['from']['time']}, grace {period['grace_ms']} ms"
            f" to {period['grace_ends_at']}, {until}"
        )
    forfeits = s.get("forfeits", [])
    lines.append(f"forfeits: {len(forfeits)}")
    lines += [
        f"  {_who(players, f['seat'])}: forfeited at seq {f['seq']} at {f['time']}, {f['points']:+d} points"
        for f in forfeits
    ]
    lines.append(f"events played by the engine for an absent player: {s['engine_played_events']}")
    refused = doc.get("refused", [])
    lines.append(f"refused commands: {len(refused)}")
    lines += [f"  {_refusal(players, r)}" for r in refused]
    if doc["skipped"]:
        lines.append(f"skipped records: {len(doc['skipped'])}")
        lines += [
            f"  seq {r['seq']}: partition {r['partition']} offset {r['offset']}: {r['reason']}"
            for r in doc["skipped"]
        ]
    return lines


def _timeout(players: list[str], t: dict[str, Any]) -> str:
    given = f"{t['limit_ms']} ms" if t["limit_ms"] else "a limit this log does not record"
    return (
        f"  seq {t['seq']} at {t['time']}: {_who(players, t['seat'])} timed out after {given}"
        f" ({t['in_a_row']} in a row{', already away: the away grace' if t['away'] else ''})"
    )


def _limit(s: dict[str, Any]) -> str:
    if s["turn_limit_in_force_ms"] is not None:
        asked = s["turn_limit_ms"] or "the default"
        return f"{s['turn_limit_in_force_ms']} ms in force (the table asked for {asked})"
    if s["turn_limit_ms"]:
        return f"{s['turn_limit_ms']} ms (set by the table)"
    return "the engine's default (this game's log does not record its value)"


def _refusal(players: list[str], refusal: dict[str, Any]) -> str:
    action = ", ".join(f"{kind} {_sent(body)}".rstrip() for kind, body in refusal["action"].items())
    return (
        f"at {refusal['time']} (after seq {refusal['after_seq']}): {_who(players, refusal['seat'])}"
        f" '{refusal['player']}' sent {action} (command {refusal['command_id']!r}):"
        f" REFUSED {refusal['code']}: {refusal['message']}"
    )


def _sent(body: Any) -> str:
    """What an action as sent names, for people: its cards in words, then its other fields (`meld 2`,
    1-based), never a JSON or Python dict."""
    if isinstance(body, list):
        return " ".join(_sent(item) for item in body)
    if not isinstance(body, dict):
        return str(body)
    return " ".join(filter(None, (_field(name, value) for name, value in body.items())))


def _field(name: str, value: Any) -> str:
    if name in ("card", "stock_card") and isinstance(value, dict):
        return _card(value)
    if name == "cards" and isinstance(value, list):
        return " ".join(_card(card) for card in value if isinstance(card, dict))
    if isinstance(value, dict | list):
        return _sent(value)
    if name in ("meld", "index") and isinstance(value, int):
        return f"{name} {value + 1}"
    return f"{name} {str(value).removeprefix('RUN_END_').lower()}"


def _card(card: dict[str, Any]) -> str:
    return card_words(json_format.ParseDict(card, events_pb2.Card(), ignore_unknown_fields=True))


def refused_after(doc: dict[str, Any], seq: int) -> list[dict[str, Any]]:
    """The refusals that came while `seq` was the game's last event (they changed nothing)."""
    return [r for r in doc.get("refused", []) if r["after_seq"] == seq]


def refused_line(doc: dict[str, Any], refusal: dict[str, Any]) -> str:
    return f"refused  {_clock(refusal['time'])} " + _refusal(doc["summary"]["players"], refusal)


def skipped_line(record: dict[str, Any]) -> str:
    """A record the fold could not apply, where it lies in the log and why (the replay goes on)."""
    return (
        f"seq {record['seq']}: SKIPPED the record at partition {record['partition']} offset"
        f" {record['offset']} (command {record['command_id'][:40]!r}): {record['reason']}"
    )


def narrator(doc: dict[str, Any], say: Words = ENGLISH) -> Narrator:
    """What words the events (`rummy_contracts.sentences`, as the web table's log and `meldstream play`
    word them, in `say`'s language), with the names the lines show; a replay is an operator's: nobody
    is "you"."""
    return Narrator(None, doc["summary"]["players"], say)


def event_line(words: Narrator, entry: dict[str, Any]) -> str:
    """`seq 12   19:51:08.110  Bo melded 3♣ 4♣ 5♣`: the event's seq (as `meldstream verify` numbers
    events), its time and its sentence (the event kind when it needs none)."""
    text = words.sentence(event_message(entry), entry["by_engine"]) or entry["type"].replace("_", " ")
    return f"seq {entry['seq']:<4} {_clock(entry['time'])}  {text}"


def table_lines(doc: dict[str, Any], entry: dict[str, Any], say: Words = ENGLISH) -> list[str]:
    players = doc["summary"]["players"]
    state = entry["state"]
    width = max((len(p) for p in players), default=4) + 8
    lines = []
    for seat, size in enumerate(state["hand_sizes"]):
        mark = ">" if seat == state["turn"] else " "
        hand = state["hands"][seat]
        cards = (
            " ".join(notation_words(card, say) for card in sorted(hand, key=_order))
            if hand is not None
            else say("cli.replay_hidden")
        )
        away = say("cli.replay_away") if seat < len(state["away"]) and state["away"][seat] else ""
        label = f"{seat} {players[seat] if seat < len(players) else '?'}"
        lines.append(f"  {mark} {label:<{width}} {size:>2} | {cards or '-'}{away}")
    for index, meld in enumerate(state["melds"], start=1):  # 1-based, as the sentences number melds
        owner = (
            players[meld["owner"]] if meld["owner"] < len(players) else say("event.seat", seat=meld["owner"])
        )
        melded = " ".join(notation_words(card, say) for card in meld["cards"])
        lines.append("    " + say("cli.replay_meld", meld=f"{index:<2}", who=owner, cards=melded))
    pile = state["discard"]
    more = say.count("cli.replay_more", len(pile) - 8) if len(pile) > 8 else ""
    top = " ".join(notation_words(card, say) for card in pile[-8:]) or "-"
    phase = say(f"cli.phase.{state['phase']}") if f"cli.phase.{state['phase']}" in say else state["phase"]
    lines.append("    " + say("cli.replay_piles", more=more, top=top, stock=state["stock_size"], phase=phase))
    totals = say("list.separator").join(
        f"{name} {total}" for name, total in zip(players, state["totals"], strict=False)
    )
    lines.append("    " + say("cli.totals", totals=totals))
    return lines


def _order(text: str) -> tuple[int, int]:
    suit = "JCDHS".index(text[-1]) if text != "JK" else 0
    rank = (
        ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K").index(text[:-1]) if suit else 0
    )
    return suit, rank


def shows_table(entry: dict[str, Any]) -> bool:
    """Facts change no cards, except that table_seated gives the dealt hands their players' names."""
    return entry["type"] not in _FACTS
