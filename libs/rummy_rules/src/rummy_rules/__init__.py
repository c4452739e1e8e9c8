"""meldstream's rules engine: a pure library (no I/O, no clock, no randomness but a given seed).

Importing it registers the four variants (`rummy_rules.variants`) that `rules_for` and the engine
look up by id.
"""

import rummy_rules.variants  # noqa: F401  # the registration is the point of this import
