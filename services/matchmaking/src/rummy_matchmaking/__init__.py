"""meldstream matchmaking service: tickets and tournaments in; TableFormed events out."""
