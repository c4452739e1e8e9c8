"""Service plumbing every meldstream service reuses (engine now; matchmaking and scoring later)."""
