"""meldstream scoring service: game events in; results, standings, leaderboards, ratings, payouts out."""
