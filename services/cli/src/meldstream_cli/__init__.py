"""The `meldstream` command line."""
