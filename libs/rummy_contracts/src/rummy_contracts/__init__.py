"""What meldstream's programs exchange, in one place: the engine writes it, the SDK, the CLI, matchmaking,
scoring and the web gateway read it.

- `wire`: cards, melds, options and actions <-> protobuf (clients send and read them, the engine parses).
- `event_format`: the event format of a game's log (`SCHEMA_VERSION`), its events <-> `GameEvent`, and
  the check every reader makes (`OtherEventFormat`).
- `facts`: the engine's own events (who sits where, timeouts, away seats), part of that format.
- `projection`: a game's log folded into the state after each event, as the engine folds it to act
  and the replay and export show it.

Nothing is imported here, so a client importing `wire` loads no store code.
"""
