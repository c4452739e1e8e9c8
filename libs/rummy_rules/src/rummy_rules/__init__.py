"""meldstream's rules engine: a pure library (no I/O, no clock, no randomness but a given seed)."""
