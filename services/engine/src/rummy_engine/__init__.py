"""The game engine service: validates actions with the rules engine, logs events, serves per-seat views."""
